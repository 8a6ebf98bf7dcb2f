package rollback

import (
	"fmt"
	"math/rand"
	"runtime"
	"sort"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	gitobjects "github.com/git-hegel/git-hegel/gitstore/objects"
)

// The tree builder that shares subtrees out across goroutines must build
// exactly what gitobjects.BuildTree builds, one goroutine, and fail with
// the same error: on trees of every shape, split as finely as it can be.
func TestBuildTreeOfMatchesSerialBuild(t *testing.T) {
	defer func(n int) { treeSplitMin = n }(treeSplitMin)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	rng := rand.New(rand.NewSource(1))
	modes := []filemode.FileMode{filemode.Regular, filemode.Executable, filemode.Symlink, filemode.Submodule}
	randomLeaves := func(n int) []leaf {
		seen := map[string]bool{}
		var out []leaf
		for len(out) < n {
			depth := rng.Intn(4)
			p := ""
			for d := 0; d < depth; d++ {
				p += fmt.Sprintf("d%d/", rng.Intn(3))
			}
			// Names that sort between a directory and its entries ("a",
			// "a.b", "a/x") are where git's order is easiest to get wrong.
			p += []string{"a", "a.b", "a-c", "b", "f" + fmt.Sprint(rng.Intn(50))}[rng.Intn(5)]
			if seen[p] {
				continue
			}
			seen[p] = true
			var h plumbing.Hash
			rng.Read(h[:])
			out = append(out, leaf{path: p, mode: modes[rng.Intn(len(modes))], hash: h})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
		return out
	}
	check := func(name string, leaves []leaf) error {
		t.Helper()
		want := map[plumbing.Hash][]byte{}
		wantRoot, wantErr := gitobjects.BuildTree(len(leaves), func(i int) string { return leaves[i].path },
			func(i int) (filemode.FileMode, plumbing.Hash) { return leaves[i].mode, leaves[i].hash }, want)
		for _, split := range []int{1, 2, 7, 1 << 30} {
			treeSplitMin = split
			got := map[plumbing.Hash][]byte{}
			root, err := buildTree(leaves, got)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("%s, split %d: error %v, want %v", name, split, err, wantErr)
			}
			if err != nil {
				continue
			}
			if root != wantRoot || len(got) != len(want) {
				t.Fatalf("%s, split %d: root %s (%d trees), want %s (%d)", name, split, root, len(got), wantRoot, len(want))
			}
			for h, b := range want {
				if string(got[h]) != string(b) {
					t.Fatalf("%s, split %d: tree %s differs", name, split, h)
				}
			}
		}
		return wantErr
	}
	for k := 0; k < 40; k++ {
		if err := check(fmt.Sprintf("random %d", k), randomLeaves(1+rng.Intn(300))); err != nil {
			t.Fatal(err)
		}
	}
	check("empty", nil)
	// Broken inputs: each fails, with the serial build's error even when
	// an earlier subtree, built elsewhere, fails too.
	h := plumbing.NewHash("1111111111111111111111111111111111111111")
	for name, paths := range map[string][]string{
		"empty component":      {"a/b", "a//c", "z/y"},
		"trailing slash":       {"d/e/", "d/f"},
		"file and directory":   {"x/a", "x/a/b", "y/q"},
		"two errors in order":  {"p/q//r", "p/s", "t//u"},
		"error after subtree":  {"m/n/o", "m/n/p", "m/n/p/q"},
		"bad then later error": {"k//l", "k/m", "k/m/n"},
	} {
		leaves := make([]leaf, len(paths))
		for i, p := range paths {
			leaves[i] = leaf{path: p, mode: filemode.Regular, hash: h}
		}
		if check(name, leaves) == nil {
			t.Fatalf("%s: built", name)
		}
	}
	bad := []leaf{{path: "a/b", mode: filemode.Regular, hash: h}, {path: "c/d", mode: 0o100600, hash: h}}
	if check("unsupported mode", bad) == nil {
		t.Fatal("unsupported mode: built")
	}
}

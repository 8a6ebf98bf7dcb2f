package objects

import (
	"fmt"
	"math/rand"
	"runtime"
	"sort"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

type testLeaf struct {
	path string
	mode filemode.FileMode
	hash plumbing.Hash
}

func buildLeaves(leaves []testLeaf, trees map[plumbing.Hash][]byte) (plumbing.Hash, error) {
	return BuildTree(len(leaves), func(i int) string { return leaves[i].path },
		func(i int) (filemode.FileMode, plumbing.Hash) { return leaves[i].mode, leaves[i].hash }, trees)
}

// BuildTree sharing subtrees out across goroutines must build exactly
// what it builds on one goroutine, and fail with the same error: on trees
// of every shape, split as finely as it can be.
func TestBuildTreeParallelMatchesSerial(t *testing.T) {
	defer func(n int) { treeSplitMin = n }(treeSplitMin)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	rng := rand.New(rand.NewSource(1))
	modes := []filemode.FileMode{filemode.Regular, filemode.Executable, filemode.Symlink, filemode.Submodule}
	randomLeaves := func(n int) []testLeaf {
		seen := map[string]bool{}
		var out []testLeaf
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
			out = append(out, testLeaf{path: p, mode: modes[rng.Intn(len(modes))], hash: h})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
		return out
	}
	check := func(name string, leaves []testLeaf) error {
		t.Helper()
		want := map[plumbing.Hash][]byte{}
		treeSplitMin = 1 << 30 // one goroutine
		wantRoot, wantErr := buildLeaves(leaves, want)
		for _, split := range []int{1, 2, 7} {
			treeSplitMin = split
			got := map[plumbing.Hash][]byte{}
			root, err := buildLeaves(leaves, got)
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
		leaves := make([]testLeaf, len(paths))
		for i, p := range paths {
			leaves[i] = testLeaf{path: p, mode: filemode.Regular, hash: h}
		}
		if check(name, leaves) == nil {
			t.Fatalf("%s: built", name)
		}
	}
	bad := []testLeaf{{path: "a/b", mode: filemode.Regular, hash: h}, {path: "c/d", mode: 0o100600, hash: h}}
	if check("unsupported mode", bad) == nil {
		t.Fatal("unsupported mode: built")
	}
}

package objects

import (
	"fmt"
	"math/rand"
	"runtime"
	"sort"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// BuildTreeReusing, given subtrees of an earlier build that are still
// right, builds what a build from nothing builds; a subtree given with a
// leaf count that does not end where its directory does is not used; and
// Done reports every subtree of the result once, down to those taken.
func TestBuildTreeReusing(t *testing.T) {
	defer func(n int) { treeSplitMin = n }(treeSplitMin)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	treeSplitMin = 2
	rng := rand.New(rand.NewSource(3))
	type sub struct {
		hash  plumbing.Hash
		count int
	}
	leaves := func(n int) []testLeaf {
		seen := map[string]bool{}
		var out []testLeaf
		for len(out) < n {
			p := ""
			for d := rng.Intn(4); d > 0; d-- {
				p += fmt.Sprintf("d%d/", rng.Intn(3))
			}
			p += []string{"a", "a.b", "a-c", "f" + fmt.Sprint(rng.Intn(20))}[rng.Intn(4)]
			if seen[p] {
				continue
			}
			seen[p] = true
			var h plumbing.Hash
			rng.Read(h[:])
			out = append(out, testLeaf{path: p, mode: filemode.Regular, hash: h})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
		return out
	}
	build := func(ls []testLeaf, known map[string]sub) (plumbing.Hash, map[string]sub, int) {
		t.Helper()
		var mu sync.Mutex
		done := map[string]sub{}
		taken := 0
		root, err := BuildTreeReusing(len(ls), func(i int) string { return ls[i].path },
			func(i int) (filemode.FileMode, plumbing.Hash) { return ls[i].mode, ls[i].hash },
			map[plumbing.Hash][]byte{}, &TreeReuse{
				Known: func(dir string, lo int) (plumbing.Hash, int, bool) {
					s, ok := known[dir]
					return s.hash, s.count, ok
				},
				Done: func(dir string, n int, h plumbing.Hash, isKnown bool) {
					mu.Lock()
					defer mu.Unlock()
					if _, dup := done[dir]; dup {
						t.Errorf("%q reported twice", dir)
					}
					done[dir] = sub{h, n}
					if isKnown {
						taken++
					}
				},
			})
		if err != nil {
			t.Fatal(err)
		}
		return root, done, taken
	}
	for k := 0; k < 30; k++ {
		ls := leaves(1 + rng.Intn(200))
		full, err := buildLeaves(ls, map[plumbing.Hash][]byte{})
		if err != nil {
			t.Fatal(err)
		}
		root, all, _ := build(ls, nil)
		if root != full || all[""].hash != root || all[""].count != len(ls) {
			t.Fatalf("case %d: %s (top reported %v), want %s", k, root, all[""], full)
		}
		// Everything known: the root is taken whole.
		if again, _, taken := build(ls, all); again != full || taken != 1 {
			t.Fatalf("case %d: all known: %s (%d taken), want %s", k, again, taken, full)
		}
		// One leaf changed: its directories are built, the rest taken.
		i := rng.Intn(len(ls))
		changed := append([]testLeaf(nil), ls...)
		rng.Read(changed[i].hash[:])
		known := map[string]sub{}
		for dir, s := range all {
			if len(changed[i].path) < len(dir) || changed[i].path[:len(dir)] != dir {
				known[dir] = s
			}
		}
		want, _ := buildLeaves(changed, map[plumbing.Hash][]byte{})
		if got, _, _ := build(changed, known); got != want {
			t.Fatalf("case %d: one leaf changed: %s, want %s", k, got, want)
		}
		// Counts one too many or too few are not used: the build is right.
		for _, off := range []int{-1, 1} {
			wrong := map[string]sub{}
			for dir, s := range known {
				wrong[dir] = sub{plumbing.NewHash("2222222222222222222222222222222222222222"), s.count + off}
			}
			if got, _, _ := build(changed, wrong); got != want {
				t.Fatalf("case %d: counts off by %d: %s, want %s", k, off, got, want)
			}
		}
	}
}

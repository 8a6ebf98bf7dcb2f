package gitstore

import (
	"sort"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// graphRepo writes commits with chosen timestamps.
type graphRepo struct {
	t    *testing.T
	r    *Repo
	tree plumbing.Hash
}

func newGraphRepo(t *testing.T) *graphRepo {
	r, err := NewMemory()
	if err != nil {
		t.Fatal(err)
	}
	tree, err := r.writeTree(map[string][]byte{"version": []byte("1\n")})
	if err != nil {
		t.Fatal(err)
	}
	return &graphRepo{t: t, r: r, tree: tree}
}

func (g *graphRepo) commit(sec int64, msg string, parents ...plumbing.Hash) plumbing.Hash {
	g.r.Now = func() time.Time { return time.Unix(sec, 0) }
	h, err := g.r.writeCommit(g.tree, parents, msg)
	if err != nil {
		g.t.Fatal(err)
	}
	return h
}

func sortedHashes(hs []plumbing.Hash) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.String()
	}
	sort.Strings(out)
	return out
}

func TestGraphWalks(t *testing.T) {
	g := newGraphRepo(t)
	base := g.commit(100, "base")
	x1 := g.commit(110, "x1", base)
	x2 := g.commit(120, "x2", x1)
	y1 := g.commit(115, "y1", base)
	m1 := g.commit(130, "m1", x2, y1)
	m2 := g.commit(131, "m2", y1, x2)
	other := g.commit(50, "unrelated")
	skewed := g.commit(10, "child older than its parent", x2) // clock skew
	gr := newGraph(g.r.storage)

	anc := func(a, b plumbing.Hash) bool {
		ok, err := gr.isAncestor(a, b)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !anc(base, x2) || !anc(x2, x2) || anc(x2, base) || anc(y1, x2) || !anc(x1, skewed) || anc(other, m1) {
		t.Error("isAncestor")
	}
	bases := func(a, b plumbing.Hash) []string {
		hs, err := gr.mergeBases(a, b)
		if err != nil {
			t.Fatal(err)
		}
		return sortedHashes(hs)
	}
	if got := bases(x2, y1); len(got) != 1 || got[0] != base.String() {
		t.Errorf("fork: %v", got)
	}
	if got := bases(m1, m2); len(got) != 2 || got[0] != sortedHashes([]plumbing.Hash{x2, y1})[0] {
		t.Errorf("criss-cross: %v, want x2 and y1", got)
	}
	if got := bases(x2, other); len(got) != 0 {
		t.Errorf("unrelated: %v", got)
	}
	if got := bases(skewed, y1); len(got) != 1 || got[0] != base.String() {
		t.Errorf("skewed: %v", got)
	}
	news, err := gr.newCommits([]plumbing.Hash{m1}, []plumbing.Hash{x1})
	if err != nil {
		t.Fatal(err)
	}
	var got []plumbing.Hash
	for _, n := range news {
		got = append(got, n.hash)
	}
	if want := sortedHashes([]plumbing.Hash{m1, x2, y1}); !equalStrings(sortedHashes(got), want) {
		t.Errorf("newCommits: %v, want m1, x2, y1", sortedHashes(got))
	}
	if b := boundaryOf(news); len(b) != 2 {
		t.Errorf("boundary %v, want x1 and base", b)
	}
	// A known tip we do not have is ignored; a missing new commit is an error.
	if _, err := gr.newCommits([]plumbing.Hash{x2}, []plumbing.Hash{plumbing.NewHash("2222222222222222222222222222222222222222")}); err != nil {
		t.Errorf("missing known tip: %v", err)
	}
	if _, err := gr.newCommits([]plumbing.Hash{plumbing.NewHash("2222222222222222222222222222222222222222")}, nil); err == nil {
		t.Error("missing tip accepted")
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

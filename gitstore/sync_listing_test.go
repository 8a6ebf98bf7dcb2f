package gitstore

import (
	"errors"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// The listing a sync keeps reads each root once and stays what the
// backend would list after every write this process makes, and a lost
// compare-and-swap makes it read the root again.
func TestListedRefsStayCurrent(t *testing.T) {
	r := newMemRepo(t)
	h := func(b byte) plumbing.Hash { var x plumbing.Hash; x[0] = b; return x }
	for _, n := range []string{"refs/hegel/tasks/b", "refs/hegel/tasks/d", "refs/hegel-remotes/origin/tasks/b", "refs/heads/main"} {
		if err := r.refs.Update(plumbing.ReferenceName(n), plumbing.ZeroHash, h(1)); err != nil {
			t.Fatal(err)
		}
	}
	counting := &countingLister{Backend: r.refs}
	l := newListedRefs(counting, hegelPrefix, trackingRoot+"origin/")
	same := func(prefix string) {
		t.Helper()
		got, err := l.List(prefix)
		want, err2 := r.refs.List(prefix)
		if err != nil || err2 != nil || len(got) != len(want) {
			t.Fatalf("List(%s) = %v, %v; the backend lists %v, %v", prefix, got, err, want, err2)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("List(%s) = %v; the backend lists %v", prefix, got, want)
			}
		}
	}
	same(hegelPrefix)
	same(hegelPrefix + "tasks/")
	same(trackingRoot + "origin/")
	if counting.n != 2 {
		t.Errorf("%d listings of the backend for two roots", counting.n)
	}
	// Writes: a new ref before, between and after the others, a move, a
	// delete, and a delete of a ref that is not there.
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(l.Update("refs/hegel/tasks/a", plumbing.ZeroHash, h(2)))
	must(l.Update("refs/hegel/tasks/c", plumbing.ZeroHash, h(2)))
	must(l.UpdateMsg("refs/hegel/tasks/e", plumbing.ZeroHash, h(2), refs.Reflog{Msg: "new"}))
	must(l.Update("refs/hegel/tasks/b", h(1), h(3)))
	must(l.Update("refs/hegel/tasks/d", h(1), plumbing.ZeroHash))
	must(l.Update("refs/hegel-remotes/origin/tasks/b", h(1), plumbing.ZeroHash))
	same(hegelPrefix)
	same(hegelPrefix + "tasks/c")
	same(trackingRoot + "origin/")
	if counting.n != 2 {
		t.Errorf("%d listings of the backend after writes, want the first 2", counting.n)
	}
	// Someone else moved a ref: the failed write drops the root's listing.
	must(r.refs.Update("refs/hegel/tasks/c", h(2), h(4)))
	if err := l.Update("refs/hegel/tasks/c", h(2), h(5)); !errors.Is(err, ErrConflict) {
		t.Fatalf("a stale compare-and-swap: %v", err)
	}
	same(hegelPrefix)
	if counting.n != 3 {
		t.Errorf("%d listings of the backend after a lost compare-and-swap, want 3", counting.n)
	}
	// Other namespaces are listed by the backend each time.
	same("refs/heads/")
	same("refs/heads/")
	if counting.n != 5 {
		t.Errorf("%d listings of the backend after two of refs/heads/, want 5", counting.n)
	}
}

type countingLister struct {
	refs.Backend
	n int
}

func (c *countingLister) List(prefix string) ([]refs.Ref, error) {
	c.n++
	return c.Backend.List(prefix)
}

package gitstore

import (
	"slices"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// listedRefs is the refs backend for the length of one sync: it lists each
// of its roots (refs/hegel/ and the remote's tracking namespace) once, and
// keeps that listing current as the sync writes refs, so the fetch, merge
// and push steps do not each read every loose ref again. With 10,000
// tasks a listing is 20,000 ref files; sync listed them six times.
//
// Every ref this process writes goes through Update or UpdateMsg, which
// apply a successful write to the listing. A failed compare-and-swap means
// someone else wrote the ref: the root's listing is dropped and read again
// on the next List. A write by another process that this process never
// tries to overwrite is seen by the next sync, as if it came after this
// one (each write is still a compare-and-swap against the ref itself).
type listedRefs struct {
	refs.Backend
	mu    sync.Mutex
	roots []string
	lists map[string][]refs.Ref // root -> its refs, sorted by name
	// written counts the refs under the roots this process wrote (each a
	// loose ref file), deletes left out.
	written int
}

func newListedRefs(b refs.Backend, roots ...string) *listedRefs {
	return &listedRefs{Backend: b, roots: roots, lists: map[string][]refs.Ref{}}
}

// root returns the root a prefix or ref name lies under, if any.
func (l *listedRefs) root(name string) (string, bool) {
	for _, r := range l.roots {
		if strings.HasPrefix(name, r) {
			return r, true
		}
	}
	return "", false
}

// List implements refs.Backend.
func (l *listedRefs) List(prefix string) ([]refs.Ref, error) {
	list, err := l.listShared(prefix)
	if _, ok := l.root(prefix); ok && err == nil {
		list = slices.Clone(list)
	}
	return list, err
}

// listShared is List without the copy: the slice is the listing's own,
// which the next write through l changes. A caller that reads it through
// before writing any ref saves copying every ref of the root (10,000 with
// 10,000 tasks) each time.
func (l *listedRefs) listShared(prefix string) ([]refs.Ref, error) {
	root, ok := l.root(prefix)
	if !ok {
		return l.Backend.List(prefix)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	all, ok := l.lists[root]
	if !ok {
		var err error
		if all, err = l.Backend.List(root); err != nil {
			return nil, err
		}
		l.lists[root] = all
	}
	i, _ := slices.BinarySearchFunc(all, prefix, func(r refs.Ref, p string) int { return strings.Compare(string(r.Name), p) })
	j := i
	for j < len(all) && strings.HasPrefix(string(all[j].Name), prefix) {
		j++
	}
	return all[i:j:j], nil
}

// Update implements refs.Backend.
func (l *listedRefs) Update(name plumbing.ReferenceName, old, new plumbing.Hash) error {
	err := l.Backend.Update(name, old, new)
	l.wrote(name, new, err)
	return err
}

// UpdateMsg implements refs.Backend.
func (l *listedRefs) UpdateMsg(name plumbing.ReferenceName, old, new plumbing.Hash, u refs.Reflog) error {
	err := l.Backend.UpdateMsg(name, old, new, u)
	l.wrote(name, new, err)
	return err
}

// wrote applies a write of name to the listing of its root: the new value
// when it succeeded; when it failed, the ref's value is unknown here, so
// the root is listed again next time.
func (l *listedRefs) wrote(name plumbing.ReferenceName, new plumbing.Hash, err error) {
	root, ok := l.root(string(name))
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil && !new.IsZero() {
		l.written++
	}
	all, ok := l.lists[root]
	if !ok {
		return
	}
	if err != nil {
		delete(l.lists, root)
		return
	}
	i, found := slices.BinarySearchFunc(all, name, func(r refs.Ref, n plumbing.ReferenceName) int { return strings.Compare(string(r.Name), string(n)) })
	switch {
	case new.IsZero() && found:
		all = slices.Delete(all, i, i+1)
	case new.IsZero():
	case found:
		all[i].Hash = new
	default:
		all = slices.Insert(all, i, refs.Ref{Name: name, Hash: new})
	}
	l.lists[root] = all
}

// listOnce makes the repository list refs/hegel/ and rem's tracking refs
// once until the returned function is called (see listedRefs). A sync
// runs on one goroutine, so the field can be swapped for its length.
//
// The returned function also packs the refs when the sync wrote many
// (packRefsAfter): each write left a loose ref file, and every later
// sync, and git's own fetch, reads every one of them.
func (r *Repo) listOnce(rem *Remote) (restore func()) {
	if _, ok := r.refs.(*listedRefs); ok {
		return func() {}
	}
	b := r.refs
	l := newListedRefs(b, hegelPrefix, trackingRoot+rem.Name+"/")
	r.refs = l
	return func() {
		r.refs = b
		if l.written >= packRefsAfter {
			r.packRefs()
		}
	}
}

// readRefs lists the refs under prefix for a caller that reads the list
// through before it writes any ref (listedRefs.listShared).
func (r *Repo) readRefs(prefix string) ([]refs.Ref, error) {
	if l, ok := r.refs.(*listedRefs); ok {
		return l.listShared(prefix)
	}
	return r.refs.List(prefix)
}

// fileRefs returns the repository's files backend (nil, false in memory),
// beneath a sync's listing if one is in place: reflogs are read and
// dropped there.
func (r *Repo) fileRefs() (*refs.Files, bool) {
	b := r.refs
	if l, ok := b.(*listedRefs); ok {
		b = l.Backend
	}
	fr, ok := b.(*refs.Files)
	return fr, ok
}

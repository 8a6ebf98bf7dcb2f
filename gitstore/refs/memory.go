package refs

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	gitstorer "github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/git-hegel/git-hegel/engine"
)

// Memory adapts a go-git storer.ReferenceStorer (the in-memory storage
// unit tests use).
//
// Compare-and-swap happens under mu: go-git's CheckAndSetReference differs
// between storages (memory storage's cannot express "must not exist", and
// the filesystem one does not use git's lock protocol), so it is not used.
// mu only orders updates made through this Memory: do not share the
// underlying storer with another writer, and use Files for a repository
// on disk.
type Memory struct {
	s  gitstorer.ReferenceStorer
	mu sync.Mutex
}

var _ Backend = (*Memory)(nil)

// NewMemory returns the refs of s, a go-git reference storer.
func NewMemory(s gitstorer.ReferenceStorer) *Memory { return &Memory{s: s} }

// Read returns the hash name points at, or an error wrapping engine.ErrNotFound.
func (r *Memory) Read(name plumbing.ReferenceName) (plumbing.Hash, error) {
	if err := CheckName(name); err != nil {
		return plumbing.ZeroHash, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	h, ok, err := r.current(name)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if !ok {
		return plumbing.ZeroHash, fmt.Errorf("ref %s: %w", name, engine.ErrNotFound)
	}
	return h, nil
}

// Update moves name from old to new; see Backend.
func (r *Memory) Update(name plumbing.ReferenceName, old, new plumbing.Hash) error {
	if err := CheckName(name); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	cur, exists, err := r.current(name)
	if err != nil {
		return fmt.Errorf("update ref %s: %w", name, err)
	}
	if err := compareOld(name, old, cur, exists); err != nil {
		return err
	}
	if new.IsZero() {
		if !exists {
			return nil
		}
		if err := r.s.RemoveReference(name); err != nil {
			return fmt.Errorf("delete ref %s: %w", name, err)
		}
		return nil
	}
	if !exists {
		// Same rule as git's files backend: refs/a and refs/a/b cannot
		// both exist.
		if err := r.checkAvailable(name); err != nil {
			return err
		}
	}
	if err := r.s.SetReference(plumbing.NewHashReference(name, new)); err != nil {
		return fmt.Errorf("update ref %s: %w", name, err)
	}
	return nil
}

// UpdateMsg is Update: the in-memory storage keeps no reflogs.
func (r *Memory) UpdateMsg(name plumbing.ReferenceName, old, new plumbing.Hash, _ Reflog) error {
	return r.Update(name, old, new)
}

// List returns the direct refs whose names start with prefix, sorted.
func (r *Memory) List(prefix string) ([]Ref, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var refs []Ref
	err := r.forEach(func(ref *plumbing.Reference) {
		if strings.HasPrefix(string(ref.Name()), prefix) {
			refs = append(refs, Ref{Name: ref.Name(), Hash: ref.Hash()})
		}
	})
	if err != nil {
		return nil, fmt.Errorf("list refs: %w", err)
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Name < refs[j].Name })
	return refs, nil
}

func (r *Memory) current(name plumbing.ReferenceName) (plumbing.Hash, bool, error) {
	ref, err := r.s.Reference(name)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, false, nil
	}
	if err != nil {
		return plumbing.ZeroHash, false, fmt.Errorf("read ref %s: %w", name, err)
	}
	if ref.Type() != plumbing.HashReference {
		return plumbing.ZeroHash, false, fmt.Errorf("ref %s is a symbolic ref (-> %s); only direct refs are supported", name, ref.Target())
	}
	return ref.Hash(), true, nil
}

func (r *Memory) checkAvailable(name plumbing.ReferenceName) error {
	s := string(name)
	var clash string
	err := r.forEach(func(ref *plumbing.Reference) {
		other := string(ref.Name())
		if clash == "" && (strings.HasPrefix(s, other+"/") || strings.HasPrefix(other, s+"/")) {
			clash = other
		}
	})
	if err != nil {
		return fmt.Errorf("update ref %s: %w", name, err)
	}
	if clash != "" {
		return fmt.Errorf("cannot create ref %s: ref %s exists", name, clash)
	}
	return nil
}

// forEach calls fn for every direct ref under refs/.
func (r *Memory) forEach(fn func(*plumbing.Reference)) error {
	iter, err := r.s.IterReferences()
	if err != nil {
		return err
	}
	defer iter.Close()
	return iter.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() == plumbing.HashReference && strings.HasPrefix(string(ref.Name()), "refs/") {
			fn(ref)
		}
		return nil
	})
}

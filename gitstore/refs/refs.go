package refs

import (
	"github.com/go-git/go-git/v5/plumbing"
)

// Ref is a name and the object it points at.
type Ref struct {
	Name plumbing.ReferenceName
	Hash plumbing.Hash
}

// Backend reads and updates refs with compare-and-swap. There are two
// implementations: Files speaks git's own loose-ref and packed-refs
// protocol on a filesystem (a real repository, or memfs), and Memory wraps
// a go-git reference storer (the in-memory storage used by unit tests).
//
// Only direct refs are handled: refs/hegel/* are never symbolic.
type Backend interface {
	// Read returns the hash a ref points at, or an error wrapping
	// engine.ErrNotFound if it does not exist.
	Read(name plumbing.ReferenceName) (plumbing.Hash, error)
	// Update moves a ref from old to new atomically. old == ZeroHash means
	// the ref must not exist yet; new == ZeroHash deletes it. A mismatch
	// returns an error wrapping engine.ErrConflict and changes nothing.
	Update(name plumbing.ReferenceName, old, new plumbing.Hash) error
	// UpdateMsg is Update with what its reflog entry says.
	UpdateMsg(name plumbing.ReferenceName, old, new plumbing.Hash, u Reflog) error
	// List returns every ref whose name starts with prefix, sorted by name.
	List(prefix string) ([]Ref, error)
}

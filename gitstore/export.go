package gitstore

import (
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// These wrappers give the rollback package the same ref protocol and object
// writing the rest of gitstore uses, so there is one implementation of each.

// ReadRef returns what a ref points at (an error wrapping ErrNotFound if it
// does not exist).
func (r *Repo) ReadRef(name string) (plumbing.Hash, error) {
	return r.refs.Read(plumbing.ReferenceName(name))
}

// UpdateRef moves a ref from old to new with git's lock protocol and
// compare-and-swap (ZeroHash old: must not exist; ZeroHash new: delete).
// Its reflog entry (refs.Reflogs) says the new commit's subject.
func (r *Repo) UpdateRef(name string, old, new plumbing.Hash) error {
	return r.refs.Update(plumbing.ReferenceName(name), old, new)
}

// UpdateRefMsg is UpdateRef with msg as the reflog entry's message.
func (r *Repo) UpdateRefMsg(name string, old, new plumbing.Hash, msg string) error {
	return r.refs.UpdateMsg(plumbing.ReferenceName(name), old, new, refs.Reflog{Msg: msg})
}

// RewriteRef is UpdateRef for a chain that was rewritten rather than
// extended (a checkpoint chain cut to its bound): the ref's reflog starts
// afresh with this update, so that nothing cut off stays reachable
// through it for git gc.
func (r *Repo) RewriteRef(name string, old, new plumbing.Hash, msg string) error {
	return r.refs.UpdateMsg(plumbing.ReferenceName(name), old, new, refs.Reflog{Msg: msg, Restart: true})
}

// RewriteChainRef is RewriteRef for a commit chain whose entry below the
// new tip is below: the restarted reflog names below first, then new, so
// that doctor can fall back to below if the tip's commit is ever lost,
// while the log keeps nothing reachable that new does not.
func (r *Repo) RewriteChainRef(name string, old, new, below plumbing.Hash, msg string) error {
	return r.refs.UpdateMsg(plumbing.ReferenceName(name), old, new, refs.Reflog{Msg: msg, Restart: true, RestartFrom: below})
}

// UpdateDetachedHead moves a detached HEAD (in this worktree's git dir)
// from old to new with the same lock protocol and compare-and-swap as
// UpdateRef. A HEAD that is not detached, or not at old, is a conflict.
func (r *Repo) UpdateDetachedHead(old, new plumbing.Hash) error {
	if r.GitDir == "" {
		if old.IsZero() || new.IsZero() {
			return fmt.Errorf("cannot move a detached HEAD from %s to %s", old, new)
		}
		return r.storage.SetReference(plumbing.NewHashReference(plumbing.HEAD, new))
	}
	return r.gitDirRefs().UpdateDetachedHead(old, new)
}

// ListRefs returns the refs under prefix, sorted by name.
func (r *Repo) ListRefs(prefix string) ([]refs.Ref, error) { return r.refs.List(prefix) }

// CommitTree writes a commit with the repository's identity and clock.
func (r *Repo) CommitTree(tree plumbing.Hash, parents []plumbing.Hash, msg string) (plumbing.Hash, error) {
	return r.writeCommit(tree, parents, msg)
}

// WriteBlob stores data as a blob.
func (r *Repo) WriteBlob(data []byte) (plumbing.Hash, error) { return r.writeBlob(data) }

// ReadDoc reads the versioned document at ref.
func (r *Repo) ReadDoc(ref string) (*Doc, error) { return r.readDoc(plumbing.ReferenceName(ref)) }

// ReadDocAt reads the versioned document stored in commit h.
func (r *Repo) ReadDocAt(ref string, h plumbing.Hash) (*Doc, error) {
	return r.readDocAt(plumbing.ReferenceName(ref), h)
}

// WriteDoc stores files as the next version of the document at ref (see
// writeDoc).
func (r *Repo) WriteDoc(ref string, parent plumbing.Hash, files map[string][]byte, msg string, extra ...plumbing.Hash) (plumbing.Hash, error) {
	return r.writeDoc(plumbing.ReferenceName(ref), parent, files, msg, extra...)
}

// CommitTreeBy is CommitTree naming author as the commit's author (the
// committer is still the repository's identity): a checkpoint rewritten
// when its chain is cut keeps who took it.
func (r *Repo) CommitTreeBy(tree plumbing.Hash, parents []plumbing.Hash, msg string, author object.Signature) (plumbing.Hash, error) {
	c := &object.Commit{
		Author:       author,
		Committer:    r.signature(),
		Message:      strings.TrimRight(msg, "\n") + "\n",
		TreeHash:     tree,
		ParentHashes: parents,
	}
	data, err := encodeObject(c)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	h, err := r.objects.Write(plumbing.CommitObject, data)
	if err == nil {
		r.objects.Remember(h, plumbing.CommitObject, data)
	}
	return h, err
}

// RemoveRefAndLog deletes ref name (if it is still at old) and its reflog:
// for a ref that holds objects only while a file names them (the stash's
// journal), whose log would otherwise keep them from git gc afterwards.
func (r *Repo) RemoveRefAndLog(name string, old plumbing.Hash) error {
	ref := plumbing.ReferenceName(name)
	if err := r.refs.UpdateMsg(ref, old, plumbing.ZeroHash, refs.Reflog{Msg: "delete"}); err != nil {
		return err
	}
	r.dropReflog(ref)
	return nil
}

package refs

import (
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
)

// A broken ref is a loose ref file whose content is no value: empty (a
// crash or a full disk while something wrote it), not a hash, or a
// symbolic ref where git-hegel writes only direct ones. As git does
// ("warning: ignoring broken ref"), a listing leaves it out with a
// warning instead of failing: one damaged file must not stop every
// command that lists tasks, nor the agent hook's lock check. Reading that
// one ref still fails, and `git hegel doctor` finds it (ListBroken) and
// --fix replaces it (ReplaceBroken); git's own update-ref refuses to
// touch it.

// ErrBroken matches the error of reading a broken ref.
var ErrBroken = errors.New("broken ref")

// errSymbolic matches the error of reading a symbolic ref (refs/remotes/
// origin/HEAD in most clones): git-hegel writes none and reads none, but
// it is no damage, so a listing leaves it out without a word (it names
// another ref, listed under its own name).
var errSymbolic = errors.New("symbolic ref")

type symbolicError struct{ msg string }

func (e *symbolicError) Error() string        { return e.msg }
func (e *symbolicError) Is(target error) bool { return target == errSymbolic }

// brokenError is a broken ref's error: its message says what is wrong
// with the file.
type brokenError struct{ msg string }

func (e *brokenError) Error() string        { return e.msg }
func (e *brokenError) Is(target error) bool { return target == ErrBroken }

// BrokenRef is a broken ref a listing left out.
type BrokenRef struct {
	Name plumbing.ReferenceName
	Err  error
}

// warnBroken reports a broken ref the listing leaves out.
func (r *Files) warnBroken(b BrokenRef) {
	if r.warn == nil {
		return
	}
	if _, seen := r.brokenWarned.LoadOrStore(b.Name, true); seen {
		return
	}
	r.warn(fmt.Sprintf("ignoring broken ref %s (%v); 'git hegel doctor' says more", b.Name, b.Err))
}

// ListBroken returns the broken refs whose names start with prefix.
func (r *Files) ListBroken(prefix string) ([]BrokenRef, error) {
	var broken []BrokenRef
	if _, err := r.list(prefix, &broken); err != nil {
		return nil, err
	}
	return broken, nil
}

// ReplaceBroken writes new (zero: deletes the ref, from packed-refs too)
// over name, which must still be broken: nothing else can move a ref whose
// value cannot be read and compared.
func (r *Files) ReplaceBroken(name plumbing.ReferenceName, new plumbing.Hash, u Reflog) error {
	if err := CheckName(name); err != nil {
		return err
	}
	return r.updateWith(name, plumbing.ZeroHash, new, u, true)
}

package refs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore/objects"
)

// HeadState is what HEAD holds: a branch (Branch, a full ref name such as
// refs/heads/main, which may not exist yet) or, when Branch is "", a
// detached commit.
type HeadState struct {
	Branch plumbing.ReferenceName
	Commit plumbing.Hash // detached HEAD only
}

func (h HeadState) content() string {
	if h.Branch != "" {
		return "ref: " + string(h.Branch) + "\n"
	}
	return h.Commit.String() + "\n"
}

func (h HeadState) String() string {
	if h.Branch != "" {
		return string(h.Branch)
	}
	return "detached " + h.Commit.String()
}

// Check refuses a state HEAD must never be given: a branch outside
// refs/heads/ or with a name git refuses, or a detached HEAD at no commit.
func (h HeadState) Check() error {
	if h.Branch != "" {
		if err := CheckName(h.Branch); err != nil {
			return err
		}
		if !strings.HasPrefix(string(h.Branch), "refs/heads/") {
			return fmt.Errorf("cannot point HEAD at %s: not a branch", h.Branch)
		}
	} else if h.Commit.IsZero() {
		return errors.New("cannot detach HEAD at no commit")
	}
	return nil
}

// ParseHead reads the content of a HEAD file: "ref: <name>", or the name
// of the commit a detached HEAD is at (ok is false for anything else).
func ParseHead(data []byte) (h HeadState, ok bool) {
	s := strings.TrimRight(string(data), " \t\r\n")
	if target, ok := strings.CutPrefix(s, "ref:"); ok {
		return HeadState{Branch: plumbing.ReferenceName(strings.TrimSpace(target))}, true
	}
	c, ok := objects.ParseHex(s)
	if !ok {
		return HeadState{}, false
	}
	return HeadState{Commit: c}, true
}

// SetHead points HEAD (in r's git dir, a worktree's) at a branch or
// detaches it, with git's lock protocol: HEAD.lock is created
// exclusively, HEAD is compared with old (a mismatch is engine.ErrConflict and
// changes nothing), the new content is written to a file beside it,
// fsynced and renamed over HEAD, and the lock removed. It moves no branch.
func (r *Files) SetHead(old, new HeadState) error {
	if err := new.Check(); err != nil {
		return err
	}
	const headFile, lockFile = "HEAD", "HEAD" + LockSuffix
	if err := r.acquireLock(plumbing.HEAD, lockFile); err != nil {
		return err
	}
	defer func() { _ = r.fs.Remove(lockFile) }()
	now, err := r.readHeadFile(headFile)
	if err != nil {
		return err
	}
	if now != old {
		return fmt.Errorf("update HEAD: %w: expected %s, but it is %s", engine.ErrConflict, old, now)
	}
	// HEAD.lock keeps its owner marker; the new content goes to a file
	// beside it, fsynced and renamed over HEAD (lockfile.go).
	if err := r.writeValue(headFile, []byte(new.content())); err != nil {
		return fmt.Errorf("update HEAD: %w", err)
	}
	return nil
}

// UpdateDetachedHead moves a detached HEAD (in r's git dir, a
// worktree's) from old to new with the lock protocol and compare-and-swap
// of a ref update. A HEAD that is not detached, or not at old, is a
// conflict.
func (r *Files) UpdateDetachedHead(old, new plumbing.Hash) error {
	if old.IsZero() || new.IsZero() {
		return fmt.Errorf("cannot move a detached HEAD from %s to %s", old, new)
	}
	return r.update(plumbing.HEAD, old, new, Reflog{})
}

// readHeadFile parses the HEAD file p.
func (r *Files) readHeadFile(p string) (HeadState, error) {
	f, err := r.fs.Open(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return HeadState{}, fmt.Errorf("%s does not exist", r.display(p))
		}
		return HeadState{}, fmt.Errorf("read %s: %w", r.display(p), err)
	}
	data, err := io.ReadAll(io.LimitReader(f, 4096))
	_ = f.Close()
	if err != nil {
		return HeadState{}, fmt.Errorf("read %s: %w", r.display(p), err)
	}
	h, ok := ParseHead(data)
	if !ok {
		return HeadState{}, fmt.Errorf("%s is malformed: %q", r.display(p), truncate(data, 80))
	}
	return h, nil
}

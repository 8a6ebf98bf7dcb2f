package gitstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

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

// SetHead points HEAD (in this worktree's git dir) at a branch or detaches
// it, with git's lock protocol: HEAD.lock is created exclusively, HEAD is
// compared with old (a mismatch is ErrConflict and changes nothing), the
// new content is written to a file beside it, fsynced and renamed over
// HEAD, and the lock removed. It moves no
// branch; see UpdateRef for that.
func (r *Repo) SetHead(old, new HeadState) error {
	if new.Branch != "" {
		if err := checkRefName(new.Branch); err != nil {
			return err
		}
		if !strings.HasPrefix(string(new.Branch), "refs/heads/") {
			return fmt.Errorf("cannot point HEAD at %s: not a branch", new.Branch)
		}
	} else if new.Commit.IsZero() {
		return errors.New("cannot detach HEAD at no commit")
	}
	if r.GitDir == "" {
		cur, err := r.storage.Reference(plumbing.HEAD)
		if err != nil {
			return fmt.Errorf("cannot read HEAD: %w", err)
		}
		now := HeadState{Commit: cur.Hash()}
		if cur.Type() == plumbing.SymbolicReference {
			now = HeadState{Branch: cur.Target()}
		}
		if now != old {
			return fmt.Errorf("update HEAD: %w: expected %s, but it is %s", ErrConflict, old, now)
		}
		if new.Branch != "" {
			return r.storage.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, new.Branch))
		}
		return r.storage.SetReference(plumbing.NewHashReference(plumbing.HEAD, new.Commit))
	}
	fr := newFileRefs(osfsAt(r.GitDir))
	fr.perm, fr.warn, fr.dur, fr.flush, fr.owner = r.shared, r.warnf, r.dur, r.objects.Flush, r.owner
	const headFile, lockFile = "HEAD", "HEAD" + lockSuffix
	if err := fr.acquireLock(plumbing.HEAD, lockFile); err != nil {
		return err
	}
	defer func() { _ = fr.fs.Remove(lockFile) }()
	now, err := readHeadFile(fr, headFile)
	if err != nil {
		return err
	}
	if now != old {
		return fmt.Errorf("update HEAD: %w: expected %s, but it is %s", ErrConflict, old, now)
	}
	// HEAD.lock keeps its owner marker; the new content goes to a file
	// beside it, fsynced and renamed over HEAD (lockfile.go).
	if err := fr.writeValue(headFile, []byte(new.content())); err != nil {
		return fmt.Errorf("update HEAD: %w", err)
	}
	return nil
}

// readHeadFile parses a HEAD file: "ref: <name>" or a commit.
func readHeadFile(fr *fileRefs, p string) (HeadState, error) {
	f, err := fr.fs.Open(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return HeadState{}, fmt.Errorf("%s does not exist", fr.display(p))
		}
		return HeadState{}, fmt.Errorf("read %s: %w", fr.display(p), err)
	}
	data, err := io.ReadAll(io.LimitReader(f, 4096))
	_ = f.Close()
	if err != nil {
		return HeadState{}, fmt.Errorf("read %s: %w", fr.display(p), err)
	}
	s := strings.TrimRight(string(data), " \t\r\n")
	if target, ok := strings.CutPrefix(s, "ref:"); ok {
		return HeadState{Branch: plumbing.ReferenceName(strings.TrimSpace(target))}, nil
	}
	h, ok := objects.ParseHex(s)
	if !ok {
		return HeadState{}, fmt.Errorf("%s is malformed: %q", fr.display(p), truncate(data, 80))
	}
	return HeadState{Commit: h}, nil
}

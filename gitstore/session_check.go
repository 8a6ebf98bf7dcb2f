package gitstore

import (
	"errors"
	"fmt"
	"os"
	"path"
	"time"

	"github.com/git-hegel/git-hegel/engine"
)

// Path is the session file's path relative to the top of the work tree.
func (s *Sessions) Path() string { return s.file() }

// Check reports a session file that exists but cannot be read (nil when it
// reads, or when there is none yet), for `git hegel doctor`.
func (s *Sessions) Check() error {
	_, err := s.LoadSession()
	if err == nil || errors.Is(err, engine.ErrNotFound) {
		return nil
	}
	return err
}

// MoveAside renames a session file that cannot be read to
// "<file>.damaged-<time>" (kept for a person to look at), so the next
// command starts a fresh session; which task this worktree works on is
// rebuilt from the refs. It returns the new name. A session path that is
// a symbolic link or tracked by git is not moved: its error says what to
// do.
func (s *Sessions) MoveAside(now time.Time) (string, error) {
	if err := s.safe(); err != nil {
		return "", err
	}
	unlock, err := s.lock()
	if err != nil {
		return "", err
	}
	defer unlock()
	if err := s.Check(); err == nil {
		return "", nil // repaired meanwhile
	}
	return s.moveAside(now)
}

// moveAside renames the session file (the lock held) to a name no other
// file has yet.
func (s *Sessions) moveAside(now time.Time) (string, error) {
	base := s.file() + ".damaged-" + now.UTC().Format("20060102T150405Z")
	to := base
	for i := 2; ; i++ {
		if _, err := s.r.lstatWorktree(to); errors.Is(err, os.ErrNotExist) {
			break
		}
		to = fmt.Sprintf("%s-%d", base, i)
	}
	if err := s.renameSessionFile(to); err != nil {
		return "", fmt.Errorf("cannot move %s aside: %s", s.file(), oneLine(err.Error()))
	}
	return path.Clean(to), nil
}

// keepDamaged moves a damaged session file aside before a fresh session
// replaces it, and says so: the file held this worktree's cumulative
// totals, which the fresh session starts again from zero.
func (s *Sessions) keepDamaged() error {
	to, err := s.moveAside(s.r.Now())
	if err != nil {
		return err
	}
	s.r.warnf(fmt.Sprintf("%s could not be read; it is kept as %s, and a fresh session starts (its totals from zero; the workflow itself is in the refs)", s.file(), to))
	return nil
}

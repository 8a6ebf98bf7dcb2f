package gitstore

import (
	"errors"
	"fmt"
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
// rebuilt from the refs. It returns the new name.
func (s *Sessions) MoveAside(now time.Time) (string, error) {
	unlock, err := s.lock()
	if err != nil {
		return "", err
	}
	defer unlock()
	if err := s.Check(); err == nil {
		return "", nil // repaired meanwhile
	}
	to := s.file() + ".damaged-" + now.UTC().Format("20060102T150405Z")
	if err := s.r.worktree.Rename(s.file(), to); err != nil {
		return "", fmt.Errorf("cannot move %s aside: %s", s.file(), oneLine(err.Error()))
	}
	return path.Clean(to), nil
}

package gitstore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/git-hegel/git-hegel/gitstore/objects"
	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// The session file lives in the working tree, and a working tree holds
// whatever a cloned repository committed: a `.hegel` that is a symbolic
// link (into .git/refs/heads, to a directory outside the worktree), or a
// `.hegel/state.json` that is one (to a tracked file, to .git/config), or
// a state.json committed as a plain file. Writing the session through any
// of them overwrites what the link points at. So before the session is
// read or written, every directory from the top of the work tree down to
// the session file is checked with lstat (a real directory, never a
// link), the file itself must be a regular file or missing, and neither
// may be tracked by git; the file is then opened with O_NOFOLLOW where
// the system has it, created with O_EXCL, and replaced by a rename, none
// of which follows a link in the last component.

// UnsafeSessionError refuses a session path git-hegel will not read or
// write: a symbolic link, something that is not a directory or a regular
// file, or a path git tracks. Its message says what to do.
type UnsafeSessionError struct {
	Path string // relative to the top of the work tree
	msg  string
}

func (e *UnsafeSessionError) Error() string { return e.msg }

// sessionGuard caches the outcome of checkSessionPath for one directory:
// a command reads the session several times.
type sessionGuard struct {
	dir string
	err error
}

// safe checks the session's directory and file (see the top of this
// file); nil means both may be read and written.
func (s *Sessions) safe() error {
	if g := s.r.sessGuard; g != nil && g.dir == s.dir {
		return g.err
	}
	err := s.checkPath()
	s.r.sessGuard = &sessionGuard{dir: s.dir, err: err}
	return err
}

func (s *Sessions) checkPath() error {
	parts := strings.Split(s.dir, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		fi, err := s.r.lstatWorktree(p)
		if errors.Is(err, os.ErrNotExist) {
			break // created later, one directory at a time (mkdirSession)
		}
		if err != nil {
			return fmt.Errorf("cannot read %s: %s", p, oneLine(err.Error()))
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return s.linkError(p)
		}
		if !fi.IsDir() {
			return s.unsafef(p, "%s is not a directory, and git-hegel keeps this worktree's session in %s/: move it away and run the command again", p, s.dir)
		}
	}
	f := s.file()
	fi, err := s.r.lstatWorktree(f)
	switch {
	case errors.Is(err, os.ErrNotExist) || isNotDir(err):
	case err != nil:
		return fmt.Errorf("cannot read %s: %s", f, oneLine(err.Error()))
	case fi.Mode()&os.ModeSymlink != 0:
		return s.linkError(f)
	case !fi.Mode().IsRegular():
		return s.unsafef(f, "%s is not a regular file, and git-hegel keeps this worktree's session there: move it away and run the command again", f)
	}
	tracked, err := s.r.indexHas(s.dir, f)
	if err != nil {
		return err
	}
	if tracked != "" {
		return s.unsafef(tracked, "%s is tracked by git, but it holds this worktree's private session: run 'git rm -r --cached %s' (and commit that), then run the command again", tracked, tracked)
	}
	return nil
}

func (s *Sessions) linkError(p string) error {
	to := ""
	if t, err := s.r.readlinkWorktree(p); err == nil {
		to = " (to " + oneLine(t) + ")"
	}
	return s.unsafef(p, "%s is a symbolic link%s, and git-hegel never writes its session through one: remove the link (and 'git rm --cached %s' if it is committed), then run the command again", p, to, p)
}

func (s *Sessions) unsafef(p, format string, a ...any) error {
	return &UnsafeSessionError{Path: p, msg: fmt.Sprintf(format, a...)}
}

// lstatWorktree is lstat of a slash-separated path below the top of the
// work tree. A symbolic link among the parent directories is followed by
// the system: callers check the path one component at a time.
func (r *Repo) lstatWorktree(p string) (os.FileInfo, error) {
	if r.WorkTree == "" {
		return r.worktree.Lstat(p)
	}
	return os.Lstat(r.worktreePath(p))
}

func (r *Repo) readlinkWorktree(p string) (string, error) {
	if r.WorkTree == "" {
		return r.worktree.Readlink(p)
	}
	return os.Readlink(r.worktreePath(p))
}

func (r *Repo) worktreePath(p string) string {
	return filepath.Join(r.WorkTree, filepath.FromSlash(p))
}

// mkdirSession creates the session's directory (see mkdirWorktree).
func (s *Sessions) mkdirSession() error {
	err := s.r.mkdirWorktree(s.dir)
	var link *linkInPathError
	if errors.As(err, &link) {
		return s.linkError(link.path)
	}
	return err
}

// linkInPathError is a symbolic link mkdirWorktree found on its way.
type linkInPathError struct{ path string }

func (e *linkInPathError) Error() string { return e.path + " is a symbolic link" }

// mkdirWorktree creates a directory below the top of the work tree one
// component at a time, each with mkdir (which never follows a link) and
// then lstat, so a link on the way is refused rather than followed.
func (r *Repo) mkdirWorktree(dir string) error {
	if r.WorkTree == "" {
		return r.worktree.MkdirAll(dir, 0o755)
	}
	parts := strings.Split(dir, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		err := os.Mkdir(r.worktreePath(p), 0o777)
		if err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
		fi, err := os.Lstat(r.worktreePath(p))
		if err != nil {
			return err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return &linkInPathError{path: p}
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory", p)
		}
	}
	return nil
}

// readSessionFile reads the session file without following a link in its
// last component (the directories were checked by safe).
func (s *Sessions) readSessionFile() ([]byte, error) {
	if s.r.WorkTree == "" {
		return readFile(s.r.worktree, s.file())
	}
	f, err := os.OpenFile(s.r.worktreePath(s.file()), os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		if isLinkLoop(err) {
			return nil, s.linkError(s.file())
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, s.unsafef(s.file(), "%s is not a regular file, and git-hegel keeps this worktree's session there: move it away and run the command again", s.file())
	}
	return io.ReadAll(f)
}

// writeSessionFile replaces the session file: a temporary file created
// with O_EXCL beside it (never through a link), fsynced if core.fsync
// wants references hardened, then renamed over it (rename replaces a link
// in the last component rather than following it).
func (s *Sessions) writeSessionFile(data []byte) error {
	if s.r.WorkTree == "" {
		return writeFileAtomic(s.r.worktree, s.file(), data, s.r.dur)
	}
	name := s.r.worktreePath(s.file())
	tmp := name + ".tmp-" + objects.NewID()[:8]
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY|oNoFollow, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = s.r.dur.Sync(objects.FsyncReference, f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

// renameSessionFile renames the session file to to (in the same
// directory) without following a link.
func (s *Sessions) renameSessionFile(to string) error {
	if s.r.WorkTree == "" {
		return s.r.worktree.Rename(s.file(), to)
	}
	return os.Rename(s.r.worktreePath(s.file()), s.r.worktreePath(to))
}

// SessionLockPath is the session lock's path on disk, or "" when there is
// no work tree on disk or the session's directory is not one git-hegel
// writes in (so doctor and the stale-lock breaker never remove a file
// through a link).
func (r *Repo) SessionLockPath() string {
	if r.WorkTree == "" {
		return ""
	}
	s := r.Sessions()
	if s.safe() != nil {
		return ""
	}
	return r.worktreePath(path.Join(s.dir, sessionFile+refs.LockSuffix))
}

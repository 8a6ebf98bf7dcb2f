package gitstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore/objects"
	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// HegelDir is the per-worktree directory: state.json (session metadata,
// never committed) and workflows/ (definitions a team may commit).
const HegelDir = ".hegel"

const (
	sessionFile     = "state.json"
	sessionLockWait = 3 * time.Second
)

// Sessions is the engine.SessionStore on the working tree's .hegel/state.json.
type Sessions struct {
	r   *Repo
	dir string // the .hegel directory, relative to the top of the work tree
	// vet, when set, is what a guide, partial, template or context file
	// read for a prompt passes through, with its path (WithVet).
	vet func(path string, b []byte) []byte
}

var _ engine.SessionStore = (*Sessions)(nil)

// Sessions returns the session store. Like .git, the .hegel directory is
// found by walking up from the current directory (never above the top of
// the work tree); without one, it will be created at the top. A .hegel
// that is a symbolic link is found too, so that the session's check
// (session_path.go) refuses it rather than a parent's being used.
func (r *Repo) Sessions() *Sessions {
	dir := r.Subdir
	for {
		p := path.Join(dir, HegelDir)
		if r.sessionCandidate(p) {
			return &Sessions{r: r, dir: p}
		}
		if dir == "" || dir == "." {
			break
		}
		dir = path.Dir(dir)
		if dir == "." {
			dir = ""
		}
	}
	return &Sessions{r: r, dir: HegelDir}
}

// sessionCandidate reports whether p (slash-separated, below the top of
// the work tree) is a .hegel to use: a directory, or a symbolic link
// (refused later, with what to do), reached through real directories
// only: a .hegel beyond a linked directory is not this worktree's.
func (r *Repo) sessionCandidate(p string) bool {
	parts := strings.Split(p, "/")
	for i := range parts {
		fi, err := r.lstatWorktree(strings.Join(parts[:i+1], "/"))
		if err != nil {
			return false
		}
		if i == len(parts)-1 {
			return fi.IsDir() || fi.Mode()&os.ModeSymlink != 0
		}
		if !fi.IsDir() || fi.Mode()&os.ModeSymlink != 0 {
			return false
		}
	}
	return false
}

// Dir returns the .hegel directory relative to the top of the work tree.
func (s *Sessions) Dir() string { return s.dir }

func (s *Sessions) file() string { return path.Join(s.dir, sessionFile) }

// LoadSession implements engine.SessionStore.
func (s *Sessions) LoadSession() (*engine.Session, error) {
	if err := s.safe(); err != nil {
		return nil, err
	}
	b, err := s.readSessionFile()
	if errors.Is(err, os.ErrNotExist) || isNotDir(err) {
		return nil, fmt.Errorf("%s: %w", s.file(), engine.ErrNotFound)
	}
	var unsafe *UnsafeSessionError
	if errors.As(err, &unsafe) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %s", s.file(), oneLine(err.Error()))
	}
	var sess engine.Session
	if err := json.Unmarshal(b, &sess); err != nil || sess.SessionID == "" {
		return nil, fmt.Errorf("%s: %w", s.file(), engine.ErrCorruptSession)
	}
	return &sess, nil
}

// UpdateSession implements engine.SessionStore: lock, read, apply, write a
// temporary file, fsync it if core.fsync includes references (the
// session names the active task as HEAD names the branch), rename,
// unlock. A missing file starts a fresh session; so does a corrupt one,
// which is first moved aside (state.json.damaged-<time>, with a warning)
// so that what it held, its cumulative totals, stays for a person to
// read. The workflow itself lives in the refs. Nothing is read or
// written through a symbolic link (session_path.go).
func (s *Sessions) UpdateSession(fn func(*engine.Session) error) (*engine.Session, error) {
	if err := s.safe(); err != nil {
		return nil, err
	}
	if err := s.mkdirSession(); err != nil {
		var unsafe *UnsafeSessionError
		if errors.As(err, &unsafe) {
			return nil, err
		}
		return nil, fmt.Errorf("cannot create %s: %s", s.dir, oneLine(err.Error()))
	}
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	sess, err := s.LoadSession()
	if err != nil {
		if !errors.Is(err, engine.ErrNotFound) && !errors.Is(err, engine.ErrCorruptSession) {
			return nil, err
		}
		if errors.Is(err, engine.ErrNotFound) {
			// First session here: make sure git never shows the file.
			if _, err := s.r.ensureExcluded(); err != nil {
				return nil, err
			}
		} else if err := s.keepDamaged(); err != nil {
			return nil, err
		}
		sess = &engine.Session{SessionID: objects.NewID(), StartedAt: s.r.Now()}
	}
	if err := fn(sess); err != nil {
		return nil, err
	}
	b, err := encodeJSON(sess)
	if err != nil {
		return nil, err
	}
	if err := s.writeSessionFile(b); err != nil {
		return nil, fmt.Errorf("cannot write %s: %s", s.file(), oneLine(err.Error()))
	}
	return sess, nil
}

// lock takes state.json.lock, which holds gitstore's owner marker
// (refs.AcquireLock): a lock a dead git-hegel left is removed with a warning,
// any other is waited for and then reported with how to remove it.
func (s *Sessions) lock() (func(), error) {
	fs := s.r.worktree
	name := s.file() + ".lock"
	if s.r.WorkTree != "" {
		// O_EXCL (acquireFileLock) never follows a link at name, and
		// safe checked the directories above it.
		p := s.r.worktreePath(name)
		// The work tree is not the git dir: no shared permissions.
		if err := refs.AcquireLock(p, objects.SharedPerm{}, sessionLockWait, s.r.warnf, s.r.owner); err != nil {
			if errors.Is(err, refs.ErrLocked) {
				return nil, fmt.Errorf("cannot lock %s: %s", s.file(), strings.TrimPrefix(err.Error(), refs.ErrLocked.Error()+": "))
			}
			return nil, fmt.Errorf("cannot lock %s: %s", s.file(), oneLine(err.Error()))
		}
		return func() { _ = os.Remove(p) }, nil
	}
	deadline := time.Now().Add(sessionLockWait)
	for wait := time.Millisecond; ; wait = min(wait*2, 50*time.Millisecond) {
		f, err := fs.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			_, _ = f.Write(refs.ThisOwner().Marker())
			f.Close()
			return func() { _ = fs.Remove(name) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("cannot lock %s: %s", s.file(), oneLine(err.Error()))
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s is locked by another git-hegel; if none is running, remove %s", s.file(), name)
		}
		time.Sleep(wait)
	}
}

// writeFileAtomic writes name through a temporary file in the same
// directory, renamed over it, so readers see the old or the new file,
// never a partial one; it is fsynced first if dur wants references
// hardened.
func writeFileAtomic(fs billy.Filesystem, name string, data []byte, dur *objects.Durability) error {
	tmp := name + ".tmp-" + objects.NewID()[:8]
	f, err := fs.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if sf, ok := f.(objects.OSFile); ok && err == nil {
		err = dur.Sync(objects.FsyncReference, sf) // billy's OS files are *os.File inside
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fs.Rename(tmp, name)
	}
	if err != nil {
		_ = fs.Remove(tmp)
	}
	return err
}

func readFile(fs billy.Filesystem, name string) ([]byte, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	_, err = io.Copy(&buf, f)
	return buf.Bytes(), err
}

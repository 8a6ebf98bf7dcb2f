package refs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/git-hegel/git-hegel/gitstore/objects"
)

// An OwnerFile is this process's lock marker (lockfile.go) written once, in
// <common git dir>/hegel/owners/<pid>-<8 hex>, and hard-linked to each lock
// the process takes: a lock still never exists without its marker, but
// taking one creates no file and releasing one frees no inode. Creating
// a file per lock (a marker written to a temporary file, linked to the
// lock's name) was the costliest part of a stash push after the objects
// themselves: on ext4 every file created checks the inodes freed in the
// last minutes one by one (docs/benchmarks.md, 2026-11-25; decision 123).
//
// A lock is never written to: every lock git-hegel takes holds only the
// marker, and the new content of what it guards goes to a file beside it
// (refs, HEAD, packed-refs, the index, the session file). Writing to one
// would write to all of them. The owner file is read-only for that reason
// (ownerFileMode; not on Windows, where a read-only file cannot be
// removed).
//
// Every opening of one repository in a process shares it (OwnerFor), so a
// server opening the repository per request still has one.
// ReleaseLockOwners removes them as the process ends; one a killed process
// left is removed by the next process that creates its own, once its
// marker proves the owner dead.
// Where a hard link cannot be made (another filesystem, a filesystem
// without links), a lock gets its own marker file as before.
type OwnerFile struct {
	dir  string // <common git dir>/hegel/owners
	perm objects.SharedPerm

	mu     sync.Mutex
	path   string // "" until first used
	broken bool   // links do not work here: fall back for good
}

// ownersDir is where owner files live, relative to the common git dir.
const ownersDir = "hegel/owners"

// owners are the process's owner files, by common git dir.
var owners struct {
	sync.Mutex
	m map[string]*OwnerFile
}

// OwnerFor returns the process's owner file for the repository whose
// common git dir is commonDir.
func OwnerFor(commonDir string, perm objects.SharedPerm) *OwnerFile {
	dir := filepath.Join(commonDir, filepath.FromSlash(ownersDir))
	owners.Lock()
	defer owners.Unlock()
	if o := owners.m[dir]; o != nil {
		return o
	}
	if owners.m == nil {
		owners.m = map[string]*OwnerFile{}
	}
	o := &OwnerFile{dir: dir, perm: perm}
	owners.m[dir] = o
	return o
}

// ReleaseLockOwners removes the process's owner files; the command line
// calls it as it ends. Locks still held keep their marker (a link is a
// name for the same content), and a lock taken afterwards makes the owner
// file again.
func ReleaseLockOwners() {
	owners.Lock()
	defer owners.Unlock()
	for _, o := range owners.m {
		o.close()
	}
}

// errNoLink: the owner file cannot be linked here; create the lock with a
// marker of its own.
var errNoLink = errors.New("lock owner file cannot be linked")

// linkTo creates lockPath as a link to the owner file (fs.ErrExist if the
// lock exists, fs.ErrNotExist if its directory does not), or returns
// errNoLink.
func (o *OwnerFile) linkTo(lockPath string) error {
	if o == nil {
		return errNoLink
	}
	for attempt := 0; attempt < 2; attempt++ {
		p, err := o.ensure()
		if err != nil {
			return errNoLink
		}
		err = linkFile(p, lockPath)
		if err == nil || errors.Is(err, fs.ErrExist) {
			return err
		}
		if errors.Is(err, fs.ErrNotExist) {
			if _, serr := os.Lstat(p); serr == nil {
				return err // the lock's directory is missing
			}
			o.forget(p) // someone removed the owner file: make it again
			continue
		}
		o.mu.Lock()
		o.broken = true // EXDEV, EPERM, EMLINK…
		o.mu.Unlock()
		return errNoLink
	}
	return errNoLink
}

// linkFile is os.Link; tests replace it to see the fallback.
var linkFile = os.Link

// ensure returns the owner file's path, creating it (and sweeping dead
// owners' files) on first use.
func (o *OwnerFile) ensure() (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.broken {
		return "", errNoLink
	}
	if o.path != "" {
		return o.path, nil
	}
	if err := o.perm.MkdirAll(o.dir); err != nil {
		return "", err
	}
	sweepOwnerFiles(o.dir)
	p := filepath.Join(o.dir, strconv.Itoa(os.Getpid())+"-"+objects.NewID()[:8])
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, ownerFileMode)
	if err != nil {
		return "", err
	}
	_, err = f.Write(thisOwner().Marker())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = o.perm.Adjust(p)
	}
	if err != nil {
		os.Remove(p)
		return "", err
	}
	o.path = p
	return p, nil
}

func (o *OwnerFile) forget(p string) {
	o.mu.Lock()
	if o.path == p {
		o.path = ""
	}
	o.mu.Unlock()
}

// close removes the owner file.
func (o *OwnerFile) close() {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.path != "" {
		os.Remove(o.path)
		o.path = ""
	}
}

// sweepOwnerFiles removes the owner files of processes that are provably
// dead (LockDead); any other is left alone. A lock a dead owner still
// holds keeps its marker through its own link and is removed as before
// (RemoveDeadLock).
func sweepOwnerFiles(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		b, err := readHead(p, 4096)
		if err != nil {
			continue
		}
		if o, ok := ParseMarker(b); ok && o.State() == LockDead {
			os.Remove(p)
		}
	}
}

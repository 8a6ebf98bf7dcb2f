package refs

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/git-hegel/git-hegel/gitstore/objects"
)

func newTestOwner(t *testing.T) (*OwnerFile, string) {
	t.Helper()
	dir := t.TempDir()
	o := &OwnerFile{dir: filepath.Join(dir, ownersDir)}
	t.Cleanup(o.close)
	return o, dir
}

// A lock taken through the owner file holds this process's marker, is the
// same file as every other lock of the process, and keeps its marker when
// the owner file goes.
func TestOwnerFileLocks(t *testing.T) {
	o, dir := newTestOwner(t)
	a, b := filepath.Join(dir, "a.lock"), filepath.Join(dir, "b.lock")
	for _, p := range []string{a, b} {
		if err := CreateLock(o, p, objects.SharedPerm{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := CreateLock(o, a, objects.SharedPerm{}); !errors.Is(err, os.ErrExist) {
		t.Fatalf("a held lock taken again: %v", err)
	}
	fa, _ := os.Stat(a)
	fb, _ := os.Stat(b)
	if !os.SameFile(fa, fb) {
		t.Error("the two locks are not links to one owner file")
	}
	if fa.Mode().Perm()&0o222 != 0 && ownerFileMode == 0o444 {
		t.Errorf("owner file mode %v, want read-only", fa.Mode())
	}
	o.close()
	li, err := InspectLock(a)
	if err != nil || li.Owner == nil || li.Owner.PID != os.Getpid() {
		t.Fatalf("lock after the owner file went: %+v, %v", li, err)
	}
	if ents, _ := os.ReadDir(o.dir); len(ents) != 0 {
		t.Errorf("owner files left after close: %v", ents)
	}
	// The next lock makes a new owner file.
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	if err := CreateLock(o, a, objects.SharedPerm{}); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(o.dir); len(ents) != 1 {
		t.Errorf("%d owner files after a new lock, want 1", len(ents))
	}
}

// An owner file removed behind the process's back is made again; a lock
// whose directory is missing is reported as such (AcquireLock makes
// the directory and tries again).
func TestOwnerFileRemovedMeanwhile(t *testing.T) {
	o, dir := newTestOwner(t)
	if err := CreateLock(o, filepath.Join(dir, "a.lock"), objects.SharedPerm{}); err != nil {
		t.Fatal(err)
	}
	p, _ := o.ensure()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := CreateLock(o, filepath.Join(dir, "b.lock"), objects.SharedPerm{}); err != nil {
		t.Fatalf("after the owner file was removed: %v", err)
	}
	if li, err := InspectLock(filepath.Join(dir, "b.lock")); err != nil || li.Owner == nil {
		t.Fatalf("b.lock has no marker: %+v %v", li, err)
	}
	if err := CreateLock(o, filepath.Join(dir, "missing", "c.lock"), objects.SharedPerm{}); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lock in a missing directory: %v, want not-exist", err)
	}
	if err := AcquireLock(filepath.Join(dir, "missing", "c.lock"), objects.SharedPerm{}, lockWait, nil, o); err != nil {
		t.Fatalf("AcquireLock in a missing directory: %v", err)
	}
}

// Where links cannot be made, each lock gets its own marker file, as
// before owner files.
func TestOwnerFileFallsBack(t *testing.T) {
	o, dir := newTestOwner(t)
	old := linkFile
	linkFile = func(string, string) error { return &os.LinkError{Op: "link", Err: syscall.EXDEV} }
	defer func() { linkFile = old }()
	p := filepath.Join(dir, "a.lock")
	if err := CreateLock(o, p, objects.SharedPerm{}); err != nil {
		t.Fatal(err)
	}
	if li, err := InspectLock(p); err != nil || li.Owner == nil || li.Owner.PID != os.Getpid() {
		t.Fatalf("fallback lock: %+v, %v", li, err)
	}
	if !o.broken {
		t.Error("owner file not marked unusable after EXDEV")
	}
	if err := CreateLock(o, p, objects.SharedPerm{}); !errors.Is(err, os.ErrExist) {
		t.Fatalf("fallback lock taken twice: %v", err)
	}
}

// The first lock of a process removes the owner files of dead processes
// and leaves every other one alone.
func TestOwnerFileSweep(t *testing.T) {
	needLinux(t)
	o, _ := newTestOwner(t)
	dead := thisOwner()
	dead.PID, dead.Start = exitedPID(t), 0
	other := dead
	other.Host = "elsewhere/0123"
	files := map[string][]byte{
		"dead":         dead.Marker(),
		"another-host": other.Marker(),
		"live":         thisOwner().Marker(),
		"not-a-marker": []byte("hello\n"),
	}
	for name, b := range files {
		writeMarker(t, filepath.Join(o.dir, name), LockOwner{})
		if err := os.WriteFile(filepath.Join(o.dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := o.ensure(); err != nil {
		t.Fatal(err)
	}
	for name := range files {
		_, err := os.Stat(filepath.Join(o.dir, name))
		if gone := errors.Is(err, os.ErrNotExist); gone != (name == "dead") {
			t.Errorf("%s: gone=%v", name, gone)
		}
	}
}

// Every Repo of one repository in a process shares one owner file, so a
// server that opens the repository per request does not make one each
// time; ReleaseLockOwners removes them.
func TestOwnerFileShared(t *testing.T) {
	dir := t.TempDir()
	a, b := OwnerFor(dir, objects.SharedPerm{}), OwnerFor(dir, objects.SharedPerm{})
	if a != b {
		t.Fatal("two owner files for one repository")
	}
	if OwnerFor(t.TempDir(), objects.SharedPerm{}) == a {
		t.Fatal("one owner file for two repositories")
	}
	p, err := a.ensure()
	if err != nil {
		t.Fatal(err)
	}
	ReleaseLockOwners()
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("owner file after ReleaseLockOwners: %v", err)
	}
}

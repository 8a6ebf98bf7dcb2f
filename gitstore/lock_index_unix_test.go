//go:build unix

package gitstore

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/engine"
)

// A lock index that is not a regular file (a FIFO) is built again, not
// read: reading it would block the hook, and the agent's edit, for good.
func TestLockIndexNotRegular(t *testing.T) {
	r := newDiskRepo(t)
	task := sampleTask("b")
	task.State.FilesLocked = []engine.FileLock{{Path: "src/x.go", At: fixedNow}}
	if _, err := r.Tasks().SaveTask(task, "lock"); err != nil {
		t.Fatal(err)
	}
	if err := r.common.MkdirAll("hegel", 0o777); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(r.CommonDir, filepath.FromSlash(lockIndexFile)), 0o644); err != nil {
		t.Skip("no FIFO here:", err)
	}
	done := make(chan int, 1)
	go func() {
		sts, err := r.Tasks().LockStates()
		if err != nil {
			t.Error(err)
		}
		done <- len(sts)
	}()
	select {
	case n := <-done:
		if n != 1 {
			t.Fatalf("%d lock states, want 1", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("LockStates blocked on a FIFO in place of the lock index")
	}
	if fi, err := r.common.Lstat(lockIndexFile); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the index was not written again: %v %v", fi, err)
	}
}

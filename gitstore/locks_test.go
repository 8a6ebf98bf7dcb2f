package gitstore

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// Locks lists every lock of the repository with its owner and state (the
// API git hegel doctor reads).
func TestRepoLocks(t *testing.T) {
	needLinux(t)
	r, dir := stashDiskRepo(t)
	dead := refs.ThisOwner()
	dead.PID, dead.Start = exitedPID(t), 0
	gd := filepath.Join(dir, ".git")
	writeMarker(t, filepath.Join(gd, "refs", "hegel", "tasks", "a.lock"), dead)
	writeMarker(t, filepath.Join(gd, "index.lock"), refs.ThisOwner())
	os.WriteFile(filepath.Join(gd, "packed-refs.lock"), nil, 0o644)
	writeMarker(t, filepath.Join(dir, ".hegel", "state.json.lock"), dead)
	locks, err := r.Locks()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, li := range locks {
		rel, _ := filepath.Rel(dir, li.Path)
		owner := "none"
		if li.Owner != nil {
			owner = fmt.Sprint(li.Owner.PID == dead.PID)
		}
		got = append(got, fmt.Sprintf("%s %s dead-pid=%s", rel, li.State, owner))
	}
	want := []string{
		".git/index.lock alive dead-pid=false",
		".git/packed-refs.lock unknown dead-pid=none",
		".git/refs/hegel/tasks/a.lock dead dead-pid=true",
		".hegel/state.json.lock dead dead-pid=true",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Locks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func needLinux(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("owner checks need /proc (Linux)")
	}
}

// exitedPID returns the pid of a process that ran on this host and exited.
func exitedPID(t *testing.T) int {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid
}

func writeMarker(t *testing.T, path string, o refs.LockOwner) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, o.Marker(), 0o644); err != nil {
		t.Fatal(err)
	}
}

package refs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/gitstore/objects"
)

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

func writeMarker(t *testing.T, path string, o LockOwner) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, o.Marker(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLockMarkerRoundTrip(t *testing.T) {
	me := thisOwner()
	got, ok := ParseMarker(me.Marker())
	if !ok || got != me {
		t.Fatalf("parse(marker) = %+v, %v; want %+v", got, ok, me)
	}
	if s := got.State(); s != LockAlive {
		t.Errorf("this process's own lock is %v, want alive", s)
	}
	for _, b := range []string{"", "deadbeef\n", "git-hegel lock host=x\n", "something else"} {
		if _, ok := ParseMarker([]byte(b)); ok {
			t.Errorf("%q parsed as a marker", b)
		}
	}
	if o, ok := ParseMarker([]byte("git-hegel pid 42\n")); !ok || o.PID != 42 || o.State() != LockUnknown {
		t.Errorf("legacy index marker: %+v %v %v (want pid 42, unknown: no host to check)", o, ok, o.State())
	}
}

// Which owners are provably dead, and which are never touched.
func TestLockOwnerStates(t *testing.T) {
	needLinux(t)
	me := thisOwner()
	sleeper := exec.Command("sleep", "30")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	live := me
	live.PID, live.Start = sleeper.Process.Pid, processStart(sleeper.Process.Pid)
	dead := me
	dead.PID, dead.Start = exitedPID(t), 0
	reused := live
	reused.Start = live.Start + 1 // the pid runs, but it is another process
	otherHost := dead
	otherHost.Host = "elsewhere/0123"
	rebooted := live
	rebooted.Boot = "00000000-0000-0000-0000-000000000000"
	container := dead
	container.NS = "1"
	for _, c := range []struct {
		name  string
		owner LockOwner
		want  LockState
	}{
		{"live process", live, LockAlive},
		{"exited process", dead, LockDead},
		{"pid reused by another process", reused, LockDead},
		{"another host", otherHost, LockUnknown},
		{"before this host's last boot", rebooted, LockDead},
		{"another pid namespace (container)", container, LockUnknown},
	} {
		if got := c.owner.State(); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestRemoveDeadLock(t *testing.T) {
	needLinux(t)
	dir := t.TempDir()
	dead := thisOwner()
	dead.PID, dead.Start = exitedPID(t), 0
	p := filepath.Join(dir, "x.lock")
	writeMarker(t, p, dead)
	if li, removed, err := RemoveDeadLock(p); err != nil || !removed || li.Owner == nil || li.Owner.PID != dead.PID {
		t.Fatalf("dead owner's lock: %+v removed=%v err=%v", li, removed, err)
	}
	if _, err := os.Stat(p); err == nil {
		t.Fatal("lock still there")
	}
	// Never removed: no marker, a live owner, another host.
	other := dead
	other.Host = "elsewhere"
	for name, content := range map[string][]byte{
		"empty":        nil,
		"git's value":  []byte(plumbing.ZeroHash.String() + "\n"),
		"live owner":   thisOwner().Marker(),
		"another host": other.Marker(),
	} {
		os.WriteFile(p, content, 0o644)
		if _, removed, err := RemoveDeadLock(p); removed || err != nil {
			t.Errorf("%s: removed=%v err=%v", name, removed, err)
		}
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: the lock is gone", name)
		}
	}
}

// A ref lock a dead git-hegel left is removed at once (one warning), not
// waited for; one held by a live process, or with no marker, is waited
// for and reported with its owner and how to remove it, and left alone.
func TestRefLockOwners(t *testing.T) {
	needLinux(t)
	var warnings []string
	r := &Files{fs: osfs.New(refsNewGitDir(t), osfs.WithBoundOS()), lockTimeout: 300 * time.Millisecond,
		warn: func(m string) { warnings = append(warnings, m) }}
	h1, h2 := refsTestHash(1), refsTestHash(2)
	const name = "refs/hegel/tasks/t"
	if err := r.Update(name, plumbing.ZeroHash, h1); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(r.fs.Root(), "refs", "hegel", "tasks", "t.lock")

	dead := thisOwner()
	dead.PID, dead.Start = exitedPID(t), 0
	writeMarker(t, lock, dead)
	start := time.Now()
	if err := r.Update(name, h1, h2); err != nil {
		t.Fatalf("update over a dead owner's lock: %v", err)
	}
	if el := time.Since(start); el > 200*time.Millisecond {
		t.Errorf("waited %v for a dead owner's lock", el)
	}
	want := fmt.Sprintf("removed %s, left by git-hegel process %d on ", lock, dead.PID)
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], want) || !strings.HasSuffix(warnings[0], ", which is no longer running") {
		t.Errorf("warnings %q, want one starting %q", warnings, want)
	}

	sleeper := exec.Command("sleep", "30")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	live := thisOwner()
	live.PID, live.Start = sleeper.Process.Pid, processStart(sleeper.Process.Pid)
	for what, c := range map[string]struct {
		content []byte
		says    string
	}{
		"live owner": {live.Marker(), fmt.Sprintf("held by git-hegel process %d on ", live.PID)},
		"no marker":  {nil, "no git-hegel marker"},
	} {
		os.WriteFile(lock, c.content, 0o644)
		err := r.Update(name, h2, h1)
		if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "rm '"+lock+"'") {
			t.Errorf("%s: %v", what, err)
		}
		if b, err := os.ReadFile(lock); err != nil || string(b) != string(c.content) {
			t.Errorf("%s: the lock was touched", what)
		}
		os.Remove(lock)
	}
	if got, _ := r.Read(name); got != h2 {
		t.Errorf("ref moved under a held lock: %s", got)
	}
}

// What git-hegel leaves in refs/ while it holds a lock (the marker) and
// after (nothing) is what plain git expects: git waits for the lock and
// fails on it like on its own, and never sees a temporary file as a ref.
func TestRefLocksWithPlainGit(t *testing.T) {
	gitDir := refsNewGitDir(t)
	r := &Files{fs: osfs.New(gitDir, osfs.WithBoundOS())}
	commits := refsMakeCommits(t, gitDir, 2)
	if err := r.Update("refs/hegel/x", plumbing.ZeroHash, commits[0]); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(gitDir, "refs", "hegel", "x.lock")
	if err := createLock(lock, objects.SharedPerm{}); err != nil {
		t.Fatal(err)
	}
	if out, err := refsGitErr(gitDir, "update-ref", "refs/hegel/x", commits[1].String()); err == nil || !strings.Contains(out+err.Error(), "File exists") {
		t.Errorf("git update-ref with git-hegel's lock held: %v\n%s", err, out)
	}
	if out := refsGit(t, gitDir, "for-each-ref", "--format=%(refname)", "refs/hegel/"); strings.TrimSpace(out) != "refs/hegel/x" {
		t.Errorf("git for-each-ref sees %q", out)
	}
	os.Remove(lock)
	if err := r.Update("refs/hegel/x", commits[0], commits[1]); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(gitDir, "refs", "hegel", "*"))
	if len(left) != 1 {
		t.Errorf("files left in refs/hegel: %v", left)
	}
	refsGit(t, gitDir, "fsck", "--strict")
}

package rollback

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/engine"
)

// interrupt leaves the repository as a rollback killed right after it
// stored its safety checkpoint and journal: nothing changed yet, and the
// next command must finish or undo it.
func (tr *testRepo) interrupt(req Request) *Journal {
	tr.t.Helper()
	req.Yes = true
	p, err := tr.m.Prepare(tr.e, engine.TaskOptions{}, req)
	if err != nil {
		tr.t.Fatal(err)
	}
	if err := tr.m.w.lockIndex(); err != nil {
		tr.t.Fatal(err)
	}
	j, _, err := tr.m.begin(tr.e, p)
	if err != nil {
		tr.t.Fatal(err)
	}
	tr.m.w.stopPrefetch()
	// The killed process leaves its index.lock, with its owner marker in
	// it: this process's marker, given a pid that no longer runs.
	tr.m.w.lock = nil
	j.PID = deadPID(tr.t)
	if err := os.WriteFile(tr.m.w.lockPath(), markerFor(tr.t, tr.m.w.lockPath(), j.PID), 0o644); err != nil {
		tr.t.Fatal(err)
	}
	if err := tr.m.w.saveJournal(j); err != nil {
		tr.t.Fatal(err)
	}
	return j
}

// markerFor is the owner marker in lock (written by this process)
// rewritten for pid, another process on this host.
func markerFor(t testing.TB, lock string, pid int) []byte {
	b, err := os.ReadFile(lock)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range strings.Fields(string(b)) {
		switch {
		case strings.HasPrefix(f, "pid="):
			f = "pid=" + strconv.Itoa(pid)
		case strings.HasPrefix(f, "start="):
			continue
		}
		out = append(out, f)
	}
	return []byte(strings.Join(out, " ") + "\n")
}

// deadPID returns the pid of a process that has ended.
func deadPID(t testing.TB) int {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestFinishingRefusesEditsMadeAfterTheCrash: a file edited after a
// rollback was interrupted is neither what the rollback started from nor
// what it goes to; finishing (or undoing) it must not overwrite it.
func TestFinishingRefusesEditsMadeAfterTheCrash(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write("a.txt", "a1\n")
	tr.write("b.txt", "b1\n")
	tr.add("a.txt", "b.txt")
	tr.commit("c1")
	tr.start("minimal")
	atSpec := tr.fingerprint()
	tr.write("a.txt", "a2\n")
	tr.write("b.txt", "b2\n")
	tr.now = tr.now.Add(time.Minute)
	tr.interrupt(Request{Node: "spec"})
	tr.write("a.txt", "edited after the crash\n")
	edited := tr.fingerprint()
	for _, undo := range []bool{false, true} {
		var err error
		if undo {
			_, err = tr.m.UndoInterrupted(tr.e, engine.TaskOptions{})
		} else {
			_, err = tr.m.Finish(tr.e, engine.TaskOptions{})
		}
		if !errors.Is(err, ErrEditedSince) || !strings.Contains(err.Error(), "a.txt changed after the rollback was interrupted") {
			t.Fatalf("undo=%v: err = %v", undo, err)
		}
		if got := tr.fingerprint(); got != edited {
			t.Fatalf("undo=%v: a refused recovery changed something:\n%s", undo, diffLines(edited, got))
		}
	}
	if j, _ := tr.m.Interrupted(); j == nil {
		t.Fatal("the journal is gone")
	}
	// Moved away, the recovery goes on.
	os.Rename(filepath.Join(tr.dir, "a.txt"), filepath.Join(tr.dir, "..", "a.saved"))
	if _, err := tr.m.Finish(tr.e, engine.TaskOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := tr.fingerprint(); got != atSpec {
		t.Errorf("finished:\n%s", diffLines(atSpec, got))
	}
}

// TestRunningRollbackIsNotCalledInterrupted: while the process that wrote
// the journal runs, status, checkpoint and rollback say it is running,
// with its pid; once it is gone, that it was interrupted.
func TestRunningRollbackIsNotCalledInterrupted(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write("a.txt", "a1\n")
	tr.add("a.txt")
	tr.commit("c1")
	tr.start("minimal")
	tr.write("a.txt", "a2\n")
	j := tr.interrupt(Request{Node: "spec"})
	sleeper := exec.Command("sleep", "30")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer sleeper.Process.Kill()
	j.PID = sleeper.Process.Pid
	if err := tr.m.w.saveJournal(j); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(tr.m.w.lockPath(), markerFor(t, tr.m.w.lockPath(), j.PID), 0o644)
	want := "A rollback to 'spec' is running in another process (pid " + strconv.Itoa(j.PID) + "); wait for it to end"
	if got := tr.m.InterruptedNotice(); got != "warning: "+want {
		t.Errorf("status notice = %q", got)
	}
	if _, _, err := tr.m.Take(tr.state(), KindManual, "x"); !errors.Is(err, ErrRunning) || err.Error() != want {
		t.Errorf("checkpoint: %v", err)
	}
	if _, err := tr.rollback(Request{Node: "spec"}); !errors.Is(err, ErrRunning) {
		t.Errorf("rollback: %v", err)
	}
	if _, err := tr.m.Finish(tr.e, engine.TaskOptions{}); !errors.Is(err, ErrRunning) {
		t.Errorf("finish: %v", err)
	}
	if _, err := os.Stat(filepath.Join(tr.dir, ".git", "index.lock")); err != nil {
		t.Errorf("the running rollback's index.lock was removed: %v", err)
	}
	// A journal from another boot of the machine is not running, whatever
	// process has its pid now.
	j.BootID = "another-boot"
	tr.m.w.saveJournal(j)
	if got := tr.m.InterruptedNotice(); !strings.Contains(got, "was interrupted") {
		t.Errorf("journal of another boot: %q", got)
	}
	j.BootID = bootID()
	tr.m.w.saveJournal(j)
	sleeper.Process.Kill()
	sleeper.Wait()
	if got := tr.m.InterruptedNotice(); !strings.Contains(got, "A rollback to 'spec' was interrupted") {
		t.Errorf("after the process ended: %q", got)
	}
	if _, err := tr.m.Finish(tr.e, engine.TaskOptions{}); err != nil {
		t.Fatal(err)
	}
}

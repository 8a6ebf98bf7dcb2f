package worktree

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
	"github.com/git-hegel/git-hegel/rollback"
)

// TestFinishingRefusesEditsMadeAfterTheCrash: a file edited after a
// rollback was interrupted is neither what the rollback started from nor
// what it goes to; finishing (or undoing) it must not overwrite it.
func TestFinishingRefusesEditsMadeAfterTheCrash(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write("a.txt", "a1\n")
	tr.write("b.txt", "b1\n")
	tr.commitAll("c1")
	tr.start("minimal")
	atSpec := tr.fingerprint()
	tr.write("a.txt", "a2\n")
	tr.write("b.txt", "b2\n")
	tr.now = tr.now.Add(time.Minute)
	tr.interrupt(engine.RollbackOptions{Node: "spec"})
	tr.write("a.txt", "edited after the crash\n")
	edited := tr.fingerprint()
	for _, undo := range []bool{false, true} {
		var err error
		if undo {
			_, _, err = tr.e.UndoInterruptedRollback(engine.TaskOptions{})
		} else {
			_, _, err = tr.e.FinishRollback(engine.TaskOptions{})
		}
		if !errors.Is(err, rollback.ErrEditedSince) || !strings.Contains(err.Error(), "a.txt changed after the rollback was interrupted") {
			t.Fatalf("undo=%v: err = %v", undo, err)
		}
		if got := tr.fingerprint(); got != edited {
			t.Fatalf("undo=%v: a refused recovery changed something:\n%s", undo, diffLines(edited, got))
		}
	}
	if rec, _ := tr.e.InterruptedRollback(); rec == nil {
		t.Fatal("the journal is gone")
	}
	// Moved away, the recovery goes on.
	os.Rename(filepath.Join(tr.dir, "a.txt"), filepath.Join(tr.dir, "..", "a.saved"))
	if _, _, err := tr.e.FinishRollback(engine.TaskOptions{}); err != nil {
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
	tr.commitAll("c1")
	tr.start("minimal")
	tr.write("a.txt", "a2\n")
	tr.interrupt(engine.RollbackOptions{Node: "spec"})
	sleeper := exec.Command("sleep", "30")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer sleeper.Process.Kill()
	pid := sleeper.Process.Pid
	tr.setJournal(func(j map[string]any) { j["pid"] = pid })
	lock := filepath.Join(tr.dir, ".git", "index.lock")
	os.WriteFile(lock, markerFor(t, lock, pid), 0o644)
	want := "A rollback to 'spec' is running in another process (pid " + strconv.Itoa(pid) + "); wait for it to end"
	// What status prints after "warning: ".
	if _, err := tr.e.InterruptedRollback(); err == nil || err.Error() != want {
		t.Errorf("status notice = %v", err)
	}
	if _, _, err := tr.e.TakeCheckpoint("", "x"); !errors.Is(err, engine.ErrRollbackRunning) || err.Error() != want {
		t.Errorf("checkpoint: %v", err)
	}
	if _, err := tr.rollback(engine.RollbackOptions{Node: "spec"}); !errors.Is(err, engine.ErrRollbackRunning) {
		t.Errorf("rollback: %v", err)
	}
	if _, _, err := tr.e.FinishRollback(engine.TaskOptions{}); !errors.Is(err, engine.ErrRollbackRunning) {
		t.Errorf("finish: %v", err)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Errorf("the running rollback's index.lock was removed: %v", err)
	}
	// A journal from another boot of the machine is not running, whatever
	// process has its pid now.
	tr.setJournal(func(j map[string]any) { j["boot_id"] = "another-boot" })
	if _, err := tr.e.InterruptedRollback(); err != nil {
		t.Errorf("journal of another boot: %v", err)
	} else if rec, _ := tr.e.InterruptedRollback(); rec == nil || !strings.Contains(rec.InterruptedError().Error(), "was interrupted") {
		t.Errorf("journal of another boot: %v", rec)
	}
	tr.setJournal(func(j map[string]any) { j["boot_id"] = bootID() })
	sleeper.Process.Kill()
	sleeper.Wait()
	if rec, err := tr.e.InterruptedRollback(); err != nil || rec == nil || !strings.Contains(rec.InterruptedError().Error(), "A rollback to 'spec' was interrupted") {
		t.Errorf("after the process ended: %v %v", rec, err)
	}
	if _, _, err := tr.e.FinishRollback(engine.TaskOptions{}); err != nil {
		t.Fatal(err)
	}
}

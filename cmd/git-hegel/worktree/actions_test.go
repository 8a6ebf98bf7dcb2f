package worktree

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/rollback"
)

// TestInterruptedUndoIsTakenBack: an undo of agent actions killed after
// its safety snapshot and journal, with one of its files written, is
// taken back by the next command: every file it was restoring is as it
// was before the undo, the others untouched, the journal gone, and the
// task state untouched (an undo is not a rollback of the task).
func TestInterruptedUndoIsTakenBack(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write("a.txt", "a1\n")
	tr.write("b.txt", "b1\n")
	tr.commitAll("c1")
	tr.start("minimal")
	before := tr.state()
	tr.e.Actions = tr.s
	act := func(change func()) {
		if err := tr.e.RecordAction(before.Task, engine.ActionSnapshot{Phase: engine.ActionBefore, Session: "s", Tool: "Bash"}); err != nil {
			t.Fatal(err)
		}
		change()
		if err := tr.e.RecordAction(before.Task, engine.ActionSnapshot{Phase: engine.ActionAfter, Session: "s", Tool: "Bash"}); err != nil {
			t.Fatal(err)
		}
	}
	act(func() { tr.write("a.txt", "a2\n"); tr.write("b.txt", "b2\n") })
	tr.write("user.txt", "mine\n")
	snaps, err := tr.s.ActionSnapshots(before.Task)
	if err != nil || len(snaps) != 2 {
		t.Fatalf("snapshots: %v, %v", snaps, err)
	}
	// The undo, killed after writing a.txt back.
	c := tr.s.actionChain(before.Task)
	p, err := c.Plan(snaps[0].Handle.(*rollback.Checkpoint), rollback.PlanOptions{Store: true, Only: []string{"a.txt", "b.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	rec := rollback.Meta{}
	rec.Set(keyTask, before.Task)
	if _, err := p.Begin(rollback.Template{Label: "undo", Meta: actionMeta(before.Task, engine.ActionSnapshot{Phase: engine.ActionUndo})}, rec); err != nil {
		t.Fatal(err)
	}
	tr.write("a.txt", "a1\n")
	pid := deadPID(t)
	lock := filepath.Join(tr.dir, ".git", "index.lock")
	if err := os.WriteFile(lock, markerFor(t, lock, pid), 0o644); err != nil {
		t.Fatal(err)
	}
	tr.setJournal(func(j map[string]any) { j["pid"] = pid })
	tr.open()
	tr.e.Actions = tr.s

	// A rollback (or status) sees it and leaves it to undo.
	if rec, err := tr.e.InterruptedRollback(); !errors.Is(err, engine.ErrUndoInterrupted) || rec != nil {
		t.Fatalf("InterruptedRollback = %v, %v", rec, err)
	}
	if b, _ := os.ReadFile(filepath.Join(tr.dir, "a.txt")); string(b) != "a1\n" {
		t.Fatalf("seeing the interrupted undo changed a.txt: %q", b)
	}
	taken, err := tr.e.RecoverUndo()
	if err != nil || !taken {
		t.Fatalf("RecoverUndo = %v, %v", taken, err)
	}
	for name, want := range map[string]string{"a.txt": "a2\n", "b.txt": "b2\n", "user.txt": "mine\n"} {
		if b, _ := os.ReadFile(filepath.Join(tr.dir, name)); string(b) != want {
			t.Errorf("%s = %q, want %q", name, b, want)
		}
	}
	if _, err := os.Stat(filepath.Join(tr.dir, ".git", "hegel-rollback.json")); !os.IsNotExist(err) {
		t.Errorf("the journal is still there (%v)", err)
	}
	if st := tr.state(); st.CurrentNode != before.CurrentNode || len(st.RollbackHistory) != len(before.RollbackHistory) {
		t.Errorf("the task state changed: %+v", st)
	}
}

// TestKeepActionsBound: hegel.agent.keepActions sets how many actions a
// chain keeps (two snapshots each); a value over the cap keeps the cap,
// never the default's fewer.
func TestKeepActionsBound(t *testing.T) {
	for _, c := range []struct {
		value string
		keep  int
	}{
		{"", DefaultKeepActions},
		{"5", 5},
		{"2k", 2048},
		{"1048576", MaxKeepActions},
		{"99999999999", MaxKeepActions},
	} {
		tr := newDiskRepo(t)
		if c.value != "" {
			tr.git("config", "hegel.agent.keepActions", c.value)
			tr.open()
		}
		if got := tr.s.actionManager().MaxCheckpoints; got != 2*c.keep {
			t.Errorf("keepActions %q: the chain keeps %d snapshots, want %d", c.value, got, 2*c.keep)
		}
	}
}

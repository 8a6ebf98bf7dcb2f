package engine

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// rollbackTo plans and carries out a rollback, as `git hegel rollback -y`.
func (te *testEnv) rollbackTo(t *testing.T, o RollbackOptions) *RollbackResult {
	t.Helper()
	o.Yes = true
	p, err := te.PlanRollback(o)
	if err != nil {
		t.Fatalf("plan %+v: %v", o, err)
	}
	res, err := te.Rollback(p)
	if err != nil {
		t.Fatalf("rollback %+v: %v", o, err)
	}
	return res
}

// TestRollbackSequence: the engine picks the checkpoint, the snapshot and
// restore happen, the task goes back paused, and the chain is cut back
// with the safety checkpoint after the target; an undo restores the
// safety checkpoint and puts the task back to work.
func TestRollbackSequence(t *testing.T) {
	te := newTestEngine(t, nil)
	te.walk(t, "discovery", 2) // spec, plan, code
	te.now = te.now.Add(time.Minute)
	res := te.rollbackTo(t, RollbackOptions{Node: "plan"})
	st := res.View.State
	if st.CurrentNode != "plan" || st.Status != StatusPaused || st.PauseReason != "rolled back to plan" || !slices.Equal(st.History, []string{"spec", "plan"}) {
		t.Fatalf("after the rollback: %+v", st)
	}
	if res.Safety == nil || res.Safety.Kind != CheckpointSafety || res.Safety.Node != "code" || res.Safety.RollbackTo != "plan" {
		t.Fatalf("safety checkpoint %+v", res.Safety)
	}
	cps, _ := te.snaps.Checkpoints(st.Task)
	var nodes []string
	for _, c := range cps {
		nodes = append(nodes, c.Node+"/"+c.Kind)
	}
	if !slices.Equal(nodes, []string{"spec/enter", "plan/enter", "code/safety"}) {
		t.Errorf("chain after the rollback: %v", nodes)
	}
	if te.snaps.journal != nil {
		t.Error("the journal is left")
	}
	res = te.rollbackTo(t, RollbackOptions{Undo: true})
	st = res.View.State
	if !res.Plan.Undo || st.CurrentNode != "code" || st.Status != StatusActive || !slices.Equal(st.History, []string{"spec", "plan", "code"}) {
		t.Fatalf("after the undo: %+v", st)
	}
	if ev := st.RollbackHistory[len(st.RollbackHistory)-1]; ev.Reason != "undo" || ev.From != "plan" || ev.To != "code" {
		t.Errorf("undo event %+v", ev)
	}
}

func TestRollbackRefusals(t *testing.T) {
	te := newTestEngine(t, nil)
	te.walk(t, "discovery", 2)
	n := len(te.tasks.log)
	for _, c := range []struct {
		o    RollbackOptions
		want string
		is   error
	}{
		{RollbackOptions{Node: "nope"}, "Workflow 'discovery' has no node 'nope'", ErrBadName},
		{RollbackOptions{Undo: true}, "has no rollback to undo", ErrNoCheckpoint},
		{RollbackOptions{To: "ffff"}, "has no checkpoint 'ffff'. Run 'git hegel checkpoint list' to see them", ErrNoCheckpoint},
		{RollbackOptions{Node: "learnings"}, "has no checkpoint from the start of 'learnings'", ErrNoCheckpoint},
	} {
		_, err := te.PlanRollback(c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, c.is) {
			t.Errorf("%+v: %v", c.o, err)
		}
	}
	if len(te.tasks.log) != n || len(te.snaps.restored) != 0 {
		t.Error("a refused rollback changed something")
	}
	// The loop guard: the fourth rollback to one node within the hour.
	for i := 0; i < 3; i++ {
		te.now = te.now.Add(time.Minute)
		te.rollbackTo(t, RollbackOptions{Node: "plan"})
	}
	te.now = te.now.Add(time.Minute)
	if _, err := te.PlanRollback(RollbackOptions{Node: "plan"}); !errors.Is(err, ErrRollbackLoop) {
		t.Errorf("loop guard: %v", err)
	}
	te.rollbackTo(t, RollbackOptions{Node: "plan", Force: true})
}

// TestRollbackToForeignCheckpoint: a checkpoint this clone did not take
// (fetched, forged, or from a git-hegel that kept no record) is planned
// and shown with who made it, and needs --force.
func TestRollbackToForeignCheckpoint(t *testing.T) {
	te := newTestEngine(t, nil)
	te.walk(t, "discovery", 2)
	cps, _ := te.snaps.Checkpoints("t")
	forged := cps[1]
	forged.Local, forged.Author = false, "Mallory <m@example.com>"
	p, err := te.PlanRollback(RollbackOptions{To: forged.ID, Yes: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.NeedsForce, "Checkpoint "+forged.ID+" was not taken in this clone") ||
		!strings.Contains(p.NeedsForce, "its commit names Mallory <m@example.com>") ||
		!strings.Contains(p.NeedsForce, "'git hegel rollback --to "+forged.ID+" --force'") {
		t.Errorf("refusal %q", p.NeedsForce)
	}
	n := len(te.tasks.log)
	if _, err := te.Rollback(p); err == nil || len(te.tasks.log) != n || len(te.snaps.restored) != 0 {
		t.Fatalf("a foreign checkpoint was restored without --force: %v", err)
	}
	// By node too: the newest checkpoint at plan is the foreign one.
	if p, err := te.PlanRollback(RollbackOptions{Node: "plan"}); err != nil || p.NeedsForce == "" {
		t.Errorf("by node: %v %q", err, p.NeedsForce)
	}
	res := te.rollbackTo(t, RollbackOptions{To: forged.ID, Force: true})
	if res.View.State.CurrentNode != "plan" {
		t.Errorf("with --force: %+v", res.View.State)
	}
}

// TestRollbackRestoreFailurePutsBack: a restore that fails is undone from
// its journal and the task is not touched.
func TestRollbackRestoreFailurePutsBack(t *testing.T) {
	te := newTestEngine(t, nil)
	te.walk(t, "discovery", 2)
	te.snaps.failRestore = errors.New("disk full")
	p, err := te.PlanRollback(RollbackOptions{Node: "plan"})
	if err != nil {
		t.Fatal(err)
	}
	n := len(te.tasks.log)
	_, err = te.Rollback(p)
	if err == nil || err.Error() != "rollback failed, nothing was changed: disk full" {
		t.Fatalf("err = %v", err)
	}
	if len(te.tasks.log) != n || te.snaps.journal != nil || !slices.Equal(te.snaps.restored, []string{"replay " + p.Target.ID + " back"}) {
		t.Errorf("log %d->%d, journal %v, restores %v", n, len(te.tasks.log), te.snaps.journal, te.snaps.restored)
	}
}

// TestInterruptedRollback: a rollback killed midway blocks the next one
// and the checkpoints; finishing it records it once, undoing it puts the
// task back if it had been recorded.
func TestInterruptedRollback(t *testing.T) {
	for _, undo := range []bool{false, true} {
		te := newTestEngine(t, nil)
		te.walk(t, "discovery", 2)
		te.snaps.dieInRestore = errors.New("killed")
		p, err := te.PlanRollback(RollbackOptions{Node: "plan", Reason: "try again"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := te.Rollback(p); err == nil {
			t.Fatal("the killed rollback succeeded")
		}
		te.snaps.dieInRestore = nil
		// A killed process leaves its journal: what the fake keeps when
		// the replay back of a failed restore could not run.
		te.snaps.journal = &RollbackRecord{RollbackRequest: p.req, From: "code", TargetID: p.Target.ID, SafetyHistory: []string{"spec", "plan", "code"}}
		_, err = te.PlanRollback(RollbackOptions{Node: "spec"})
		if !errors.Is(err, ErrRollbackInterrupted) || err.Error() != "A rollback to 'plan' was interrupted. Run 'git hegel rollback' to finish it, or 'git hegel rollback --undo' to undo it" {
			t.Errorf("plan while interrupted: %v", err)
		}
		te.snaps.running = true
		if _, err := te.PlanRollback(RollbackOptions{Node: "spec"}); !errors.Is(err, ErrRollbackRunning) ||
			err.Error() != "A rollback to 'plan' is running in another process (pid 4711); wait for it to end" {
			t.Errorf("plan while running: %v", err)
		}
		te.snaps.running = false
		if undo {
			rec, v, err := te.UndoInterruptedRollback(TaskOptions{})
			if err != nil || rec == nil || v.State.CurrentNode != "code" || v.State.Status != StatusActive || len(v.State.RollbackHistory) != 0 {
				t.Fatalf("undo: %v %+v", err, v)
			}
		} else {
			for i := 0; i < 2; i++ {
				// Recorded once, however often it runs.
				te.snaps.journal = &RollbackRecord{RollbackRequest: p.req, From: "code", TargetID: p.Target.ID}
				if _, v, err := te.FinishRollback(TaskOptions{}); err != nil || v.State.CurrentNode != "plan" || len(v.State.RollbackHistory) != 1 {
					t.Fatalf("finish %d: %v %+v", i, err, v)
				}
			}
			// Undoing after the state was recorded moves it back.
			te.snaps.journal = &RollbackRecord{RollbackRequest: p.req, From: "code", TargetID: p.Target.ID, SafetyHistory: []string{"spec", "plan", "code"}}
			if _, v, err := te.UndoInterruptedRollback(TaskOptions{}); err != nil || v.State.CurrentNode != "code" || len(v.State.RollbackHistory) != 2 {
				t.Fatalf("undo after recording: %v %+v", err, v)
			}
		}
		if te.snaps.journal != nil {
			t.Error("the journal is left")
		}
	}
}

func TestCheckpointsByHand(t *testing.T) {
	te := newTestEngine(t, nil)
	te.walk(t, "discovery", 1)
	cp, created, err := te.TakeCheckpoint("", "before the risky part")
	if err != nil || !created || cp.Kind != CheckpointManual || cp.Node != "plan" {
		t.Fatalf("%+v %v %v", cp, created, err)
	}
	st, cps, err := te.Checkpoints("")
	if err != nil || len(cps) != 3 {
		t.Fatalf("%d checkpoints: %v", len(cps), err)
	}
	if got, err := FindCheckpoint(cps, st.Task, "plan"); err != nil || got.Kind != CheckpointEnter {
		t.Errorf("by node: %+v %v", got, err)
	}
	if got, err := FindCheckpoint(cps, st.Task, cp.ID[:4]); err != nil || got != cps[2] {
		t.Errorf("by prefix: %+v %v", got, err)
	}
	if st, got, err := te.CheckpointToDrop("", cp.ID); err != nil || got.ID != cp.ID {
		t.Fatalf("to drop: %v", err)
	} else if err := te.DropCheckpoint(st, got); err != nil {
		t.Fatal(err)
	}
	if _, cps, _ := te.Checkpoints(""); len(cps) != 2 {
		t.Errorf("%d checkpoints after the drop", len(cps))
	}
	// Another worktree's task: this worktree's files are not its.
	te.Worktree, te.WorktreeID = "/elsewhere", "worktrees/x"
	if _, _, err := te.TakeCheckpoint(st.Task, "x"); err == nil || !strings.Contains(err.Error(), "is not this worktree's") {
		t.Errorf("another worktree's task: %v", err)
	}
	if _, _, err := te.CheckpointToDrop(st.Task, "ffff"); err == nil || !strings.Contains(err.Error(), "drop its checkpoints there") {
		t.Errorf("drop from another worktree: %v", err)
	}
}

func TestCheckpointDescriptions(t *testing.T) {
	for _, c := range []struct {
		cp         Checkpoint
		describe   string
		evictionOf string
	}{
		{Checkpoint{ID: "12c63df7", Node: "plan", Kind: CheckpointEnter}, "enter plan", "Evicted oldest snapshot (FIFO): checkpoint 12c63df7 at plan"},
		{Checkpoint{ID: "12c63df7", Node: "plan", Kind: CheckpointManual, Message: "risky\nmore"}, "plan: risky", `Evicted oldest snapshot (FIFO): checkpoint 12c63df7 at plan (taken by hand: "risky")`},
		{Checkpoint{ID: "12c63df7", Node: "plan", Kind: CheckpointManual}, "at plan", "Evicted oldest snapshot (FIFO): checkpoint 12c63df7 at plan (taken by hand)"},
		{Checkpoint{ID: "12c63df7", Node: "code", Kind: CheckpointSafety, RollbackTo: "plan"}, "safety at code (before rolling back to plan)",
			"Evicted oldest snapshot (FIFO): checkpoint 12c63df7 at code (safety checkpoint of an earlier rollback)"},
	} {
		if got := c.cp.Describe(); got != c.describe {
			t.Errorf("Describe() = %q, want %q", got, c.describe)
		}
		if got := EvictionNotice(&c.cp); got != c.evictionOf {
			t.Errorf("EvictionNotice = %q, want %q", got, c.evictionOf)
		}
	}
}

// TestRollbackAllNeedsTheStart: rollback --all goes back to the task's
// start checkpoint, and refuses, naming what is left, when it is gone.
func TestRollbackAllNeedsTheStart(t *testing.T) {
	te := newTestEngine(t, nil)
	te.walk(t, "discovery", 2)
	st, cps, err := te.Checkpoints("")
	if err != nil || len(cps) < 2 || !cps[0].Start() || cps[1].Start() {
		t.Fatalf("checkpoints %v, %v", cps, err)
	}
	p, err := te.PlanRollback(RollbackOptions{All: true, DryRun: true})
	if err != nil || p.Target.ID != cps[0].ID {
		t.Fatalf("plan %+v, %v", p, err)
	}
	if err := te.DropCheckpoint(st, cps[0]); err != nil {
		t.Fatal(err)
	}
	_, err = te.PlanRollback(RollbackOptions{All: true, Yes: true})
	if !errors.Is(err, ErrNoCheckpoint) || !strings.Contains(err.Error(), "start checkpoint (entering 'spec') is gone") ||
		!strings.Contains(err.Error(), cps[1].ID) {
		t.Fatalf("without its start: %v", err)
	}
}

// TestRollbackAllPassesTheLoopGuard: rollback --all ends the run, so it
// cannot go round in a loop; three rollbacks to the first node within the
// hour stop a fourth to that node, not the rollback of the whole workflow.
func TestRollbackAllPassesTheLoopGuard(t *testing.T) {
	te := newTestEngine(t, nil)
	te.walk(t, "discovery", 1)
	for i := 0; i < 3; i++ {
		te.now = te.now.Add(time.Minute)
		te.rollbackTo(t, RollbackOptions{Node: "spec"})
		if _, err := te.Next(""); err != nil {
			t.Fatal(err)
		}
	}
	te.now = te.now.Add(time.Minute)
	if _, err := te.PlanRollback(RollbackOptions{Node: "spec"}); !errors.Is(err, ErrRollbackLoop) {
		t.Fatalf("the fourth rollback to spec: %v", err)
	}
	te.rollbackTo(t, RollbackOptions{All: true})
	if st := te.stateOf(t, "t"); st.Status != StatusRolledBack {
		t.Errorf("after rollback --all: %s", st.Status)
	}
}

// TestLeavingCommitsNameTheirTask: a commit is named after the one task
// that ran on its branch when it was made.
func TestLeavingCommitsNameTheirTask(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	end := t0.Add(time.Hour)
	tasks := []ListedTask{
		{State: &State{Task: "a", StartBranch: "main", StartedAt: t0, EndedAt: &end}},
		{State: &State{Task: "b", StartBranch: "main", StartedAt: t0.Add(30 * time.Minute)}},
		{State: &State{Task: "c", StartBranch: "other", StartedAt: t0}},
	}
	now := t0.Add(2 * time.Hour)
	for _, tc := range []struct {
		at   time.Duration
		want string
	}{{10 * time.Minute, "a"}, {40 * time.Minute, ""}, {90 * time.Minute, "b"}, {0, ""}, {3 * time.Hour, ""}} {
		if got := taskAt(tasks, "main", t0.Add(tc.at), now); got != tc.want {
			t.Errorf("at +%v: %q, want %q", tc.at, got, tc.want)
		}
	}
}

package engine

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// failedAt returns an engine whose discovery task failed at code (after
// spec and plan).
func failedAt(t *testing.T) *testEnv {
	te := newTestEngine(t, nil)
	te.Start("discovery", "", "d")
	te.Next("")
	te.Next("")
	for i := 0; i < 3; i++ {
		te.Fail(TaskOptions{}, "boom")
	}
	if st := te.state(t); st.Status != StatusFailed || st.CurrentNode != "code" {
		t.Fatalf("setup: %+v", st)
	}
	return te
}

func TestResumeStrategies(t *testing.T) {
	t.Run("retry-current", func(t *testing.T) {
		te := failedAt(t)
		v, err := te.Resume(ResumeOptions{Strategy: RetryCurrent})
		st := v.State
		if err != nil || st.Status != StatusActive || st.CurrentNode != "code" || st.Attempt != 1 || st.Error != nil ||
			st.ResumedAt == nil || slices.Contains(st.FailedNodes, "code") {
			t.Fatalf("%+v %v", st, err)
		}
		// The prompt still says what went wrong last time.
		if !strings.HasPrefix(v.Prompt, "The last attempt at 'code' failed:\n  boom\n") {
			t.Errorf("prompt %q", v.Prompt[:60])
		}
	})
	t.Run("retry-previous", func(t *testing.T) {
		te := failedAt(t)
		v, err := te.Resume(ResumeOptions{Strategy: RetryPrevious})
		st := v.State
		if err != nil || st.CurrentNode != "plan" || st.Status != StatusActive || slices.Contains(st.CompletedNodes, "plan") ||
			!slices.Equal(st.History, []string{"spec", "plan"}) || st.Error != nil {
			t.Fatalf("%+v %v", st, err)
		}
		// plan and code run again; code completes: never both completed
		// and failed.
		if _, err := te.Next(""); err != nil {
			t.Fatal(err)
		}
		v, err = te.Next("")
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(v.State.FailedNodes, "code") || !slices.Contains(v.State.CompletedNodes, "code") {
			t.Fatalf("after redoing: %+v %v", v.State, err)
		}
	})
	t.Run("skip-current", func(t *testing.T) {
		te := failedAt(t)
		v, err := te.Resume(ResumeOptions{Strategy: SkipCurrent, Reason: "done by hand"})
		st := v.State
		if err != nil || st.CurrentNode != "learnings" || st.Status != StatusActive || len(st.SkippedNodes) != 1 ||
			st.SkippedNodes[0].Node != "code" || st.SkippedNodes[0].Reason != "done by hand" || slices.Contains(st.CompletedNodes, "code") ||
			!slices.Contains(st.FailedNodes, "code") {
			t.Fatalf("%+v %v", st, err)
		}
	})
	t.Run("from-checkpoint", func(t *testing.T) {
		te := failedAt(t)
		cps, _ := te.snaps.Checkpoints("d")
		plan := cps[1] // taken on entering plan
		p, err := te.PlanRollback(RollbackOptions{Resume: true, To: plan.ID})
		if err != nil {
			t.Fatal(err)
		}
		v, err := te.Resume(ResumeOptions{Strategy: FromCheckpoint, Rollback: p})
		if err != nil {
			t.Fatal(err)
		}
		st := v.State
		if st.CurrentNode != "plan" || st.Status != StatusActive || st.Error != nil || st.Attempt != 1 {
			t.Fatalf("%+v %v", st, err)
		}
		if len(te.snaps.restored) != 1 || te.snaps.restored[0] != plan.ID {
			t.Errorf("restores %v", te.snaps.restored)
		}
		if ev := st.RollbackHistory[len(st.RollbackHistory)-1]; ev.Reason != "resume from checkpoint" || ev.To != "plan" {
			t.Errorf("event %+v", ev)
		}
		// The first checkpoint by default; an unknown one changes nothing.
		te2 := failedAt(t)
		if p, err := te2.PlanRollback(RollbackOptions{Resume: true}); err != nil || p.Target.Node != "spec" {
			t.Errorf("default target: %v", err)
		}
		n := len(te2.tasks.log)
		if _, err := te2.PlanRollback(RollbackOptions{Resume: true, To: "abcd"}); !errors.Is(err, ErrNoCheckpoint) ||
			!strings.Contains(err.Error(), "Task d has no checkpoint 'abcd'; its checkpoints: ") || len(te2.tasks.log) != n {
			t.Errorf("unknown checkpoint: %v", err)
		}
		// Without a plan, or with a failing restore, nothing changes.
		if _, err := te2.Resume(ResumeOptions{Strategy: FromCheckpoint}); err == nil || len(te2.tasks.log) != n {
			t.Errorf("no plan: %v", err)
		}
		te2.snaps.failRestore = errors.New("disk full")
		p2, _ := te2.PlanRollback(RollbackOptions{Resume: true})
		if _, err := te2.Resume(ResumeOptions{Strategy: FromCheckpoint, Rollback: p2}); err == nil || len(te2.tasks.log) != n {
			t.Errorf("failed restore: %v", err)
		}
		if te2.snaps.journal != nil {
			t.Error("a failed restore left its journal")
		}
	})
	t.Run("unknown", func(t *testing.T) {
		te := failedAt(t)
		if _, err := te.Resume(ResumeOptions{Strategy: "retry"}); !errors.Is(err, ErrBadName) ||
			err.Error() != "Unknown strategy 'retry' (use retry-current, retry-previous, skip-current, from-checkpoint)" {
			t.Errorf("unknown strategy: %v", err)
		}
	})
}

func TestPauseResume(t *testing.T) {
	te := newTestEngine(t, nil)
	te.Start("minimal", "", "m")
	if _, err := te.Resume(ResumeOptions{Strategy: RetryCurrent}); err == nil ||
		!strings.HasPrefix(err.Error(), "Cannot resume workflow with status: active") {
		t.Errorf("resume of an active task: %v", err)
	}
	st, err := te.Pause(TaskOptions{}, "lunch")
	if err != nil || st.Status != StatusPaused || st.PauseReason != "lunch" {
		t.Fatal(err)
	}
	if _, err := te.Pause(TaskOptions{}, ""); err == nil {
		t.Error("paused twice")
	}
	v, err := te.Resume(ResumeOptions{Strategy: RetryCurrent})
	if err != nil || v.State.Status != StatusActive || v.State.PauseReason != "" || v.State.ResumedAt == nil {
		t.Fatalf("resume: %v", err)
	}
}

func TestSkip(t *testing.T) {
	te := newTestEngine(t, nil)
	te.pipelineArtifacts()
	te.StartTask(StartOptions{Workflow: "pipeline", Task: "p"})
	// pm is neither conditional nor skipped for feature.
	n := len(te.tasks.log)
	if _, err := te.Skip(TaskOptions{}, ""); err == nil || err.Error() != "Cannot skip 'pm': it is not conditional and task type feature does not skip it; nothing changed (--force skips it anyway, recorded in the task)" {
		t.Fatalf("skip pm: %v", err)
	}
	if len(te.tasks.log) != n {
		t.Fatal("a refused skip wrote")
	}
	v, err := te.Skip(TaskOptions{Force: true}, "hurry")
	if err != nil || v.Node != "design" {
		t.Fatalf("forced skip: %v", err)
	}
	st := v.State
	if st.Overrides[0].What != "skip" || st.SkippedNodes[0].Reason != "hurry" || slices.Contains(st.CompletedNodes, "pm") {
		t.Errorf("forced skip recorded: %+v", st)
	}
	te.Next("") // design -> preflight
	te.Next("") // -> dev
	te.Next("") // -> migration (conditional)
	v, err = te.Skip(TaskOptions{}, "")
	if err != nil || v.Node != "test" || v.Skipped[0].Reason != "conditional stage skipped" {
		t.Fatalf("skip migration: %+v %v", v, err)
	}
}

func TestRollbackLeavesTaskPaused(t *testing.T) {
	te := newTestEngine(t, nil)
	te.Start("discovery", "", "d")
	te.Next("")
	te.Fail(TaskOptions{}, "x")
	v, err := te.ApplyRollback(TaskOptions{}, &RollbackRequest{Task: "d", Node: "spec", Reason: "redo"})
	if err != nil {
		t.Fatal(err)
	}
	st := v.State
	if st.Status != StatusPaused || st.Attempt != 1 || st.CurrentNode != "spec" || st.PausedAt == nil || st.PauseReason != "rolled back to spec" {
		t.Fatalf("after rollback: %+v", st)
	}
	if v, err := te.Next(""); err != nil || v.State.Status != StatusActive || v.State.ResumedAt == nil {
		t.Errorf("next from paused: %v", err)
	}
}

func TestRollbackAll(t *testing.T) {
	te := newTestEngine(t, nil)
	var finished []string
	te.OnFinish = func(st *State) error { finished = append(finished, st.Status); return nil }
	te.Start("discovery", "", "d")
	te.Next("")
	te.Next("")
	te.tasks.cps["d"] = "chain"
	p, err := te.PlanRollback(RollbackOptions{All: true, Yes: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := te.Rollback(p)
	if err != nil {
		t.Fatal(err)
	}
	st := res.State
	if st.Status != StatusRolledBack || st.EndedAt == nil || st.CurrentNode != "spec" {
		t.Fatalf("rolled back: %+v", st)
	}
	a, err := te.tasks.LoadArchived("d")
	if err != nil || a.State.Status != StatusRolledBack || te.tasks.cps["d"] != "chain" {
		t.Fatalf("archived with its checkpoints: %v %v", err, te.tasks.cps)
	}
	if ev := st.RollbackHistory[len(st.RollbackHistory)-1]; !slices.Equal(finished, []string{StatusRolledBack}) || ev.Reason != "rollback --all" || ev.To != "spec" {
		t.Errorf("finished %v event %+v", finished, ev)
	}
	if _, err := te.PlanRollback(RollbackOptions{All: true}); err == nil {
		t.Error("rolled back twice")
	}
	// An undo (what rollback --undo records) brings the task back to work.
	v, err := te.ApplyRollback(TaskOptions{}, &RollbackRequest{Task: "d", Node: "code", History: []string{"spec", "plan", "code"}, Undo: true, Reason: "undo"})
	if err != nil || v.State.Status != StatusActive || v.State.EndedAt != nil {
		t.Fatalf("undo: %v", err)
	}
	if live, err := te.tasks.LoadTask("d"); err != nil || live.State.CurrentNode != "code" {
		t.Fatalf("undo is live again: %v", err)
	}
}

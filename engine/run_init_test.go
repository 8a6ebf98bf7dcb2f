package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// observingRuns is fakeRuns that, when a run takes its record, reads the
// task as another process would, and may refuse the record.
type observingRuns struct {
	fakeRuns
	e      *Engine
	seen   []string
	refuse error
}

func (o *observingRuns) BeginRun(r *RunRecord) error {
	if t, err := o.e.Lookup(r.Task); err == nil {
		o.seen = append(o.seen, t.State.Status)
	}
	if o.refuse != nil {
		return o.refuse
	}
	return o.fakeRuns.BeginRun(r)
}

// A task a run creates is initializing while the run sets it up (seen
// from outside when the run takes its record), and active from the
// commit that stores its inputs on.
func TestRunInitializing(t *testing.T) {
	re := newRunEnv(t, nil)
	obs := &observingRuns{e: re.Engine}
	re.runner.Runs = obs
	var during string
	re.exec.procs["fake-agent"] = func(_ context.Context, p *Process) *ProcessResult {
		if t, err := re.Lookup("q"); err == nil {
			during = t.State.Status
		}
		return &ProcessResult{}
	}
	re.run(t, RunOptions{Workflow: "ask", Task: "q", Prompt: ptr("?")})
	if len(obs.seen) != 1 || obs.seen[0] != StatusInitializing {
		t.Errorf("status when the record was taken: %v, want [initializing]", obs.seen)
	}
	if during != StatusActive {
		t.Errorf("status during the first step: %q, want active", during)
	}
}

// A setup that fails after the task exists fails the task (ERROR in
// the history), with why, instead of leaving it initializing.
func TestRunInitializingFails(t *testing.T) {
	re := newRunEnv(t, nil)
	re.runner.Runs = &observingRuns{e: re.Engine, refuse: errors.New("disk full")}
	_, err := re.runner.Run(context.Background(), RunOptions{Workflow: "ask", Task: "q", Prompt: ptr("?")})
	if err == nil || err.Error() != "disk full" {
		t.Fatalf("err %v, want disk full", err)
	}
	tk, err := re.Lookup("q")
	if err != nil {
		t.Fatal(err)
	}
	st := tk.State
	if st.Status != StatusFailed || st.Error == nil || st.Error.Message != "run setup: disk full" || st.Error.Node != st.CurrentNode {
		t.Fatalf("state %s %+v, want failed with the setup's error", st.Status, st.Error)
	}
	if err := ValidateState(st, nil); err != nil {
		t.Errorf("the failed state breaks the rules: %v", err)
	}
	// A run that only continues a task changes nothing when refused.
	re.runner.Runs = &observingRuns{e: re.Engine, refuse: errors.New("again")}
	if _, err := re.Engine.Resume(ResumeOptions{Strategy: RetryCurrent}); err != nil {
		t.Fatalf("resume: %v", err)
	}
	before, _ := re.Lookup("q")
	if _, err := re.runner.Run(context.Background(), RunOptions{Task: "q", Prompt: ptr("?")}); err == nil || !strings.Contains(err.Error(), "again") {
		t.Fatalf("continued run: %v", err)
	}
	after, _ := re.Lookup("q")
	if after.State.Status != before.State.Status || after.Rev != before.Rev {
		t.Errorf("a refused continued run changed the task: %s → %s", before.State.Status, after.State.Status)
	}
}

// The status machine lets only abort, rollback and describe touch an
// initializing task, and says why the others are refused.
func TestInitializingAllows(t *testing.T) {
	st := &State{Task: "q", Status: StatusInitializing, CurrentNode: "query"}
	if err := (&Engine{}).allowed(st, "next"); err == nil || !strings.Contains(err.Error(), "is initializing. A 'git hegel run' is setting it up") {
		t.Errorf("next: %v", err)
	}
	for _, c := range []string{"abort", "rollback", "describe"} {
		if err := (&Engine{}).allowed(st, c); err != nil {
			t.Errorf("%s: %v", c, err)
		}
	}
	if !st.Active() {
		t.Error("an initializing task is not open")
	}
	if s, err := CheckHistoryStatus("INITIALIZING"); err != nil || s != StatusInitializing {
		t.Errorf("INITIALIZING: %q %v", s, err)
	}
}

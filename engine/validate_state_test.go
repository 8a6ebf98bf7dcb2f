package engine

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// TestValidateStateRules breaks a valid state one rule at a time (seed
// 05's list, and the ones this engine adds).
func TestValidateStateRules(t *testing.T) {
	wf := builtin(t, "minimal")
	before := t0.Add(-time.Hour)
	cases := []struct {
		name   string
		break_ func(st *State)
		want   string
	}{
		{"completed without end", func(st *State) { st.Status, st.CurrentNode = StatusCompleted, workflow.NodeDone },
			"completed status requires 'ended_at'"},
		{"failed without error", func(st *State) { st.Status = StatusFailed }, "failed status requires 'error' object"},
		{"active without node", func(st *State) { st.CurrentNode = "" }, "active status requires 'current_node'"},
		{"completed and failed", func(st *State) { st.CompletedNodes, st.FailedNodes = []string{"spec"}, []string{"spec"} },
			"node 'spec' is both completed and failed"},
		{"end before start", func(st *State) {
			st.Status, st.CurrentNode, st.EndedAt = StatusAborted, workflow.NodeAborted, &before
		}, "'ended_at' (2026-01-02T02:04:05Z) is before 'started_at' (2026-01-02T03:04:05Z)"},
		{"missing task", func(st *State) { st.Task = "" }, "missing 'task'"},
		{"missing workflow", func(st *State) { st.Workflow = "" }, "missing 'workflow'"},
		{"unknown status", func(st *State) { st.Status = "running" }, "unknown status 'running'"},
		{"node not in workflow", func(st *State) { st.CurrentNode = "ghost" }, "current node 'ghost' is not in workflow 'minimal'"},
		{"open at a terminal node", func(st *State) { st.CurrentNode = workflow.NodeDone }, "active status at the terminal node 'done'"},
		{"completed not at done", func(st *State) { st.Status, st.EndedAt = StatusCompleted, &t0 }, "completed status at 'spec', not 'done'"},
		{"awaiting answer without question", func(st *State) { st.Status = StatusAwaitingAnswer }, "awaiting_answer status requires an unanswered question"},
		{"negative retries", func(st *State) { st.Retries = map[string]int{"spec": -1} }, "'retries' of 'spec' is negative"},
		{"meta_mode a path", func(st *State) { st.MetaMode = "../../hooks" }, `invalid meta_mode "../../hooks"`},
		{"meta_mode a page", func(st *State) { st.MetaMode = strings.Repeat("a", 100000) }, `invalid meta_mode "aaaa`},
		{"meta_mode two lines", func(st *State) { st.MetaMode = "learning\nnext: run" }, `invalid meta_mode "learning\nnext: run"`},
	}
	for _, tc := range cases {
		st := &State{Task: "t", Workflow: "minimal", Mode: "minimal", CurrentNode: "spec", History: []string{"spec"},
			Status: StatusActive, StartedAt: t0, Attempt: 1}
		if err := ValidateState(st, wf); err != nil {
			t.Fatalf("the valid state: %v", err)
		}
		tc.break_(st)
		err := ValidateState(st, wf)
		var se *StateError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// Old state.json files (no new fields) are valid as they are.
	old := &State{Task: "t", Workflow: "minimal", Mode: "minimal", CurrentNode: "plan", History: []string{"spec", "plan"},
		Status: StatusActive, StartedAt: t0, Attempt: 1, RollbackHistory: []RollbackEvent{}}
	if err := ValidateState(old, wf); err != nil {
		t.Errorf("old state: %v", err)
	}
}

// TestBrokenStateIsNeverWritten: a stored state that breaks a rule stops
// every command with the list of problems (nothing written), except abort,
// which ends the task into a valid state; and a command whose result would
// break a rule writes nothing.
func TestBrokenStateIsNeverWritten(t *testing.T) {
	te := newTestEngine(t, nil)
	te.Start("minimal", "", "t")
	st := te.state(t)
	st.Status = StatusFailed // no error object
	te.put(t, string(builtin(t, "minimal").Raw), st)
	n := len(te.tasks.log)
	_, err := te.Next("")
	var se *StateError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "failed status requires 'error'") ||
		!strings.Contains(err.Error(), "Nothing changed; 'git hegel show t' shows it, 'git hegel abort' ends it") {
		t.Fatalf("next on a broken state: %v", err)
	}
	if _, err := te.Describe("x", TaskOptions{}); err == nil || len(te.tasks.log) != n {
		t.Fatalf("describe wrote on a broken state: %v", err)
	}
	if _, err := te.Abort(TaskOptions{}); err != nil {
		t.Fatalf("abort of a broken state: %v", err)
	}
	if got, _ := te.Lookup("t"); got.State.Status != StatusAborted {
		t.Errorf("after abort: %s", got.State.Status)
	}

	// A state that would break a rule on the way out is refused by save.
	te2 := newTestEngine(t, nil)
	te2.Start("minimal", "", "u")
	_, _, err = te2.update(TaskOptions{}, func(st *State, wf *workflow.Definition) (string, error) {
		st.CompletedNodes, st.FailedNodes = []string{"spec"}, []string{"spec"}
		return "test: break it", nil
	})
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "refusing to write it, nothing changed") {
		t.Fatalf("save of a broken state: %v", err)
	}
	if last := te2.tasks.log[len(te2.tasks.log)-1]; last == "test: break it" {
		t.Error("the broken state was written")
	}
}

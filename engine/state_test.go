package engine

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// fullState sets every field, so a field added to State without a deep
// copy in Clone shows up here as shared memory.
func fullState() *State {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return &State{
		Task: "t", Workflow: "w", Mode: "m", CurrentNode: "dev", History: []string{"pm", "dev"},
		WorkflowID: "id", Status: StatusFailed, StartedAt: t0, PhaseStartTime: t0, UpdatedAt: t0,
		EndedAt: &t0, Worktree: "/w", WorktreeID: "x:main", TaskType: "bug_fix", Description: "d",
		Priority: "high", Attempt: 3, LastFailure: "boom",
		RollbackHistory: []RollbackEvent{{Timestamp: t0, From: "qa", To: "dev", Reason: "r"}},
		StepResults:     map[string]json.RawMessage{"pm": json.RawMessage(`"ok"`)},
		Retries:         map[string]int{"dev": 2},
		Error:           &TaskError{Node: "dev", Message: "boom", Timestamp: t0, Recoverable: true},
		CompletedNodes:  []string{"pm"},
		SkippedNodes:    []SkippedNode{{Node: "design", Reason: "skipped for task type bug_fix", At: t0}},
		FailedNodes:     []string{"dev"},
		PausedAt:        &t0,
		ResumedAt:       &t0,
		Approvals:       []Approval{{Node: "review", By: "A", At: t0}},
		Questions:       []Question{{Node: "dev", Question: "q?", Answer: "a", AskedAt: t0, AnsweredAt: &t0}},
		Overrides:       []Override{{Node: "dev", What: "artifact", At: t0}},
		Cancelled:       true,
	}
}

func TestCloneIsDeep(t *testing.T) {
	s := fullState()
	c := s.Clone()
	if !reflect.DeepEqual(s, c) {
		t.Fatalf("clone differs:\n%+v\n%+v", s, c)
	}
	// Change everything reachable through the clone; the original must
	// not move.
	later := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	c.History[0] = "x"
	*c.EndedAt = later
	c.RollbackHistory[0].From = "x"
	c.StepResults["pm"][1] = 'X'
	c.Retries["dev"] = 9
	c.Error.Message = "x"
	c.CompletedNodes[0] = "x"
	c.SkippedNodes[0].Node = "x"
	c.FailedNodes[0] = "x"
	*c.PausedAt = later
	*c.ResumedAt = later
	c.Approvals[0].By = "x"
	c.Questions[0].Answer = "x"
	*c.Questions[0].AnsweredAt = later
	c.Overrides[0].What = "x"
	if !reflect.DeepEqual(s, fullState()) {
		t.Fatalf("changing the clone changed the original:\n%+v", s)
	}
}

func TestOldStateLoadsWithoutNewFields(t *testing.T) {
	old := `{"task":"t","workflow":"minimal","mode":"minimal","current_node":"spec","history":["spec"],
"workflow_id":"x","status":"active","started_at":"2026-01-02T03:04:05Z","phase_start_time":"2026-01-02T03:04:05Z",
"updated_at":"2026-01-02T03:04:05Z","worktree":"/w","attempt":1,"rollback_history":[]}`
	var s State
	if err := json.Unmarshal([]byte(old), &s); err != nil {
		t.Fatal(err)
	}
	if !s.Active() || s.Finished() || s.Retries != nil || s.Error != nil || s.SkippedNodes != nil {
		t.Fatalf("old state read wrongly: %+v", s)
	}
	// Written back, the absent optional fields stay absent.
	out, _ := json.Marshal(&s)
	for _, f := range []string{"retries", "error", "completed_nodes", "approvals", "cancelled", "priority"} {
		if json.Valid(out) && containsKey(out, f) {
			t.Errorf("%s written for an old state: %s", f, out)
		}
	}
}

func containsKey(js []byte, key string) bool {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(js, &m)
	_, ok := m[key]
	return ok
}

func TestOpenAndFinishedStatuses(t *testing.T) {
	for _, c := range []struct {
		status         string
		open, finished bool
	}{
		{StatusActive, true, false},
		{StatusAwaitingApproval, true, false},
		{StatusAwaitingAnswer, true, false},
		{StatusPaused, true, false},
		{StatusFailed, true, false},
		{StatusCompleted, false, true},
		{StatusAborted, false, true},
		{StatusRolledBack, false, true},
		{StatusStashed, false, false},
	} {
		s := &State{Status: c.status}
		if s.Active() != c.open || s.Finished() != c.finished {
			t.Errorf("%s: open %v finished %v, want %v %v", c.status, s.Active(), s.Finished(), c.open, c.finished)
		}
	}
}

package engine

import (
	"errors"
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// gated is a two-node workflow whose second node is conditional and has an
// approval gate, so every command has something to do in every status.
var gated = y(
	"start_node: spec",
	"nodes:",
	"  spec:",
	"    prompt: s",
	"    transitions: [{when: spec_complete, to: plan}]",
	"  plan:",
	"    prompt: p",
	"    conditional: true",
	"    gate: approval",
	"    transitions: [{when: plan_complete, to: done}]",
)

// put stores st as task name's state, as if some command had written it.
func (te *testEnv) put(t *testing.T, def string, st *State) {
	t.Helper()
	old, err := te.tasks.LoadTask(st.Task)
	rev := ""
	if err == nil {
		rev = old.Rev
	}
	if _, err := te.tasks.SaveTask(&Task{State: st, Definition: []byte(def), Rev: rev}, "test: put"); err != nil {
		t.Fatal(err)
	}
}

// stateIn returns a valid state of the gated workflow in status.
func (te *testEnv) stateIn(status string) *State {
	at := te.now
	st := &State{Task: "x", Workflow: "gated", Mode: "gated", CurrentNode: "plan", History: []string{"spec", "plan"},
		WorkflowID: "w", Status: status, StartedAt: at, PhaseStartTime: at, UpdatedAt: at, Attempt: 1,
		RollbackHistory: []RollbackEvent{}, Worktree: te.Worktree, CompletedNodes: []string{"spec"}}
	switch status {
	case StatusAwaitingApproval:
		st.PendingClaim = "plan_complete"
	case StatusAwaitingAnswer:
		st.Questions = []Question{{Node: "plan", Question: "Which one?", AskedAt: at}}
	case StatusPaused:
		st.PausedAt = &at
	case StatusFailed:
		st.Error = &TaskError{Node: "plan", Message: "broken", Timestamp: at, Recoverable: true}
		st.FailedNodes = []string{"plan"}
		st.Attempt = 3
	case StatusCompleted:
		st.CurrentNode, st.History, st.EndedAt = workflow.NodeDone, []string{"spec", "plan", "done"}, &at
		st.CompletedNodes = []string{"spec", "plan"}
	case StatusAborted:
		st.CurrentNode, st.History, st.EndedAt = workflow.NodeAborted, []string{"spec", "plan", "aborted"}, &at
	case StatusRolledBack:
		st.CurrentNode, st.History, st.EndedAt, st.CompletedNodes = "spec", []string{"spec"}, &at, nil
	}
	return st
}

// TestStatusMachine runs every command on a task in every status: the
// allowed ones succeed, the others fail and write nothing.
func TestStatusMachine(t *testing.T) {
	commands := map[string]func(e *Engine, o TaskOptions) error{
		"next":    func(e *Engine, o TaskOptions) error { _, err := e.NextWith(NextOptions{Task: o.Task}); return err },
		"prev":    func(e *Engine, o TaskOptions) error { _, err := e.Prev(o); return err },
		"restart": func(e *Engine, o TaskOptions) error { _, err := e.Restart(o); return err },
		"fail":    func(e *Engine, o TaskOptions) error { _, err := e.Fail(o, "no"); return err },
		"approve": func(e *Engine, o TaskOptions) error {
			_, err := e.Approve(ApproveOptions{TaskOptions: o, Comment: "ok"})
			return err
		},
		"reject": func(e *Engine, o TaskOptions) error { _, err := e.Reject(o, "no", ""); return err },
		"ask":    func(e *Engine, o TaskOptions) error { _, err := e.Ask(o, "why?"); return err },
		"answer": func(e *Engine, o TaskOptions) error { _, _, err := e.Answer(o, "because"); return err },
		"pause":  func(e *Engine, o TaskOptions) error { _, err := e.Pause(o, "lunch"); return err },
		"resume": func(e *Engine, o TaskOptions) error {
			_, err := e.Resume(ResumeOptions{Task: o.Task, Strategy: RetryCurrent})
			return err
		},
		"skip":     func(e *Engine, o TaskOptions) error { _, err := e.Skip(o, ""); return err },
		"abort":    func(e *Engine, o TaskOptions) error { _, err := e.Abort(o); return err },
		"describe": func(e *Engine, o TaskOptions) error { _, err := e.Describe("d", o); return err },
	}
	// Written out here, not read from the engine's table, so a change to
	// either shows up.
	allowedCmds := map[string][]string{
		StatusActive:           {"next", "prev", "restart", "fail", "ask", "pause", "skip", "abort", "describe"},
		StatusAwaitingApproval: {"prev", "restart", "approve", "reject", "abort", "describe"},
		StatusAwaitingAnswer:   {"answer", "abort", "describe"},
		StatusPaused:           {"next", "prev", "restart", "resume", "skip", "abort", "describe"},
		StatusFailed:           {"resume", "abort", "describe"},
		StatusCompleted:        {"prev", "restart", "describe"},
		StatusAborted:          {"describe"},
		StatusRolledBack:       {"describe"},
		StatusStashed:          {},
	}
	for status, ok := range allowedCmds {
		for name, run := range commands {
			t.Run(status+"/"+name, func(t *testing.T) {
				te := newTestEngine(t, map[string][]byte{"gated.yaml": []byte(gated)})
				st := te.stateIn(status)
				if status == StatusStashed {
					st.Worktree = ""
				}
				te.put(t, gated, st)
				te.sess.s = &Session{SessionID: "s", ActiveTask: "x"}
				before := len(te.tasks.log)
				err := run(te.Engine, TaskOptions{Task: "x"})
				want := false
				for _, c := range ok {
					want = want || c == name
				}
				switch {
				case want && err != nil:
					t.Fatalf("%s refused in %s: %v", name, status, err)
				case !want && err == nil:
					t.Fatalf("%s allowed in %s", name, status)
				case !want && len(te.tasks.log) != before:
					t.Fatalf("%s refused in %s but wrote %v", name, status, te.tasks.log[before:])
				}
				if !want {
					var se *StatusError
					if errors.As(err, &se) && (se.Status != status || se.Advice == "") {
						t.Errorf("status error %+v", se)
					}
					return
				}
				// Whatever the command did, the state it left is valid.
				if t2, err := te.Lookup("x"); err != nil {
					t.Fatal(err)
				} else if err := ValidateState(t2.State, nil); err != nil {
					t.Errorf("%s in %s left %v", name, status, err)
				}
			})
		}
	}
}

// TestStatusMessagesNameTheFit checks the one-line refusals name the
// status and the command that fits.
func TestStatusMessagesNameTheFit(t *testing.T) {
	cases := []struct {
		status string
		run    func(e *Engine, o TaskOptions) error
		want   string
	}{
		{StatusActive, func(e *Engine, o TaskOptions) error { _, err := e.Approve(ApproveOptions{TaskOptions: o}); return err },
			"Cannot approve: task x is active. It is not waiting for approval; 'git hegel next' moves it on"},
		{StatusActive, func(e *Engine, o TaskOptions) error { _, _, err := e.Answer(o, "a"); return err },
			"Cannot answer: task x is active. No question is open; 'git hegel ask QUESTION' asks one"},
		{StatusActive, func(e *Engine, o TaskOptions) error {
			_, err := e.Resume(ResumeOptions{Task: o.Task, Strategy: RetryCurrent})
			return err
		},
			"Cannot resume workflow with status: active (task x). It is running; 'git hegel pause' pauses it"},
		{StatusFailed, func(e *Engine, o TaskOptions) error { _, err := e.Fail(o, ""); return err },
			"Cannot fail: task x is failed. It failed at 'plan' (broken); run 'git hegel resume --strategy retry-current|retry-previous|skip-current|from-checkpoint' to go on"},
		{StatusAwaitingAnswer, func(e *Engine, o TaskOptions) error { _, err := e.NextWith(NextOptions{Task: o.Task}); return err },
			"Cannot next: task x is awaiting_answer. It waits for an answer to: Which one?. Run 'git hegel answer TEXT'"},
		{StatusAwaitingApproval, func(e *Engine, o TaskOptions) error { _, err := e.NextWith(NextOptions{Task: o.Task}); return err },
			"Cannot next: task x is awaiting_approval. It waits for approval at 'plan': run 'git hegel approve' or 'git hegel reject -m REASON'"},
		{StatusCompleted, func(e *Engine, o TaskOptions) error {
			_, err := e.Resume(ResumeOptions{Task: o.Task, Strategy: SkipCurrent})
			return err
		},
			"Cannot resume workflow with status: completed (task x). Start a new one with 'git hegel start <workflow>'"},
	}
	for _, tc := range cases {
		te := newTestEngine(t, map[string][]byte{"gated.yaml": []byte(gated)})
		te.put(t, gated, te.stateIn(tc.status))
		if err := tc.run(te.Engine, TaskOptions{Task: "x"}); err == nil || err.Error() != tc.want {
			t.Errorf("%s:\n got %v\nwant %s", tc.status, err, tc.want)
		}
	}
}

func TestStateTimestampsAdvance(t *testing.T) {
	te := newTestEngine(t, map[string][]byte{"gated.yaml": []byte(gated)})
	te.put(t, gated, te.stateIn(StatusActive))
	o := TaskOptions{Task: "x"}
	te.now = te.now.Add(time.Minute)
	if _, err := te.Pause(o, "why"); err != nil {
		t.Fatal(err)
	}
	st := te.stateOf(t, "x")
	if st.Status != StatusPaused || st.PausedAt == nil || !st.PausedAt.Equal(te.now) || st.PauseReason != "why" {
		t.Errorf("paused: %+v", st)
	}
	te.now = te.now.Add(time.Minute)
	if _, err := te.NextWith(NextOptions{Task: o.Task}); err != nil {
		t.Fatal(err)
	}
	// next from paused resumes: the gate stops it at plan.
	st = te.stateOf(t, "x")
	if st.Status != StatusAwaitingApproval || st.PendingClaim != "plan_complete" {
		t.Errorf("next from paused: %+v", st)
	}
}

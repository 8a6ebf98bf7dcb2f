package engine

import (
	"strings"
	"testing"
)

// TestRetryFlow: dev attempt 1 fails, attempt 2 knows why, passes, and
// the next node starts at attempt 1.
func TestRetryFlow(t *testing.T) {
	te := newTestEngine(t, nil)
	te.pipelineArtifacts()
	te.StartTask(StartOptions{Workflow: "pipeline", Task: "p", Type: "bug_fix"})
	te.Next("")
	te.Approve(ApproveOptions{})
	te.Next("") // preflight -> dev
	v, err := te.Fail(TaskOptions{}, "Tests failed: missing validation on email field")
	if err != nil {
		t.Fatal(err)
	}
	st := v.State
	if st.CurrentNode != "dev" || st.Attempt != 2 || st.LastFailure != "Tests failed: missing validation on email field" || st.Retries["dev"] != 1 {
		t.Fatalf("after a failure: %+v", st)
	}
	if !strings.HasPrefix(v.Prompt, "This is attempt 2 of 3 at 'dev'. The last attempt failed:\n  Tests failed: missing validation on email field\n\nImplement hegel-tasks/p/PLAN.md") {
		t.Errorf("retry prompt:\n%s", v.Prompt)
	}
	if r, _ := te.Repeat(""); !strings.HasPrefix(r.Prompt, "This is attempt 2 of 3") {
		t.Error("repeat does not show the failure")
	}
	v, err = te.Next("")
	if err != nil || v.Node != "migration" || v.State.Attempt != 1 || v.State.LastFailure != "" {
		t.Fatalf("after the retry passed: %+v %v", v.State, err)
	}
	if !strings.Contains(strings.Join(te.tasks.log, "\n"), "fail: dev attempt 1 of 3 (Tests failed: missing validation on email field)") {
		t.Errorf("history:\n%s", strings.Join(te.tasks.log, "\n"))
	}
}

func TestMaxAttemptsFailTheTask(t *testing.T) {
	te := newTestEngine(t, nil)
	te.MaxAttempts = 2 // hegel.maxAttempts
	te.Start("minimal", "", "m")
	te.Fail(TaskOptions{}, "one")
	v, err := te.Fail(TaskOptions{}, "two")
	if err != nil {
		t.Fatal(err)
	}
	st := v.State
	if st.Status != StatusFailed || st.Error == nil || st.Error.Message != "two" || !st.Error.Recoverable ||
		st.Error.Node != "spec" || st.Attempt != 2 || st.FailedNodes[0] != "spec" || st.Retries["spec"] != 2 {
		t.Fatalf("failed: %+v %+v", st, st.Error)
	}
	if _, err := te.Next(""); err == nil || !strings.Contains(err.Error(), "It failed at 'spec' (two)") {
		t.Errorf("next on a failed task: %v", err)
	}
	// max_attempts in the YAML beats hegel.maxAttempts.
	te2 := newGateEngine(t)
	te2.MaxAttempts = 1
	te2.Next("")
	te2.Approve(ApproveOptions{})
	for i := 0; i < 4; i++ {
		if _, err := te2.Fail(TaskOptions{}, ""); err != nil {
			t.Fatal(err)
		}
	}
	st = te2.state(t)
	if st.Status != StatusFailed || st.LastFailure != "attempt 4 failed (no reason given)" {
		t.Errorf("no reason: %+v", st)
	}
}

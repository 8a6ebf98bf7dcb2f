package engine

import (
	"errors"
	"testing"
)

const capLoop = `start_node: dev
nodes:
  dev:
    prompt: Build it.
    transitions:
      - when: dev_complete
        to: qa
  qa:
    prompt: Test it.
    transitions:
      - when: qa_complete
        to: done
      - when: qa_failed
        to: dev
`

// TestRollbackCapStopsPingPong: with a cap of 2, two moves back pass,
// the third (by any command that moves back) stops with nothing changed,
// --force goes on and is recorded; moving forward is never stopped.
func TestRollbackCapStopsPingPong(t *testing.T) {
	te := newTestEngine(t, map[string][]byte{".hegel/workflows/loop.yaml": []byte(capLoop)})
	te.MaxRollbacks = 2
	if _, err := te.Start("loop", "", "t"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := te.Next(""); err != nil {
			t.Fatal(err)
		}
		if _, err := te.Next("qa_failed"); err != nil {
			t.Fatalf("move back %d: %v", i+1, err)
		}
	}
	if _, err := te.Next(""); err != nil {
		t.Fatal(err)
	}
	before := te.state(t)
	var capErr *RollbackCapError
	if _, err := te.Next("qa_failed"); !errors.As(err, &capErr) || capErr.Count != 2 || capErr.Max != 2 || capErr.FromField != "hegel.maxRollbacks" {
		t.Fatalf("third move back: %v", err)
	}
	if _, err := te.Prev(TaskOptions{}); !errors.As(err, &capErr) {
		t.Fatalf("prev past the cap: %v", err)
	}
	if _, err := te.Goto(GotoOptions{Node: "dev"}); !errors.As(err, &capErr) {
		t.Fatalf("goto back past the cap: %v", err)
	}
	if got := te.state(t); got.CurrentNode != "qa" || len(got.RollbackHistory) != len(before.RollbackHistory) || len(got.Overrides) != 0 {
		t.Fatalf("a refused move changed the task: %+v", got)
	}
	if _, err := te.NextWith(NextOptions{Claim: "qa_failed", Force: Force{All: true}}); err != nil {
		t.Fatal(err)
	}
	st := te.state(t)
	if st.CurrentNode != "dev" || len(st.RollbackHistory) != 3 || len(st.Overrides) != 1 || st.Overrides[0].What != "max_rollbacks" {
		t.Fatalf("forced move: node %s, %d events, overrides %+v", st.CurrentNode, len(st.RollbackHistory), st.Overrides)
	}
	if _, err := te.Next(""); err != nil {
		t.Fatalf("moving forward past the cap: %v", err)
	}
}

// TestRollbackCapWorkflowKeyAndOff: the workflow's max_rollbacks wins
// over the setting; "off" removes the cap.
func TestRollbackCapWorkflowKeyAndOff(t *testing.T) {
	te := newTestEngine(t, map[string][]byte{
		".hegel/workflows/one.yaml": []byte("max_rollbacks: 1\n" + capLoop),
		".hegel/workflows/off.yaml": []byte("max_rollbacks: off\n" + capLoop),
	})
	te.MaxRollbacks = 5
	if _, err := te.Start("one", "", "one"); err != nil {
		t.Fatal(err)
	}
	te.Next("")
	if _, err := te.Prev(TaskOptions{}); err != nil {
		t.Fatal(err)
	}
	te.Next("")
	var capErr *RollbackCapError
	if _, err := te.Next("qa_failed"); !errors.As(err, &capErr) || capErr.Max != 1 || capErr.FromField != "max_rollbacks" {
		t.Fatalf("second move back with max_rollbacks 1: %v", err)
	}
	if _, err := te.Start("off", "", "off"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 8; i++ {
		te.Next("")
		if _, err := te.Next("qa_failed"); err != nil {
			t.Fatalf("max_rollbacks off, move back %d: %v", i+1, err)
		}
	}
}

// TestRollbackCapRetryPrevious: resume's retry-previous is a move back
// too: recorded, and stopped past the cap unless forced.
func TestRollbackCapRetryPrevious(t *testing.T) {
	te := newTestEngine(t, map[string][]byte{".hegel/workflows/one.yaml": []byte("max_rollbacks: 1\n" + capLoop)})
	if _, err := te.Start("one", "", "t"); err != nil {
		t.Fatal(err)
	}
	te.Next("")
	if _, err := te.Pause(TaskOptions{}, "lunch"); err != nil {
		t.Fatal(err)
	}
	if _, err := te.Resume(ResumeOptions{Strategy: RetryPrevious}); err != nil {
		t.Fatal(err)
	}
	st := te.state(t)
	if st.CurrentNode != "dev" || len(st.RollbackHistory) != 1 || st.RollbackHistory[0].Reason != "retry-previous" {
		t.Fatalf("retry-previous: node %s, events %+v", st.CurrentNode, st.RollbackHistory)
	}
	te.Next("")
	te.Pause(TaskOptions{}, "lunch")
	var capErr *RollbackCapError
	if _, err := te.Resume(ResumeOptions{Strategy: RetryPrevious}); !errors.As(err, &capErr) {
		t.Fatalf("retry-previous past the cap: %v", err)
	}
	if _, err := te.Resume(ResumeOptions{Strategy: RetryPrevious, Force: true}); err != nil {
		t.Fatalf("forced: %v", err)
	}
}

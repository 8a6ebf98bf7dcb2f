package engine

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// gateFlow: a spec node with an approval gate (Ann or Bob decide), then a
// plan node whose transition to done asks for confirmation.
var gateFlow = y(
	"start_node: spec",
	"nodes:",
	"  spec:",
	"    prompt: s",
	"    gate: approval",
	"    approvers: [Ann, Bob]",
	"    transitions:",
	"      - {when: spec_complete, to: plan}",
	"      - {when: spec_skip, to: done}",
	"  plan:",
	"    prompt: p",
	"    max_attempts: 4",
	"    transitions:",
	"      - {when: plan_complete, to: done, confirm: true}",
	"      - {when: plan_redo, to: spec}",
)

func newGateEngine(t *testing.T) *testEnv {
	te := newTestEngine(t, map[string][]byte{"gate.yaml": []byte(gateFlow)})
	if _, err := te.Start("gate", "", "g"); err != nil {
		t.Fatal(err)
	}
	return te
}

func TestApprovalGate(t *testing.T) {
	te := newGateEngine(t)
	v, err := te.Next("spec_skip")
	if err != nil || v.Gate == nil || v.Gate.To != "done" || v.Gate.Claim != "spec_skip" || strings.Join(v.Gate.Approvers, ",") != "Ann,Bob" {
		t.Fatalf("next at a gate: %+v %v", v, err)
	}
	st := te.state(t)
	if st.Status != StatusAwaitingApproval || st.CurrentNode != "spec" || st.PendingClaim != "spec_skip" {
		t.Fatalf("at the gate: %+v", st)
	}
	// Only the approvers decide, unless forced (recorded).
	te.User = func() string { return "Eve" }
	if _, err := te.Approve(ApproveOptions{}); err == nil || err.Error() != "Only Ann or Bob may decide at 'spec' (you are 'Eve' by git config user.name); --force decides anyway, recorded in the task" {
		t.Errorf("approve by a stranger: %v", err)
	}
	te.User = func() string { return "" }
	if _, err := te.Approve(ApproveOptions{}); !errors.Is(err, ErrNoUser) {
		t.Errorf("approve without a name: %v", err)
	}
	te.User = func() string { return "Bob" }
	v, err = te.Approve(ApproveOptions{Comment: "fine"})
	if err != nil || v.Node != "done" {
		t.Fatalf("approve: %v", err)
	}
	st = te.state(t)
	if len(st.Approvals) != 1 || !reflect.DeepEqual(st.Approvals[0], Approval{Node: "spec", By: "Bob", At: te.now, Comment: "fine"}) || st.PendingClaim != "" {
		t.Errorf("approvals %+v", st.Approvals)
	}
	if !strings.Contains(te.tasks.log[len(te.tasks.log)-1], "approve: spec -> done (spec_skip) by Bob") {
		t.Errorf("history %q", te.tasks.log)
	}
}

func TestRejectSendsBack(t *testing.T) {
	te := newGateEngine(t)
	te.Next("")
	te.Approve(ApproveOptions{})
	te.Next("plan_redo") // back at spec, its gate again
	te.Next("")
	if _, err := te.Reject(TaskOptions{}, "", ""); err == nil {
		t.Error("reject without a reason")
	}
	v, err := te.Reject(TaskOptions{}, "spec is vague", "")
	if err != nil || v.Node != "plan" {
		t.Fatalf("reject: %v %v", v, err)
	}
	st := te.state(t)
	ev := st.RollbackHistory[len(st.RollbackHistory)-1]
	if ev.From != "spec" || ev.To != "plan" || ev.Reason != "spec is vague" || st.Status != StatusActive {
		t.Errorf("event %+v status %s", ev, st.Status)
	}
	a := st.Approvals[len(st.Approvals)-1]
	if !a.Rejected || a.Comment != "spec is vague" || a.By != "Ann" {
		t.Errorf("rejection %+v", a)
	}
	// --to names the node; an unknown one is refused with the list.
	te.Next("plan_redo")
	te.Next("")
	if _, err := te.Reject(TaskOptions{}, "no", "nowhere"); err == nil || !strings.Contains(err.Error(), "has no node 'nowhere' (nodes: 'spec', 'plan')") {
		t.Errorf("reject --to nowhere: %v", err)
	}
	if v, err := te.Reject(TaskOptions{}, "no", "spec"); err != nil || v.Node != "spec" || v.State.Status != StatusActive {
		t.Errorf("reject --to spec: %v", err)
	}
}

func TestConfirmTransition(t *testing.T) {
	te := newGateEngine(t)
	te.Next("")
	te.Approve(ApproveOptions{})
	n := len(te.tasks.log)
	// No one to ask: refused.
	if _, err := te.Next(""); err == nil || !strings.Contains(err.Error(), "needs confirmation") {
		t.Fatalf("no Confirm: %v", err)
	}
	var asked string
	te.Confirm = func(q string) (bool, error) { asked = q; return false, nil }
	if _, err := te.Next(""); !errors.Is(err, ErrCancelled) || asked != "Proceed from plan to done? (y/N) " {
		t.Fatalf("declined: %v %q", err, asked)
	}
	te.Confirm = func(string) (bool, error) { return false, errors.New("no answer on standard input") }
	if _, err := te.Next(""); err == nil || err.Error() != "no answer on standard input" {
		t.Fatalf("closed stdin: %v", err)
	}
	if len(te.tasks.log) != n {
		t.Fatal("a declined transition wrote")
	}
	te.Confirm = func(string) (bool, error) { return true, nil }
	if v, err := te.Next(""); err != nil || v.Node != "done" {
		t.Fatalf("confirmed: %v", err)
	}
}

func TestAskAndAnswer(t *testing.T) {
	te := newTestEngine(t, nil)
	te.Start("minimal", "", "m")
	if _, err := te.Ask(TaskOptions{}, "   "); err == nil {
		t.Error("empty question")
	}
	st, err := te.Ask(TaskOptions{}, "Which database?")
	if err != nil || st.Status != StatusAwaitingAnswer {
		t.Fatalf("ask: %v", err)
	}
	if _, err := te.Next(""); err == nil || !strings.Contains(err.Error(), "It waits for an answer to: Which database?. Run 'git hegel answer TEXT'") {
		t.Errorf("next while asking: %v", err)
	}
	if _, err := te.Ask(TaskOptions{}, "another?"); err == nil {
		t.Error("asked twice")
	}
	q, v, err := te.Answer(TaskOptions{}, "Postgres")
	if err != nil || q.Answer != "Postgres" || v.State.Status != StatusActive {
		t.Fatalf("answer: %v", err)
	}
	st = te.state(t)
	if len(st.Questions) != 1 || st.Questions[0].AnsweredAt == nil || st.Questions[0].Node != "spec" {
		t.Errorf("questions %+v", st.Questions)
	}
	if _, _, err := te.Answer(TaskOptions{}, "again"); err == nil {
		t.Error("answered with no question open")
	}
}

// TestRejectAtTheFirstGate: with no node before it, a rejection without
// --to returns the task to the gate's own node, to be done again.
func TestRejectAtTheFirstGate(t *testing.T) {
	te := newGateEngine(t)
	te.User = func() string { return "Ann" }
	if _, err := te.Next("spec_skip"); err != nil {
		t.Fatal(err)
	}
	v, err := te.Reject(TaskOptions{}, "not yet", "")
	if err != nil || v.Node != "spec" || v.State.Status != StatusActive || v.State.PendingClaim != "" {
		t.Fatalf("reject at the first gate: %+v %v", v, err)
	}
	ev := v.State.RollbackHistory[len(v.State.RollbackHistory)-1]
	if ev.From != "spec" || ev.To != "spec" || ev.Reason != "not yet" {
		t.Errorf("event %+v", ev)
	}
}

// An answer from a page names the question it showed: once that one was
// answered elsewhere and another asked, the answer is refused and
// nothing changes, rather than being recorded for a question its writer
// never read.
func TestAnswerShownRefusesAnotherQuestion(t *testing.T) {
	te := newTestEngine(t, nil)
	te.Start("minimal", "", "m")
	te.Ask(TaskOptions{}, "Which database?")
	shown := ShownQuestion{Index: 0, AskedAt: te.state(t).Questions[0].AskedAt}
	te.Answer(TaskOptions{}, "Postgres")
	te.Ask(TaskOptions{}, "Drop the old tables?")
	var stale *StaleQuestionError
	if _, _, err := te.AnswerShown(TaskOptions{}, "yes", &shown); !errors.As(err, &stale) || !strings.Contains(err.Error(), "nothing changed") {
		t.Fatalf("an answer to the question before: %v", err)
	}
	if st := te.state(t); st.Status != StatusAwaitingAnswer || st.Questions[1].AnsweredAt != nil {
		t.Fatalf("a refused answer was recorded: %+v", st.Questions)
	}
	shown = ShownQuestion{Index: 1, AskedAt: te.state(t).Questions[1].AskedAt}
	if q, _, err := te.AnswerShown(TaskOptions{}, "no", &shown); err != nil || q.Question != "Drop the old tables?" {
		t.Fatalf("the answer to the question shown: %v %v", q, err)
	}
}

// A rejection from a page names the gate it showed: at another gate by
// then, it is refused and the task stays where it is.
func TestRejectShownRefusesAnotherGate(t *testing.T) {
	te := newGateEngine(t)
	te.Next("")
	var stale *StaleGateError
	if _, err := te.RejectShown(TaskOptions{}, "vague", "", "plan", time.Time{}); !errors.As(err, &stale) || !stale.Moved {
		t.Fatalf("a rejection of a gate the task is not at: %v", err)
	}
	if st := te.state(t); st.Status != StatusAwaitingApproval || st.CurrentNode != "spec" || len(st.Approvals) != 0 {
		t.Fatalf("a refused rejection changed the task: %s at %s, %+v", st.Status, st.CurrentNode, st.Approvals)
	}
	if v, err := te.RejectShown(TaskOptions{}, "vague", "", "spec", time.Time{}); err != nil || v.State.Status != StatusActive {
		t.Fatalf("the rejection of the gate shown: %v", err)
	}
}

// A rejection from a page names when the task reached the gate it
// showed: sent back and at the same gate again since, the rejection
// (about the work before) is refused; from the page of this visit it
// passes.
func TestRejectShownRefusesTheGateReachedAgain(t *testing.T) {
	te := newGateEngine(t)
	te.Next("")
	shown := te.state(t).PhaseStartTime
	te.now = te.now.Add(time.Minute)
	if _, err := te.Reject(TaskOptions{}, "first try", ""); err != nil {
		t.Fatal(err)
	}
	te.Next("")
	before := te.state(t)
	if before.CurrentNode != "spec" || before.Status != StatusAwaitingApproval {
		t.Fatalf("not at the gate again: %s at %s", before.Status, before.CurrentNode)
	}
	var stale *StaleGateError
	if _, err := te.RejectShown(TaskOptions{}, "vague", "", "spec", shown); !errors.As(err, &stale) || !stale.Again {
		t.Fatalf("a rejection from the page of the visit before: %v", err)
	}
	if st := te.state(t); st.Status != StatusAwaitingApproval || len(st.RollbackHistory) != len(before.RollbackHistory) {
		t.Fatalf("a refused rejection changed the task: %s", st.Status)
	}
	if v, err := te.RejectShown(TaskOptions{}, "vague", "", "spec", before.PhaseStartTime); err != nil || v.State.Status != StatusActive {
		t.Fatalf("the rejection of the visit shown: %v", err)
	}
}

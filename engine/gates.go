package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

// Gates: a node with `gate: approval` stops `next` until a person approves
// or rejects the move; `ask` stops the task until a person answers.
// Decisions at a gate may come from any worktree or clone (a reviewer
// approves on their own machine after `git hegel sync`), so they do not
// need the task to be theirs.

// GateView describes an approval the task waits for.
type GateView struct {
	Task, Node, Claim, To string
	Approvers             []string // empty: anyone
	// OtherPerson: hegel.approval.otherPerson is set, so the clone that
	// moved the task to the gate (it holds it) cannot approve it: someone
	// else does, from their clone.
	OtherPerson bool
}

// gateView names where an approval takes the task: the transition's
// target, or, when the task's type skips it, the node the task will
// really arrive at (as arrive walks past skipped nodes).
func gateView(wf *workflow.Definition, st *State) *GateView {
	to, _ := wf.Transition(st.CurrentNode, st.PendingClaim)
	for i := 0; i <= len(wf.Order) && to != "" && !wf.IsTerminal(to) && wf.SkippedFor(to, st.TaskType); i++ {
		n := wf.Nodes[to]
		if len(n.Transitions) == 0 {
			break
		}
		to = n.Transitions[0].To
	}
	return &GateView{Task: st.Task, Node: st.CurrentNode, Claim: st.PendingClaim, To: to, Approvers: wf.Nodes[st.CurrentNode].Approvers}
}

// gateForReader is g as this engine's reader may read it: an agent is not
// given the approvers an untrusted definition names, its words as its
// prompts are (PromptTrusted).
//
// It also says whether hegel.approval.otherPerson sends the approval of
// st to another person than this one.
func (e *Engine) gateForReader(g *GateView, wf *workflow.Definition, st *State) *GateView {
	if g == nil {
		return nil
	}
	c := *g
	c.OtherPerson = e.ApprovalBarred(st) != nil
	if e.AgentReads && len(g.Approvers) > 0 && !e.TrustOf(wf.Raw).Trusted {
		c.Approvers = []string{"(the approvers its definition names: not shown to the agent until this machine trusts the definition)"}
	}
	return &c
}

// Gate returns the approval task t waits for, or nil.
func Gate(t *Task) *GateView {
	if t.State.Status != StatusAwaitingApproval {
		return nil
	}
	wf, err := definition(t)
	if err != nil {
		return nil
	}
	return gateView(wf, t.State)
}

// ErrNoUser means git config user.name is not set, so a decision at a
// gate could not say who made it.
var ErrNoUser = errors.New("Who is deciding? Set your name first: git config user.name 'Your Name'")

func (e *Engine) user() (string, error) {
	if e.User != nil {
		if u := strings.TrimSpace(e.User()); u != "" {
			return u, nil
		}
	}
	return "", ErrNoUser
}

// Approve records an approval at the gate the task waits at and moves on
// along the claim `next` asked for. o.Force decides without being one of
// the node's approvers (recorded in the task); it does not approve
// artifacts unseen, which is o.Unseen's to say: the two are different
// permissions (checkSeen). The check runs on the state the approval is
// written to, so it covers exactly the blobs the approval records.
func (e *Engine) Approve(o ApproveOptions) (*View, error) {
	user, err := e.user()
	if err != nil {
		return nil, err
	}
	var skipped []SkippedNode
	st, wf, err := e.updateOpts(updateOpts{call: o.TaskOptions, anyOwner: true}, func(st *State, wf *workflow.Definition) (string, error) {
		if err := e.allowed(st, "approve"); err != nil {
			return "", err
		}
		node := st.CurrentNode
		if err := e.otherPerson(st); err != nil {
			return "", err
		}
		if err := e.mayDecide(wf, node, user, st, o.Force); err != nil {
			return "", err
		}
		if err := e.checkSeen(st, node, o); err != nil {
			return "", err
		}
		claim := st.PendingClaim
		if claim == "" {
			claim = node + "_complete"
		}
		to, ok := wf.Transition(node, claim)
		if !ok {
			return "", &ErrNoMatch{Node: node, Claim: claim, Valid: claims(wf, node)}
		}
		st.Approvals = append(st.Approvals, Approval{Node: node, By: user, At: e.now().UTC(), Comment: o.Comment, Artifacts: approvedArtifacts(st, node)})
		var msg string
		msg, skipped = e.move(st, wf, claim, to, "")
		return fmt.Sprintf("approve: %s by %s", msg, user), nil
	})
	if err != nil {
		return nil, err
	}
	return e.moved(st, wf, skipped)
}

// Reject records a rejection at the gate and sends the task back to to
// (default: the node before the gate), as a rollback event. o.Force
// decides without being one of the node's approvers.
func (e *Engine) Reject(o TaskOptions, reason, to string) (*View, error) {
	return e.RejectShown(o, reason, to, "", time.Time{})
}

// RejectShown is Reject from a page that showed the gate at node
// shownGate ("" checks nothing), reached at shownSince (the task's phase
// start then; zero checks nothing): the rejection is refused
// (StaleGateError) when the task waits at another gate by then, or at
// the same one reached again (sent back and done over since), so a
// reason written about one gate's work never sends back other work.
func (e *Engine) RejectShown(o TaskOptions, reason, to, shownGate string, shownSince time.Time) (*View, error) {
	user, err := e.user()
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(reason) == "" {
		return nil, badNamef("A rejection needs a reason: git hegel reject -m REASON")
	}
	st, wf, err := e.updateOpts(updateOpts{call: o, anyOwner: true}, func(st *State, wf *workflow.Definition) (string, error) {
		if err := e.allowed(st, "reject"); err != nil {
			return "", err
		}
		if shownGate != "" && shownGate != st.CurrentNode {
			return "", &StaleGateError{Task: st.Task, Node: st.CurrentNode, Moved: true}
		}
		if !shownSince.IsZero() && !shownSince.Equal(st.PhaseStartTime) {
			return "", &StaleGateError{Task: st.Task, Node: st.CurrentNode, Again: true}
		}
		from := st.CurrentNode
		if err := e.mayDecide(wf, from, user, st, o.Force); err != nil {
			return "", err
		}
		target := to
		switch {
		case target != "":
		case len(st.History) < 2:
			// The first gate: no earlier node, so the work goes back to
			// the gate's own node, to be done again.
			target = from
		default:
			target = st.History[len(st.History)-2]
		}
		if _, ok := wf.Nodes[target]; !ok {
			return "", fmt.Errorf("Workflow '%s' has no node '%s' (nodes: %s)", wf.Name, target, text.JoinQuoted(wf.Order))
		}
		if err := e.capMove(st, wf, target, o.Force); err != nil {
			return "", err
		}
		now := e.now().UTC()
		st.Approvals = append(st.Approvals, Approval{Node: from, By: user, At: now, Comment: reason, Rejected: true, Artifacts: approvedArtifacts(st, from)})
		st.RollbackHistory = appendEvent(st.RollbackHistory, RollbackEvent{Timestamp: now, From: from, To: target, Reason: reason})
		e.goBack(st, wf, target)
		return fmt.Sprintf("reject: %s -> %s by %s (%s)", from, target, user, firstLine(reason)), nil
	})
	if err != nil {
		return nil, err
	}
	if err := e.touchSession(func(s *Session) { s.Totals.Transitions++ }); err != nil {
		return nil, err
	}
	e.afterMove(st, wf)
	return e.view(st, wf), nil
}

// ApprovalBarred is why hegel.approval.otherPerson refuses an approval
// of st here (nil when it does not): views say so before anyone tries.
func (e *Engine) ApprovalBarred(st *State) error { return e.otherPerson(st) }

// otherPerson refuses, with hegel.approval.otherPerson, an approval by
// the task's own owner: on a clone whose own record says a worktree of it
// holds the task, or by the person whose git user.email the task names.
// The email travels with the task and could be anything, so it only ever
// adds a refusal; the clone's record is what a remote cannot change.
// --force does not lift it: the setting exists to make sure.
func (e *Engine) otherPerson(st *State) error {
	if !e.ApprovalOtherPerson {
		return nil
	}
	if st.WorktreeID != "" && sameClone(st.WorktreeID, e.WorktreeID) && e.verified(st) {
		return fmt.Errorf("Task %s is owned on this clone (%s); with hegel.approval.otherPerson another person approves it, from their clone",
			st.Task, st.Worktree)
	}
	email := e.email()
	if email == "" {
		return errors.New("Who is approving? hegel.approval.otherPerson compares your git user.email with the task's owner: git config user.email you@example.com")
	}
	if strings.EqualFold(email, st.OwnerEmail) {
		// A parked task keeps the person who held it last, so parking
		// one's own task first does not make its approval someone else's.
		whose := "is owned by"
		if ownedByNobody(st) {
			whose = "was last held by"
		}
		return fmt.Errorf("Task %s %s %s, which is you (git config user.email); with hegel.approval.otherPerson another person approves it",
			st.Task, whose, email)
	}
	return nil
}

// mayDecide checks the node's approvers list, if it has one; force lets
// anyone decide, recorded in the task.
func (e *Engine) mayDecide(wf *workflow.Definition, node, user string, st *State, force bool) error {
	n := wf.Nodes[node]
	if n == nil || len(n.Approvers) == 0 || slices.Contains(n.Approvers, user) {
		return nil
	}
	if force {
		st.Overrides = append(st.Overrides, Override{Node: node, What: "approver", Reason: user + " decided without being an approver", At: e.now().UTC()})
		return nil
	}
	return fmt.Errorf("Only %s may decide at '%s' (you are '%s' by git config user.name); --force decides anyway, recorded in the task",
		strings.Join(n.Approvers, " or "), node, user)
}

// goBack returns st to node: to its last visit in the history if it has
// one (the history is cut back, as a rollback does), else as a new entry.
func (e *Engine) goBack(st *State, wf *workflow.Definition, node string) {
	h := cutBack(st.History, node)
	if h == nil {
		e.enter(st, wf, node)
		return
	}
	st.History = slices.Clone(h)
	st.CurrentNode = node
	e.reopen(st, wf)
	st.CompletedNodes = keepVisited(st.CompletedNodes, st.History)
}

// keepVisited keeps the completed nodes that are still in the history
// before its last entry: the ones after a rollback target will run again.
func keepVisited(done, history []string) []string {
	var out []string
	for _, n := range done {
		if slices.Contains(history[:len(history)-1], n) {
			out = append(out, n)
		}
	}
	return out
}

// moved finishes a move made by approve, skip or resume: it counts the
// transition in the session's totals, does what follows entering a node
// and returns the task's view.
func (e *Engine) moved(st *State, wf *workflow.Definition, skipped []SkippedNode) (*View, error) {
	if err := e.touchSession(func(s *Session) { countMove(s, st) }); err != nil {
		return nil, err
	}
	e.afterMove(st, wf)
	v := e.view(st, wf)
	v.Skipped = skipped
	return v, nil
}

// countMove adds a transition, and the workflow it finished if it did,
// to the session's totals.
func countMove(s *Session, st *State) {
	s.Totals.Transitions++
	switch st.Status {
	case StatusCompleted:
		s.Totals.WorkflowsCompleted++
	case StatusAborted:
		s.Totals.WorkflowsAborted++
	}
}

// afterMove does what follows entering a node: warn about missing inputs,
// take the checkpoint.
func (e *Engine) afterMove(st *State, wf *workflow.Definition) {
	if st.Status == StatusActive {
		e.warnRequires(st, wf)
		e.checkpoint(st)
	}
}

// Ask records a question for the human; the task waits for the answer.
func (e *Engine) Ask(o TaskOptions, question string) (*State, error) {
	question = strings.TrimSpace(question)
	if question == "" {
		return nil, badNamef("The question is empty")
	}
	st, _, err := e.update(o, func(st *State, wf *workflow.Definition) (string, error) {
		if err := e.allowed(st, "ask"); err != nil {
			return "", err
		}
		st.Status = StatusAwaitingAnswer
		st.Questions = append(st.Questions, Question{Node: st.CurrentNode, Question: question, AskedAt: e.now().UTC()})
		return fmt.Sprintf("ask: at %s: %s", st.CurrentNode, firstLine(question)), nil
	})
	return st, err
}

// Answer records the answer to the open question and makes the task
// active again.
func (e *Engine) Answer(o TaskOptions, answer string) (*Question, *View, error) {
	return e.AnswerShown(o, answer, nil)
}

// ShownQuestion is an open question as a page showed it: its place among
// the task's questions and when it was asked.
type ShownQuestion struct {
	Index   int
	AskedAt time.Time
}

// StaleQuestionError refuses an answer from a page that showed another
// question than the one open now.
type StaleQuestionError struct {
	Task, Node string
	AskedAt    time.Time
}

func (e *StaleQuestionError) Error() string {
	return fmt.Sprintf("Task %s waits for the answer to another question now (asked at '%s', %s), not the one this page showed; nothing changed: reload the page and look again",
		e.Task, e.Node, e.AskedAt.Format("2006-01-02 15:04:05 UTC"))
}

// AnswerShown is Answer from a page: with shown set, the answer is
// refused (StaleQuestionError) unless the open question is still the one
// the page showed. The question can be answered elsewhere and another
// asked while the page is open; an answer typed to one question must
// never be recorded for the next.
func (e *Engine) AnswerShown(o TaskOptions, answer string, shown *ShownQuestion) (*Question, *View, error) {
	answer = strings.TrimSpace(answer)
	if answer == "" {
		return nil, nil, badNamef("The answer is empty")
	}
	var q Question
	st, wf, err := e.updateOpts(updateOpts{call: o, anyOwner: true}, func(st *State, wf *workflow.Definition) (string, error) {
		if err := e.allowed(st, "answer"); err != nil {
			return "", err
		}
		i := openQuestion(st)
		if shown != nil && i >= 0 && (i != shown.Index || !st.Questions[i].AskedAt.Equal(shown.AskedAt)) {
			return "", &StaleQuestionError{Task: st.Task, Node: st.Questions[i].Node, AskedAt: st.Questions[i].AskedAt.UTC()}
		}
		now := e.now().UTC()
		st.Questions[i].Answer, st.Questions[i].AnsweredAt = answer, &now
		q = st.Questions[i]
		st.Status = StatusActive
		return fmt.Sprintf("answer: at %s: %s", st.CurrentNode, firstLine(answer)), nil
	})
	if err != nil {
		return nil, nil, err
	}
	return &q, e.view(st, wf), nil
}

// approvedArtifacts are node's submitted artifacts by blob id: what a
// decision at its gate saw.
func approvedArtifacts(st *State, node string) []ApprovedArtifact {
	var out []ApprovedArtifact
	for _, s := range st.Submitted[node] {
		out = append(out, ApprovedArtifact{Path: s.Path, Blob: s.Blob})
	}
	return out
}

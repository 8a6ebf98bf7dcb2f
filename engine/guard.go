package engine

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/git-hegel/git-hegel/engine/agent"
	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

// How guard rules, agent events and hegel's end nodes plug into the state
// machine: Next calls guard once; update folds the event journal first and
// settles a task that reached an end node.

// guard checks the current node's rules before st leaves it for to by
// claim. Violations that force bypasses are recorded in st.Overrides and
// named in the returned commit-message suffix; any other violation blocks
// the move (a *GuardError) and is journaled for the metrics.
func (e *Engine) guard(st *State, wf *workflow.Definition, to, claim string, force Force) (string, error) {
	if to == workflow.NodeAborted || claim == workflow.RestartCycle {
		return "", nil // giving up or starting over is never blocked
	}
	n, ok := wf.Nodes[st.CurrentNode]
	var rules []workflow.Rule
	if ok && e.TrustOf(wf.Raw).Trusted {
		// A violation is instructions to whoever runs next, an agent
		// included: an untrusted definition's rules are not applied
		// (trust.go), as the hooks do not apply them. The locked_files
		// guard is not the definition's, and applies to every node.
		rules = n.Rules
	}
	if len(rules) == 0 && e.Events == nil {
		return "", nil
	}
	now := e.now()
	in := agent.RuleInput{
		Node:          st.CurrentNode,
		Now:           now,
		PhaseStart:    st.PhaseStartTime,
		LookbackStart: func(k int) time.Time { return LookbackStart(st, k) },
	}
	switch {
	case e.CommitsAfter != nil:
		in.CommitsSince = func(t time.Time) (int, error) { return e.CommitsAfter(lookbackHead(st, t), t) }
	case e.CommitTimes != nil:
		in.CommitsSince = func(t time.Time) (int, error) {
			ts, err := e.CommitTimes(t)
			return len(ts), err
		}
	}
	if e.Events != nil {
		evs, err := e.Events.Events(st.Task, RunKey(st), st.PhaseStartTime)
		if err != nil {
			e.warn("cannot read the task's agent events: " + err.Error())
		}
		in.Events = evs
	}
	vs, err := agent.CheckRules(rules, in, nil)
	if err != nil {
		return "", fmt.Errorf("cannot check the guard rules of '%s': %v", st.CurrentNode, err)
	}
	// Every node has the locked_files guard: the phase's edits of files
	// another open task holds.
	lvs, err := e.lockViolations(st, in.Events)
	if err != nil {
		return "", fmt.Errorf("cannot check the file locks: %v", err)
	}
	vs = append(vs, lvs...)
	var blocking []agent.Violation
	var forced []string
	for _, v := range vs {
		if force.Bypasses(v.Rule.Type) {
			st.Overrides = append(st.Overrides, Override{Node: st.CurrentNode, What: "rule:" + v.Rule.Type, Reason: v.Summary, At: now})
			forced = append(forced, v.Rule.Type)
			continue
		}
		blocking = append(blocking, v)
	}
	if len(blocking) > 0 {
		e.recordViolations(st, blocking, now)
		return "", &agent.GuardError{From: st.CurrentNode, Violations: blocking}
	}
	if len(forced) == 0 {
		return "", nil
	}
	return " [forced: " + strings.Join(forced, ", ") + "]", nil
}

// recordViolations journals violations so metrics can count them; a
// journal problem only warns.
func (e *Engine) recordViolations(st *State, vs []agent.Violation, now time.Time) {
	if e.Events == nil {
		return
	}
	evs := make([]agent.Event, 0, len(vs))
	for _, v := range vs {
		evs = append(evs, agent.Event{Time: now.UTC(), Kind: agent.EventViolation, Hook: "next", Task: st.Task, Node: st.CurrentNode, Rule: v.Rule.Type, Detail: v.Summary})
	}
	if err := e.Events.Record(evs...); err != nil {
		e.warn("cannot record the rule violation: " + err.Error())
	}
}

// foldEvents moves journaled agent events onto their task refs before a
// transition, so they are attributed to the phase they happened in. A
// problem only warns: the journal keeps the events for the next fold.
func (e *Engine) foldEvents() {
	if e.Events == nil {
		return
	}
	if err := e.Events.Fold(); err != nil {
		e.warn("agent events not folded into the task yet: " + err.Error())
	}
}

// settle ends the run when st reached a node without transitions, as
// reaching done does.
func (e *Engine) settle(st *State, wf *workflow.Definition) {
	n, ok := wf.Nodes[st.CurrentNode]
	if !ok || !n.Terminal || st.Status != StatusActive {
		return
	}
	now := e.now()
	st.Status = StatusCompleted
	st.EndedAt = &now
}

// LookbackStart is when the phase k phases back started (1: the current
// one). Past the recorded phases, or for AllCommits, it is the run's start.
func LookbackStart(st *State, k int) time.Time {
	if k >= workflow.AllCommits {
		return st.StartedAt
	}
	if len(st.PhaseLog) == 0 {
		if k <= 1 {
			return st.PhaseStartTime
		}
		return st.StartedAt
	}
	if k > len(st.PhaseLog) {
		return st.StartedAt
	}
	return st.PhaseLog[len(st.PhaseLog)-k].Start
}

// lookbackHead is the commit HEAD was at when the phase that started at
// t did (LookbackStart's answer), or the run's start head; "" if unknown.
func lookbackHead(st *State, t time.Time) string {
	for i := len(st.PhaseLog) - 1; i >= 0; i-- {
		if st.PhaseLog[i].Start.Equal(t) {
			return st.PhaseLog[i].Head
		}
	}
	if t.Equal(st.StartedAt) {
		return st.StartHead
	}
	return ""
}

// RunKey names a run of a task (its workflow_id without punctuation): a
// task name reused for a new run keeps the old run's events apart.
func RunKey(st *State) string {
	return strings.NewReplacer(":", "", "-", "", ".", "").Replace(st.WorkflowID)
}

// DoneOptions are the arguments of `git hegel done`.
type DoneOptions struct {
	Task  string // --task: the task to finish ("": the active one)
	Force Force  // --force, --force TYPE: as for next
}

// Done finishes the workflow from the current node, when it has a
// transition straight to an end: `git hegel done`.
func (e *Engine) Done(o DoneOptions) (*View, error) {
	t, err := e.Current(o.Task)
	if err != nil {
		return nil, err
	}
	wf, err := definition(t)
	if err != nil {
		return nil, err
	}
	st := t.State
	if wf.IsTerminal(st.CurrentNode) {
		return nil, finishedError(st)
	}
	claim, ok := wf.DoneClaim(st.CurrentNode)
	if !ok {
		var to []string
		for _, tr := range wf.Nodes[st.CurrentNode].Transitions {
			to = append(to, tr.To)
		}
		return nil, fmt.Errorf("'%s' cannot finish the workflow directly (it leads to %s); run 'git hegel next' to move on", st.CurrentNode, text.JoinQuoted(to))
	}
	return e.NextWith(NextOptions{Task: o.Task, Claim: claim, Force: o.Force})
}

// Force says which rules a forced `next` bypasses.
type Force struct {
	All   bool     // --force: every rule
	Rules []string // --force TYPE: rules of these types
}

// Bypasses reports whether f lets a violation of ruleType through.
func (f Force) Bypasses(ruleType string) bool {
	return f.All || slices.Contains(f.Rules, ruleType)
}

package engine

import (
	"fmt"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// The cap on moves back. A task's rollback_history records every move to
// an earlier node (a rollback, prev, a reject, goto to an earlier node,
// resume's retry-previous, a transition back such as qa_failed). An agent
// that keeps failing review bounces between two nodes for ever; after
// max_rollbacks such moves the next one stops with one line, and --force
// lets it through, recorded in the task. This counts over the whole run;
// the loop guard of rollback.go counts rollbacks to one node within an
// hour.

// RollbackCapError stops a move back when the task has made its
// max_rollbacks moves back already. Nothing changed when it is returned.
type RollbackCapError struct {
	Task      string
	From, To  string
	Count     int
	Max       int
	FromField string // "max_rollbacks" or "hegel.maxRollbacks"
}

func (e *RollbackCapError) Error() string {
	return fmt.Sprintf("Task '%s' has gone back to an earlier node %d %s (%s is %d), which looks like a loop: nothing changed. Fix what keeps failing, or add --force to go back from '%s' to '%s' anyway (recorded in the task)",
		e.Task, e.Count, plural(e.Count, "time", "times"), e.FromField, e.Max, e.From, e.To)
}

// maxRollbacks is the cap for a task running wf (-1: none), and where it
// comes from.
func (e *Engine) maxRollbacks(wf *workflow.Definition) (int, string) {
	switch {
	case wf != nil && wf.MaxRollbacks != 0:
		return wf.MaxRollbacks, "max_rollbacks"
	case e.MaxRollbacks != 0:
		return e.MaxRollbacks, "hegel.maxRollbacks"
	}
	return workflow.DefaultMaxRollbacks, "max_rollbacks"
}

// capBack refuses a move back from st's node to to when the task has
// made its cap of moves back; force lets it through, recorded as an
// override. Moves that do not go back pass.
func (e *Engine) capBack(st *State, wf *workflow.Definition, to string, force bool) error {
	from := st.CurrentNode
	if to == from || wf.IsTerminal(to) || !movesBack(st.History, from, to) {
		return nil
	}
	return e.capMove(st, wf, to, force)
}

// capMove is capBack for a move known to be recorded as one back.
func (e *Engine) capMove(st *State, wf *workflow.Definition, to string, force bool) error {
	limit, field := e.maxRollbacks(wf)
	n := len(st.RollbackHistory)
	if limit < 0 || n < limit {
		return nil
	}
	if !force {
		return &RollbackCapError{Task: st.Task, From: st.CurrentNode, To: to, Count: n, Max: limit, FromField: field}
	}
	st.Overrides = append(st.Overrides, Override{Node: st.CurrentNode, What: "max_rollbacks",
		Reason: fmt.Sprintf("went back to %s after %d %s back (%s %d)", to, n, plural(n, "move", "moves"), field, limit), At: e.now().UTC()})
	return nil
}

// wentBack records a move back that no transition made (prev, goto,
// retry-previous) in the rollback history, after the cap allowed it.
func (e *Engine) wentBack(st *State, wf *workflow.Definition, from, to, reason string, force bool) error {
	if to == from || wf.IsTerminal(to) || !movesBack(st.History, from, to) {
		return nil
	}
	if err := e.capMove(st, wf, to, force); err != nil {
		return err
	}
	st.RollbackHistory = appendEvent(st.RollbackHistory, RollbackEvent{Timestamp: e.now().UTC(), From: from, To: to, Reason: reason})
	return nil
}

package engine

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

// NodeMove records a move made by hand (`git hegel goto`): the state was
// set to a node rather than reached through a transition.
type NodeMove struct {
	From   string    `json:"from"`
	To     string    `json:"to"`
	By     string    `json:"by,omitempty"` // git's user.name
	Reason string    `json:"reason,omitempty"`
	At     time.Time `json:"at"`
	// Forced: the task waited at a gate or had failed, and --force moved
	// it all the same.
	Forced bool `json:"forced,omitempty"`
}

// GotoOptions are the arguments of `git hegel goto`.
type GotoOptions struct {
	Task   string // --task ("": the active one)
	Node   string
	Reason string // -m
	// Force moves a task that waits at a gate or failed (and one another
	// worktree owns); recorded in the task.
	Force bool
}

// Goto sets the task's current node by hand to any node of its workflow,
// as an edit of the state would, but recorded: the history gets the node,
// the task's node_moves say from where, by whom and why, and the node's
// entry checkpoint is taken. A node that does not exist is refused,
// naming those that do; so is a task at a gate or failed, unless forced,
// and a finished one.
func (e *Engine) Goto(o GotoOptions) (*View, error) {
	call := TaskOptions{Task: o.Task, Force: o.Force}
	st, wf, err := e.update(call, func(st *State, wf *workflow.Definition) (string, error) {
		if st.Status == StatusStashed {
			return "", &StatusError{Task: st.Task, Status: st.Status, Command: "goto", Advice: advice(st, "goto")}
		}
		if st.Finished() {
			return "", fmt.Errorf("Cannot goto: task %s is %s", st.Task, st.Status)
		}
		nodes := gotoNodes(wf)
		if !slices.Contains(nodes, o.Node) {
			return "", badNamef("Workflow '%s' has no node '%s' (its nodes: %s)", st.Workflow, o.Node, text.JoinQuoted(nodes))
		}
		forced := false
		switch st.Status {
		case StatusAwaitingApproval, StatusAwaitingAnswer, StatusFailed:
			if !o.Force {
				return "", fmt.Errorf("Cannot goto: task %s is %s at '%s'. %s; or 'git hegel goto %s --force' moves it all the same (recorded)",
					st.Task, st.Status, st.CurrentNode, e.advice(st, "goto"), o.Node)
			}
			forced = true
		}
		from, wasStatus := st.CurrentNode, st.Status
		reason := strings.TrimSpace(o.Reason)
		why := "goto"
		if reason != "" {
			why += ": " + firstLine(reason)
		}
		if err := e.wentBack(st, wf, from, o.Node, why, o.Force); err != nil {
			return "", err
		}
		wasCompleted := slices.Contains(st.CompletedNodes, from)
		e.enter(st, wf, o.Node)
		if !wasCompleted {
			// Left by hand, not finished: the node was not completed.
			st.CompletedNodes = remove(st.CompletedNodes, from)
		}
		if len(st.CompletedNodes) == 0 {
			st.CompletedNodes = nil
		}
		now := e.now()
		st.NodeMoves = append(st.NodeMoves, NodeMove{From: from, To: o.Node, By: e.lockUser(), Reason: reason, At: now, Forced: forced})
		if forced {
			st.Overrides = append(st.Overrides, Override{Node: from, What: "goto", Reason: fmt.Sprintf("moved to %s while %s", o.Node, strings.ReplaceAll(wasStatus, "_", " ")), At: now})
		}
		msg := fmt.Sprintf("goto: %s -> %s", from, o.Node)
		if reason != "" {
			msg += " (" + firstLine(reason) + ")"
		}
		return msg, nil
	})
	if err != nil {
		return nil, err
	}
	if err := e.touchSession(func(s *Session) { s.Totals.Transitions++ }); err != nil {
		return nil, err
	}
	e.checkpointAlways(st)
	return e.view(st, wf), nil
}

// gotoNodes are the nodes goto may set: every node of the workflow but
// the implicit end nodes (done and abort finish a task).
func gotoNodes(wf *workflow.Definition) []string {
	var out []string
	for name := range wf.Nodes {
		if name == workflow.NodeDone || name == workflow.NodeAborted || wf.IsTerminal(name) {
			continue
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

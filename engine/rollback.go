package engine

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

// Rollback bookkeeping. The engine decides whether a rollback may happen
// and what the task's state becomes; package rollback moves the files.
const (
	// MaxRollbackEvents is how many rollback events a task keeps.
	MaxRollbackEvents = 50
	// LoopGuardLimit rollbacks to one node within LoopGuardWindow are
	// allowed; the next one needs Force: rollbacks are tracked so that a
	// task going round in a loop is stopped.
	LoopGuardLimit  = 3
	LoopGuardWindow = time.Hour
)

// ErrRollbackLoop matches the loop guard's error (a *LoopError).
var ErrRollbackLoop = errors.New("rollback loop")

// LoopError is the loop guard refusing a rollback.
type LoopError struct {
	Node  string
	Count int // rollbacks to Node within LoopGuardWindow
}

func (e *LoopError) Error() string {
	return fmt.Sprintf("Rolled back to '%s' %d times in the last hour, which looks like a loop. Fix what keeps failing, or run 'git hegel rollback %s --force' to roll back anyway",
		e.Node, e.Count, e.Node)
}

// Is makes errors.Is(err, ErrRollbackLoop) true.
func (e *LoopError) Is(target error) bool { return target == ErrRollbackLoop }

// RollbackRequest describes a rollback of the current task to Node.
type RollbackRequest struct {
	// Task must be the current task's name: a request prepared for one
	// task is never applied to another.
	Task string
	Node string
	// History is the node history recorded with the checkpoint. It is used
	// for an undo, and when Node is no longer in the task's history;
	// otherwise the history is cut back after the last visit to Node.
	History []string
	// Undo restores the state a rollback left (its safety checkpoint): the
	// loop guard does not apply and terminal nodes are allowed.
	Undo   bool
	Reason string
	Force  bool
	// Whole is rollback --all, which ends the run: neither the loop guard
	// nor the cap on moves back (rollback_cap.go) stops it.
	Whole bool `json:",omitempty"`
	// At is the event's time (zero: now). Replaying an interrupted
	// rollback passes the original time, so the event is recorded once.
	At time.Time
}

// CheckRollback validates req against the task o selects without writing
// anything: the node exists, a history can be computed, and the loop guard
// allows it. It returns the task as it is now.
func (e *Engine) CheckRollback(o TaskOptions, req *RollbackRequest) (*Task, error) {
	t, err := e.Current(o.Task)
	if err != nil {
		return nil, err
	}
	if t.State.Task != req.Task {
		return nil, fmt.Errorf("The active task is now '%s', not '%s'; nothing was rolled back", t.State.Task, req.Task)
	}
	wf, err := definition(t)
	if err != nil {
		return nil, err
	}
	if err := checkLoaded(t, wf); err != nil {
		return nil, err
	}
	if err := e.allowed(t.State, "rollback"); err != nil {
		return nil, err
	}
	// Files are restored before the state is written: refuse now what
	// the state write would refuse then.
	if _, err := e.checkOwner(t.State, updateOpts{call: o}); err != nil {
		return nil, err
	}
	st := t.State.Clone()
	if _, err := e.applyRollback(st, wf, req); err != nil && !errors.Is(err, errAlreadyApplied) {
		return nil, err
	}
	return t, nil
}

// ApplyRollback records req in the task o selects: the node and history
// go back, the task is active again, and the event is appended to its
// rollback history (the last MaxRollbackEvents are kept). Applying the same
// request twice (same At) records it once.
func (e *Engine) ApplyRollback(o TaskOptions, r *RollbackRequest) (*View, error) {
	req := *r
	if req.At.IsZero() {
		req.At = e.now()
	}
	st, wf, err := e.update(o, func(st *State, wf *workflow.Definition) (string, error) {
		if st.Task != req.Task {
			return "", fmt.Errorf("The active task is now '%s', not '%s'", st.Task, req.Task)
		}
		return e.applyRollback(st, wf, &req)
	})
	if errors.Is(err, errAlreadyApplied) {
		t, err := e.Current(o.Task)
		if err != nil {
			return nil, err
		}
		if wf, err = definition(t); err != nil {
			return nil, err
		}
		return e.view(t.State, wf), nil
	}
	if err != nil {
		return nil, err
	}
	if err := e.touchSession(func(*Session) {}); err != nil {
		return nil, err
	}
	return e.view(st, wf), nil
}

// RollbackEventFor is the event ApplyRollback records for req on a task
// currently at from.
func RollbackEventFor(req *RollbackRequest, from string) RollbackEvent {
	return RollbackEvent{Timestamp: req.At.UTC(), From: from, To: req.Node, Reason: req.Reason}
}

func (e *Engine) applyRollback(st *State, wf *workflow.Definition, req *RollbackRequest) (string, error) {
	at := req.At
	if at.IsZero() {
		at = e.now()
	}
	if n := len(st.RollbackHistory); n > 0 {
		last := st.RollbackHistory[n-1]
		if last.Timestamp.Equal(at) && last.To == req.Node && last.Reason == req.Reason && st.CurrentNode == req.Node {
			return "", errAlreadyApplied
		}
	}
	if !wf.HasNode(req.Node) {
		return "", badNamef("Workflow '%s' has no node '%s' (nodes: %s)", wf.Name, req.Node, text.JoinQuoted(wf.Order))
	}
	if wf.IsTerminal(req.Node) && !req.Undo {
		return "", badNamef("Cannot roll back to '%s': it ends the workflow", req.Node)
	}
	history := cutBack(st.History, req.Node)
	if req.Undo || history == nil {
		history = req.History
		if len(history) == 0 || history[len(history)-1] != req.Node {
			return "", fmt.Errorf("Node '%s' is not in task %s's history; nothing to roll back to", req.Node, st.Task)
		}
		for _, n := range history {
			if !wf.HasNode(n) {
				return "", fmt.Errorf("The checkpoint's history names node '%s', which workflow '%s' does not have", n, wf.Name)
			}
		}
	}
	if !req.Undo && !req.Whole && !req.Force {
		if n := recentRollbacks(st.RollbackHistory, req.Node, at); n >= LoopGuardLimit {
			return "", &LoopError{Node: req.Node, Count: n}
		}
	}
	if !req.Undo && !req.Whole && !wf.IsTerminal(req.Node) {
		if err := e.capMove(st, wf, req.Node, req.Force); err != nil {
			return "", err
		}
	}
	from := st.CurrentNode
	st.History = slices.Clone(history)
	st.CurrentNode = req.Node
	e.reopen(st, wf)
	st.CompletedNodes = keepVisited(st.CompletedNodes, st.History)
	switch {
	case req.Node == workflow.NodeDone:
		st.Status, st.EndedAt = StatusCompleted, &at
	case req.Node == workflow.NodeAborted:
		st.Status, st.EndedAt = StatusAborted, &at
	case !req.Undo:
		// After a rollback the task waits, paused, until resume or next;
		// an undo puts it back to work as it was.
		st.Status, st.PausedAt, st.PauseReason = StatusPaused, &at, "rolled back to "+req.Node
		st.ResumedAt = nil
	}
	st.RollbackHistory = appendEvent(st.RollbackHistory, RollbackEventFor(req, from))
	verb := "rollback"
	if req.Undo {
		verb = "rollback undo"
	}
	msg := fmt.Sprintf("%s: %s -> %s", verb, from, req.Node)
	if req.Reason != "" {
		msg += " (" + req.Reason + ")"
	}
	return msg, nil
}

// errAlreadyApplied stops update from writing a request it already
// recorded; ApplyRollback treats it as success.
var errAlreadyApplied = errors.New("rollback already recorded")

// cutBack returns history up to and including the last visit to node, or
// nil if node was never visited.
func cutBack(history []string, node string) []string {
	for i := len(history) - 1; i >= 0; i-- {
		if history[i] == node {
			return history[:i+1]
		}
	}
	return nil
}

// recentRollbacks counts rollbacks to node within LoopGuardWindow before at.
func recentRollbacks(events []RollbackEvent, node string, at time.Time) int {
	n := 0
	for _, ev := range events {
		if ev.To == node && at.Sub(ev.Timestamp) < LoopGuardWindow && !ev.Timestamp.After(at) {
			n++
		}
	}
	return n
}

// checkpoint takes the checkpoint of a node just entered. The transition
// is already saved, and it stands whatever happens here: a failed
// checkpoint only costs the ability to roll back to this node, so it is
// reported through Warn and the command succeeds. Terminal nodes get none
// (nothing can be rolled back to them), and neither does another
// worktree's task: this worktree's files are not its.
func (e *Engine) checkpoint(st *State) {
	if e.Snapshots == nil || e.NoAutoCheckpoints || st == nil || (st.Status != StatusActive && st.Status != StatusInitializing) || !e.owns(st) {
		return
	}
	if !dueCheckpoint(st, e.CheckpointInterval) {
		return
	}
	e.takeCheckpoint(st)
}

// checkpointAlways is checkpoint without hegel.checkpointInterval: a node
// set by hand (goto) always gets its entry checkpoint.
func (e *Engine) checkpointAlways(st *State) {
	if e.Snapshots == nil || e.NoAutoCheckpoints || st == nil || (st.Status != StatusActive && st.Status != StatusInitializing) || !e.owns(st) {
		return
	}
	e.takeCheckpoint(st)
}

func (e *Engine) takeCheckpoint(st *State) {
	if _, _, err := e.Snapshots.TakeCheckpoint(st, CheckpointEnter, ""); err != nil && e.Warn != nil {
		e.Warn(fmt.Sprintf("no checkpoint taken at '%s': %v", st.CurrentNode, err))
	}
}

// dueCheckpoint reports whether entering st's current node takes an
// automatic checkpoint under hegel.checkpointInterval: the task's start
// always, then every interval-th node entry along its history (a rollback
// cuts the history back, so the count follows it). An interval of 0 or 1
// takes one at every entry.
func dueCheckpoint(st *State, interval int) bool {
	if interval <= 1 {
		return true
	}
	entries := len(st.History) - 1 // entries since the start node
	return entries <= 0 || entries%interval == 0
}

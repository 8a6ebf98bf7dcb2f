package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

// The rollback sequence has one owner, here: the engine decides which
// checkpoint and whether the task may go back to it (PlanRollback), and
// once the person agreed, Snapshots snapshot everything as it is,
// restores the checkpoint, the engine records the rollback in the task,
// and Snapshots settles its chain and journal (Rollback). A rollback
// cut short is finished or undone the same way from its journal
// (FinishRollback, UndoInterruptedRollback). cmd/git-hegel only shows the
// plan, asks, and prints the result.

// RollbackOptions are the arguments of a rollback.
type RollbackOptions struct {
	// Task is the task named with --task ("": this worktree's active
	// task).
	Task string
	// Node to go back to; with Node, To, Undo, All and Resume all unset,
	// the start of the current node.
	Node string
	// To names a checkpoint by id (or unique id prefix).
	To string
	// Undo restores the safety checkpoint of the last rollback.
	Undo bool
	// All rolls the whole workflow back to its start checkpoint (or To)
	// and ends the task as rolled_back; a task whose start checkpoint is
	// gone is refused.
	All bool
	// Resume is resume --strategy from-checkpoint: back to To (the first
	// checkpoint by default), for a paused or failed task.
	Resume bool
	Reason string
	// Force rolls back past the loop guard, to a checkpoint this clone
	// did not take, and a task another worktree owns.
	Force bool
	// Yes: no question will be asked, so the snapshot can be stored while
	// planning (one scan of the working tree instead of two). DryRun
	// stores nothing.
	Yes, DryRun bool
	// Recurse also checks out the submodules' commits.
	Recurse bool
}

// RollbackPlan is a rollback the engine allows, with what it changes.
// Nothing has changed when it is shown.
type RollbackPlan struct {
	Task   string
	From   string // the node the task is at
	Target *Checkpoint
	Undo   bool
	All    bool
	// Restore is what the files, index, HEAD and branches go through.
	Restore *RestorePlan
	// NeedsForce says why this rollback needs --force before it may go
	// on ("" when it does not): its checkpoint was not taken in this
	// clone. The plan can be shown; Rollback refuses it.
	NeedsForce string
	// MadeBy says who made Target, as the reader may read it (MadeBy;
	// without another clone's author for an agent).
	MadeBy string

	req  RollbackRequest
	call TaskOptions // the command's --task and --force
}

// RollbackResult is what a rollback did.
type RollbackResult struct {
	Plan   *RollbackPlan
	Safety *Checkpoint
	// View is the task at the node it went back to.
	View *View
	// State is the task's state at the end (rolled_back after All).
	State *State
}

// ErrNoWorktree means the command runs where no worktree is available.
var ErrNoWorktree = errors.New("the working tree is not available")

// PlanRollback decides a rollback: the checkpoint it goes back to, that
// the workflow allows it (the node exists, the loop guard), and what the
// working tree goes through. It changes nothing (with o.Yes it may store
// the snapshot's objects, which nothing refers to yet).
func (e *Engine) PlanRollback(o RollbackOptions) (*RollbackPlan, error) {
	if e.Snapshots == nil {
		return nil, ErrNoWorktree
	}
	if rec, err := e.Snapshots.Interrupted(); err != nil {
		return nil, err
	} else if rec != nil {
		return nil, rec.InterruptedError()
	}
	call := TaskOptions{Task: o.Task, Force: o.Force}
	t, err := e.Current(call.Task)
	if err != nil {
		return nil, err
	}
	if o.All || o.Resume {
		if err := e.checkWhole(t, o); err != nil {
			return nil, err
		}
	}
	task := t.State.Task
	cps, err := e.Snapshots.Checkpoints(task)
	if err != nil {
		return nil, err
	}
	cp, err := e.rollbackTarget(t, cps, o)
	if err != nil {
		return nil, err
	}
	undo := o.Undo || cp.Kind == CheckpointSafety
	reason := strings.TrimSpace(o.Reason)
	switch {
	case reason != "":
	case o.All:
		reason = "rollback --all"
	case o.Resume:
		reason = "resume from checkpoint"
	case undo:
		reason = "undo"
	}
	req := RollbackRequest{Task: task, Node: cp.Node, History: cp.History, Undo: undo, Reason: reason,
		Force: o.Force, Whole: o.All, At: e.now().UTC()}
	if _, err := e.CheckRollback(call, &req); err != nil {
		if o.Node == "" && errors.Is(err, ErrBadName) {
			// The node came from the checkpoint, not the command line.
			return nil, errors.New(err.Error())
		}
		return nil, err
	}
	rp, err := e.Snapshots.PlanRestore(cp, RestoreOptions{Store: o.Yes && !o.DryRun, Recurse: o.Recurse})
	if err != nil {
		return nil, err
	}
	e.nameLeavingCommits(rp)
	p := &RollbackPlan{Task: task, From: t.State.CurrentNode, Target: cp, Undo: undo, All: o.All, Restore: rp, MadeBy: e.madeBy(cp), req: req, call: call}
	// An agent's force passes the loop guard, not this: the files,
	// branch and commit another clone's checkpoint names are its maker's
	// choice, which a person accepts, as a person trusts a definition.
	if !cp.Local && (!o.Force || e.AgentReads) {
		p.NeedsForce = foreignRefusal(cp, p.MadeBy, o, e.AgentReads)
	}
	return p, nil
}

// foreignRefusal says why a rollback to cp, which this clone did not take,
// needs --force: it comes from elsewhere (a fetch with --checkpoints, or a
// git-hegel that kept no record), and could name any branch, commit or
// file.
func foreignRefusal(cp *Checkpoint, madeBy string, o RollbackOptions, agent bool) string {
	again := "git hegel rollback --to " + cp.ID + " --force"
	switch {
	case o.Undo:
		again = "git hegel rollback --undo --force"
	case o.All:
		again = "git hegel rollback --all --force"
	case o.Resume:
		again = "git hegel resume --strategy from-checkpoint --checkpoint " + cp.ID + " --force"
	}
	run := "run '" + again + "' to roll back to it anyway"
	if agent {
		run = "only a person rolls back to it, with '" + again + "'"
	}
	return fmt.Sprintf("Checkpoint %s was not taken in this clone (%s), so it could name any branch, commit or file; %s; nothing was changed",
		cp.ID, madeBy, run)
}

// madeBy is MadeBy as this engine's reader may read it: an agent is not
// given the name another clone's commit holds, which its maker chose.
func (e *Engine) madeBy(cp *Checkpoint) string {
	if e.AgentReads && !cp.Local {
		return "not in this clone's record of the checkpoints it took; who made it is not shown to the agent"
	}
	return MadeBy(cp)
}

// MadeBy says who made a checkpoint, for a plan: this clone, or whoever
// its commit names.
func MadeBy(cp *Checkpoint) string {
	if cp.Local {
		return "taken in this clone"
	}
	who := "nobody"
	if cp.Author != "" {
		who = text.Printable(cp.Author, 200) // another clone's text
	}
	return "not in this clone's record of the checkpoints it took; its commit names " + who
}

// checkWhole checks what rollback --all and resume --strategy
// from-checkpoint need of the task before its checkpoints are read.
func (e *Engine) checkWhole(t *Task, o RollbackOptions) error {
	wf, err := definition(t)
	if err != nil {
		return err
	}
	if err := checkLoaded(t, wf); err != nil {
		return err
	}
	if o.Resume {
		return e.allowed(t.State, "resume")
	}
	if t.State.Finished() {
		return finishedError(t.State)
	}
	return e.allowed(t.State, "rollback")
}

// rollbackTarget finds the checkpoint o names among cps (oldest first).
func (e *Engine) rollbackTarget(t *Task, cps []*Checkpoint, o RollbackOptions) (*Checkpoint, error) {
	task := t.State.Task
	switch {
	case o.Undo:
		for i := len(cps) - 1; i >= 0; i-- {
			if cps[i].Kind == CheckpointSafety {
				return cps[i], nil
			}
		}
		return nil, noCheckpointf("Task %s has no rollback to undo", task)
	case o.All || o.Resume:
		if len(cps) == 0 {
			hint := ""
			if e.NoAutoCheckpoints {
				hint = " (hegel.checkpoints is off)"
			}
			return nil, noCheckpointf("Task %s has no checkpoints to roll back to%s", task, hint)
		}
		if o.To == "" {
			return startCheckpoint(t.State, cps)
		}
		if cp, err := FindCheckpointID(cps, o.To); err == nil && cp != nil {
			return cp, nil
		}
		return nil, noCheckpointf("Task %s has no checkpoint '%s'; its checkpoints: %s", task, o.To, checkpointList(cps))
	case o.To != "":
		cp, err := FindCheckpointID(cps, o.To)
		if err != nil {
			return nil, err
		}
		if cp == nil {
			return nil, noCheckpointf("Task %s has no checkpoint '%s'. Run 'git hegel checkpoint list' to see them", task, o.To)
		}
		return cp, nil
	}
	node := o.Node
	if node == "" {
		node = t.State.CurrentNode
	}
	if cp := newestAt(cps, node, true); cp != nil {
		return cp, nil
	}
	if o.Node != "" {
		// A node the workflow does not have is named as such.
		if _, err := e.CheckRollback(TaskOptions{Task: o.Task, Force: true}, &RollbackRequest{Task: task, Node: o.Node, History: []string{o.Node}, Force: true}); err != nil {
			return nil, err
		}
	}
	hint := "Run 'git hegel checkpoint list' to see the checkpoints"
	if cp := newestAt(cps, node, false); cp != nil {
		hint = fmt.Sprintf("To use the one taken later at that node, run 'git hegel rollback --to %s'", cp.ID)
	} else {
		if e.NoAutoCheckpoints {
			hint += " (hegel.checkpoints is off, so none are taken as nodes are entered)"
		}
		hint += "; 'git hegel checkpoint' saves the files now, to roll back to later"
	}
	return nil, noCheckpointf("Task %s has no checkpoint from the start of '%s'. %s", task, node, hint)
}

// startCheckpoint is the checkpoint taken as the task's run entered its
// first node: rollback --all goes back there, or nowhere. A chain whose
// start is gone (dropped by hand, or evicted by a git-hegel that did not
// keep it) is refused, naming what is missing and what is left.
func startCheckpoint(st *State, cps []*Checkpoint) (*Checkpoint, error) {
	for _, c := range cps {
		if c.Start() && (c.WorkflowID == "" || c.WorkflowID == st.WorkflowID) {
			return c, nil
		}
	}
	first := st.CurrentNode
	if len(st.History) > 0 {
		first = st.History[0]
	}
	oldest := cps[0]
	return nil, noCheckpointf("Task %s's start checkpoint (entering '%s') is gone, so the whole workflow cannot be rolled back; the oldest left is %s at '%s' (%s). Run 'git hegel rollback --to %s' to go back that far; nothing was rolled back",
		st.Task, first, oldest.ID, oldest.Node, oldest.Describe(), oldest.ID)
}

// Rollback carries out a plan from PlanRollback: a safety checkpoint of
// everything now and the journal, then HEAD, branches, files and index,
// then the task goes back to the checkpoint's node (and ends as
// rolled_back with All), then the chain and journal are settled. If the
// restore fails, everything is put back as it was.
func (e *Engine) Rollback(p *RollbackPlan) (*RollbackResult, error) {
	if p.NeedsForce != "" {
		return nil, errors.New(p.NeedsForce)
	}
	if e.Snapshots == nil {
		return nil, ErrNoWorktree
	}
	// The task may have moved while the question was on screen.
	t, err := e.CheckRollback(p.call, &p.req)
	if err != nil {
		return nil, err
	}
	if p.All && t.State.Finished() {
		return nil, finishedError(t.State)
	}
	rec := &RollbackRecord{RollbackRequest: p.req, From: t.State.CurrentNode}
	p.From = rec.From
	safety, err := e.Snapshots.Snapshot(p.Restore, t.State, rec)
	if err != nil {
		return nil, err
	}
	if err := e.Snapshots.Restore(p.Restore); err != nil {
		if uerr := e.Snapshots.Replay(rec, false); uerr != nil {
			return nil, fmt.Errorf("rollback failed: %v; putting things back failed too: %v. %s", err, uerr, rec.InterruptedError())
		}
		if serr := e.Snapshots.Settle(rec, false); serr != nil {
			return nil, fmt.Errorf("rollback failed: %v; the files are back as they were, but: %v", err, serr)
		}
		return nil, fmt.Errorf("rollback failed, nothing was changed: %w", err)
	}
	view, err := e.recordRollback(p.call, rec)
	if err != nil {
		return nil, err
	}
	res := &RollbackResult{Plan: p, Safety: safety, View: view, State: view.State}
	if p.All {
		st, err := e.endRolledBack(p.call, p.req.Reason)
		if err != nil {
			return nil, err
		}
		res.State = st
	}
	return res, nil
}

// recordRollback records a restored rollback in the task and settles the
// journal.
func (e *Engine) recordRollback(o TaskOptions, rec *RollbackRecord) (*View, error) {
	req := rec.RollbackRequest
	req.Force = true // decided when it began
	view, err := e.ApplyRollback(o, &req)
	if err != nil {
		return nil, fmt.Errorf("the files were rolled back but the workflow state was not: %v. %s", err, rec.InterruptedError())
	}
	if err := e.Snapshots.Settle(rec, true); err != nil {
		return nil, err
	}
	return view, nil
}

// endRolledBack ends the task after rollback --all: rolled_back, with an
// end time (the task is then archived with its checkpoints).
func (e *Engine) endRolledBack(o TaskOptions, why string) (*State, error) {
	st, _, err := e.update(o, func(st *State, wf *workflow.Definition) (string, error) {
		if st.Finished() {
			return "", finishedError(st)
		}
		now := e.now()
		st.Status, st.EndedAt, st.PendingClaim = StatusRolledBack, &now, ""
		return fmt.Sprintf("rollback --all: the whole workflow rolled back to %s (%s)", st.CurrentNode, firstLine(why)), nil
	})
	return st, err
}

// InterruptedRollback returns the rollback that did not finish, or nil;
// one another process is running is an error (ErrRollbackRunning).
func (e *Engine) InterruptedRollback() (*RollbackRecord, error) {
	if e.Snapshots == nil {
		return nil, nil
	}
	return e.Snapshots.Interrupted()
}

// FinishRollback completes a rollback that was interrupted: the files go
// where it was going, and the task is recorded as rolled back (once,
// however often this runs). o is the command's --task and --force.
func (e *Engine) FinishRollback(o TaskOptions) (*RollbackRecord, *View, error) {
	rec, err := e.InterruptedRollback()
	if err != nil || rec == nil {
		return nil, nil, err
	}
	if err := e.Snapshots.Replay(rec, true); err != nil {
		return nil, nil, err
	}
	view, err := e.recordRollback(o, rec)
	return rec, view, err
}

// UndoInterruptedRollback puts back everything an interrupted rollback
// changed: the files, and the task's node if it had been recorded. o is
// the command's --task and --force.
func (e *Engine) UndoInterruptedRollback(o TaskOptions) (*RollbackRecord, *View, error) {
	rec, err := e.InterruptedRollback()
	if err != nil || rec == nil {
		return nil, nil, err
	}
	if err := e.Snapshots.Replay(rec, false); err != nil {
		return nil, nil, err
	}
	if t, err := e.Current(o.Task); err == nil && rec.recordedIn(t.State) {
		// The state had moved already: move it back, as an undo.
		if _, err := e.ApplyRollback(o, &RollbackRequest{Task: rec.Task, Node: rec.From, History: rec.SafetyHistory,
			Undo: true, Reason: "undo interrupted rollback", At: e.now().UTC()}); err != nil {
			return nil, nil, err
		}
	}
	if err := e.Snapshots.Settle(rec, false); err != nil {
		return nil, nil, err
	}
	view, _ := e.Repeat(o.Task)
	return rec, view, nil
}

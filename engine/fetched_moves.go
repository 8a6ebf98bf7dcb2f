package engine

import "fmt"

// FetchedMoves is implemented by a TaskStore that notes, outside the data
// that travels between clones, the tasks a fetch moved to another node
// while a worktree of this clone held them (an approval on another clone
// moved the task on). gitstore does; the in-memory stores do not.
type FetchedMoves interface {
	// FetchedMove returns the node a fetch moved task to, if one did
	// since the move was last seen to.
	FetchedMove(task string) (node string, ok bool)
	// ClearFetchedMove forgets task's fetched move.
	ClearFetchedMove(task string) error
}

// CatchUpCheckpoint takes the entry checkpoint a fetched move left out:
// the node the task (task, or this worktree's active one) is at now was
// entered on another clone, so no checkpoint of this worktree's files
// was taken at its start, and a rollback to it would find none. It runs
// before a command here changes anything, so the checkpoint holds the
// files as they were when this worktree learnt of the move. It only acts
// for a task this worktree owns, open at the node the fetch moved it to;
// the note is dropped either way. It returns a line to show ("" none);
// a checkpoint that fails is a warning, never an error: the command the
// user ran goes on.
func (e *Engine) CatchUpCheckpoint(task string) string {
	fm, ok := e.Tasks.(FetchedMoves)
	if !ok {
		return ""
	}
	if task == "" {
		sess, err := e.Session.LoadSession()
		if err != nil || sess.ActiveTask == "" {
			return ""
		}
		task = sess.ActiveTask
	}
	node, moved := fm.FetchedMove(task)
	if !moved {
		return ""
	}
	t, err := e.Tasks.LoadTask(task)
	if err != nil {
		return "" // a task that is gone or damaged keeps its note for later
	}
	st := t.State
	if !st.Active() || !sameClone(st.WorktreeID, e.WorktreeID) {
		e.clearFetchedMove(fm, task) // nothing of this clone's to roll back
		return ""
	}
	if !e.owns(st) {
		return "" // another worktree here holds it: its next command sees to it
	}
	defer e.clearFetchedMove(fm, task)
	if st.CurrentNode != node || e.Snapshots == nil || e.NoAutoCheckpoints {
		return ""
	}
	cps, err := e.Snapshots.Checkpoints(task)
	if err != nil {
		e.warn(fmt.Sprintf("no checkpoint taken at '%s', which task %s entered on another clone: %v; 'git hegel checkpoint' takes one", node, task, err))
		return ""
	}
	if cp := newestAt(cps, node, true); cp != nil && !cp.CreatedAt.Before(st.PhaseStartTime) {
		return ""
	}
	cp, _, err := e.Snapshots.TakeCheckpoint(st, CheckpointEnter, "")
	if err != nil {
		e.warn(fmt.Sprintf("no checkpoint taken at '%s', which task %s entered on another clone: %v; 'git hegel checkpoint' takes one", node, task, err))
		return ""
	}
	return fmt.Sprintf("Took checkpoint %s at '%s': task %s entered it on another clone", cp.ID, node, task)
}

func (e *Engine) clearFetchedMove(fm FetchedMoves, task string) {
	if err := fm.ClearFetchedMove(task); err != nil {
		e.warn(fmt.Sprintf("the note that task %s moved on another clone could not be removed: %v", task, err))
	}
}

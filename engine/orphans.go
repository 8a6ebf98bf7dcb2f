package engine

import (
	"fmt"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// Orphan is an open task owned by a worktree of this clone that no longer
// exists (removed without `git worktree remove`, or pruned): no command
// runs there to finish or hand it on.
type Orphan struct {
	Task     string
	Worktree string // the path the task names
}

// Orphans lists the open tasks whose owning worktree, a worktree of this
// clone, is gone; gone reports that for the path the task names and its
// worktree id (the engine does not touch the filesystem; a worktree moved
// since is found by its id). A task owned by another clone is never
// judged by its path: that path names a directory of another machine.
func (e *Engine) Orphans(gone func(path, worktreeID string) bool) ([]Orphan, error) {
	names, err := e.Tasks.ListTasks()
	if err != nil {
		return nil, err
	}
	var out []Orphan
	for _, n := range names {
		t, err := e.Tasks.LoadTask(n)
		if err != nil {
			continue // damaged: reported with the refs
		}
		st := t.State
		if !st.Active() || st.Worktree == "" || e.owns(st) {
			continue
		}
		if st.WorktreeID != "" && (!sameClone(st.WorktreeID, e.WorktreeID) || !e.verified(st)) {
			continue
		}
		if gone(st.Worktree, st.WorktreeID) {
			out = append(out, Orphan{Task: n, Worktree: st.Worktree})
		}
	}
	return out, nil
}

// Release leaves the open task o owned by no worktree, as `git hegel
// switch` leaves the task it moves away from, so any worktree can take it
// up with `git hegel switch <task>` (doctor --fix).
func (e *Engine) Release(o Orphan) error {
	t, err := e.Tasks.LoadTask(o.Task)
	if err != nil {
		return err
	}
	_, _, err = e.updateTask(t, updateOpts{anyOwner: true}, func(st *State, _ *workflow.Definition) (string, error) {
		if !st.Active() || st.Worktree != o.Worktree {
			return "", fmt.Errorf("it changed meanwhile (now %s, owned by %s)", st.Status, ownerOf(st))
		}
		st.Worktree, st.WorktreeID = "", "" // the person stays, as park keeps it
		return fmt.Sprintf("doctor: released (its worktree %s no longer exists)", o.Worktree), nil
	})
	return err
}

package engine

import (
	"errors"
	"fmt"
	"strings"
)

// Switch makes task this worktree's workflow. It is how a workflow changes
// hands: a task started on another clone (it arrived with fetch) is taken
// over, and once the takeover is synced back its old owner no longer treats
// it as active. A task active in another worktree of this same clone stays
// there: two worktrees must not drive one task.
func (e *Engine) Switch(task string) (*View, error) {
	if err := CheckTaskName(task); err != nil {
		return nil, err
	}
	cur, err := e.Current()
	if err != nil && !errors.Is(err, ErrNoWorkflow) {
		return nil, err
	}
	if cur != nil && cur.State.Active() {
		if cur.State.Task == task {
			wf, err := definition(cur)
			if err != nil {
				return nil, err
			}
			return e.view(cur.State, wf), nil
		}
		return nil, fmt.Errorf("Workflow '%s/%s' is already active (task %s). Run 'git hegel abort' or 'git hegel stash' first",
			cur.State.Mode, cur.State.CurrentNode, cur.State.Task)
	}
	t, err := e.Tasks.LoadTask(task)
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("No task named '%s' (tasks are refs/hegel/tasks/*; 'git hegel fetch' brings other clones' tasks)", task)
	}
	if err != nil {
		return nil, err
	}
	st := t.State
	switch {
	case st.Status == StatusStashed:
		return nil, fmt.Errorf("Task '%s' is stashed; restore it with 'git hegel stash pop'", task)
	case !st.Active():
		return nil, fmt.Errorf("Task '%s' is %s; start a new workflow with 'git hegel start <workflow>'", task, st.Status)
	case !e.owns(st) && sameClone(st.WorktreeID, e.WorktreeID):
		return nil, fmt.Errorf("Task '%s' is active in another worktree (%s); continue it there, or abort it there first", task, st.Worktree)
	}
	from := st.WorktreeID
	st, wf, err := e.updateTask(t, func(st *State, _ *Workflow) (string, error) {
		if !st.Active() {
			return "", fmt.Errorf("Task '%s' became %s while switching; nothing changed", task, st.Status)
		}
		e.Claim(st)
		return fmt.Sprintf("switch: taken over from %s", from), nil
	})
	if err != nil {
		return nil, err
	}
	if err := e.touchSession(func(s *Session) { s.ActiveTask = task }); err != nil {
		return nil, err
	}
	return e.view(st, wf), nil
}

// sameClone reports whether two worktree ids ("<instance>:<worktree>") are
// worktrees of the same clone.
func sameClone(a, b string) bool {
	ia, _, okA := strings.Cut(a, ":")
	ib, _, okB := strings.Cut(b, ":")
	return okA && okB && ia == ib
}

package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// Switch makes task this worktree's workflow. It is how a workflow changes
// hands: a task started on another clone (it arrived with fetch) is taken
// over, and once the takeover is synced back its old owner no longer treats
// it as active. A task open in another worktree of this same clone stays
// there: two worktrees must not drive one task. The task this worktree was
// on is parked: it stays open, owned by no worktree, and `git hegel tasks`
// lists it until someone switches to it.
func (e *Engine) Switch(task string) (*View, error) {
	v, _, err := e.takeOver(task, "switch")
	return v, err
}

// ClaimTask is Switch under the name people use for taking a task that
// another clone owns: `git hegel claim`. It also returns the task's state
// before it was taken, to say whose it was (nil when this worktree held
// it already, and nothing changed).
func (e *Engine) ClaimTask(task string) (*View, *State, error) {
	return e.takeOver(task, "claim")
}

// takeOver makes task this worktree's; verb names the command in the
// task's log. It returns the state the task had before (nil when this
// worktree held it already).
func (e *Engine) takeOver(task, verb string) (*View, *State, error) {
	if err := CheckTaskName(task); err != nil {
		return nil, nil, err
	}
	t, err := e.load(task)
	if errors.Is(err, ErrNotFound) {
		return nil, nil, fmt.Errorf("No task named '%s' (see 'git hegel tasks'; 'git hegel fetch' brings other clones' tasks)", task)
	}
	if err != nil {
		return nil, nil, err
	}
	st := t.State
	switch {
	case st.Status == StatusStashed:
		return nil, nil, fmt.Errorf("Task '%s' is stashed; restore it with 'git hegel stash pop'", task)
	case st.Finished():
		return nil, nil, fmt.Errorf("Task '%s' has finished (%s at '%s'); start it again with 'git hegel start %s --task %s'",
			task, st.Status, st.CurrentNode, st.Workflow, task)
	case !st.Active():
		return nil, nil, fmt.Errorf("Task '%s' is %s; start a new workflow with 'git hegel start <workflow>'", task, st.Status)
	case e.inAnotherWorktree(st):
		return nil, nil, inAnotherWorktreeError(st)
	}
	cur, _, err := e.currentOrDamaged("")
	if err != nil && !errors.Is(err, ErrNoWorkflow) {
		return nil, nil, err
	}
	if cur != nil && cur.State.Task == task && cur.State.Active() {
		wf, err := definition(cur)
		if err != nil {
			return nil, nil, err
		}
		return e.view(cur.State, wf), nil, nil
	}
	var prev State
	seen, claimed := st.WorktreeID, false
	nst, wf, err := e.updateTask(t, updateOpts{anyOwner: true}, func(st *State, _ *workflow.Definition) (string, error) {
		// st is the task as this save will replace it: when another
		// command saved it since it was read above (a worktree of this
		// clone switching to it too), the checks are made again, so two
		// worktrees never both take it.
		if !st.Active() {
			return "", fmt.Errorf("Task '%s' became %s while switching; nothing changed", task, st.Status)
		}
		if e.inAnotherWorktree(st) {
			return "", inAnotherWorktreeError(st)
		}
		if claimed && st.WorktreeID != "" && st.WorktreeID != seen && !e.claims(st) && sameClone(st.WorktreeID, e.WorktreeID) {
			// Another worktree of this clone took the task after it was
			// read, and the attempt that lost the save wrote this
			// worktree into the adoption record over that worktree's
			// claim: the record goes back to the state's owner.
			if a, ok := e.Tasks.(AdoptionRecord); ok {
				if err := a.Adopt(task, st.WorktreeID); err != nil {
					e.warn(fmt.Sprintf("task %s: cannot give the adoption record back to %s (%v); 'git hegel doctor' reports it", task, st.Worktree, err))
				}
			}
			return "", inAnotherWorktreeError(st)
		}
		prev = *st.Clone()
		from := st.WorktreeID
		if ownedByNobody(st) {
			from = "nobody (parked)"
		}
		if err := e.Claim(st); err != nil {
			return "", err
		}
		claimed = true
		st.comeBack(e.now())
		return fmt.Sprintf("%s: taken over from %s", verb, from), nil
	})
	if err != nil {
		return nil, nil, err
	}
	var parked *State
	if cur != nil && cur.State.Active() {
		if err := e.park(cur, task); err != nil {
			e.warn(fmt.Sprintf("task %s could not be parked: %v; it stays this worktree's", cur.State.Task, err))
		} else {
			parked = cur.State
		}
	}
	if err := e.touchSession(func(s *Session) { s.ActiveTask = task }); err != nil {
		return nil, nil, err
	}
	v := e.view(nst, wf)
	v.Parked = parked
	return v, &prev, nil
}

// inAnotherWorktree reports whether st is held by another worktree of
// this clone (one that switching must not take from).
func (e *Engine) inAnotherWorktree(st *State) bool {
	return !e.owns(st) && !ownedByNobody(st) && sameClone(st.WorktreeID, e.WorktreeID) && e.verified(st)
}

func inAnotherWorktreeError(st *State) error {
	return fmt.Errorf("Task '%s' is active in another worktree (%s); continue it there, or abort it there first", st.Task, st.Worktree)
}

// park leaves cur open but owned by no worktree.
func (e *Engine) park(cur *Task, next string) error {
	_, _, err := e.updateTask(cur, updateOpts{damaged: true}, func(st *State, _ *workflow.Definition) (string, error) {
		if !st.Active() || !e.owns(st) {
			return "", fmt.Errorf("it is %s now", st.Status)
		}
		// The person stays: parking is no takeover, and
		// hegel.approval.otherPerson still knows whose work it is.
		st.Worktree, st.WorktreeID = "", ""
		st.leave(e.now(), AwayParked)
		return fmt.Sprintf("switch: parked (its worktree went on to %s)", next), nil
	})
	return err
}

// sameClone reports whether two worktree ids ("<instance>:<worktree>") are
// worktrees of the same clone.
func sameClone(a, b string) bool {
	ia, _, okA := strings.Cut(a, ":")
	ib, _, okB := strings.Cut(b, ":")
	return okA && okB && ia == ib
}

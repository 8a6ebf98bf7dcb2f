package engine

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// A stashed task lives only through the stash entry that holds it: while
// it is stashed no command but stash pop may take it up (switch, abort,
// delete and start --task refuse). So when the last entry holding a
// stashed run goes, by stash drop or stash clear, the run ends: it is
// aborted and archived, as abort does, with EndedBy saying which stash
// took it. A stashed task no entry holds (an older version dropped it, a
// crash, a fetched stash list without the entry) is an orphan: doctor
// reports it and doctor --fix ends it the same way. Fetched data never
// ends a task by itself: only these local commands do.

// EndedTask is a task a stash drop or clear ended.
type EndedTask struct {
	Task  string
	Node  string // where it was stashed
	Stash string // the id of the stash whose removal ended it
}

// errNotEnded stops endStashed when the task is no longer what the caller
// meant to end.
var errNotEnded = errors.New("not ended")

// stashHolders returns the tasks the live stashes hold, and the id of a
// live entry that cannot be read (whose task is unknown), if any.
func (e *Engine) stashHolders() (held map[string]bool, unreadable string, err error) {
	list, err := e.Stashes.ListStashes()
	if err != nil {
		return nil, "", err
	}
	held = map[string]bool{}
	for _, s := range list {
		switch {
		case s.Damaged != "":
			if unreadable == "" {
				unreadable = s.ID
			}
		case s.Task != "":
			held[s.Task] = true
		}
	}
	return held, unreadable, nil
}

// stashedTasks returns the live tasks whose status is stashed, by name
// (one listing of the task states when the store can, not one read per
// stash).
func (e *Engine) stashedTasks() (map[string]*State, error) {
	out := map[string]*State{}
	if e.Archive != nil {
		list, err := e.Archive.ListStates(false)
		if err != nil {
			return nil, err
		}
		for _, l := range list {
			if l.Err == nil && !l.Archived && l.State != nil && l.State.Status == StatusStashed {
				out[l.Name] = l.State
			}
		}
		return out, nil
	}
	names, err := e.Tasks.ListTasks()
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if t, err := e.Tasks.LoadTask(n); err == nil && t.State.Status == StatusStashed {
			out[n] = t.State
		}
	}
	return out, nil
}

// endsTask reports whether removing s would end its task: the task is
// stashed, runs the run s parked, and no other live entry holds it.
// others are the tasks the other live entries hold.
func (e *Engine) endsTask(s *Stash, others map[string]bool) bool {
	if s == nil || s.Damaged != "" || s.State == nil || s.Task == "" || others[s.Task] {
		return false
	}
	t, err := e.Tasks.LoadTask(s.Task)
	if err != nil {
		return false
	}
	return t.State.Status == StatusStashed && t.State.WorkflowID == s.State.WorkflowID
}

// StashDropEnds returns the task dropping ent would end, or "" when it
// ends none (the task is active again, finished, or another entry holds
// it too). It is what the confirmation question says.
func (e *Engine) StashDropEnds(ent *StashEntry) (string, error) {
	if !e.endsTask(ent.Stash, nil) {
		return "", nil
	}
	list, err := e.Stashes.ListStashes()
	if err != nil {
		return "", err
	}
	others := map[string]bool{}
	for _, s := range list {
		switch {
		case s.ID == ent.ID:
		case s.Damaged != "":
			return "", nil // it may hold the task: the drop ends nothing (endRemoved)
		default:
			others[s.Task] = true
		}
	}
	if others[ent.Task] {
		return "", nil
	}
	return ent.Task, nil
}

// endRemoved ends the tasks of the removed stashes that no live entry
// holds any more (see endsTask); by says which operation removed them.
// The stashes are already gone, so a task that cannot be ended is a
// warning, not an error: it stays stashed and doctor reports it.
func (e *Engine) endRemoved(removed []*Stash, op StashOp) []EndedTask {
	var candidates []*Stash
	seen := map[string]bool{}
	for _, s := range removed {
		if s != nil && s.Damaged == "" && s.State != nil && s.Task != "" && !seen[s.Task] {
			seen[s.Task] = true
			candidates = append(candidates, s)
		}
	}
	var held map[string]bool
	var unreadable string
	var ended []EndedTask
	for _, s := range candidates {
		// The task first: listing the stashes is needed only for one
		// still stashed with this run.
		if t, err := e.Tasks.LoadTask(s.Task); err != nil || t.State.Status != StatusStashed || t.State.WorkflowID != s.State.WorkflowID {
			continue
		}
		if held == nil {
			var err error
			if held, unreadable, err = e.stashHolders(); err != nil {
				e.warn(fmt.Sprintf("the stash list cannot be read after the %s (%v): the tasks it held stay stashed; 'git hegel doctor' reports them", op, err))
				return ended
			}
		}
		if held[s.Task] {
			continue
		}
		if unreadable != "" {
			e.warn(fmt.Sprintf("task %s stays stashed: stash entry %s cannot be read and may hold it; 'git hegel doctor' reports both", s.Task, unreadable))
			continue
		}
		by := fmt.Sprintf("stash %s %s", op, s.ID)
		why := fmt.Sprintf("stash dropped: %s", s.ID)
		if op == StashOpClear {
			why = fmt.Sprintf("stash cleared: %s", s.ID)
		}
		st, err := e.endStashed(s.Task, s.State.WorkflowID, by, why)
		switch {
		case errors.Is(err, errNotEnded):
		case err != nil:
			e.warn(fmt.Sprintf("task %s was not ended (%v): it stays stashed; 'git hegel doctor --fix' ends it", s.Task, err))
		default:
			ended = append(ended, EndedTask{Task: s.Task, Node: st.CurrentNode, Stash: s.ID})
		}
	}
	return ended
}

// endStashed aborts and archives task name, as abort does, if it is still
// stashed (and, unless run is "", still the run run). by goes in EndedBy,
// why in the history of the task's ref. It returns the state before the
// end, or errNotEnded when the task is not (or no longer) such a task.
func (e *Engine) endStashed(name, run, by, why string) (*State, error) {
	t, err := e.Tasks.LoadTask(name)
	if errors.Is(err, ErrNotFound) {
		return nil, errNotEnded
	}
	if err != nil {
		return nil, err
	}
	var before *State
	_, _, err = e.updateTask(t, updateOpts{call: TaskOptions{Task: name}, damaged: true}, func(st *State, wf *workflow.Definition) (string, error) {
		if st.Status != StatusStashed || (run != "" && st.WorkflowID != run) {
			return "", errNotEnded
		}
		before = st.Clone()
		from := st.CurrentNode
		switch from {
		case workflow.NodeDone, workflow.NodeAborted:
			// A run stashed once it had finished ends as it finished.
			now := e.now()
			st.Status = StatusCompleted
			if from == workflow.NodeAborted {
				st.Status = StatusAborted
			}
			if st.EndedAt == nil {
				st.EndedAt = &now
			}
		default:
			e.enter(st, wf, workflow.NodeAborted)
		}
		st.EndedBy = by
		return fmt.Sprintf("abort: at %s (%s)", from, why), nil
	})
	if err != nil {
		return nil, err
	}
	return before, nil
}

// StashOrphan is a stashed task no live stash entry holds.
type StashOrphan struct {
	Task string
	Node string // where it was stashed
	// Dropped is the newest dropped stash (within DroppedStashWindow)
	// that holds it, or nil: stash restore brings that one back.
	Dropped *DroppedStash
	// Unreadable is set when a live entry cannot be read: it may be the
	// one holding the task, so the task is not ended.
	Unreadable string
}

// StashOrphans returns the stashed tasks no live stash entry holds,
// sorted by name.
func (e *Engine) StashOrphans() ([]StashOrphan, error) {
	stashed, err := e.stashedTasks()
	if err != nil {
		return nil, err
	}
	if len(stashed) == 0 {
		return nil, nil
	}
	held, unreadable, err := e.stashHolders()
	if err != nil {
		return nil, err
	}
	var dropped []*DroppedStash
	var out []StashOrphan
	for name, st := range stashed {
		if held[name] {
			continue
		}
		if dropped == nil {
			if dropped, err = e.StashDropped(); err != nil {
				dropped = []*DroppedStash{}
			}
		}
		o := StashOrphan{Task: name, Node: st.CurrentNode, Unreadable: unreadable}
		for _, d := range dropped {
			if d.Damaged == "" && d.Task == o.Task {
				o.Dropped = d
				break
			}
		}
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Task < out[j].Task })
	return out, nil
}

// Problem is the one line doctor prints for the orphan.
func (o StashOrphan) Problem() string {
	p := fmt.Sprintf("task %s is stashed (at %s), but no stash entry holds it", o.Task, o.Node)
	if o.Dropped != nil {
		p += fmt.Sprintf("; 'git hegel stash restore %s' brings its dropped stash back", o.Dropped.ID)
	}
	if o.Unreadable != "" {
		return p + fmt.Sprintf("; stash entry %s cannot be read and may hold it (repair or drop that entry first)", o.Unreadable)
	}
	return p + "; 'git hegel doctor --fix' ends it (archived as aborted)"
}

// EndStashOrphan ends an orphan found by StashOrphans: aborted and
// archived, as abort does. It checks again first: a task that is no
// longer stashed, or that an entry holds again, is left alone.
func (e *Engine) EndStashOrphan(o StashOrphan) error {
	held, unreadable, err := e.stashHolders()
	if err != nil {
		return err
	}
	switch {
	case held[o.Task]:
		return fmt.Errorf("task %s is held by a stash entry again; left alone", o.Task)
	case unreadable != "":
		return fmt.Errorf("stash entry %s cannot be read and may hold task %s; repair or drop that entry first", unreadable, o.Task)
	}
	_, err = e.endStashed(o.Task, "", "doctor", "no stash entry held it; ended by doctor --fix")
	if errors.Is(err, errNotEnded) {
		return fmt.Errorf("task %s is no longer stashed; left alone", o.Task)
	}
	return err
}

// endedByStashRemoval reports whether st is run run, ended when the
// stash holding it was dropped or cleared.
func endedByStashRemoval(st *State, run string) bool {
	return st != nil && st.Status == StatusAborted && strings.HasPrefix(st.EndedBy, "stash ") && st.WorkflowID == run
}

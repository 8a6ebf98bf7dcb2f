package engine

import (
	"fmt"
	"slices"

	"github.com/git-hegel/git-hegel/engine/text"
)

// LockConflictNotes says, one line per pair, where a task a fetch
// brought or changed, held elsewhere, locks a file that a task a worktree
// of this clone holds has locked too. Each clone took its lock before it
// saw the other's, so neither was refused; from now on each task's agent
// is stopped before editing the file. The fetch says so rather than
// leave it to a refused edit, and never decides which lock wins: taking
// it over stays this clone's explicit `lock --force`.
func (e *Engine) LockConflictNotes(r *SyncReport) []string {
	var changed []string
	for _, t := range r.Tasks {
		switch t.Change {
		case TaskAdded, TaskFastForwarded, TaskMerged:
			if !t.Archived {
				changed = append(changed, t.Task)
			}
		}
	}
	// Only a changed task that locks something can conflict: read those
	// first, so a fetch costs its changed tasks, not every stored one.
	var locking []*State
	for _, name := range changed {
		t, err := e.Tasks.LoadTask(name)
		if err == nil && t.State.Active() && len(t.State.FilesLocked) > 0 && !e.heldHere(t.State) {
			locking = append(locking, t.State)
		}
	}
	if len(locking) == 0 {
		return nil
	}
	states, err := e.LockStates()
	if err != nil {
		return nil
	}
	var out []string
	for _, there := range locking {
		for _, here := range states {
			if here.Task == there.Task || !e.heldHere(here) {
				continue
			}
			for _, theirs := range there.FilesLocked {
				i := slices.IndexFunc(here.FilesLocked, func(l FileLock) bool { return e.locksMeet(l.Path, theirs.Path) })
				if i < 0 {
					continue
				}
				ours := here.FilesLocked[i].Path
				out = append(out, fmt.Sprintf("Task %s from %s locks %s, which task %s here has locked too (%s): each task's agent is now stopped before editing it; 'git hegel lock --force %s' in %s's worktree takes it over",
					holderName(there.Task), r.Remote, text.Quote(theirs.Path), here.Task, text.Quote(ours), shellArg(ours), here.Task))
			}
		}
	}
	return out
}

// locksMeet is locksOverlap as the agent hook sees two locks: with
// core.ignorecase, locks whose names differ only in case name one file
// there, and each stops the other task's edits of it.
func (e *Engine) locksMeet(a, b string) bool {
	return locksOverlap(a, b) || e.FoldCase && locksOverlap(FoldName(a), FoldName(b))
}

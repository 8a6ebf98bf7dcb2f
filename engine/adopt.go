package engine

import (
	"fmt"
	"strings"
)

// AdoptionRecord is implemented by a TaskStore that keeps, outside the
// data that travels between clones, which worktree created each task or
// took it over. A task's own worktree_id arrives with fetch and can name
// any worktree (the one of any task this clone pushed is readable), so
// ownership is decided from this record alone when the store has one
// (gitstore does; the in-memory test stores do not, and trust the state).
type AdoptionRecord interface {
	// Adopted reports whether the record gives task to worktreeID.
	Adopted(task, worktreeID string) bool
	// Adopt records that worktreeID (of this clone) holds task now.
	Adopt(task, worktreeID string) error
}

// claims reports whether st names this worktree as its owner: by id, or
// by path when either side has no id (the in-memory test stores). What a
// state names proves nothing by itself (owns).
func (e *Engine) claims(st *State) bool {
	if st.WorktreeID != "" && e.WorktreeID != "" {
		return st.WorktreeID == e.WorktreeID
	}
	return st.Worktree != "" && st.Worktree == e.Worktree
}

// owns reports whether st belongs to this worktree: it names this
// worktree, and this clone's record says this worktree created the task
// or took it over.
func (e *Engine) owns(st *State) bool { return e.claims(st) && e.adopted(st) }

// adopted reports whether this worktree created or took over st's task,
// as far as the store's record says (true when it keeps none, or this
// engine has no worktree id to look up: the record is kept by id).
func (e *Engine) adopted(st *State) bool {
	a, ok := e.Tasks.(AdoptionRecord)
	return !ok || e.WorktreeID == "" || a.Adopted(st.Task, e.WorktreeID)
}

// verified reports whether the worktree st names as its owner holds the
// task by this clone's record. A state naming a worktree of another
// clone cannot be checked here and counts as verified for that clone.
func (e *Engine) verified(st *State) bool {
	if st.WorktreeID == "" || !sameInstance(st.WorktreeID, e.WorktreeID) {
		return true
	}
	a, ok := e.Tasks.(AdoptionRecord)
	return !ok || a.Adopted(st.Task, st.WorktreeID)
}

// Claim makes st belong to this worktree (start, switch, restoring a
// stash), and records that outside the synced refs first, so a state
// naming this worktree is never written without the record that makes
// it count.
func (e *Engine) Claim(st *State) error {
	if a, ok := e.Tasks.(AdoptionRecord); ok && e.WorktreeID != "" {
		if err := a.Adopt(st.Task, e.WorktreeID); err != nil {
			return fmt.Errorf("cannot record that this worktree holds task %s: %v", st.Task, err)
		}
	}
	st.Worktree, st.WorktreeID = e.Worktree, e.WorktreeID
	st.OwnerEmail = e.email()
	return nil
}

// email is the person's git user.email, "" when unknown.
func (e *Engine) email() string {
	if e.Email == nil {
		return ""
	}
	return strings.TrimSpace(e.Email())
}

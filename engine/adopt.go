package engine

// AdoptionRecord is implemented by a TaskStore that keeps, outside the
// data that travels between clones, which worktree created each task or
// took it over. A task's own worktree_id arrives with fetch and can name
// any worktree, so rebuilding a lost session trusts only this record when
// the store has one (gitstore does; the in-memory test stores do not).
type AdoptionRecord interface {
	Adopted(task, worktreeID string) bool
}

// adopted reports whether this worktree created or took over st's task,
// as far as the store's record says (true when it keeps none).
func (e *Engine) adopted(st *State) bool {
	a, ok := e.Tasks.(AdoptionRecord)
	return !ok || a.Adopted(st.Task, e.WorktreeID)
}

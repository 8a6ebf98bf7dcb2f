package engine

import "time"

// nameLeavingCommits names, for each commit a restore takes off a branch,
// the task that made it when that is known: the one task whose run on
// that branch (after its start, until its end or now) covers the commit's
// time. Two tasks running on one branch at once leave it unknown, as does
// a task whose records cannot be read. It reads the tasks only when some
// commit leaves.
func (e *Engine) nameLeavingCommits(p *RestorePlan) {
	if p == nil || e.Archive == nil {
		return
	}
	leaves := false
	for _, b := range p.Branches {
		leaves = leaves || len(b.Leaving) > 0
	}
	if !leaves {
		return
	}
	tasks, err := e.Archive.ListStates(true)
	if err != nil {
		return
	}
	now := e.now()
	for i := range p.Branches {
		b := &p.Branches[i]
		for j := range b.Leaving {
			b.Leaving[j].Task = taskAt(tasks, b.Name, b.Leaving[j].When, now)
		}
	}
}

// taskAt is the one task that ran on branch at t, or "".
func taskAt(tasks []ListedTask, branch string, t, now time.Time) string {
	found := ""
	for _, lt := range tasks {
		st := lt.State
		if lt.Err != nil || st == nil || st.StartBranch != branch || st.StartedAt.IsZero() {
			continue
		}
		end := now
		if st.EndedAt != nil {
			end = *st.EndedAt
		}
		if !t.After(st.StartedAt) || t.After(end) {
			continue
		}
		if found != "" && found != st.Task {
			return ""
		}
		found = st.Task
	}
	return found
}

package engine

import (
	"slices"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// StepOf returns which step st is at and how many a run of its workflow
// has ("step 2 of 3"): its place on the run path from the start node
// (RunPath), or, for a node off that path (a loop, a rejection), the nodes
// visited so far plus what the path from there still holds. A finished
// task is at step total.
func StepOf(wf *workflow.Definition, st *State) (step, total int) {
	path := wf.RunPath(wf.StartNode, st.TaskType)
	if wf.IsTerminal(st.CurrentNode) {
		return len(path), len(path)
	}
	if i := slices.Index(path, st.CurrentNode); i >= 0 {
		return i + 1, len(path)
	}
	step = max(len(st.History), 1)
	return step, step - 1 + max(len(wf.RunPath(st.CurrentNode, st.TaskType)), 1)
}

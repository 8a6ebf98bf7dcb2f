package engine

import "slices"

// Steps: seed 03 counts a workflow's steps ("step 2 of 3"). A workflow here
// is a graph, so the count follows the path a run takes: from the start
// node, each node's run claim (RunClaim), skipping the nodes the task's
// type skips, until an end or a node already on the path.

// RunClaim is the claim `git hegel run` follows out of node:
// "<node>_complete" when the node has that transition, else its first.
func (w *Workflow) RunClaim(node string) (claim, to string, ok bool) {
	n, found := w.Nodes[node]
	if !found || len(n.Transitions) == 0 {
		return "", "", false
	}
	for _, t := range n.Transitions {
		if t.When == node+"_complete" {
			return t.When, t.To, true
		}
	}
	return n.Transitions[0].When, n.Transitions[0].To, true
}

// RunPath is the nodes a run goes through from node, in order, for a
// task of type taskType (node first, unless the type skips it).
func (w *Workflow) RunPath(node, taskType string) []string {
	var path []string
	for i := 0; i <= len(w.Order) && !w.IsTerminal(node); i++ {
		if _, ok := w.Nodes[node]; !ok || slices.Contains(path, node) {
			break
		}
		if !w.SkippedFor(node, taskType) {
			path = append(path, node)
		}
		_, to, ok := w.RunClaim(node)
		if !ok {
			break
		}
		node = to
	}
	return path
}

// StepOf returns which step st is at and how many a run of its workflow
// has: its place on the run path from the start node, or, for a node off
// that path (a loop, a rejection), the nodes visited so far plus what the
// path from there still holds. A finished task is at step total.
func StepOf(wf *Workflow, st *State) (step, total int) {
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

package workflow

import (
	"slices"
)

// Steps: status shows how far a run is ("step 2 of 3"). A workflow is a
// graph, so the count follows the path a run takes: from the start node,
// each node's run claim (RunClaim), skipping the nodes the task's type
// skips, until an end or a node already on the path.

// RunClaim is the claim `git hegel run` follows out of node:
// "<node>_complete" when the node has that transition, else its first.
func (w *Definition) RunClaim(node string) (claim, to string, ok bool) {
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
func (w *Definition) RunPath(node, taskType string) []string {
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

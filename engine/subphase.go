package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// Sub-phases: steps within one node (the pipeline's pm node goes from
// discovery to questions to spec). `git hegel next --sub` moves to the
// next one; `git hegel next` leaves the node as always, from any of them.

// firstSubphase is where a node starts: its first sub-phase, or "" when
// it declares none.
func firstSubphase(wf *workflow.Definition, node string) string {
	if wf == nil {
		return ""
	}
	if n, ok := wf.Nodes[node]; ok && len(n.Subphases) > 0 {
		return n.Subphases[0]
	}
	return ""
}

// NextSubphase moves the task to the next sub-phase of its node.
func (e *Engine) NextSubphase(o TaskOptions) (*View, error) {
	st, wf, err := e.update(o, func(st *State, wf *workflow.Definition) (string, error) {
		if err := e.allowed(st, "next"); err != nil {
			return "", err
		}
		n := wf.Nodes[st.CurrentNode]
		if n == nil || len(n.Subphases) == 0 {
			return "", fmt.Errorf("Node '%s' has no sub-phases; 'git hegel next' moves on", st.CurrentNode)
		}
		i := slices.Index(n.Subphases, st.Subphase)
		if i < 0 {
			i = 0 // a state from before the node had sub-phases
		}
		if i == len(n.Subphases)-1 {
			return "", fmt.Errorf("'%s' is the last sub-phase of '%s'; 'git hegel next' moves on", n.Subphases[i], st.CurrentNode)
		}
		from := n.Subphases[i]
		st.Subphase = n.Subphases[i+1]
		return fmt.Sprintf("next --sub: %s: %s -> %s", st.CurrentNode, from, st.Subphase), nil
	})
	if err != nil {
		return nil, err
	}
	return e.view(st, wf), nil
}

// SubphaseLine describes where st is within its node's sub-phases,
// "questions (2 of 3: discovery → [questions] → spec)", or "" when the
// node has none.
func SubphaseLine(st *State, wf *workflow.Definition) string {
	n := wf.Nodes[st.CurrentNode]
	if n == nil || len(n.Subphases) == 0 {
		return ""
	}
	cur := st.Subphase
	i := slices.Index(n.Subphases, cur)
	if i < 0 {
		i, cur = 0, n.Subphases[0]
	}
	parts := slices.Clone(n.Subphases)
	parts[i] = "[" + parts[i] + "]"
	return fmt.Sprintf("%s (%d of %d: %s)", cur, i+1, len(parts), strings.Join(parts, " → "))
}

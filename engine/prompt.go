package engine

import (
	"encoding/json"
	"fmt"
)

// Prompts shown to people and agents are rendered from the node's template
// (template.go) with the task's data, the user's guides and context.

// RenderPrompt renders the prompt of st's current node.
func (e *Engine) RenderPrompt(st *State, wf *Workflow) (string, error) {
	n, ok := wf.Nodes[st.CurrentNode]
	if !ok || n.Template == nil {
		return wf.Prompt(st.CurrentNode), nil
	}
	return RenderNodePrompt(n, st, wf, e.Guides)
}

// RenderNodePrompt renders node n's prompt for a task in state st, taking
// guides, partials and optional context from src (nil: built-ins only).
func RenderNodePrompt(n *Node, st *State, wf *Workflow, src GuideSource) (string, error) {
	t := n.Template
	if t == nil {
		return n.Prompt, nil
	}
	opt, err := optionalValues(src, t.Optional)
	if err != nil {
		return "", err
	}
	d := RenderData{
		Guide:    func(name string) (string, error) { return guideText(src, name) },
		Partial:  func(name string) (string, error) { return partialText(src, name) },
		Optional: opt,
		Results:  stepResults(st),
		Task: map[string]string{
			"name": st.Task, "description": st.Description, "type": st.TaskType,
			"workflow": st.Workflow, "mode": st.Mode, "node": st.CurrentNode, "priority": st.Priority,
		},
	}
	out, err := t.Render(d)
	if err != nil {
		if te, ok := err.(*TemplateError); ok && n.PromptLine > 0 {
			return "", fmt.Errorf("%s:%d: node %q: %s", wf.Source, n.PromptLine+te.Line-1, n.Name, te.Msg)
		}
		return "", fmt.Errorf("%s: node %q: %v", wf.Source, n.Name, err)
	}
	return trimRightNL(out), nil
}

// stepResults gives each stored step result as text: a JSON string as its
// value, anything else as its JSON.
func stepResults(st *State) map[string]string {
	out := make(map[string]string, len(st.StepResults))
	for k, raw := range st.StepResults {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			out[k] = s
		} else {
			out[k] = string(raw)
		}
	}
	return out
}

func trimRightNL(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == ' ') {
		s = s[:len(s)-1]
	}
	return s
}

package engine

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Prompts shown to people and agents are rendered from the node's template
// (template.go) with the task's data, the user's guides and context, and,
// for a task `git hegel run` drives, the run's inputs and the earlier
// steps' results (run_store.go).

// RenderPrompt renders the prompt of st's current node.
func (e *Engine) RenderPrompt(st *State, wf *Workflow) (string, error) {
	n, ok := wf.Nodes[st.CurrentNode]
	if !ok || n.Template == nil {
		return wf.Prompt(st.CurrentNode), nil
	}
	d, err := e.runData(st, n.Template)
	if err != nil {
		return "", err
	}
	return renderTemplate(n.Template, n.PromptLine, "", n, st, wf, e.Guides, d)
}

// RenderNodePrompt renders node n's prompt for a task in state st, taking
// guides, partials and optional context from src (nil: built-ins only).
// Results are those state.json holds as text; the run's inputs are empty.
func RenderNodePrompt(n *Node, st *State, wf *Workflow, src GuideSource) (string, error) {
	if n.Template == nil {
		return n.Prompt, nil
	}
	return renderTemplate(n.Template, n.PromptLine, "", n, st, wf, src, runData{in: &runInputs{}, results: stepResults(st)})
}

// runData is what a template may use from a run: its inputs and the
// earlier steps' results.
type runData struct {
	in      *runInputs
	results map[string]string
}

// runData loads the run data template t uses, and nothing else.
func (e *Engine) runData(st *State, t *Template) (runData, error) {
	d := runData{in: &runInputs{}, results: map[string]string{}}
	var err error
	if t.Uses(tplPrompt) || t.Uses(tplContext) || t.Uses(tplVars) {
		if d.in, err = e.loadInputs(st.Task, t); err != nil {
			return d, err
		}
	}
	if t.Uses(tplResults) {
		if d.results, err = e.loadResults(st, resultRefs(t)); err != nil {
			return d, err
		}
	}
	return d, nil
}

// renderTemplate renders t, one of node n's templates whose text starts
// at file line line; what prefixes messages about it ("" for the prompt,
// "run: confirm: ").
func renderTemplate(t *Template, line int, what string, n *Node, st *State, wf *Workflow, src GuideSource, rd runData) (string, error) {
	opt, err := optionalValues(src, t.Optional)
	if err != nil {
		return "", err
	}
	d := RenderData{
		Guide:    func(name string) (string, error) { return guideText(src, name) },
		Partial:  func(name string) (string, error) { return partialText(src, name) },
		Optional: opt,
		// Text ends in a newline; the template says where lines end.
		Prompt:  strings.TrimRight(rd.in.Prompt, "\n"),
		Context: strings.TrimRight(rd.in.Context, "\n"),
		Vars:    rd.in.Vars,
		Results: trimValues(rd.results),
		Task: map[string]string{
			"name": st.Task, "description": st.Description, "type": st.TaskType,
			"workflow": st.Workflow, "mode": st.Mode, "node": st.CurrentNode, "priority": st.Priority,
		},
	}
	out, err := t.Render(d)
	if err != nil {
		if te, ok := err.(*TemplateError); ok && line > 0 {
			return "", fmt.Errorf("%s:%d: node %q: %s%s", wf.Source, line+te.Line-1, n.Name, what, te.Msg)
		}
		return "", fmt.Errorf("%s: node %q: %s%v", wf.Source, n.Name, what, err)
	}
	return trimRightNL(out), nil
}

func trimValues(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = strings.TrimRight(v, "\n")
	}
	return out
}

// stepResults gives each result state.json holds as a JSON string as its
// text (the runner keeps its results in blobs, run_store.go).
func stepResults(st *State) map[string]string {
	out := make(map[string]string, len(st.StepResults))
	for k, raw := range st.StepResults {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			out[k] = s
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

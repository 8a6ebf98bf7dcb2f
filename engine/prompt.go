package engine

import (
	"encoding/json"
	"strings"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// Prompts shown to people and agents are rendered from the node's template
// (engine/workflow's template.go) with the task's data, the user's guides and context, and,
// for a task `git hegel run` drives, the run's inputs and the earlier
// steps' results (run_store.go).

// RenderPrompt renders the prompt of st's current node.
func (e *Engine) RenderPrompt(st *State, wf *workflow.Definition) (string, error) {
	return e.renderPrompt(st, wf, e.stateTextOnce(st))
}

// renderPrompt is RenderPrompt with st's untrusted text read by stateText
// (which view shares, so the reflog is read once).
func (e *Engine) renderPrompt(st *State, wf *workflow.Definition, stateText func() []FetchedText) (string, error) {
	n, ok := wf.Nodes[st.CurrentNode]
	if !ok || n.Template == nil {
		return wf.Prompt(st.CurrentNode), nil
	}
	d, err := e.runData(st, n.Template, stateText)
	if err != nil {
		return "", err
	}
	return renderTemplate(n.Template, n.PromptLine, "", n, st, wf, e.Guides, d)
}

// runData is what a template may use from a run: its inputs and the
// earlier steps' results.
type runData struct {
	in      *runInputs
	results map[string]string
	// description, when set, stands in for the task's description: a
	// notice when it arrived with a fetch and is not trusted
	// (fetched_text.go).
	description *string
	// dir is {{task.dir}} (agentTaskDir).
	dir string
}

// runData loads the run data template t uses, and nothing else, with
// what stateText says arrived with a fetch withheld.
func (e *Engine) runData(st *State, t *workflow.Template, stateText func() []FetchedText) (runData, error) {
	d := runData{in: &runInputs{}, results: map[string]string{}, dir: e.agentTaskDir(st)}
	var err error
	if t.Uses(workflow.DataPrompt) || t.Uses(workflow.DataContext) || t.Uses(workflow.DataVars) {
		if d.in, err = e.loadInputs(st.Task, t); err != nil {
			return d, err
		}
	}
	if t.Uses(workflow.DataResults) {
		if d.results, err = e.loadResults(st, resultRefs(t)); err != nil {
			return d, err
		}
	}
	// What arrived with a fetch and is not trusted here is withheld from
	// the agent the prompt is for.
	// ({{task.*}} is always at hand, so a template's use of the
	// description is not recorded: it is looked at whenever there is one.)
	var text []FetchedText
	if st.Description != "" || t.Uses(workflow.DataResults) {
		text = stateText()
	}
	for _, ft := range text {
		if ft.Field == "description" {
			notice := withheld(st.Task, ft)
			d.description = &notice
		}
	}
	e.withholdRunData(st, &d, text)
	return d, nil
}

// renderTemplate renders t, one of node n's templates, with st's data and
// the run data rd (RenderNode says the rest).
func renderTemplate(t *workflow.Template, line int, what string, n *workflow.Node, st *State, wf *workflow.Definition, src workflow.GuideSource, rd runData) (string, error) {
	description := st.Description
	if rd.description != nil {
		description = *rd.description
	}
	return wf.RenderNode(n, t, line, what, src, workflow.RenderData{
		// Text ends in a newline; the template says where lines end.
		Prompt:  strings.TrimRight(rd.in.Prompt, "\n"),
		Context: strings.TrimRight(rd.in.Context, "\n"),
		Vars:    rd.in.Vars,
		Results: trimValues(rd.results),
		Task: map[string]string{
			"name": st.Task, "description": description, "type": agentLabel(st.TaskType),
			"workflow": agentLabel(st.Workflow), "mode": agentMode(st, wf), "node": agentLabel(st.CurrentNode),
			"priority": agentLabel(TaskPriority(st)), "dir": rd.dir,
		},
	})
}

// agentLabel is a label of the task's state as a prompt carries it.
// git-hegel writes names there, but another clone's state may hold any
// words (a fetch checks only for control characters): one that is not a
// name reaches the agent as stateLabelNotice, as in the agent view.
func agentLabel(s string) string {
	if RunLabel(s) {
		return s
	}
	return stateLabelNotice
}

// agentMode is {{task.mode}}: the definition's own mode: line (which
// may use any words, and is the words of the definition whose prompt
// this is), or else agentLabel's.
func agentMode(st *State, wf *workflow.Definition) string {
	if wf != nil && st.Mode == wf.Mode {
		return st.Mode
	}
	return agentLabel(st.Mode)
}

// agentTaskDir is {{task.dir}} as a prompt carries it: the task's folder
// when it is a path of names, or when it is the folder this clone's
// hegel.artifactDir gives the task (which may name folders in any
// words). A folder another clone recorded in other words is withheld,
// as labels are: it would put its words in every built-in's prompt.
func (e *Engine) agentTaskDir(st *State) string {
	dir := TaskDir(st)
	if RunLabel(dir) {
		return dir
	}
	// The fields the setting may name are names, so the folder it gives
	// holds only the setting's own words.
	if RunLabel(st.Task) && RunLabel(st.TaskType) && RunLabel(st.Workflow) {
		if own, err := e.newArtifactDir(st); err == nil && own == dir {
			return dir
		}
	}
	return stateLabelNotice
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

package engine

import (
	"strings"
	"testing"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

func TestRenderNodePromptUsesUserFiles(t *testing.T) {
	src := []byte(y(
		"start_node: a",
		"nodes:",
		"  a:",
		"    prompt_hbs: |",
		"      {{LEXICON}}",
		"      {{#if style}}Style: {{style}}{{/if}}",
		"      {{> sign}}",
		"    transitions: [{when: a_complete, to: done}]",
	))
	w, err := workflow.Parse("w", "w.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	g := &fakeGuides{
		guides:   map[string]string{"LEXICON": "Our own principles."},
		partials: map[string]string{"sign": "-- {{task.name}}"},
		optional: map[string]string{"style": "terse\n"},
	}
	out, err := renderNodePrompt(w.Nodes["a"], &State{Task: "t9", CurrentNode: "a"}, w, g)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Our own principles.\nStyle: terse\n-- t9"; out != want {
		t.Errorf("got %q, want %q", out, want)
	}
	// Without the user's files the built-in guide is used, and the missing
	// partial is an error naming the file line.
	_, err = renderNodePrompt(w.Nodes["a"], &State{Task: "t9", CurrentNode: "a"}, w, nil)
	if err == nil || err.Error() != `w.yaml:7: node "a": unknown partial {{> sign}}: no .hegel/guides/partials/sign.hbs and no .hegel/guides/sign.hbs` {
		t.Errorf("without user files: %v", err)
	}
}

// TestBuiltinPromptsRender: every built-in prompt renders with the
// built-in guides alone.
func TestBuiltinPromptsRender(t *testing.T) {
	for _, w := range workflow.Builtins() {
		for _, n := range w.Order {
			st := &State{Task: "t", Workflow: w.Name, Mode: w.Mode, CurrentNode: n}
			out, err := renderNodePrompt(w.Nodes[n], st, w, nil)
			if err != nil {
				t.Errorf("%s/%s: render: %v", w.Name, n, err)
			} else if strings.Contains(out, "{{") {
				t.Errorf("%s/%s: rendered prompt keeps a template marker:\n%s", w.Name, n, out)
			}
		}
	}
}

// renderNodePrompt renders node n's prompt for a task in state st, taking
// guides, partials and optional context from src (nil: built-ins only).
// Results are those state.json holds as text; the run's inputs are empty.
// (Engine.renderPrompt is what commands use; this is the template path
// alone, without a repository.)
func renderNodePrompt(n *workflow.Node, st *State, wf *workflow.Definition, src workflow.GuideSource) (string, error) {
	if n.Template == nil {
		return n.Prompt, nil
	}
	return renderTemplate(n.Template, n.PromptLine, "", n, st, wf, src, runData{in: &runInputs{}, results: stepResults(st), dir: agentLabel(TaskDir(st))})
}

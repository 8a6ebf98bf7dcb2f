package workflow

import (
	"strings"
	"testing"
)

func render(t *testing.T, src string, hbs bool, d RenderData) string {
	t.Helper()
	tp, err := ParseTemplate(src, hbs)
	if err != nil {
		t.Fatalf("parse %q: %v", src, err)
	}
	out, err := tp.Render(d)
	if err != nil {
		t.Fatalf("render %q: %v", src, err)
	}
	return out
}

func TestTemplateRender(t *testing.T) {
	guides := func(name string) (string, error) { return "<" + name + " & text>\n", nil }
	partials := map[string]string{
		"footer": "Footer for {{task.name}}: {{> inner}}",
		"inner":  "inner {{?who}} {{PLAN_WRITING}}",
	}
	d := RenderData{
		Guide:    guides,
		Partial:  func(n string) (string, error) { return partials[n], nil },
		Optional: map[string]string{"who": "Ada & Bob", "flag": "yes"},
		Prompt:   "the <prompt>",
		Context:  "some context",
		Results:  map[string]string{"plan": "PLAN <result>"},
		Task:     map[string]string{"name": "t1", "description": "a task"},
		Vars:     map[string]string{"env": "staging"},
	}
	tests := []struct {
		name string
		src  string
		hbs  bool
		want string
	}{
		{"guide inserted as is, never escaped", "A {{SPEC_WRITING}} B", false, "A <SPEC_WRITING & text> B"},
		{"optional context set", "by {{?who}}.", false, "by Ada & Bob."},
		{"optional context unset is empty", "[{{?nobody}}]", false, "[]"},
		{"data model", "{{prompt}}|{{context}}|{{results.plan}}|{{task.description}}|{{vars.env}}", false,
			"the <prompt>|some context|PLAN <result>|a task|staging"},
		{"if true", "{{#if flag}}on{{else}}off{{/if}}", true, "on"},
		{"if false", "{{#if nothing}}on{{else}}off{{/if}}", true, "off"},
		{"partials nest and see guides", "{{> footer}}", true, "Footer for t1: inner Ada & Bob <PLAN_WRITING & text>"},
		{"bare names are context in prompt_hbs", "{{who}}", true, "Ada & Bob"},
		{"each over nothing", "{{#each items}}{{name}}{{/each}}x", true, "x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := render(t, tc.src, tc.hbs, d); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTemplateParseErrors(t *testing.T) {
	tests := []struct {
		src  string
		hbs  bool
		want string
	}{
		{"Write it.\n{{foo}}", false, "line 2: unknown name {{foo}}: write {{?foo}} for optional context or {{NAME}} (upper case) for a guide"},
		{"${{ secrets.TOKEN }}", false, "line 1: unknown name {{secrets.TOKEN}}: write {{?secrets.TOKEN}} for optional context or {{NAME}} (upper case) for a guide"},
		{"{{task.owner}}", false, "line 1: unknown name \"task.owner\" (task fields: name, description, type, workflow, mode, node, priority, dir)"},
		{"{{results}}", true, "line 1: write {{results.NODE}} to use an earlier step's result"},
		{"{{GUIDE.part}}", false, `line 1: guide "GUIDE" has no fields: write {{GUIDE}}`},
		{"a\nb\n{{#if x}}\nc", true, "line 4: template syntax: Expecting OpenEndBlock, got: 'EOF'"},
		{"{{shout x}}", true, `line 1: unknown helper "shout" (known: if, unless, each, with, lookup, log, equal, eq)`},
	}
	for _, tc := range tests {
		_, err := ParseTemplate(tc.src, tc.hbs)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: got %v\nwant %s", tc.src, err, tc.want)
		}
	}
	// A literal {{ is written \{{.
	if got := render(t, `Use \{{name}} literally`, false, RenderData{}); got != "Use {{name}} literally" {
		t.Errorf("escaped braces: %q", got)
	}
}

func TestTemplateRenderErrors(t *testing.T) {
	tp, _ := ParseTemplate("x\n{{> loop}}", true)
	_, err := tp.Render(RenderData{Partial: func(n string) (string, error) { return "again {{> loop}}", nil }})
	if err == nil || !strings.Contains(err.Error(), `partial "loop" includes itself (loop > loop)`) {
		t.Errorf("cycle: %v", err)
	}
	tp, _ = ParseTemplate("{{MISSING}}", false)
	if _, err := tp.Render(RenderData{Guide: func(n string) (string, error) { return guideText(nil, n) }}); err == nil ||
		!strings.Contains(err.Error(), "unknown guide {{MISSING}}") {
		t.Errorf("missing guide: %v", err)
	}
}

func TestWorkflowTemplateErrorsHaveFileLines(t *testing.T) {
	tests := []struct {
		yaml string
		want string
	}{
		{y("start_node: a", "nodes:", "  a:", "    prompt: |", "      Line one.", "      {{bogus}}", "    transitions: [{when: a_complete, to: done}]"),
			`w.yaml:6: node "a": prompt: unknown name {{bogus}}: write {{?bogus}} for optional context or {{NAME}} (upper case) for a guide`},
		{y("start_node: a", "nodes:", "  a:", "    prompt_hbs: |", "      one", "      two {{#if x}}", "    transitions: [{when: a_complete, to: done}]"),
			`w.yaml:6: node "a": prompt_hbs: template syntax: Expecting OpenEndBlock, got: 'EOF'`},
		{y("start_node: a", "nodes:", "  a:", "    prompt: 'Use {{results.nope}}'", "    transitions: [{when: a_complete, to: done}]"),
			`w.yaml:4: node "a": {{results.nope}} names no node of this workflow`},
		{y("start_node: a", "nodes:", "  a:", "    prompt: p", "    prompt_hbs: q", "    transitions: [{when: a_complete, to: done}]"),
			`w.yaml:5: node "a": has both prompt and prompt_hbs; keep one`},
	}
	for _, tc := range tests {
		_, err := Parse("w", "w.yaml", []byte(tc.yaml))
		if err == nil || err.Error() != tc.want {
			t.Errorf("got %v\nwant %s", err, tc.want)
		}
	}
}

func TestBuiltinGuides(t *testing.T) {
	want := []string{"ARCHITECTURE_WRITING", "CLAUDE_CUSTOMIZATION", "CODE_MAP_WRITING", "HANDOFF_WRITING",
		"KICKOFF_WRITING", "KNOWLEDGE_CAPTURE", "LEARNINGS_WRITING", "LEXICON", "PLAN_WRITING",
		"QUESTION_TRACKING", "README_WRITING", "REVIEW_WRITING", "SPEC_WRITING", "STUDY_PLANNING", "VISION_WRITING"}
	got := BuiltinGuideNames()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("built-in guides %v", got)
	}
	for _, n := range got {
		text, ok := BuiltinGuide(n)
		if !ok || !strings.HasPrefix(text, "# ") || len(strings.Fields(text)) < 80 {
			t.Errorf("%s: a guide starts with a heading and says something (%d words)", n, len(strings.Fields(text)))
		}
		if strings.Contains(text, "{{") {
			t.Errorf("%s: guides are inserted as is; no template markers", n)
		}
	}
	// Every guide is used by a built-in workflow.
	used := map[string]bool{}
	for _, w := range Builtins() {
		for _, n := range w.Nodes {
			if n.Template != nil {
				for _, g := range n.Template.Guides {
					used[g.Name] = true
				}
			}
		}
	}
	for _, n := range want {
		if !used[n] {
			t.Errorf("guide %s is used by no built-in", n)
		}
	}
	gs, err := Guides(&fakeGuides{guides: map[string]string{"LEXICON": "# Ours\n", "EXTRA": "Extra guide\n"}}, ".hegel/guides")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Guide{}
	for _, g := range gs {
		byName[g.Name] = g
	}
	if g := byName["LEXICON"]; g.Source != ".hegel/guides/LEXICON.md" || !g.Overrides || g.Title != "Ours" {
		t.Errorf("user LEXICON: %+v", g)
	}
	if g := byName["EXTRA"]; g.Source != ".hegel/guides/EXTRA.md" || g.Overrides || g.Title != "Extra guide" {
		t.Errorf("EXTRA: %+v", g)
	}
	if g := byName["SPEC_WRITING"]; g.Source != "built-in" || g.Title != "Writing a specification" {
		t.Errorf("SPEC_WRITING: %+v", g)
	}
}

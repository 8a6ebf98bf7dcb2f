package workflow

import (
	"strings"
	"testing"
)

// hegelGuides is a GuideSource laid out as hegel's guides directory is.
func hegelGuides() *fakeGuides {
	return &fakeGuides{
		guides: map[string]string{
			"CUSTOM_GUIDE": "# Custom\n\n{{templates/style_{{code_map_style}}}}\n\nEnd {{not_expanded}}.",
		},
		partials: map[string]string{
			"greeting": "Hello {{context.name}}! {{?name}} {{name}}",
			"style":    `{{#if (eq context.code_map_style "hierarchical")}}Tree{{else}}Flat{{/if}}`,
		},
		guidePartials: map[string]string{"fallback": "from guides/ {{context.name}}", "greeting": "never"},
		templates: map[string]string{
			"footer":             "A footer for {{doc_type}}.",
			"outer":              "Outer\n{{templates/inner}}\nend",
			"inner":              "Inner {{?doc_type}}",
			"style_hierarchical": "One file per directory.",
			"style_monolithic":   "Single file.",
			"loop_a":             "{{templates/loop_b}}",
			"loop_b":             "{{templates/loop_a}}",
		},
		optional: map[string]string{
			"name": "World", "code_map_style": "hierarchical", "doc_type": "SPEC",
			"prompt": "from prompt.md", "context": "from context.md", "evil": "../../etc/passwd",
			"shell": "{{templates/footer}}",
		},
	}
}

func renderWith(t *testing.T, src string, hbs bool, g *fakeGuides, d RenderData) (string, error) {
	t.Helper()
	tp, err := ParseTemplate(src, hbs)
	if err != nil {
		return "", err
	}
	w := &Definition{Source: "w.yaml"}
	return w.RenderNode(&Node{Name: "n"}, tp, 1, "", g, d)
}

func TestTemplateHegelSpellings(t *testing.T) {
	tests := []struct {
		name, src string
		hbs       bool
		want      string
	}{
		{"context.NAME in prompt_hbs", "Hello {{context.name}}!", true, "Hello World!"},
		{"context.NAME in a plain prompt", "Hello {{context.name}}!", false, "Hello World!"},
		{"context.NAME unset is empty", "[{{context.nobody}}]", true, "[]"},
		{"{{context}} stays the run's context", "{{context}}|{{context.name}}", false, "run ctx|World"},
		{"eq true", `{{#if (eq context.code_map_style "hierarchical")}}H{{else}}M{{/if}}`, true, "H"},
		{"eq false", `{{#if (eq context.name "hierarchical")}}H{{else}}M{{/if}}`, true, "M"},
		{"eq of two unset values", `{{#if (eq context.a context.b)}}same{{/if}}`, true, "same"},
		{"partials see values", "{{> greeting}}", true, "Hello World! World World"},
		{"partials see values from a plain prompt", "{{> greeting}}", false, "Hello World! World World"},
		{"partial in guides/ as a fallback", "{{> fallback}}", true, "from guides/ World"},
		{"partials/ comes first", "{{> greeting}}", true, "Hello World! World World"},
		{"hegel's partials/NAME spelling", "{{> partials/style}}", true, "Tree"},
		{"include", "{{templates/footer}}", false, "A footer for SPEC."},
		{"nested includes", "{{templates/outer}}", false, "Outer\nInner SPEC\nend"},
		{"include named by a value", "{{templates/style_{{code_map_style}}}}", false, "One file per directory."},
		{"include named by ?value", "{{templates/style_{{?code_map_style}}}}", true, "One file per directory."},
		{"include named by context.value", "{{templates/style_{{context.code_map_style}}}}", true, "One file per directory."},
		{"guide's includes are filled in, the rest as written", "{{CUSTOM_GUIDE}}", false, "# Custom\n\nOne file per directory.\n\nEnd {{not_expanded}}."},
		{"?prompt is the context file", "{{?prompt}}|{{prompt}}", false, "from prompt.md|run prompt"},
		{"?context is the context file", "{{?context}}|{{context}}", false, "from context.md|run ctx"},
		{"a value is never a template", "{{?shell}}", false, "{{templates/footer}}"},
		{"escaped include is text", `\{{templates/footer}}`, false, "{{templates/footer}}"},
	}
	d := RenderData{Prompt: "run prompt", Context: "run ctx"}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := renderWith(t, tc.src, tc.hbs, hegelGuides(), d)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTemplateHegelIncludeRecords(t *testing.T) {
	tp, err := ParseTemplate("a\n{{templates/footer}}\n{{templates/x_{{v}}}}", false)
	if err != nil {
		t.Fatal(err)
	}
	want := []IncludeRef{{"footer", 2, false}, {"x_{{v}}", 3, true}}
	if len(tp.Includes) != 2 || tp.Includes[0] != want[0] || tp.Includes[1] != want[1] {
		t.Errorf("includes %+v", tp.Includes)
	}
	if !strings.Contains(strings.Join(tp.Optional, ","), "v") {
		t.Errorf("optional %v", tp.Optional)
	}
}

// Every name that could leave the guides directory is refused at load, or
// at render when a value builds it; nothing is read.
func TestTemplateHostileNames(t *testing.T) {
	load := []struct {
		src  string
		hbs  bool
		want string
	}{
		{"{{../../../etc/passwd}}", false, "line 1: {{../../../etc/passwd}}: path traversal is not allowed"},
		{"{{../../../etc/passwd}}", true, "line 1: {{../../../etc/passwd}}: path traversal is not allowed"},
		{"x\n{{../x}}", false, "line 2: {{../x}}: path traversal is not allowed"},
		{"{{etc/passwd}}", true, "line 1: {{etc/passwd}}: a name has no '/'"},
		{"{{templates/../../etc/passwd}}", false, "line 1: {{templates/../../etc/passwd: path traversal is not allowed"},
		{"{{templates/a/b}}", false, "line 1: {{templates/a/b: path traversal is not allowed"},
		{"{{templates/..}}", true, "line 1: {{templates/..: path traversal is not allowed"},
		{"{{templates/x y}}", false, "line 1: {{templates/x y: an include is {{templates/NAME}}"},
		{"{{templates/}}", false, "line 1: {{templates/}}: an include needs a name"},
		{"{{> ../../etc/passwd}}", true, "line 1: partial {{> ../../etc/passwd}}: path traversal is not allowed"},
		{"{{> partials/../x}}", true, "line 1: template syntax: Invalid path: partials/.."},
		{"{{> other/x}}", true, "line 1: partial {{> other/x}}: path traversal is not allowed"},
		{"{{> Bad}}", true, "line 1: partial {{> Bad}}: invalid name"},
		{"x{{this}}y", false, "line 1: {{this}} outside a block names the whole data model"},
		{"x{{this}}y", true, "line 1: {{this}} outside a block names the whole data model"},
		{"{{@root}}", true, "line 1: {{@root}} is the whole data model"},
		{`{{hegel_include "x"}}`, true, `line 1: unknown helper "hegel_include"`},
		{"{{context.a.b}}", true, `line 1: "context" has no fields`},
	}
	for _, tc := range load {
		_, err := ParseTemplate(tc.src, tc.hbs)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q (hbs %v): got %v\nwant %s…", tc.src, tc.hbs, err, tc.want)
		}
	}
	// Block-relative names stay legal where a block gives them a meaning.
	for _, ok := range []string{"{{#each items}}{{this}}{{../flag}}{{/each}}", "{{#with obj}}{{name}}{{/with}}"} {
		if _, err := ParseTemplate(ok, true); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	// A value that builds a name outside templates/ is a render error.
	for _, src := range []string{"{{templates/{{evil}}}}", "{{templates/x_{{nothing}}}}"} {
		_, err := renderWith(t, src, false, hegelGuides(), RenderData{})
		if err == nil {
			t.Errorf("%q rendered", src)
			continue
		}
		t.Log(err)
	}
	_, err := renderWith(t, "{{templates/{{evil}}}}", false, hegelGuides(), RenderData{})
	if err == nil || !strings.Contains(err.Error(), `"../../etc/passwd" is not a template name`) || !strings.Contains(err.Error(), "path traversal is not allowed") {
		t.Errorf("value traversal: %v", err)
	}
	_, err = renderWith(t, "{{templates/x_{{nothing}}}}", false, hegelGuides(), RenderData{})
	if err == nil || !strings.Contains(err.Error(), "w.yaml:1: node \"n\": {{templates/x_{{nothing}}}}: no value for nothing") {
		t.Errorf("missing value: %v", err)
	}
	_, err = renderWith(t, "{{templates/loop_a}}", false, hegelGuides(), RenderData{})
	if err == nil || !strings.Contains(err.Error(), "{{templates/loop_a}} includes itself (loop_a > loop_b > loop_a)") {
		t.Errorf("include cycle: %v", err)
	}
	_, err = renderWith(t, "{{templates/missing}}", false, hegelGuides(), RenderData{})
	if err == nil || !strings.Contains(err.Error(), "unknown template {{templates/missing}}: no .hegel/guides/templates/missing.md") {
		t.Errorf("missing include: %v", err)
	}
}

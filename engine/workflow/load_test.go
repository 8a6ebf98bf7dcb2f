package workflow

import (
	"fmt"
	"strings"
	"testing"
)

// y joins lines so each case's line numbers can be read off its source.
func y(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

// twoNodes is a valid definition; cases below break one thing at a time.
var twoNodes = []string{
	"start_node: spec", // 1
	"nodes:",           // 2
	"  spec:",          // 3
	"    summary: Write it",
	"    prompt: Do the spec.",
	"    transitions:", // 6
	"      - when: spec_complete",
	"        to: plan", // 8
	"  plan:",          // 9
	"    prompt: Do the plan.",
	"    transitions:", // 11
	"      - when: plan_complete",
	"        to: done", // 13
}

// edit returns twoNodes with line n (1-based) replaced by repl (any number
// of lines, none to delete it).
func edit(n int, repl ...string) string {
	out := append([]string{}, twoNodes[:n-1]...)
	out = append(out, repl...)
	out = append(out, twoNodes[n:]...)
	return y(out...)
}

func TestParseWorkflowErrors(t *testing.T) {
	long := strings.Repeat("a", 65)
	tests := []struct {
		name string
		yaml string
		want string
	}{
		// YAML itself.
		{"syntax", y("start_node: spec", "nodes:", "  spec: [a", "  plan: b"),
			`wf.yaml:3: invalid YAML: did not find expected ',' or ']'`},
		{"tab indent", y("start_node: spec", "nodes:", "\tspec: {}"),
			`wf.yaml:3: invalid YAML: found character that cannot start any token`},
		{"unclosed at end of file", "[a", `wf.yaml:1: invalid YAML: did not find expected ',' or ']'`},
		{"unclosed before last line", "a: [b,\nc: d\n", `wf.yaml:2: invalid YAML: did not find expected ',' or ']'`},
		{"bad dedent", "a:\n  b: c\n d: e\n", `wf.yaml:3: invalid YAML: did not find expected key`},
		{"unknown anchor", edit(8, "        to: *nope"),
			`wf.yaml:8: invalid YAML: unknown anchor 'nope' referenced`},
		{"two documents", y(append(append([]string{}, twoNodes...), "---", "mode: x")...),
			`wf.yaml:14: more than one YAML document; a workflow file holds exactly one`},
		{"empty", "", `wf.yaml:1: empty workflow definition`},
		{"only comments", "# nothing\n# here\n", `wf.yaml:1: empty workflow definition`},
		{"null document", "---\n~\n", `wf.yaml:1: empty workflow definition`},
		{"not a mapping", y("- spec", "- plan"), `wf.yaml:1: the top level must be a mapping, got a list`},

		// Top level.
		{"unknown key typo", edit(2, "nodse:"), `wf.yaml:2: unknown top-level key "nodse" (did you mean "nodes"?)`},
		{"unknown key", y(append([]string{"color: red"}, twoNodes...)...),
			`wf.yaml:1: unknown top-level key "color" (expected one of name, mode, start_node, nodes, task_types, default_task_type, max_rollbacks)`},
		{"long unknown key is shortened", y(append([]string{strings.Repeat("x", 200) + ": 1"}, twoNodes...)...),
			`wf.yaml:1: unknown top-level key "` + strings.Repeat("x", 80) + `"... (expected one of name, mode, start_node, nodes, task_types, default_task_type, max_rollbacks)`},
		{"complex key", y(append([]string{"? [a, b]", ": c"}, twoNodes...)...),
			`wf.yaml:1: top-level key must be a string, got a list`},
		{"merge key", y(append([]string{"<<: {mode: x}"}, twoNodes...)...),
			`wf.yaml:1: merge keys (<<) are not supported`},
		{"duplicate top-level key", y(append([]string{"mode: a", "mode: b"}, twoNodes...)...),
			`wf.yaml:2: duplicate top-level key "mode" (first at line 1)`},
		{"empty mode", y(append([]string{"mode: ''"}, twoNodes...)...), `wf.yaml:1: "mode" is empty`},
		{"multi-line mode", y(append([]string{"mode: |", "  a", "  b"}, twoNodes...)...),
			`wf.yaml:1: "mode" must be a single line`},
		{"missing nodes", y("start_node: spec"), `wf.yaml:1: missing nodes`},
		{"null nodes", y("start_node: spec", "nodes:"), `wf.yaml:2: no nodes defined`},
		{"empty nodes", y("start_node: spec", "nodes: {}"), `wf.yaml:2: no nodes defined`},
		{"nodes is a list", y("start_node: spec", "nodes:", "  - spec"), `wf.yaml:3: "nodes" must be a mapping, got a list`},
		{"missing start_node", edit(1), `wf.yaml:1: missing start_node`},
		{"unknown start_node", edit(1, "start_node: spc"), `wf.yaml:1: start_node "spc" is not a defined node`},
		{"terminal start_node", edit(1, "start_node: done"), `wf.yaml:1: start_node "done" is not a defined node`},
		{"empty start_node", edit(1, "start_node:"), `wf.yaml:1: "start_node" is empty`},
		{"start_node list", edit(1, "start_node: [spec]"), `wf.yaml:1: "start_node" must be a string, got a list`},

		// Node names.
		{"duplicate node", edit(13, "        to: done", "  plan:", "    prompt: again", "    transitions: [{when: x, to: done}]"),
			`wf.yaml:14: node "plan" defined twice (first at line 9)`},
		{"done with transitions", edit(9, "  done:"),
			`wf.yaml:11: node "done": done ends the workflow and cannot have transitions; rename the node`},
		{"aborted with transitions", edit(9, "  aborted:"),
			`wf.yaml:11: node "aborted": aborted ends the workflow and cannot have transitions; rename the node`},
		{"uppercase node name", edit(9, "  Plan:"), `wf.yaml:9: invalid node name "Plan": ` + nameRule},
		{"node name with space", edit(9, "  the plan:"), `wf.yaml:9: invalid node name "the plan": ` + nameRule},
		{"node name leading dash", edit(9, "  -plan:"), `wf.yaml:9: invalid node name "-plan": ` + nameRule},
		{"node name too long", edit(9, "  "+long+":"), `wf.yaml:9: invalid node name "` + long + `": ` + nameRule},

		// Node bodies.
		{"node not a mapping", y(append(append([]string{}, twoNodes[:8]...), "  plan: write a plan")...), `wf.yaml:9: node "plan" must be a mapping, got "write a plan"`},
		{"null node", y("start_node: spec", "nodes:", "  spec:"), `wf.yaml:3: node "spec" must be a mapping, got nothing`},
		{"unknown node key typo", edit(10, "    promt: Do the plan."),
			`wf.yaml:10: node "plan": unknown key "promt" (did you mean "prompt"?)`},
		{"duplicate node key", edit(10, "    prompt: a", "    prompt: b"),
			`wf.yaml:11: node "plan": duplicate key "prompt" (first at line 10)`},
		{"missing prompt", edit(10), `wf.yaml:9: node "plan": missing prompt`},
		{"empty prompt", edit(10, `    prompt: ""`), `wf.yaml:10: node "plan": prompt is empty`},
		{"null prompt", edit(10, "    prompt:"), `wf.yaml:10: node "plan": prompt is empty`},
		{"blank prompt", edit(10, "    prompt: |", "", "      ", ""), `wf.yaml:10: node "plan": prompt is empty`},
		{"prompt list", edit(10, "    prompt: [a]"), `wf.yaml:10: node "plan": "prompt" must be a string, got a list`},
		{"multi-line summary", edit(4, "    summary: |", "      one", "      two"),
			`wf.yaml:4: node "spec": "summary" must be a single line`},

		// Transitions.
		{"transitions mapping", y(append(append([]string{}, twoNodes[:11]...), "      when: plan_complete", "      to: done")...),
			`wf.yaml:12: node "plan": "transitions" must be a list, got a mapping`},
		{"transition not a mapping", y(append(append([]string{}, twoNodes[:11]...), "      - done")...),
			`wf.yaml:12: node "plan": each transition must be a mapping, got "done"`},
		{"missing when", y(append(append([]string{}, twoNodes[:11]...), "      - to: done")...), `wf.yaml:12: node "plan": transition is missing "when"`},
		{"missing to", edit(13), `wf.yaml:12: node "plan": transition is missing "to"`},
		{"empty when", edit(12, `      - when: ""`), `wf.yaml:12: node "plan": transition has an empty "when"`},
		{"null to", edit(13, "        to:"), `wf.yaml:13: node "plan": transition has an empty "to"`},
		{"when list", edit(12, "      - when: [a]"), `wf.yaml:12: node "plan": "when" must be a string, got a list`},
		{"invalid claim", edit(12, "      - when: Plan Done"), `wf.yaml:12: node "plan": invalid claim "Plan Done": ` + nameRule},
		{"unknown transition key", edit(13, "        too: done"),
			`wf.yaml:13: node "plan": unknown transition key "too" (expected one of when, to, confirm)`},
		{"duplicate transition key", edit(13, "        to: done", "        to: spec"),
			`wf.yaml:14: node "plan": duplicate transition key "to" (first at line 13)`},

		// The graph.
		{"unknown target", edit(8, "        to: cod"), `wf.yaml:8: node "spec": transition to unknown node "cod"`},
		{"unreachable", y(append(append([]string{}, twoNodes...), "  extra:", "    prompt: x", "    transitions: [{when: a, to: done}]")...),
			`wf.yaml:14: node "extra" is unreachable from start_node "spec"`},
		{"too many transitions via aliases", tooManyTransitions(),
			`wf.yaml:1015: too many transitions (more than 10000 in one file)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Strict: unknown keys are errors, as before hegel's format.
			w, err := ParseWith("wf", "wf.yaml", []byte(tc.yaml), ParseOptions{Strict: true})
			if err == nil {
				t.Fatalf("parsed without error:\n%s\nnodes: %v", tc.yaml, w.Order)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n got: %s\nwant: %s\nyaml:\n%s", err, tc.want, tc.yaml)
			}
		})
	}
}

func TestParseWorkflowBadName(t *testing.T) {
	for _, name := range []string{"", "Foo", "a.b", "a/b", strings.Repeat("x", 65)} {
		_, err := Parse(name, "x.yaml", []byte(y(twoNodes...)))
		want := `x.yaml:1: invalid workflow name "` + name + `": ` + nameRule
		if err == nil || err.Error() != want {
			t.Errorf("name %q: got %v, want %s", name, err, want)
		}
	}
}

func TestParseWorkflowValid(t *testing.T) {
	src := y(twoNodes...)
	w, err := Parse("wf", "dir/wf.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if w.Name != "wf" || w.Mode != "wf" || w.StartNode != "spec" || w.Source != "dir/wf.yaml" {
		t.Errorf("got name %q mode %q start %q source %q", w.Name, w.Mode, w.StartNode, w.Source)
	}
	if string(w.Raw) != src {
		t.Errorf("Raw differs from input")
	}
	if got := strings.Join(w.Order, ","); got != "spec,plan" {
		t.Errorf("Order = %s", got)
	}
	spec := w.Nodes["spec"]
	if spec.Name != "spec" || spec.Summary != "Write it" || spec.Prompt != "Do the spec." {
		t.Errorf("spec node = %+v", spec)
	}
	if w.Summary("plan") != "" {
		t.Errorf("plan has no summary, got %q", w.Summary("plan"))
	}
}

func TestParseWorkflowDetails(t *testing.T) {
	src := y(
		"mode: Exploring things",
		"start_node: a",
		"nodes:",
		"  a:",
		"    prompt: |",
		"      Line one.",
		"        indented",
		"",
		"",
		"    transitions: &out",
		"      - when: go",
		"        to: b",
		"      - when: go", // a duplicate claim is allowed; the first wins
		"        to: done",
		"      - when: 'give_up'",
		"        to: aborted",
		"  '7':",
		"    summary: numeric names are names too",
		"    prompt: x",
		"    transitions: [{when: '1', to: done}]",
		"  b:",
		"    prompt: *p",
		"    transitions: *out",
	)
	// The alias in b must refer to an anchor defined earlier.
	src = strings.Replace(src, "prompt: x", "prompt: &p Shared text", 1)
	src = strings.Replace(src, "to: done\n      - when: 'give_up'", "to: '7'\n      - when: 'give_up'", 1)
	w, err := Parse("details", "d.yaml", []byte(src))
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	if w.Mode != "Exploring things" {
		t.Errorf("Mode = %q", w.Mode)
	}
	if got, want := w.Prompt("a"), "Line one.\n  indented"; got != want {
		t.Errorf("prompt a = %q, want %q (trailing blank lines trimmed)", got, want)
	}
	if got := w.Prompt("b"); got != "Shared text" {
		t.Errorf("prompt b via alias = %q", got)
	}
	if len(w.Nodes["b"].Transitions) != 3 {
		t.Errorf("b transitions via alias = %v", w.Nodes["b"].Transitions)
	}
	if got := strings.Join(w.Order, ","); got != "a,7,b" {
		t.Errorf("Order = %s", got)
	}
}

// tooManyTransitions shares one list of 1000 transitions between 11 nodes.
func tooManyTransitions() string {
	lines := []string{"start_node: n0", "nodes:", "  n0:", "    prompt: p", "    transitions: &t"}
	for i := 0; i < 1000; i++ {
		lines = append(lines, "      - {when: w, to: done}")
	}
	for i := 1; i <= 10; i++ {
		lines = append(lines, fmt.Sprintf("  n%d: {prompt: p, transitions: *t}", i))
	}
	return y(lines...)
}

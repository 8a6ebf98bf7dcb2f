package workflow

import (
	"slices"
	"strings"
	"testing"
)

func TestBuiltins(t *testing.T) {
	want := map[string][]string{
		"cowboy":          {"ride"},
		"discovery":       {"spec", "plan", "code", "learnings", "readme"},
		"execution":       {"spec", "plan", "code", "code_review", "readme"},
		"init-greenfield": {"instructions", "vision", "architecture", "kickoff", "first_commit"},
		"init-retrofit":   {"survey", "instructions", "code_map", "architecture", "handoff"},
		"minimal":         {"spec", "plan"},
		"refactor":        {"review", "refactor", "code_review"},
		"research":        {"plan", "study", "assess", "questions"},
		"pipeline":        {"pm", "design", "preflight", "dev", "migration", "test", "contract", "qa", "benchmark", "security", "review", "docs"},
		// The step workflows, which git hegel run executes.
		"ask":              {"query"},
		"summarize":        {"summarize"},
		"generate":         {"generate"},
		"multi_file":       {"plan", "confirm", "execute"},
		"analyze-refactor": {"analyze", "refactor"},
	}
	modes := map[string]string{"init-greenfield": "init", "init-retrofit": "init"}
	ws := Builtins()
	var names []string
	for _, w := range ws {
		names = append(names, w.Name)
	}
	if !slices.IsSorted(names) || len(names) != len(want) {
		t.Fatalf("built-ins = %v, want sorted %d", names, len(want))
	}
	for _, w := range ws {
		order, ok := want[w.Name]
		if !ok {
			t.Errorf("unexpected built-in %q", w.Name)
			continue
		}
		if !slices.Equal(w.Order, order) {
			t.Errorf("%s: order %v, want %v", w.Name, w.Order, order)
		}
		steps := slices.Contains([]string{"ask", "summarize", "generate", "multi_file", "analyze-refactor"}, w.Name)
		if w.Runnable() != steps {
			t.Errorf("%s: Runnable() = %v", w.Name, w.Runnable())
		}
		mode := w.Name
		if m, ok := modes[w.Name]; ok {
			mode = m
		}
		if w.Mode != mode || w.Source != "built-in" || w.StartNode != order[0] {
			t.Errorf("%s: mode %q source %q start %q", w.Name, w.Mode, w.Source, w.StartNode)
		}
		// The stored copy of a built-in must parse back to the same thing,
		// since tasks re-parse it on every command.
		again, err := Parse(w.Name, "stored", w.Raw)
		if err != nil {
			t.Fatalf("%s: re-parse: %v", w.Name, err)
		}
		again.Source = w.Source
		assertSameWorkflow(t, again, w)
		// The default claim moves each node to the next in order, the last
		// to done; "git hegel next" without a claim relies on it.
		for i, n := range order {
			next := NodeDone
			if i+1 < len(order) {
				next = order[i+1]
			}
			if to, ok := w.Transition(n, n+"_complete"); !ok || to != next {
				t.Errorf("%s: %s_complete -> %q (ok=%v), want %q", w.Name, n, to, ok, next)
			}
			if s := w.Summary(n); s == "" || strings.Contains(s, "\n") {
				t.Errorf("%s/%s: summary %q", w.Name, n, s)
			}
			// A stage's prompt is for whoever works through it; a step's
			// goes to an adapter, and git hegel run moves on by itself.
			if p := w.Prompt(n); w.Nodes[n].Run == nil && !strings.Contains(p, "git hegel next") && !strings.Contains(p, "git hegel done") {
				t.Errorf("%s/%s: prompt does not say how to move on", w.Name, n)
			}
		}
		reach := reachableNodes(w)
		for _, n := range order {
			if !reach[n] {
				t.Errorf("%s: %s is unreachable", w.Name, n)
			}
			if !reachesDone(w, n) {
				t.Errorf("%s: %s cannot reach done", w.Name, n)
			}
		}
	}
}

func TestResearchStudyLoops(t *testing.T) {
	w := builtin(t, "research")
	want := []Transition{{When: "continue_study", To: "study"}, {When: "study_complete", To: "assess"}}
	if got := w.Nodes["study"].Transitions; !slices.Equal(got, want) {
		t.Errorf("study transitions = %v, want %v", got, want)
	}
}

func TestWorkflowMethods(t *testing.T) {
	w := builtin(t, "minimal")
	for _, n := range []string{NodeDone, NodeAborted} {
		if !w.IsTerminal(n) || !w.HasNode(n) {
			t.Errorf("%s: terminal %v has %v", n, w.IsTerminal(n), w.HasNode(n))
		}
		if p := w.Prompt(n); !strings.Contains(p, "git hegel start <workflow>") {
			t.Errorf("%s prompt %q", n, p)
		}
		if w.Summary(n) == "" {
			t.Errorf("%s has no summary", n)
		}
		if _, ok := w.Transition(n, n+"_complete"); ok {
			t.Errorf("%s has a transition", n)
		}
	}
	if w.IsTerminal("spec") || !w.HasNode("spec") || w.HasNode("code") {
		t.Error("IsTerminal/HasNode wrong for spec or code")
	}
	if w.Prompt("code") != "" || w.Summary("code") != "" {
		t.Error("unknown node has a prompt or summary")
	}
}

func TestTransitionFirstMatchWins(t *testing.T) {
	w, err := Parse("t", "t.yaml", []byte(y(
		"start_node: a",
		"nodes:",
		"  a:",
		"    prompt: p",
		"    transitions:",
		"      - {when: go, to: b}",
		"      - {when: go, to: done}",
		"      - {when: stop, to: aborted}",
		"  b:",
		"    prompt: p",
		"    transitions: [{when: b_complete, to: done}]",
	)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		node, claim, to string
		ok              bool
	}{
		{"a", "go", "b", true},
		{"a", "stop", NodeAborted, true},
		{"a", "a_complete", "", false},
		{"a", "", "", false},
		{"b", "go", "", false},
		{"nope", "go", "", false},
	} {
		to, ok := w.Transition(tc.node, tc.claim)
		if to != tc.to || ok != tc.ok {
			t.Errorf("Transition(%q, %q) = %q, %v; want %q, %v", tc.node, tc.claim, to, ok, tc.to, tc.ok)
		}
	}
}

func TestRegistry(t *testing.T) {
	custom := []byte(y(
		"mode: custom discovery",
		"start_node: think",
		"nodes:",
		"  think:",
		"    prompt: Think.",
		"    transitions: [{when: think_complete, to: done}]",
	))
	r, err := NewRegistry(map[string][]byte{
		".hegel/workflows/discovery.yaml": custom,
		".hegel/workflows/mine.yml":       custom,
	})
	if err != nil {
		t.Fatal(err)
	}
	d, ok := r.Get("discovery")
	if !ok || d.Mode != "custom discovery" || d.Source != ".hegel/workflows/discovery.yaml" || d.StartNode != "think" {
		t.Errorf("discovery not overridden: %+v", d)
	}
	m, ok := r.Get("mine")
	if !ok || m.Name != "mine" || m.Source != ".hegel/workflows/mine.yml" {
		t.Errorf("mine = %+v, %v", m, ok)
	}
	if e, ok := r.Get("execution"); !ok || e.Source != "built-in" {
		t.Errorf("execution = %+v, %v", e, ok)
	}
	if _, ok := r.Get("nope"); ok {
		t.Error("Get(nope) found something")
	}
	var names []string
	for _, w := range r.List() {
		names = append(names, w.Name)
	}
	want := []string{"analyze-refactor", "ask", "cowboy", "discovery", "execution", "generate", "init-greenfield", "init-retrofit", "mine", "minimal", "multi_file", "pipeline", "refactor", "research", "summarize"}
	if !slices.Equal(names, want) {
		t.Errorf("List = %v, want %v", names, want)
	}
	// Overriding must not leak into the shared built-ins.
	if b := builtin(t, "discovery"); b.Source != "built-in" {
		t.Errorf("built-in discovery changed: %+v", b)
	}
}

func TestRegistryBrokenFiles(t *testing.T) {
	good := []byte(y(twoNodes...))
	tests := []struct {
		name   string
		files  map[string][]byte
		broken string // name or file:... key
		want   string
	}{
		{"invalid yaml", map[string][]byte{"w/a.yaml": []byte("nodes: ["), "w/c.yaml": good},
			"a", "w/a.yaml:1: invalid YAML: did not find expected node content"},
		{"bad extension", map[string][]byte{"w/notes.txt": good, "w/c.yaml": good}, "file:w/notes.txt", "w/notes.txt:1: workflow files must end in .yaml or .yml"},
		{"bad name", map[string][]byte{"w/My Flow.yaml": good, "w/c.yaml": good}, "file:w/My Flow.yaml", `w/My Flow.yaml:1: invalid workflow name "My Flow": ` + nameRule},
		{"yaml and yml", map[string][]byte{"w/x.yml": good, "w/x.yaml": good, "w/c.yaml": good}, "file:w/x.yml", `w/x.yml:1: workflow "x" is already defined in w/x.yaml`},
		{"broken override hides the built-in", map[string][]byte{"w/discovery.yaml": []byte("start_node: x\n"), "w/c.yaml": good},
			"discovery", "w/discovery.yaml:1: missing nodes"},
		{"unknown guide", map[string][]byte{"w/g.yaml": []byte(y("start_node: a", "nodes:", "  a:", "    prompt: |", "      Read this.", "      {{NO_SUCH_GUIDE}}", "    transitions: [{when: a_complete, to: done}]")), "w/c.yaml": good},
			"g", `w/g.yaml:6: node "a": unknown guide {{NO_SUCH_GUIDE}} (no .hegel/guides/NO_SUCH_GUIDE.md and no built-in guide of that name; see 'git hegel guides')`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := LoadRegistry(tc.files, LoadOptions{})
			var got *BrokenFile
			for _, b := range r.Broken() {
				key := b.Name
				if key == "" {
					key = "file:" + b.Source
				}
				if key == tc.broken {
					got = b
				}
			}
			if got == nil || got.Err.Error() != tc.want {
				t.Fatalf("broken %s = %+v, want %s (all: %v)", tc.broken, got, tc.want, r.Broken())
			}
			// One broken file never blocks the others.
			if _, ok := r.Get("c"); !ok {
				t.Error("the good file c.yaml did not load")
			}
			if _, ok := r.Get("execution"); !ok {
				t.Error("the built-ins did not load")
			}
			if strings.HasPrefix(tc.broken, "discovery") {
				if _, ok := r.Get("discovery"); ok {
					t.Error("a broken override fell back to the built-in")
				}
			}
		})
	}
}

func TestRegistryNoUserFiles(t *testing.T) {
	r, err := NewRegistry(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.List()) != len(Builtins()) {
		t.Errorf("List has %d, built-ins %d", len(r.List()), len(Builtins()))
	}
}

func builtin(t *testing.T, name string) *Definition {
	t.Helper()
	for _, w := range Builtins() {
		if w.Name == name {
			return w
		}
	}
	t.Fatalf("no built-in %q", name)
	return nil
}

// reachableNodes is computed independently of the parser's own check, so a
// bug there cannot hide itself.
func reachableNodes(w *Definition) map[string]bool {
	reach := map[string]bool{w.StartNode: true}
	for grew := true; grew; {
		grew = false
		for name := range reach {
			for _, tr := range w.Nodes[name].Transitions {
				if _, ok := w.Nodes[tr.To]; ok && !reach[tr.To] {
					reach[tr.To], grew = true, true
				}
			}
		}
	}
	return reach
}

func reachesDone(w *Definition, from string) bool {
	seen := map[string]bool{}
	var walk func(string) bool
	walk = func(n string) bool {
		if n == NodeDone {
			return true
		}
		if seen[n] {
			return false
		}
		seen[n] = true
		for _, tr := range w.Nodes[n].Transitions {
			if walk(tr.To) {
				return true
			}
		}
		return false
	}
	return walk(from)
}

func assertSameWorkflow(t *testing.T, got, want *Definition) {
	t.Helper()
	if got.Name != want.Name || got.Mode != want.Mode || got.StartNode != want.StartNode ||
		got.Source != want.Source || string(got.Raw) != string(want.Raw) || !slices.Equal(got.Order, want.Order) {
		t.Fatalf("workflows differ:\n got %+v\nwant %+v", got, want)
	}
	if len(got.Nodes) != len(want.Nodes) {
		t.Fatalf("node count %d, want %d", len(got.Nodes), len(want.Nodes))
	}
	for name, wn := range want.Nodes {
		gn := got.Nodes[name]
		if gn == nil || gn.Name != wn.Name || gn.Summary != wn.Summary || gn.Prompt != wn.Prompt ||
			!slices.Equal(gn.Transitions, wn.Transitions) {
			t.Fatalf("node %q differs:\n got %+v\nwant %+v", name, gn, wn)
		}
	}
}

// The trust check tells a built-in definition by its bytes without
// parsing: those bytes must be exactly what the parsed built-ins hold.
func TestBuiltinSourcesAreTheBuiltins(t *testing.T) {
	src := BuiltinSources()
	wfs := Builtins()
	if len(src) != len(wfs) {
		t.Fatalf("%d sources for %d built-in workflows", len(src), len(wfs))
	}
	for _, w := range wfs {
		if string(src[w.Name]) != string(w.Raw) {
			t.Errorf("%s: the source differs from the parsed definition's bytes", w.Name)
		}
	}
}

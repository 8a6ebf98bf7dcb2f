package workflow

import (
	"bytes"
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// errPrefix is the shape every definition error must start with.
var errPrefix = regexp.MustCompile(`^fuzz\.yaml:[1-9][0-9]*: \S`)

func FuzzParseWorkflow(f *testing.F) {
	files, err := fs.Glob(builtinFS, "builtin/*.yaml")
	if err != nil || len(files) == 0 {
		f.Fatalf("no built-ins: %v", err)
	}
	for _, name := range files {
		data, err := builtinFS.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"",
		"start_node: a\nnodes:\n  a:\n    prompt: x\n    transitions: [{when: a_complete, to: done}]\n",
		"start_node: a\nnodes:\n  a: &n\n    prompt: x\n    transitions: [{when: go, to: a}]\n  b: *n\n",
		"start_node: a\nnodes: {a: {prompt: x, transitions: [{when: w, to: nowhere}]}}\n",
		"start_node: a\nnodes:\n  a:\n  a:\n",
		"nodes: [\n",
		"a: &a [*a]\n",
		"---\n---\n",
		"start_node: done\nnodes:\n  done: {}\n",
		"<<: {mode: x}\n",
		"\tstart_node: a\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		input := bytes.Clone(data)
		w, err := Parse("fuzz", "fuzz.yaml", data)
		if err != nil {
			msg := err.Error()
			if bytes.ContainsAny([]byte(msg), "\r\n") || !errPrefix.MatchString(msg) {
				t.Fatalf("malformed error %q", msg)
			}
			return
		}
		if !bytes.Equal(w.Raw, input) {
			t.Fatal("Raw differs from input")
		}
		if _, ok := w.Nodes[w.StartNode]; !ok {
			t.Fatalf("start node %q not defined", w.StartNode)
		}
		if len(w.Order) != len(w.Nodes) {
			t.Fatalf("Order %v vs %d nodes", w.Order, len(w.Nodes))
		}
		for _, name := range w.Order {
			n := w.Nodes[name]
			promptless := n != nil && n.Run != nil && n.Run.Kind != HandlerAdapter // a command or a question
			if n == nil || n.Name != name || !validName(name) || (n.Prompt == "" && !promptless) || len(n.Transitions) == 0 {
				t.Fatalf("bad node %q: %+v", name, n)
			}
			for _, tr := range n.Transitions {
				if !w.HasNode(tr.To) || !validName(tr.When) {
					t.Fatalf("node %q: bad transition %+v", name, tr)
				}
			}
		}
		reach := reachableNodes(w)
		for _, name := range w.Order {
			if !reach[name] {
				t.Fatalf("node %q unreachable", name)
			}
		}
		again, err := Parse("fuzz", "fuzz.yaml", w.Raw)
		if err != nil {
			t.Fatalf("re-parse failed: %v", err)
		}
		assertSameWorkflow(t, again, w)
	})
}

// FuzzShellCommand: a command that loads holds no placeholder, and what
// runs is the text as written with each `\{{` read as `{{`.
func FuzzShellCommand(f *testing.F) {
	for _, s := range []string{"make", "echo {{prompt}}", `docker inspect --format '\{{.State}}'`, "a {{", `\{{{{x}}`, "{{{prompt}}}", "x\n{{vars.a}}", "{{\r", "{{\xff\xfe" + strings.Repeat("x", 70)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		cmd, line, err := shellCommand(src)
		if err != nil {
			if line < 0 || line > strings.Count(src, "\n") || strings.ContainsAny(err.Error(), "\r\n") {
				t.Fatalf("error %q at line %d", err, line)
			}
			return
		}
		if strings.Contains(strings.ReplaceAll(src, `\{{`, ""), "{{") {
			t.Fatalf("%q loaded with a placeholder", src)
		}
		if cmd != strings.ReplaceAll(src, `\{{`, "{{") {
			t.Fatalf("%q runs as %q", src, cmd)
		}
	})
}

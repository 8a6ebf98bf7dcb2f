package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// jsonMapFields hold maps keyed by data (node names, task types,
// workflows), not by field names: a path ending in one of these.
var jsonMapFields = []string{
	".retries", ".rounds", ".skips", ".step_results", ".workflow_breakdown", ".workflowBreakdown",
	"executions[].nodes", "meta_modes[].switch", "meta_modes[].transitions",
}

// jsonDocSections returns the text of docs/json.md's sections whose
// heading contains one of names, and of the other documents named
// (checkpoint and stash JSON are in docs/rollback.md and docs/stash.md).
func jsonDocSections(t *testing.T, names []string, docs ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "json.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, sec := range strings.Split(string(b), "\n## ")[1:] {
		head, _, _ := strings.Cut(sec, "\n")
		for _, n := range names {
			if strings.Contains(head, n) {
				out.WriteString(sec)
				break
			}
		}
	}
	for _, d := range docs {
		b, err := os.ReadFile(filepath.Join("..", "..", "docs", d))
		if err != nil {
			t.Fatal(err)
		}
		out.Write(b)
	}
	if out.Len() == 0 {
		t.Fatalf("docs/json.md has no section for %q", names)
	}
	return out.String()
}

// TestJSONFieldsDocumented: every field name the commands' --json prints
// for a task that went through a gate, a failure, a lock, a question, a
// stash and an abort is named in the section of docs/json.md (or the
// document) that describes that command, so a field added to the output
// without a word there fails here.
func TestJSONFieldsDocumented(t *testing.T) {
	if testing.Short() {
		t.Skip("runs git")
	}
	env := isolatedEnv(t)
	dir := t.TempDir()
	mustSh(t, env, dir, "git", "init", "-q")
	mustSh(t, env, dir, "git", "commit", "-q", "--allow-empty", "-m", "init")
	hegel := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := run(args, envFrom(dir, env, &out, &errb, nil)); code != 0 {
			t.Fatalf("git hegel %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
		}
		return out.String()
	}
	hegel("start", "pipeline", "--task", "login", "--type", "bug_fix", "-d", "Users cannot log in", "--priority", "high")
	os.MkdirAll(filepath.Join(dir, "hegel-tasks", "login"), 0o755)
	os.WriteFile(filepath.Join(dir, "hegel-tasks", "login", "SPEC.md"), []byte("spec\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "hegel-tasks", "login", "PLAN.md"), []byte("plan\n"), 0o644)
	hegel("next")
	hegel("approve", "-m", "ok")
	hegel("fail", "-m", "boom")
	hegel("lock", "src/")
	hegel("checkpoint", "-m", "by hand")
	hegel("stash", "-m", "later")
	hegel("start", "minimal", "--task", "notes")
	hegel("abort")
	hegel("stash", "pop")
	hegel("ask", "why?")

	for _, c := range []struct {
		args     []string
		sections []string // headings of docs/json.md that describe it
		docs     []string // other documents that describe it
	}{
		{[]string{"status", "--json", "-v"}, []string{"git hegel status"}, nil},
		{[]string{"tasks", "--json", "--archived"}, []string{"git hegel tasks", "git hegel status"}, nil},
		{[]string{"show", "--json"}, []string{"git hegel show", "git hegel status"}, []string{"rollback.md"}},
		{[]string{"show", "notes", "--json"}, []string{"git hegel show", "git hegel status"}, []string{"rollback.md"}},
		{[]string{"artifact", "login", "SPEC.md", "--json"}, []string{"git hegel artifact"}, nil},
		{[]string{"workflows", "--json"}, []string{"git hegel workflows"}, nil},
		{[]string{"workflows", "pipeline", "--json"}, []string{"git hegel workflows"}, nil},
		{[]string{"log", "--json"}, []string{"git hegel log --json"}, nil},
		{[]string{"log", "login", "--json"}, []string{"git hegel log <task> --json"}, nil},
		{[]string{"log", "login", "--node", "pm", "--json"}, []string{"git hegel log <task> --node"}, nil},
		{[]string{"stats", "--json"}, []string{"git hegel stats"}, nil},
		{[]string{"metrics", "--json"}, []string{"git hegel metrics"}, nil},
		{[]string{"guides", "--json"}, []string{"git hegel guides"}, nil},
		{[]string{"meta", "--list", "--json"}, []string{"git hegel meta"}, nil},
		{[]string{"meta", "--json"}, []string{"git hegel meta"}, nil},
		{[]string{"checkpoint", "list", "--json"}, nil, []string{"rollback.md"}},
		{[]string{"stash", "list", "--json", "--dropped"}, nil, []string{"stash.md"}},
		{[]string{"restore-task", "--json"}, []string{"git hegel restore-task"}, nil},
		{[]string{"undo", "--list", "--json"}, []string{"git hegel undo"}, nil},
		{[]string{"trust", "--list", "--json"}, []string{"git hegel trust"}, nil},
		{[]string{"check", "--json"}, []string{"git hegel check"}, nil},
		{[]string{"doctor", "--json"}, []string{"git hegel doctor"}, nil},
		{[]string{"gc", "--json"}, []string{"git hegel gc"}, nil},
	} {
		args := c.args
		text := jsonDocSections(t, c.sections, c.docs...)
		isNamed := func(key string) bool {
			return regexp.MustCompile("[`\"{,(\\s.]" + regexp.QuoteMeta(key) + "[`\"\\s,:})\\[]").MatchString(text)
		}
		var doc any
		out := hegel(args...)
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("git hegel %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		missing := map[string]bool{}
		var walk func(v any, path string)
		walk = func(v any, path string) {
			switch v := v.(type) {
			case map[string]any:
				for k, e := range v {
					if !isNamed(k) && !strings.HasSuffix(k, "_complete") {
						missing[path+"."+k] = true
					}
					if !slices.ContainsFunc(jsonMapFields, func(s string) bool { return strings.HasSuffix(path+"."+k, s) }) {
						walk(e, path+"."+k)
					}
				}
			case []any:
				for _, e := range v {
					walk(e, path+"[]")
				}
			}
		}
		walk(doc, "")
		if len(missing) > 0 {
			keys := make([]string, 0, len(missing))
			for k := range missing {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			t.Errorf("git hegel %s prints fields the documentation does not name: %s", strings.Join(args, " "), strings.Join(keys, ", "))
		}
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// jsonDocs are the documents that describe --json output: docs/json.md,
// and the two it leaves to the commands' own documents (checkpoint list
// and show in docs/rollback.md, stash list and show in docs/stash.md).
var jsonDocs = []string{"json.md", "rollback.md", "stash.md"}

// jsonMapFields hold maps keyed by data (node names, task types,
// workflows), not by field names.
var jsonMapFields = map[string]bool{
	"retries": true, "rounds": true, "skips": true, "step_results": true,
	"workflow_breakdown": true, "workflowBreakdown": true,
}

// TestJSONFieldsDocumented: every field name the commands' --json prints
// for a task that went through a gate, a failure, a lock, a question, a
// stash and an abort is named in the documentation, so a field added to
// the output without a word in docs/json.md fails here.
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

	var docs strings.Builder
	for _, d := range jsonDocs {
		b, err := os.ReadFile(filepath.Join("..", "..", "docs", d))
		if err != nil {
			t.Fatal(err)
		}
		docs.Write(b)
	}
	text := docs.String()
	named := map[string]bool{}
	isNamed := func(key string) bool {
		if v, ok := named[key]; ok {
			return v
		}
		re := regexp.MustCompile("[`\"{,(\\s.]" + regexp.QuoteMeta(key) + "[`\"\\s,:})\\[]")
		named[key] = re.MatchString(text)
		return named[key]
	}
	for _, args := range [][]string{
		{"status", "--json", "-v"},
		{"tasks", "--json", "--archived"},
		{"show", "--json"},
		{"show", "notes", "--json"},
		{"artifact", "login", "SPEC.md", "--json"},
		{"workflows", "--json"},
		{"workflows", "pipeline", "--json"},
		{"log", "--json"},
		{"log", "login", "--json"},
		{"stats", "--json"},
		{"metrics", "--json"},
		{"guides", "--json"},
		{"meta", "--list", "--json"},
		{"checkpoint", "list", "--json"},
		{"stash", "list", "--json", "--dropped"},
		{"restore-task", "--json"},
		{"undo", "--list", "--json"},
		{"trust", "--list", "--json"},
		{"check", "--json"},
		{"log", "login", "--node", "pm", "--json"},
		{"doctor", "--json"},
		{"gc", "--json"},
	} {
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
					if !jsonMapFields[k] {
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

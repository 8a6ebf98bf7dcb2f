package main

import (
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const noteWorkflow = `start_node: write
nodes:
  write:
    prompt: Write the note.
    produces: NOTE.md
    gate: approval
    transitions: [{when: write_complete, to: done}]
`

var (
	approveFormRe = regexp.MustCompile(`(?s)<form method="post" action="/task/[^"]+/approve" id="approve-form">(.*?)</form>`)
	hiddenRe      = regexp.MustCompile(`<input type="hidden" name="(\w+)" value="([^"]*)">`)
)

// approveForm is the approve form of a task page, as a browser would
// send it.
func approveForm(t *testing.T, page string) url.Values {
	t.Helper()
	m := approveFormRe.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no approve form:\n%s", page)
	}
	v := url.Values{}
	for _, h := range hiddenRe.FindAllStringSubmatch(m[1], -1) {
		v.Add(h[1], h[2])
	}
	return v
}

// The approve button approves what its page showed: a page left open
// while the task's artifact changed (a sync, here a new submission from
// the terminal, which this clone even wrote itself) cannot approve the
// new content; reloaded, it can. The CSRF check still comes first.
func TestWebApproveStaleForm(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	env := append(isolatedEnv(t), "GIT_HEGEL_DATE=")
	dir := t.TempDir()
	mustSh(t, env, dir, "git", "init", "-q")
	mustSh(t, env, dir, "git", "commit", "-q", "--allow-empty", "-m", "init")
	os.MkdirAll(filepath.Join(dir, ".hegel", "workflows"), 0o755)
	os.WriteFile(filepath.Join(dir, ".hegel", "workflows", "note.yaml"), []byte(noteWorkflow), 0o644)
	note := filepath.Join(dir, "NOTE.md")
	os.WriteFile(note, []byte("v1\n"), 0o644)
	mustSh(t, env, dir, "git", "hegel", "start", "note", "--task", "doc")
	mustSh(t, env, dir, "git", "hegel", "next")
	v1 := strings.TrimSpace(mustSh(t, env, dir, "git", "hash-object", note))

	w, printed := newWebClient(t, dir, env)
	w.login(printed)
	// The task page and the artifact page count as shown here.
	seen := filepath.Join(dir, ".git", "hegel", "seen")
	for _, page := range []string{"/task/doc", "/task/doc/artifact/NOTE.md?node=write"} {
		os.Remove(seen)
		wantPage(t, w.get(page), 200)
		if b, _ := os.ReadFile(seen); !strings.Contains(string(b), "\n"+v1+" doc\n") {
			t.Errorf("%s did not record %s as seen: %q", page, v1, b)
		}
	}
	old := approveForm(t, w.get("/task/doc").Body.String())
	if old.Get("gate") != "write" || len(old["blob"]) != 1 || old.Get("blob") != v1 || old.Get("csrf") == "" {
		t.Fatalf("the form does not carry what the page showed: %v (want blob %s)", old, v1)
	}

	// The artifact changes while the page is open.
	mustSh(t, env, dir, "git", "hegel", "reject", "-m", "more")
	os.WriteFile(note, []byte("v2, with more\n"), 0o644)
	mustSh(t, env, dir, "git", "hegel", "next")
	v2 := strings.TrimSpace(mustSh(t, env, dir, "git", "hash-object", note))
	before := refOf(t, env, dir, "doc")

	noCSRF := url.Values{"gate": old["gate"], "blob": old["blob"]}
	wantPage(t, w.post("/task/doc/approve", noCSRF), http.StatusForbidden, "CSRF")
	wantPage(t, w.post("/task/doc/approve", old), http.StatusConflict,
		"NOTE.md (node write) is at blob "+v2[:12]+" now, which this page did not show; nothing changed: reload the page and look again")
	moved := url.Values{"csrf": old["csrf"], "gate": {"elsewhere"}, "blob": {v2}}
	wantPage(t, w.post("/task/doc/approve", moved), http.StatusConflict, "Task doc waits at &#39;write&#39; now, not at the gate this page showed")
	if refOf(t, env, dir, "doc") != before {
		t.Fatal("a stale form's approval moved the task's ref")
	}

	// Reloaded: the form carries v2 and approves it.
	fresh := approveForm(t, w.get("/task/doc").Body.String())
	if fresh.Get("blob") != v2 {
		t.Fatalf("reloaded form: %v (want blob %s)", fresh, v2)
	}
	rec := w.post("/task/doc/approve", fresh)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("approve: %d\n%s", rec.Code, rec.Body)
	}
	wantPage(t, w.get("/task/doc"), 200, "Approved write by T", "approved NOTE.md (blob "+v2[:12]+")")
	if state := mustSh(t, env, dir, "git", "show", "refs/hegel/archive/doc:state.json"); !strings.Contains(state, `"blob": "`+v2+`"`) {
		t.Errorf("the approval does not record v2:\n%s", state)
	}
}

// What an agent reads through `git hegel mcp` is not shown to a person:
// it does not let approve cover the artifact; the person's own show does.
func TestMCPReadsAreNotSeen(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	env := append(isolatedEnv(t), "GIT_HEGEL_DATE=")
	dir := t.TempDir()
	mustSh(t, env, dir, "git", "init", "-q")
	mustSh(t, env, dir, "git", "commit", "-q", "--allow-empty", "-m", "init")
	os.MkdirAll(filepath.Join(dir, ".hegel", "workflows"), 0o755)
	os.WriteFile(filepath.Join(dir, ".hegel", "workflows", "note.yaml"), []byte(noteWorkflow), 0o644)
	os.WriteFile(filepath.Join(dir, "NOTE.md"), []byte("v1\n"), 0o644)
	mustSh(t, env, dir, "git", "hegel", "start", "note", "--task", "doc")
	mustSh(t, env, dir, "git", "hegel", "next")
	// As if the submission had come from another clone.
	seen := filepath.Join(dir, ".git", "hegel", "seen")
	if err := os.Remove(seen); err != nil {
		t.Fatalf("the submission was not recorded: %v", err)
	}
	cs, _ := mcpClient(t, dir, env)
	for _, call := range []struct {
		tool string
		args map[string]any
	}{{"show", map[string]any{"task": "doc"}}, {"artifact", map[string]any{"task": "doc", "name": "NOTE.md"}}} {
		if res := callTool(t, cs, call.tool, call.args); res.IsError {
			t.Fatalf("%s: %s", call.tool, toolText(res))
		}
	}
	if _, err := os.Stat(seen); !os.IsNotExist(err) {
		t.Fatalf("an agent's read was recorded as seen: %v", err)
	}
	if out, err := sh(t, env, dir, "git", "hegel", "approve", "--task", "doc"); err == nil || !strings.Contains(out, "has not been shown on this clone") {
		t.Fatalf("approve after the agent's reads: %v\n%s", err, out)
	}
	mustSh(t, env, dir, "git", "hegel", "show", "doc")
	mustSh(t, env, dir, "git", "hegel", "approve", "--task", "doc")
}

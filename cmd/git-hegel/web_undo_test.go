package main

import (
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The task page lists the agent actions and undoes them with the same
// rules as git hegel undo -y: CSRF required, a refusal changes nothing,
// only the files the action changed are written.
func TestWebUndo(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	env := append(isolatedEnv(t), "GIT_HEGEL_DATE=")
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		return string(b)
	}
	mustSh(t, env, dir, "git", "init", "-q")
	write("a.txt", "one\n")
	mustSh(t, env, dir, "git", "add", "a.txt")
	mustSh(t, env, dir, "git", "commit", "-q", "-m", "base")
	mustSh(t, env, dir, "git", "hegel", "start", "minimal", "--task", "t")
	pre := `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"make gen"}}`
	post := `{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"make gen"}}`
	mustShIn(t, env, dir, pre, "git", "hegel", "hook", "PreToolUse")
	write("a.txt", "two\n")
	write("gen.txt", "generated\n")
	mustShIn(t, env, dir, post, "git", "hegel", "hook", "PostToolUse")
	write("user.txt", "mine\n")

	w, u := newWebClient(t, dir, env)
	w.login(u)
	wantPage(t, w.get("/task/t"), 200, `id="actions"`, "make gen", `id="undo-form"`)
	wantPage(t, w.post("/task/t/undo", url.Values{}), http.StatusForbidden, "CSRF")
	if read("a.txt") != "two\n" {
		t.Fatal("a POST without CSRF token changed a file")
	}
	csrf := w.csrf("/task/t")
	// Something else changes a.txt after the action: refused.
	write("a.txt", "later\n")
	wantPage(t, w.post("/task/t/undo", url.Values{"csrf": {csrf}, "n": {"1"}}), http.StatusConflict, "a.txt")
	if read("a.txt") != "later\n" || read("gen.txt") != "generated\n" {
		t.Fatal("a refused undo changed files")
	}
	rec := w.post("/task/t/undo", url.Values{"csrf": {csrf}, "n": {"1"}, "force": {"1"}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("forced undo: %d\n%s", rec.Code, rec.Body.String())
	}
	if read("a.txt") != "one\n" || read("gen.txt") != "" || read("user.txt") != "mine\n" {
		t.Fatalf("after the undo: a.txt %q, gen.txt %q, user.txt %q", read("a.txt"), read("gen.txt"), read("user.txt"))
	}
	wantPage(t, w.get("/task/t"), 200, "Undid 1 action of task t: 2 files restored")
	if rec := w.post("/task/t/undo", url.Values{"csrf": {csrf}, "redo": {"1"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("redo: %d\n%s", rec.Code, rec.Body.String())
	}
	if read("a.txt") != "later\n" || read("gen.txt") != "generated\n" {
		t.Fatalf("after the redo: a.txt %q, gen.txt %q", read("a.txt"), read("gen.txt"))
	}
}

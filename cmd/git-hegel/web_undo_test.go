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

// actionRepo makes a repository whose active task t has one agent action
// ("make gen": a.txt one → two, gen.txt created); act records another.
func actionRepo(t *testing.T) (dir string, env []string, write func(name, content string), read func(name string) string, act func(cmd string, change func())) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	env = append(isolatedEnv(t), "GIT_HEGEL_DATE=")
	dir = t.TempDir()
	write = func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read = func(name string) string {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		return string(b)
	}
	act = func(cmd string, change func()) {
		t.Helper()
		ev := func(name string) string {
			return `{"hook_event_name":"` + name + `","session_id":"s","tool_name":"Bash","tool_input":{"command":"` + cmd + `"}}`
		}
		mustShIn(t, env, dir, ev("PreToolUse"), "git", "hegel", "hook", "PreToolUse")
		change()
		mustShIn(t, env, dir, ev("PostToolUse"), "git", "hegel", "hook", "PostToolUse")
	}
	mustSh(t, env, dir, "git", "init", "-q")
	write("a.txt", "one\n")
	mustSh(t, env, dir, "git", "add", "a.txt")
	mustSh(t, env, dir, "git", "commit", "-q", "-m", "base")
	mustSh(t, env, dir, "git", "hegel", "start", "minimal", "--task", "t")
	act("make gen", func() { write("a.txt", "two\n"); write("gen.txt", "generated\n") })
	return dir, env, write, read, act
}

var newestField = regexp.MustCompile(`name="newest" value="([^"]+)"`)

// The undo form names the newest action its page listed: when the agent
// ran another one since, the undo is refused and changes nothing, rather
// than going back over an action the person never saw.
func TestWebUndoStaleList(t *testing.T) {
	dir, env, write, read, act := actionRepo(t)
	w, u := newWebClient(t, dir, env)
	w.login(u)
	page := wantPage(t, w.get("/task/t"), 200, "make gen")
	m := newestField.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the undo form names no newest action:\n%s", page)
	}
	csrf := w.csrf("/task/t")
	// The agent goes on while the page is open.
	act("make docs", func() { write("doc.txt", "docs\n") })
	wantPage(t, w.post("/task/t/undo", url.Values{"csrf": {csrf}, "n": {"1"}, "newest": {m[1]}}), http.StatusConflict, "reload the page")
	if read("doc.txt") != "docs\n" || read("a.txt") != "two\n" {
		t.Fatalf("a refused undo changed files: doc.txt %q, a.txt %q", read("doc.txt"), read("a.txt"))
	}
	// Reloaded, the page lists the new action, and its form undoes it.
	page = wantPage(t, w.get("/task/t"), 200, "make docs")
	m = newestField.FindStringSubmatch(page)
	if rec := w.post("/task/t/undo", url.Values{"csrf": {csrf}, "n": {"1"}, "newest": {m[1]}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("undo from the reloaded page: %d\n%s", rec.Code, rec.Body.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "doc.txt")); !os.IsNotExist(err) || read("a.txt") != "two\n" {
		t.Fatalf("after the undo: doc.txt %v, a.txt %q", err, read("a.txt"))
	}
}

// An undo with nothing to write (the action changed no file, as a shell
// command that only reads) records nothing, and the action stays listed:
// the page says so, as the command does, and does not claim an undo.
func TestWebUndoNothingToChange(t *testing.T) {
	dir, env, _, _, act := actionRepo(t)
	act("ls", func() {})
	w, u := newWebClient(t, dir, env)
	w.login(u)
	page := wantPage(t, w.get("/task/t"), 200, "<code>ls</code>")
	csrf := w.csrf("/task/t")
	m := newestField.FindStringSubmatch(page)
	if rec := w.post("/task/t/undo", url.Values{"csrf": {csrf}, "n": {"1"}, "newest": {m[1]}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("undo: %d\n%s", rec.Code, rec.Body.String())
	}
	page = wantPage(t, w.get("/task/t"), 200, "Nothing to change in task t: the files are already as they were", "<code>ls</code>")
	if strings.Contains(page, "Undid") {
		t.Errorf("the page claims an undo that changed and recorded nothing:\n%s", page)
	}
}

// A refusal because something else changed the files later says how to go
// ahead on the page (the box), not with the command line's --force, and
// the redo form has the box too.
func TestWebUndoRefusalAdvice(t *testing.T) {
	dir, env, write, read, _ := actionRepo(t)
	w, u := newWebClient(t, dir, env)
	w.login(u)
	csrf := w.csrf("/task/t")
	write("a.txt", "mine\n")
	page := wantPage(t, w.post("/task/t/undo", url.Values{"csrf": {csrf}, "n": {"1"}}), http.StatusConflict,
		"Nothing changed: the undo would overwrite a.txt", "also files changed later by something else")
	if strings.Contains(page, "--force") {
		t.Errorf("the page's refusal names the command line's option:\n%s", page)
	}
	if rec := w.post("/task/t/undo", url.Values{"csrf": {csrf}, "n": {"1"}, "force": {"1"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("forced undo: %d\n%s", rec.Code, rec.Body.String())
	}
	// Changed again after the undo: the redo is refused, then forced from
	// its own form's box.
	write("a.txt", "again\n")
	page = wantPage(t, w.post("/task/t/undo", url.Values{"csrf": {csrf}, "redo": {"1"}}), http.StatusConflict,
		"Nothing changed: the redo would overwrite a.txt")
	if strings.Contains(page, "--force") {
		t.Errorf("the page's refusal names the command line's option:\n%s", page)
	}
	form := wantPage(t, w.get("/task/t"), 200)
	if i := strings.Index(form, `id="redo-form"`); i < 0 || !strings.Contains(form[i:], `name="force"`) {
		t.Fatalf("the redo form has no box to force it:\n%s", form)
	}
	if rec := w.post("/task/t/undo", url.Values{"csrf": {csrf}, "redo": {"1"}, "force": {"1"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("forced redo: %d\n%s", rec.Code, rec.Body.String())
	}
	if read("a.txt") != "mine\n" {
		t.Fatalf("after the forced redo a.txt is %q, want what the undo's safety snapshot kept", read("a.txt"))
	}
}

// An undo writes the files of the worktree that owns the task and is
// refused anywhere else: a task this worktree does not own gets no undo
// or redo form, and a line says where to undo.
func TestWebUndoOnlyWhereTheTaskRuns(t *testing.T) {
	dir, env, _, _, _ := actionRepo(t)
	mustSh(t, env, dir, "git", "hegel", "start", "minimal", "--task", "other")
	w, u := newWebClient(t, dir, env)
	w.login(u)
	page := wantPage(t, w.get("/task/t"), 200, "make gen", "git hegel undo --task t")
	if strings.Contains(page, `id="undo-form"`) || strings.Contains(page, `id="redo-form"`) {
		t.Errorf("a task this worktree does not own offers an undo:\n%s", page)
	}
	if page := wantPage(t, w.get("/task/other"), 200); strings.Contains(page, "is not this worktree") {
		t.Errorf("this worktree's task says it is another's:\n%s", page)
	}
}

// The redo form is offered only when there is an undo to take back, and
// names it: another undo made since (here from the terminal) is not
// taken back by the old page's form.
func TestWebRedoStaleForm(t *testing.T) {
	dir, env, write, read, act := actionRepo(t)
	act("make docs", func() { write("doc.txt", "docs\n") })
	w, u := newWebClient(t, dir, env)
	w.login(u)
	page := wantPage(t, w.get("/task/t"), 200, `id="undo-form"`)
	if strings.Contains(page, `id="redo-form"`) {
		t.Fatalf("a redo is offered with no undo to take back:\n%s", page)
	}
	undoForm := formOf(t, page, "undo-form")
	if rec := w.post("/task/t/undo", undoForm); rec.Code != http.StatusSeeOther {
		t.Fatalf("undo: %d\n%s", rec.Code, rec.Body.String())
	}
	redoForm := formOf(t, wantPage(t, w.get("/task/t"), 200, `id="redo-form"`), "redo-form")
	if redoForm.Get("newest") == "" {
		t.Fatalf("the redo form does not name the undo it takes back: %v", redoForm)
	}
	// From the terminal: the redo, then an undo of the action before.
	mustSh(t, env, dir, "git", "hegel", "undo", "--redo", "-y")
	mustSh(t, env, dir, "git", "hegel", "undo", "-y", "2")
	wantPage(t, w.post("/task/t/undo", redoForm), http.StatusConflict, "reload the page")
	if read("a.txt") != "one\n" || read("doc.txt") != "" {
		t.Fatalf("a stale redo changed files: a.txt %q, doc.txt %q", read("a.txt"), read("doc.txt"))
	}
}

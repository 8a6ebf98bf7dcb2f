package main

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// formOf is the hidden fields of the form with id on page, as a browser
// would send them.
func formOf(t *testing.T, page, id string) url.Values {
	t.Helper()
	m := regexp.MustCompile(`(?s)<form [^>]*id="` + id + `">(.*?)</form>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no form %s:\n%s", id, page)
	}
	v := url.Values{}
	for _, h := range hiddenRe.FindAllStringSubmatch(m[1], -1) {
		v.Add(h[1], h[2])
	}
	return v
}

// An answer form names the question its page showed: answered from the
// terminal and another asked while the page was open, the old form's
// answer is refused and the new question stays open.
func TestWebAnswerStaleForm(t *testing.T) {
	dir, env := webRepo(t)
	w, u := newWebClient(t, dir, env)
	w.login(u)
	form := formOf(t, wantPage(t, w.get("/task/asking"), 200, "Which database?"), "answer-form")
	mustSh(t, env, dir, "git", "hegel", "answer", "--task", "asking", "SQLite")
	mustSh(t, env, dir, "git", "hegel", "ask", "--task", "asking", "Drop the old tables?")
	before := refOf(t, env, dir, "asking")
	form.Set("answer", "Postgres")
	wantPage(t, w.post("/task/asking/answer", form), http.StatusConflict, "another question", "reload the page")
	if refOf(t, env, dir, "asking") != before {
		t.Fatal("an answer to the question before was recorded for the open one")
	}
	form = formOf(t, w.get("/task/asking").Body.String(), "answer-form")
	form.Set("answer", "no")
	if rec := w.post("/task/asking/answer", form); rec.Code != http.StatusSeeOther {
		t.Fatalf("answer from the reloaded page: %d\n%s", rec.Code, rec.Body)
	}
	wantPage(t, w.get("/task/asking"), 200, "answered: no", "answered: SQLite")
}

const twoGates = `start_node: design
nodes:
  design:
    prompt: Design it.
    gate: approval
    transitions: [{when: design_complete, to: review}]
  review:
    prompt: Review it.
    gate: approval
    transitions: [{when: review_complete, to: done}, {when: redo, to: design}]
`

// A reject form names the gate its page showed: approved from the
// terminal and waiting at the next gate, the old form's rejection (its
// reason about the first gate) is refused and the task stays put.
func TestWebRejectStaleForm(t *testing.T) {
	dir, env := webRepo(t)
	os.WriteFile(filepath.Join(dir, ".hegel", "workflows", "two.yaml"), []byte(twoGates), 0o644)
	mustSh(t, env, dir, "git", "hegel", "start", "two", "--task", "two")
	mustSh(t, env, dir, "git", "hegel", "next")
	w, u := newWebClient(t, dir, env)
	w.login(u)
	form := formOf(t, wantPage(t, w.get("/task/two"), 200, `id="reject-form"`), "reject-form")
	if form.Get("gate") != "design" {
		t.Fatalf("the reject form does not name its gate: %v", form)
	}
	mustSh(t, env, dir, "git", "hegel", "approve")
	mustSh(t, env, dir, "git", "hegel", "next")
	before := refOf(t, env, dir, "two")
	form.Set("reason", "the design is vague")
	wantPage(t, w.post("/task/two/reject", form), http.StatusConflict, "waits at &#39;review&#39; now, not at the gate this page showed")
	if refOf(t, env, dir, "two") != before {
		t.Fatal("a rejection of the gate before moved the task")
	}
	if show := mustSh(t, env, dir, "git", "hegel", "show", "two"); !strings.Contains(show, "awaiting_approval") {
		t.Errorf("after the refused rejection:\n%s", show)
	}
}

// A reject form names when the task reached its gate: rejected from the
// terminal, done over and at the same gate again, the old form's
// rejection (its reason about the work before) is refused.
func TestWebRejectStaleVisit(t *testing.T) {
	dir, env := webRepo(t)
	os.WriteFile(filepath.Join(dir, ".hegel", "workflows", "two.yaml"), []byte(twoGates), 0o644)
	mustSh(t, env, dir, "git", "hegel", "start", "two", "--task", "two")
	mustSh(t, env, dir, "git", "hegel", "next")
	w, u := newWebClient(t, dir, env)
	w.login(u)
	form := formOf(t, wantPage(t, w.get("/task/two"), 200, `id="reject-form"`), "reject-form")
	mustSh(t, env, dir, "git", "hegel", "reject", "-m", "first try")
	mustSh(t, env, dir, "git", "hegel", "next")
	before := refOf(t, env, dir, "two")
	form.Set("reason", "the design is vague")
	wantPage(t, w.post("/task/two/reject", form), http.StatusConflict, "waits at &#39;design&#39; again")
	if refOf(t, env, dir, "two") != before {
		t.Fatal("a rejection of the visit before sent back the work done since")
	}
	form = formOf(t, w.get("/task/two").Body.String(), "reject-form")
	form.Set("reason", "still vague")
	if rec := w.post("/task/two/reject", form); rec.Code != http.StatusSeeOther {
		t.Fatalf("reject from the reloaded page: %d\n%s", rec.Code, rec.Body)
	}
}

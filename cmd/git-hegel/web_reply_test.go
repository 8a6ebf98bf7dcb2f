package main

import (
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"
)

// The message an action leaves for the page it redirects to travels in a
// cookie, and a browser drops a cookie over 4096 bytes whole: a message
// quoting a long question (a teammate's text, escaped to several times
// its length) must still arrive, cut, and cut at a character.
func TestWebFlashFitsACookie(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	env := append(isolatedEnv(t), "GIT_HEGEL_DATE=")
	dir := t.TempDir()
	mustSh(t, env, dir, "git", "init", "-q")
	mustSh(t, env, dir, "git", "commit", "-q", "--allow-empty", "-m", "init")
	mustSh(t, env, dir, "git", "hegel", "start", "minimal", "--task", "q")
	mustSh(t, env, dir, "git", "hegel", "ask", strings.Repeat("é<", 700))
	w, u := newWebClient(t, dir, env)
	w.login(u)
	csrf := w.csrf("/task/q")
	rec := w.post("/task/q/answer", url.Values{"csrf": {csrf}, "answer": {"yes"}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("answer: %d\n%s", rec.Code, rec.Body.String())
	}
	var flash *http.Cookie
	for _, c := range rec.Result().Cookies() {
		if strings.HasPrefix(c.Name, "hegel-flash-") {
			flash = c
		}
	}
	if flash == nil {
		t.Fatal("the answer left no message")
	}
	if n := len(flash.Name) + 1 + len(flash.Value); n > 4096 {
		t.Fatalf("the message's cookie is %d bytes: a browser drops it", n)
	}
	msg, err := url.QueryUnescape(flash.Value)
	if err != nil || !utf8.ValidString(msg) || !strings.HasPrefix(msg, `Answered "é<é<`) || !strings.HasSuffix(msg, "…") {
		t.Fatalf("the message: %q (%v)", msg, err)
	}
	wantPage(t, w.get("/task/q"), 200, "Answered &#34;é&lt;é&lt;")
}

// A refused form is answered with the error page itself, which is the
// response to a POST: reloading it sends the form again, so it carries no
// "refresh every 5s" box (ticked once, it is ticked on every page).
func TestWebRefusedFormDoesNotRefresh(t *testing.T) {
	dir, env := webRepo(t)
	w, u := newWebClient(t, dir, env)
	w.login(u)
	wantPage(t, w.get("/task/plain"), 200, `id="autorefresh"`)
	csrf := w.csrf("/task/gated")
	refused := wantPage(t, w.post("/task/plain/approve", url.Values{"csrf": {csrf}}), http.StatusConflict, "not waiting for approval")
	if strings.Contains(refused, `id="autorefresh"`) {
		t.Errorf("the page answering a refused form reloads itself (sending the form again):\n%s", refused)
	}
	wantPage(t, w.get("/task/nope"), http.StatusNotFound, `id="autorefresh"`)
}

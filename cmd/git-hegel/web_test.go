package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Handler tests of `git hegel web`: the handler the command serves, built
// by the same function, on a real repository whose tasks the real
// git-hegel binary made. Every page, every action, and every refusal.

const gateWorkflow = `start_node: spec
task_types: [feature, bug_fix]
nodes:
  spec:
    summary: Write the spec
    prompt: Write the spec.
    artifact: SPEC.md
    check: test -s SPEC.md
    rules: [{type: phase_timeout, max_duration: 86400}]
    skip_for: [bug_fix]
    transitions: [{when: spec_complete, to: dev}]
  dev:
    prompt: Write the code.
    transitions: [{when: dev_complete, to: review}]
  review:
    prompt: Ask for a review.
    gate: approval
    transitions:
      - {when: review_complete, to: done}
      - {when: redo, to: dev}
`

// webRepo makes a repository with three tasks: "gated" waiting for
// approval at review (after a failed attempt at dev), "asking" waiting
// for an answer, and "plain" active in the minimal workflow.
func webRepo(t *testing.T) (dir string, env []string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	env = isolatedEnv(t)
	env = append(env, "GIT_HEGEL_DATE=")
	dir = t.TempDir()
	mustSh(t, env, dir, "git", "init", "-q")
	mustSh(t, env, dir, "git", "commit", "-q", "--allow-empty", "-m", "init")
	os.MkdirAll(filepath.Join(dir, ".hegel", "workflows"), 0o755)
	os.WriteFile(filepath.Join(dir, ".hegel", "workflows", "gated.yaml"), []byte(gateWorkflow), 0o644)
	os.WriteFile(filepath.Join(dir, "SPEC.md"), []byte("# The spec\n\nSome *text* <script>alert(1)</script>\n\n- [x] done\n"), 0o644)
	mustSh(t, env, dir, "git", "hegel", "start", "gated", "--task", "gated", "-d", "Add the login page")
	mustSh(t, env, dir, "git", "hegel", "next")
	mustSh(t, env, dir, "git", "hegel", "fail", "-m", "tests red")
	mustSh(t, env, dir, "git", "hegel", "next")
	mustSh(t, env, dir, "git", "hegel", "next")
	mustSh(t, env, dir, "git", "hegel", "start", "gated", "--task", "asking", "--type", "bug_fix", "--priority", "high")
	mustSh(t, env, dir, "git", "hegel", "ask", "Which database?")
	mustSh(t, env, dir, "git", "hegel", "start", "minimal", "--task", "plain")
	return dir, env
}

// webClient talks to the handler as a browser on 127.0.0.1 would.
type webClient struct {
	t       *testing.T
	h       http.Handler
	host    string
	cookies map[string]*http.Cookie
}

const testAddr = "127.0.0.1:8765"

func newWebClient(t *testing.T, dir string, env []string, args ...string) (*webClient, string) {
	t.Helper()
	return newWebClientAt(t, dir, env, testAddr, args...)
}

func newWebClientAt(t *testing.T, dir string, env []string, addr string, args ...string) (*webClient, string) {
	t.Helper()
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	var stderr bytes.Buffer
	e := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Dir: dir,
		Getenv: func(k string) string { return vars[k] }, Now: time.Now, Terminal: func(io.Writer) bool { return false }}
	cmd := lookup("web")
	fs := cmd.flagSet(e)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	c := &cmdCtx{Env: e, name: "web", flags: fs}
	h, u, err := c.webHandler(addr, dir)
	if err != nil {
		t.Fatal(err)
	}
	return &webClient{t: t, h: h, host: addr, cookies: map[string]*http.Cookie{}}, u
}

func (w *webClient) do(req *http.Request) *httptest.ResponseRecorder {
	if req.Host == "example.com" || req.Host == "" {
		req.Host = w.host
	}
	for _, c := range w.cookies {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	w.h.ServeHTTP(rec, req)
	for _, c := range rec.Result().Cookies() {
		if c.MaxAge < 0 {
			delete(w.cookies, c.Name)
		} else {
			w.cookies[c.Name] = c
		}
	}
	return rec
}

func (w *webClient) get(path string) *httptest.ResponseRecorder {
	return w.do(httptest.NewRequest("GET", path, nil))
}

func (w *webClient) post(path string, form url.Values) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return w.do(req)
}

// login opens the printed address and follows the redirect.
func (w *webClient) login(printed string) {
	w.t.Helper()
	u, err := url.Parse(printed)
	if err != nil {
		w.t.Fatal(err)
	}
	rec := w.get(u.RequestURI())
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/" {
		w.t.Fatalf("opening the printed address: %d %q", rec.Code, rec.Header().Get("Location"))
	}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

func (w *webClient) csrf(page string) string {
	w.t.Helper()
	m := csrfField.FindStringSubmatch(w.get(page).Body.String())
	if m == nil {
		w.t.Fatalf("no CSRF field on %s", page)
	}
	return m[1]
}

func wantPage(t *testing.T, rec *httptest.ResponseRecorder, code int, contains ...string) string {
	t.Helper()
	body := rec.Body.String()
	if rec.Code != code {
		t.Fatalf("status %d, want %d:\n%s", rec.Code, code, body)
	}
	for _, s := range contains {
		if !strings.Contains(body, s) {
			t.Errorf("page lacks %q:\n%s", s, body)
		}
	}
	return body
}

func refOf(t *testing.T, env []string, dir, task string) string {
	t.Helper()
	// A finished task's chain moves to the archive.
	out, err := sh(t, env, dir, "git", "rev-parse", "-q", "--verify", "refs/hegel/tasks/"+task)
	if err != nil {
		out = mustSh(t, env, dir, "git", "rev-parse", "refs/hegel/archive/"+task)
	}
	return strings.TrimSpace(out)
}

func TestWebPages(t *testing.T) {
	dir, env := webRepo(t)
	w, printed := newWebClient(t, dir, env)
	if !strings.HasPrefix(printed, "http://"+testAddr+"/?token=") {
		t.Fatalf("printed address %q", printed)
	}
	w.login(printed)

	board := wantPage(t, w.get("/"), 200, `data-task="gated"`, `data-task="asking"`, `data-task="plain"`, "Add the login page", "approval at review")
	// Each task in its status's column.
	for task, col := range map[string]string{"gated": "awaiting_approval", "asking": "awaiting_answer", "plain": "active"} {
		re := regexp.MustCompile(`(?s)data-column="` + col + `".*?</section>`)
		if !strings.Contains(re.FindString(board), `data-task="`+task+`"`) {
			t.Errorf("task %s not in column %s", task, col)
		}
	}
	// Filters: workflow, type, text.
	for q, want := range map[string][]string{
		"/?workflow=minimal": {"plain"},
		"/?type=bug_fix":     {"asking"},
		"/?q=login":          {"gated"},
		"/?q=nothing+at+all": nil,
	} {
		body := wantPage(t, w.get(q), 200)
		got := regexp.MustCompile(`data-task="([^"]+)"`).FindAllStringSubmatch(body, -1)
		var names []string
		for _, m := range got {
			names = append(names, m[1])
		}
		if strings.Join(names, ",") != strings.Join(want, ",") {
			t.Errorf("%s shows %v, want %v", q, names, want)
		}
	}

	// The task page: gate form, timeline with the failure, checkpoints,
	// artifacts, the ref's log, the graph.
	wantPage(t, w.get("/task/gated"), 200, `id="approve-form"`, `id="reject-form"`, "attempt 1 of", "tests red",
		`id="checkpoints"`, "SPEC.md", "fail: dev attempt 1", "start", `<svg class="graph"`, `class="node gate current" data-node="review"`)
	wantPage(t, w.get("/task/asking"), 200, `id="answer-form"`, "Which database?", "skipped")
	// The artifact, rendered, with the HTML in it escaped.
	art := wantPage(t, w.get("/task/gated/artifact/SPEC.md"), 200, "<h1>The spec</h1>", "<em>text</em>", "&lt;script&gt;")
	if strings.Contains(art, "<script>alert") {
		t.Error("the artifact's HTML reached the page unescaped")
	}
	// Nothing but the workflow's artifacts is served.
	for _, p := range []string{"/task/gated/artifact/.git/config", "/task/gated/artifact/..%2F..%2Fetc%2Fpasswd", "/task/gated/artifact/" + url.PathEscape(filepath.Join(dir, "SPEC.md"))} {
		if rec := w.get(p); rec.Code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, rec.Code)
		}
	}
	wantPage(t, w.get("/task/gated/workflow"), 200, `<svg class="graph"`, `class="node gate current" data-node="review"`, "edge taken", "approval")
	wantPage(t, w.get("/workflows"), 200, `href="/workflow/gated"`, `href="/workflow/minimal"`)
	// The nodes table: guard rules and check: commands, each in its column.
	wantPage(t, w.get("/workflow/gated"), 200, `<svg class="graph"`, "typeskip", "bug_fix",
		"<th>guard rules</th><th>checks</th>", "<td>phase_timeout</td><td><code>test -s SPEC.md</code></td>")
	wantPage(t, w.get("/static/style.css"), 200, "svg.graph")
	wantPage(t, w.get("/static/app.js"), 200, "autorefresh")
	wantPage(t, w.get("/task/nosuch"), 404)
	wantPage(t, w.get("/task/bad..name"), 400)
	wantPage(t, w.get("/workflow/nosuch"), 404)

	// A change made in a terminal shows on reload.
	mustSh(t, env, dir, "git", "hegel", "next")
	wantPage(t, w.get("/task/plain"), 200, `id="task-node">plan`)
}

func TestWebRefusals(t *testing.T) {
	dir, env := webRepo(t)
	w, printed := newWebClient(t, dir, env)

	// No token: refused, on every path.
	for _, p := range []string{"/", "/task/gated", "/static/style.css", "/workflows"} {
		if rec := w.get(p); rec.Code != http.StatusUnauthorized {
			t.Errorf("%s without the token: %d", p, rec.Code)
		}
	}
	// A wrong token in the address.
	if rec := w.get("/?token=" + strings.Repeat("0", 64)); rec.Code != http.StatusForbidden {
		t.Errorf("wrong token: %d", rec.Code)
	}
	w.login(printed)
	if len(w.cookies) != 1 {
		t.Fatalf("cookies after login: %v", w.cookies)
	}
	for _, c := range w.cookies {
		if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
			t.Errorf("token cookie %+v: want HttpOnly, SameSite=Strict", c)
		}
	}
	wantPage(t, w.get("/"), 200)
	// DNS rebinding: a name that resolves to 127.0.0.1 is still refused.
	for _, host := range []string{"evil.example:8765", "127.0.0.1:9999", "localhost", "[::1]:8765"} {
		req := httptest.NewRequest("GET", "/", nil)
		req.Host = host
		if rec := w.do(req); rec.Code != http.StatusMisdirectedRequest {
			t.Errorf("Host %s: %d", host, rec.Code)
		}
	}
	req := httptest.NewRequest("GET", "/", nil)
	req.Host = "localhost:8765"
	if rec := w.do(req); rec.Code != 200 {
		t.Errorf("Host localhost:8765: %d", rec.Code)
	}
	before := refOf(t, env, dir, "gated")
	csrf := w.csrf("/task/gated")
	// Writes: no CSRF token, a wrong one, another site's Origin, GET, PUT.
	wantPage(t, w.post("/task/gated/approve", url.Values{}), http.StatusForbidden, "CSRF")
	wantPage(t, w.post("/task/gated/approve", url.Values{"csrf": {strings.Repeat("a", 64)}}), http.StatusForbidden, "CSRF")
	r := httptest.NewRequest("POST", "/task/gated/approve", strings.NewReader(url.Values{"csrf": {csrf}}.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Origin", "http://evil.example")
	wantPage(t, w.do(r), http.StatusForbidden, "another site")
	if rec := w.get("/task/gated/approve"); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET approve: %d", rec.Code)
	}
	if rec := w.do(httptest.NewRequest("PUT", "/task/gated/approve", nil)); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("PUT approve: %d", rec.Code)
	}
	// A form with the token but without the cookie.
	anon := &webClient{t: t, h: w.h, host: testAddr, cookies: map[string]*http.Cookie{}}
	if rec := anon.post("/task/gated/approve", url.Values{"csrf": {csrf}}); rec.Code != http.StatusUnauthorized {
		t.Errorf("POST without the cookie: %d", rec.Code)
	}
	if after := refOf(t, env, dir, "gated"); after != before {
		t.Fatalf("a refused request moved the task's ref")
	}

	// --no-auth: no token needed, the Host and CSRF checks stay.
	open, printed := newWebClient(t, dir, env, "--no-auth")
	if strings.Contains(printed, "token") {
		t.Errorf("--no-auth printed %q", printed)
	}
	wantPage(t, open.get("/"), 200)
	wantPage(t, open.post("/task/gated/approve", url.Values{}), http.StatusForbidden, "CSRF")
	req = httptest.NewRequest("GET", "/", nil)
	req.Host = "evil.example:8765"
	if rec := open.do(req); rec.Code != http.StatusMisdirectedRequest {
		t.Errorf("--no-auth, foreign Host: %d", rec.Code)
	}
}

func TestWebActions(t *testing.T) {
	dir, env := webRepo(t)
	w, printed := newWebClient(t, dir, env)
	w.login(printed)
	csrf := w.csrf("/task/gated")

	// Approving a task that waits for nothing: refused, nothing moved.
	before := refOf(t, env, dir, "plain")
	wantPage(t, w.post("/task/plain/approve", url.Values{"csrf": {csrf}}), http.StatusConflict, "not waiting for approval")
	if refOf(t, env, dir, "plain") != before {
		t.Fatal("a refused approval moved the ref")
	}
	// A rejection without a reason.
	before = refOf(t, env, dir, "gated")
	wantPage(t, w.post("/task/gated/reject", url.Values{"csrf": {csrf}, "reason": {"  "}}), http.StatusBadRequest, "needs a reason")
	// Reject, with a reason: back to dev, the reason in the timeline.
	rec := w.post("/task/gated/reject", url.Values{"csrf": {csrf}, "reason": {"no tests <b>"}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/task/gated" {
		t.Fatalf("reject: %d %s\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	after := refOf(t, env, dir, "gated")
	if after == before {
		t.Fatal("reject did not move the task's ref")
	}
	msg := mustSh(t, env, dir, "git", "log", "-1", "--format=%an|%s", after)
	if !strings.HasPrefix(msg, "T|reject") {
		t.Errorf("the rejection's commit: %q (want the user's identity and the reject operation)", msg)
	}
	wantPage(t, w.get("/task/gated"), 200, "Rejected at review", "rejected by T: no tests &lt;b&gt;", `id="task-node">dev`)
	// The flash shows once.
	if strings.Contains(w.get("/task/gated").Body.String(), "Rejected at review") {
		t.Error("the flash message stayed after it was shown")
	}
	// Back to the gate from the terminal, then approve from the page.
	mustSh(t, env, dir, "git", "hegel", "next", "--task", "gated", "--force")
	mustSh(t, env, dir, "git", "hegel", "next", "--task", "gated", "--force")
	before = refOf(t, env, dir, "gated")
	rec = w.post("/task/gated/approve", url.Values{"csrf": {csrf}, "comment": {"fine"}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("approve: %d\n%s", rec.Code, rec.Body)
	}
	if refOf(t, env, dir, "gated") == before {
		t.Fatal("approve did not move the task's ref")
	}
	status := mustSh(t, env, dir, "git", "hegel", "show", "gated")
	if !strings.Contains(status, "completed") {
		t.Errorf("after approval:\n%s", status)
	}
	wantPage(t, w.get("/task/gated"), 200, "Approved review by T", "approved by T: fine")
	// Answer.
	before = refOf(t, env, dir, "asking")
	rec = w.post("/task/asking/answer", url.Values{"csrf": {csrf}, "answer": {"SQLite"}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("answer: %d\n%s", rec.Code, rec.Body)
	}
	if refOf(t, env, dir, "asking") == before {
		t.Fatal("answer did not move the task's ref")
	}
	wantPage(t, w.get("/task/asking"), 200, "answered: SQLite", "st-active")
	// A second answer: nothing is asked any more.
	wantPage(t, w.post("/task/asking/answer", url.Values{"csrf": {csrf}, "answer": {"again"}}), http.StatusConflict)
}

// TestWebCommand runs `git hegel web` as a process: it prints the address,
// serves the board there to a client that follows it, stops on Ctrl-C
// (SIGINT) with exit 0, and fails with one line when the port is taken.
func TestWebCommand(t *testing.T) {
	dir, env := webRepo(t)
	// git-hegel itself: signals sent to the git wrapper end the wrapper.
	cmd := exec.Command("git-hegel", "web")
	cmd.Dir, cmd.Env = dir, env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the address: %v (stderr: %s)", err, stderr.String())
	}
	m := regexp.MustCompile(`^Serving .* on (http://127\.0\.0\.1:(\d+)/\?token=[0-9a-f]{64})\n$`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("first line %q", line)
	}
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 20 * time.Second}
	resp, err := client.Get(m[1])
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `data-task="gated"`) || strings.Contains(resp.Request.URL.String(), "token") {
		t.Fatalf("GET %s: %d at %s\n%s", m[1], resp.StatusCode, resp.Request.URL, body)
	}
	// A second server on the same port.
	out, err := sh(t, env, dir, "git", "hegel", "web", "--port", m[2])
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.HasPrefix(out, "error: cannot listen on 127.0.0.1:"+m[2]+": ") || strings.Count(out, "\n") != 1 {
		t.Errorf("second server on the same port: %v\n%s", err, out)
	}
	cmd.Process.Signal(os.Interrupt)
	rest, _ := io.ReadAll(stdout)
	if err := cmd.Wait(); err != nil {
		t.Errorf("after Ctrl-C: %v (stderr: %s)", err, stderr.String())
	}
	if !strings.Contains(string(rest), "Stopped.") {
		t.Errorf("after Ctrl-C: %q", rest)
	}
}

// TestOpenBrowser: --open runs $BROWSER's commands in turn (the first one
// that starts), with the address in place of %s or last.
func TestOpenBrowser(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "browser")
	os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s|' \"$@\" > \"$0.out\"\n"), 0o755)
	for _, tc := range []struct{ browser, want string }{
		{script, "http://127.0.0.1:1/|"},
		{"/nonexistent:" + script + " --new-window %s", "--new-window|http://127.0.0.1:1/|"},
	} {
		os.Remove(script + ".out")
		if err := openBrowser(func(k string) string { return map[string]string{"BROWSER": tc.browser}[k] }, "http://127.0.0.1:1/"); err != nil {
			t.Fatal(err)
		}
		var got []byte
		for range 100 {
			if got, _ = os.ReadFile(script + ".out"); len(got) > 0 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if string(got) != tc.want {
			t.Errorf("BROWSER=%q ran with %q, want %q", tc.browser, got, tc.want)
		}
	}
	if err := openBrowser(func(string) string { return "/nonexistent" }, "x"); err == nil {
		t.Error("a browser that does not exist: no error")
	}
}

// TestWebHistoryStats: the history page lists what `git hegel log` lists,
// with its filters, and refuses a bad one on the page (400); the
// statistics page draws the runs of the period, and its success rate and
// per-node medians are those of `git hegel stats`.
func TestWebHistoryStats(t *testing.T) {
	dir, env := webRepo(t)
	day := func(n int, hour int) string {
		return "GIT_HEGEL_DATE=" + time.Now().UTC().AddDate(0, 0, -n).Truncate(24*time.Hour).Add(time.Duration(hour)*time.Hour).Format(time.RFC3339)
	}
	// Runs on three days: two completed, one aborted.
	for i, end := range []string{"done", "done", "abort"} {
		name := fmt.Sprintf("run%d", i)
		mustSh(t, append(env, day(i+1, 9)), dir, "git", "hegel", "start", "minimal", "--task", name)
		mustSh(t, append(env, day(i+1, 10)), dir, "git", "hegel", "next")
		mustSh(t, append(env, day(i+1, 12)), dir, "git", "hegel", end)
	}
	w, printed := newWebClient(t, dir, env)
	w.login(printed)

	hist := wantPage(t, w.get("/history"), 200, `data-task="run0"`, `data-task="run1"`, `data-task="run2"`, `data-task="gated"`, "so far")
	if !strings.Contains(hist, "st-aborted") {
		t.Error("the aborted run is not marked so")
	}
	only := wantPage(t, w.get("/history?status=aborted"), 200, `data-task="run2"`)
	if strings.Count(only, "<tr data-task") != 1 {
		t.Errorf("status=aborted shows %d rows", strings.Count(only, "<tr data-task"))
	}
	wantPage(t, w.get("/history?task=run1"), 200, `data-task="run1"`)
	// The runs sit at fixed hours of past days, so the bound is a fixed
	// time too (a relative one, 2.days.ago, falls before or after run1
	// depending on the time of day the test runs): yesterday's midnight.
	since := "/history?status=completed&since=" + time.Now().UTC().AddDate(0, 0, -1).Truncate(24*time.Hour).Format(time.RFC3339)
	wantPage(t, w.get(since), 200, `data-task="run0"`)
	if strings.Contains(w.get(since).Body.String(), `data-task="run1"`) {
		t.Error("since yesterday's midnight kept a run of two days ago")
	}
	wantPage(t, w.get("/history?status=bogus"), 400, `id="filter-error"`, "Unknown status")
	wantPage(t, w.get("/history?since=not+a+date"), 400, `id="filter-error"`)
	wantPage(t, w.get("/history?n=0"), 400, `id="filter-error"`)
	wantPage(t, w.get("/history?workflow=nosuch"), 200, "No runs found")

	stats := wantPage(t, w.get("/stats?days=7"), 200, `id="runs-chart"`, `id="rate-chart"`, `id="node-medians"`, "minimal/spec", "minimal/plan")
	if !strings.Contains(stats, `id="success-rate">66.7%`) {
		t.Errorf("success rate: want 66.7%% (2 of 3)")
	}
	// Today no run ended (they all ended on earlier days): no rate.
	if today := wantPage(t, w.get("/stats?days=1"), 200); !strings.Contains(today, `id="success-rate">-<`) {
		t.Errorf("success rate of a day with no ended run: want -")
	}
	if n := strings.Count(stats, `class="bar ok" x=`) - strings.Count(stats, `<svg class="nbar"`); n != 2 {
		t.Errorf("%d completed bars in the runs chart, want 2 (one a day)", n)
	}
	// The per-node median of spec is an hour, as stats says.
	out := mustSh(t, env, dir, "git", "hegel", "stats", "--since", "7.days.ago")
	if !strings.Contains(out, "minimal/spec  3     1h 0m") || !strings.Contains(stats, "1h 0m") {
		t.Errorf("median time of spec: stats says\n%s", out)
	}
	wantPage(t, w.get("/stats?days=0"), 400, `id="filter-error"`)
	wantPage(t, w.get("/stats?days=7&since=yesterday"), 400, `id="filter-error"`)
	wantPage(t, w.get("/stats?since=2.weeks.ago"), 200, `id="runs-chart"`)
}

// TestRedirectPage: the page --open hands the browser is private, sends
// the browser on to the address, and is removed with its directory.
func TestRedirectPage(t *testing.T) {
	const address = "http://127.0.0.1:1/?token=abc&x=<y>"
	page, remove, err := redirectPage(address)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(page, "file:///") || strings.Contains(page, "token") {
		t.Errorf("page address %q", page)
	}
	u, err := url.Parse(page)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.FromSlash(u.Path)
	if runtime.GOOS == "windows" {
		p = strings.TrimPrefix(p, `\`)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `content="0;url=http://127.0.0.1:1/?token=abc&amp;x=&lt;y&gt;"`) {
		t.Errorf("page:\n%s", b)
	}
	if runtime.GOOS != "windows" {
		fi, _ := os.Stat(p)
		di, _ := os.Stat(filepath.Dir(p))
		if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
			t.Errorf("modes %v %v", fi.Mode(), di.Mode())
		}
	}
	remove()
	if _, err := os.Stat(filepath.Dir(p)); !os.IsNotExist(err) {
		t.Errorf("left behind: %v", err)
	}
}

// TestWebBidiControls: the bidirectional-text controls in what pages
// show (a description, an artifact) never reach the browser, so a line
// reads in the order it is stored; HTML escaping alone leaves them.
func TestWebBidiControls(t *testing.T) {
	dir, env := webRepo(t)
	mustSh(t, env, dir, "git", "hegel", "start", "minimal", "--task", "bidi", "-d", "Login \u202eexe.png\u202c and \u2066more\u2069 \u200f\u061c")
	mustSh(t, env, dir, "git", "hegel", "start", "gated", "--task", "art")
	os.WriteFile(filepath.Join(dir, "SPEC.md"), []byte("# The spec\n\nRun `rm -rf \u202e/ #\u202c` never\n"), 0o644)
	mustSh(t, env, dir, "git", "hegel", "next", "--task", "art")
	w, printed := newWebClient(t, dir, env)
	w.login(printed)
	for _, page := range []string{"/", "/task/bidi", "/task/art/artifact/SPEC.md"} {
		body := wantPage(t, w.get(page), 200)
		if i := strings.IndexFunc(body, func(r rune) bool {
			return r == 0x061c || r == 0x200e || r == 0x200f || 0x202a <= r && r <= 0x202e || 0x2066 <= r && r <= 0x2069
		}); i >= 0 {
			t.Errorf("%s holds a bidirectional control: %q", page, body[max(0, i-20):min(len(body), i+20)])
		}
	}
	wantPage(t, w.get("/task/bidi"), 200, "Login exe.png and more ")
	wantPage(t, w.get("/task/art/artifact/SPEC.md"), 200, "rm -rf / #")
}

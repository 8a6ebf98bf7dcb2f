package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Benchmarks of `git hegel web` (its targets, measured by `make
// bench`, recorded in docs/benchmarks.md): the board of a repository with
// 1,000 tasks, first byte under 200 ms; the page of a task whose ref has
// 500 operations, under 100 ms. Each request goes through a real loopback
// connection to the handler the command serves, which opens the
// repository and reads the refs anew, as every page load does. The
// figure reported is the median time to the response's first byte.

// webBenchServer serves dir and returns a logged-in client and the base
// address.
func webBenchServer(b *testing.B, dir string, env []string) (*http.Client, string) {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	vars := envMap(env)
	e := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Dir: dir,
		Getenv: func(k string) string { return vars[k] }, Now: time.Now, Terminal: func(io.Writer) bool { return false }}
	fs := lookup("web").flagSet(e)
	c := &cmdCtx{Env: e, name: "web", flags: fs}
	h, printed, err := c.webHandler(ln.Addr().String(), dir)
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	resp, err := client.Get(printed)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return client, "http://" + ln.Addr().String()
}

func envMap(env []string) map[string]string {
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	return vars
}

// timeFirstByte requests url b.N times and reports the median time to
// the first byte of the response (headers and the first read of the
// body), in ms.
func timeFirstByte(b *testing.B, client *http.Client, url, want string) {
	b.Helper()
	var times []time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		resp, err := client.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		var one [1]byte
		if _, err := io.ReadFull(resp.Body, one[:]); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(t0))
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			b.Fatalf("GET %s: %d\n%.2000s", url, resp.StatusCode, body)
		}
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms-first-byte")
	b.ReportMetric(float64(times[len(times)-1].Microseconds())/1000, "ms-max")
}

func benchRepo(b *testing.B) (string, []string) {
	b.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git not installed")
	}
	env := isolatedEnv(b)
	dir := b.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("git", "init", "-q")
	run("git", "commit", "-q", "--allow-empty", "-m", "init")
	run("git", "config", "hegel.checkpoints", "off")
	os.MkdirAll(filepath.Join(dir, ".hegel", "workflows"), 0o755)
	os.WriteFile(filepath.Join(dir, ".hegel", "workflows", "loop.yaml"), []byte(loopWorkflow), 0o644)
	os.WriteFile(filepath.Join(dir, ".hegel", "workflows", "gated.yaml"), []byte(gateWorkflow), 0o644)
	return dir, env
}

// BenchmarkWebBoard: the board with 1,000 tasks stored (packed, as after
// git gc): 200 of each open status, awaiting approval, awaiting an
// answer, paused, failed, and 200 completed and archived. Target: first
// byte < 200 ms.
func BenchmarkWebBoard(b *testing.B) {
	dir, env := benchRepo(b)
	sh := func(stdin string, args ...string) string {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env, cmd.Stdin = dir, env, strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	// The workflow blob of a real task, then 1,000 tasks by fast-import.
	sh("", "git", "hegel", "start", "gated", "--task", "template")
	wf := sh("", "git", "rev-parse", "refs/hegel/tasks/template:workflow.yaml")
	sh("", "git", "hegel", "abort")
	base := time.Now().Add(-30 * 24 * time.Hour).UTC().Truncate(time.Second)
	var in strings.Builder
	for i := range 1000 {
		at := base.Add(time.Duration(i) * time.Minute)
		name := fmt.Sprintf("task-%04d", i)
		st := map[string]any{"task": name, "workflow": "gated", "mode": "gated", "workflow_id": at.Format(time.RFC3339Nano),
			"started_at": at, "phase_start_time": at, "updated_at": at, "worktree": "", "attempt": 1, "rollback_history": []any{},
			"priority": []string{"low", "normal", "high", "urgent"}[i%4], "task_type": []string{"feature", "bug_fix"}[i%2],
			"description": fmt.Sprintf("Task number %d of the benchmark", i), "history": []string{"spec", "dev", "review"}, "current_node": "review"}
		ref := "refs/hegel/tasks/" + name
		switch i % 5 {
		case 0:
			st["status"], st["pending_claim"] = "awaiting_approval", "review_complete"
		case 1:
			st["status"] = "awaiting_answer"
			st["questions"] = []map[string]any{{"node": "review", "question": "Which database?", "asked_at": at}}
		case 2:
			st["status"], st["pause_reason"], st["paused_at"] = "paused", "waiting for the designer", at
		case 3:
			st["status"], st["error"] = "failed", map[string]any{"node": "review", "message": "tests red", "timestamp": at}
		case 4:
			ref = "refs/hegel/archive/" + name
			st["status"], st["current_node"], st["history"], st["ended_at"] = "completed", "done", []string{"spec", "dev", "review", "done"}, at
		}
		js, _ := json.MarshalIndent(st, "", "  ")
		fmt.Fprintf(&in, "commit %s\ncommitter Bench <bench@example.com> %d +0000\ndata <<EOF\nbench: %s\nEOF\n", ref, at.Unix(), name)
		fmt.Fprintf(&in, "M 100644 inline version\ndata 2\n1\n\nM 100644 %s workflow.yaml\nM 100644 inline state.json\ndata %d\n%s\n", wf, len(js)+1, js)
	}
	in.WriteString("done\n")
	sh(in.String(), "git", "fast-import", "--quiet", "--done")
	if n := strings.Count(sh("", "git", "for-each-ref", "refs/hegel/tasks/", "refs/hegel/archive/"), "\n") + 1; n < 1000 {
		b.Fatalf("%d task refs stored", n)
	}
	client, url := webBenchServer(b, dir, env)
	timeFirstByte(b, client, url+"/", `data-task="task-0999"`)
}

// BenchmarkWebTaskPage: the page of a task whose ref holds 500
// operations (git hegel next round a self-looping node, checkpoints
// off), all listed in its log and laid out in its timeline, its commits
// loose as written and packed after git gc. Target: < 100 ms.
func BenchmarkWebTaskPage(b *testing.B) {
	dir, env := benchRepo(b)
	vars := envMap(env)
	e := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Dir: dir,
		Getenv: func(k string) string { return vars[k] }, Now: time.Now, Terminal: func(io.Writer) bool { return false }}
	c := &cmdCtx{Env: e, name: "next", flags: lookup("next").flagSet(e)}
	eng, _, err := c.engine()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := eng.Start("loop", "", "busy"); err != nil {
		b.Fatal(err)
	}
	for range 499 {
		if _, err := eng.Next("again"); err != nil {
			b.Fatal(err)
		}
	}
	client, url := webBenchServer(b, dir, env)
	// As written (500 loose commits), then after git gc packed them.
	b.Run("loose", func(b *testing.B) { timeFirstByte(b, client, url+"/task/busy", "start: loop at a") })
	cmd := exec.Command("git", "gc", "-q")
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git gc: %v\n%s", err, out)
	}
	b.Run("packed", func(b *testing.B) { timeFirstByte(b, client, url+"/task/busy", "start: loop at a") })
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// End-to-end tests of `git hegel web` in a real headless Chromium: load the
// board, open a task, approve it, and check that the task's ref moved.
// Without Chromium they skip, saying so; .ci/run installs it first.
//
// HEGEL_SCREENSHOTS=<dir> (make screenshots sets docs/) keeps the
// screenshots of the board, a task page and a workflow graph there; by
// default they go to a temporary directory, still taken and checked.

// chromiumPath finds the browser: $HEGEL_CHROMIUM, else the usual names.
func chromiumPath() string {
	if p := os.Getenv("HEGEL_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// serveWeb serves the dashboard of dir on a real loopback port, as `git
// hegel web` does, and returns the printed address.
func serveWeb(t *testing.T, dir string, env []string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w, printed := newWebClientAt(t, dir, env, ln.Addr().String())
	srv := &http.Server{Handler: w.h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return printed
}

func TestBrowser(t *testing.T) {
	browser := chromiumPath()
	if browser == "" {
		t.Skip("browser tests skipped: no Chromium found (install Debian's chromium package, or set HEGEL_CHROMIUM to a Chrome or Chromium binary)")
	}
	if testing.Short() {
		t.Skip("browser tests skipped in -short mode")
	}
	shots := os.Getenv("HEGEL_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if !filepath.IsAbs(shots) {
		// Relative to the repository root (go test runs in the package).
		shots = filepath.Join("..", "..", shots)
	}
	dir, env := webRepo(t)
	// More tasks, so that every column of the board has something.
	mustSh(t, env, dir, "git", "hegel", "start", "minimal", "--task", "shipped", "-d", "Fix the typo in the README")
	mustSh(t, env, dir, "git", "hegel", "next")
	mustSh(t, env, dir, "git", "hegel", "done")
	mustSh(t, env, dir, "git", "hegel", "start", "gated", "--task", "flaky", "--type", "bug_fix", "-d", "Retry the upload on timeouts")
	for range 3 {
		sh(t, env, dir, "git", "hegel", "fail", "-m", "integration test timed out")
	}
	mustSh(t, env, dir, "git", "hegel", "start", "gated", "--task", "design", "--priority", "low", "-d", "Sketch the settings page")
	mustSh(t, env, dir, "git", "hegel", "pause", "-m", "waiting for the designer")
	mustSh(t, env, dir, "git", "hegel", "switch", "plain")
	printed := serveWeb(t, dir, env)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.WindowSize(1400, 1000))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run as root with its sandbox
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil {
		t.Skipf("browser tests skipped: %s does not start: %v", browser, err)
	}
	// Limit the steps, not the browser (see chromedp.Run).
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	text := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Text(css(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return strings.TrimSpace(v)
	}
	shot := func(name string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			png, err := chromedp.FullScreenshot(100)(ctx, tg) // 100: PNG
			if err != nil {
				return err
			}
			if len(png) < 1000 || !bytes.HasPrefix(png, []byte("\x89PNG")) {
				t.Errorf("screenshot %s: not a PNG, or an empty one (%d bytes)", name, len(png))
			}
			return os.WriteFile(filepath.Join(shots, name), png, 0o644)
		})
	}
	base := printed[:strings.Index(printed, "?")]
	before := refOf(t, env, dir, "gated")
	// The printed address: the token becomes a cookie, the board shows.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(printed),
		chromedp.WaitVisible(css(`[data-column="awaiting_approval"] [data-task="gated"]`)),
		shot("web-board.png"),
	); err != nil {
		t.Fatal(err)
	}
	location, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(location, "token") {
		t.Errorf("the token stayed in the address: %s", location)
	}
	columns := text(".board")
	for _, want := range []string{"gated", "asking", "plain", "flaky", "design", "shipped"} {
		if !strings.Contains(columns, want) {
			t.Errorf("the board lacks task %s", want)
		}
	}
	// Open the task from its card.
	if err := chromedp.Do(ctx,
		chromedp.Click(css(`[data-task="gated"] a.name`)),
		chromedp.WaitVisible(css(`#approve-form`)),
	); err != nil {
		t.Fatal(err)
	}
	if s := text("#task-status"); s != "awaiting_approval" {
		t.Errorf("task page status %q", s)
	}
	if err := chromedp.Do(ctx,
		shot("web-task.png"),
		chromedp.Navigate(base+"task/gated/workflow"),
		chromedp.WaitVisible(css(`svg.graph g.current[data-node="review"]`)),
		shot("web-workflow.png"),
		chromedp.Navigate(base+"task/gated"),
		chromedp.WaitVisible(css(`#approve-form`)),
		chromedp.SendKeys(css(`#approve-form input[name=comment]`), "looks good"),
		chromedp.Click(css(`#approve`)),
		chromedp.WaitVisible(css(`.flash`)),
	); err != nil {
		t.Fatal(err)
	}
	if flash := text(".flash"); !strings.Contains(flash, "Approved review by T") {
		t.Errorf("after approving, the page says %q", flash)
	}
	if s := text("#task-status"); s != "completed" {
		t.Errorf("after approving, the status is %q", s)
	}
	if after := refOf(t, env, dir, "gated"); after == before {
		t.Fatal("approving in the browser did not move the task's ref")
	}
	// Runs on the twelve days before, then the statistics and history
	// pages (read anew: no restart).
	for i := 1; i <= 12; i++ {
		at := func(minutes int) string {
			d := time.Now().UTC().AddDate(0, 0, -i).Truncate(24 * time.Hour).Add(9 * time.Hour)
			return "GIT_HEGEL_DATE=" + d.Add(time.Duration(minutes)*time.Minute).Format(time.RFC3339)
		}
		name := fmt.Sprintf("run-%02d", i)
		mustSh(t, append(env, at(0)), dir, "git", "hegel", "start", "minimal", "--task", name)
		mustSh(t, append(env, at(20+i*7)), dir, "git", "hegel", "next")
		end := "done"
		if i%4 == 0 {
			end = "abort"
		}
		mustSh(t, append(env, at(60+i*11)), dir, "git", "hegel", end)
	}
	if err := chromedp.Do(ctx,
		chromedp.Navigate(base+"stats?days=30"),
		chromedp.WaitVisible(css(`#runs-chart rect.bar`)),
		shot("web-stats.png"),
	); err != nil {
		t.Fatal(err)
	}
	// 14 runs ended in the period: the 12, shipped and gated; 3 aborted.
	if rate := text("#success-rate"); rate != "78.6%" {
		t.Errorf("success rate %q, want 78.6%% (11 of 14)", rate)
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(css(`header nav a[href="/history"]`)),
		chromedp.WaitVisible(css(`#history tr[data-task="run-04"]`)),
	); err != nil {
		t.Fatal(err)
	}
	// The approval is a commit under the user's identity (the archive's
	// commit follows it).
	if log := mustSh(t, env, dir, "git", "log", "-2", "--format=%an %s", "refs/hegel/archive/gated"); !strings.Contains(log, "\nT approve") {
		t.Errorf("the approval's commit: %s", log)
	}
}

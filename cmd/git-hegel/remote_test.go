package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// On a terminal, the first git hegel push asks whether to set the remote
// up, and does it on "y"; it asks once.
func TestPushOffersSetupOnATerminal(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	env := isolatedEnv(t)
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && (k == "HOME" || strings.HasPrefix(k, "GIT_CONFIG")) {
			t.Setenv(k, v)
		}
	}
	root := t.TempDir()
	mustSh(t, env, root, "git", "init", "-q", "--bare", "origin.git")
	mustSh(t, env, root, "git", "clone", "-q", "file://"+filepath.Join(root, "origin.git"), "a")
	dir := filepath.Join(root, "a")
	mustSh(t, env, dir, "git", "commit", "-q", "--allow-empty", "-m", "init")

	push := func(answer string) (string, string, int) {
		in, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, answer)
		w.Close()
		defer in.Close()
		var out, errb bytes.Buffer
		code := run([]string{"push"}, &Env{Stdin: in, Stdout: &out, Stderr: &errb, Getenv: os.Getenv, Dir: dir,
			Now: time.Now, Terminal: func(io.Writer) bool { return true }})
		return out.String(), errb.String(), code
	}
	if out, errs, code := run1(t, dir, "start", "minimal", "--task", "t"); code != 0 {
		t.Fatalf("start: %s %s", out, errs)
	}
	out, errs, code := push("y\n")
	if code != 0 || !strings.Contains(out, "Also carry workflow state with plain 'git fetch' and 'git push' to origin") ||
		!strings.Contains(out, "Set up remote origin") {
		t.Fatalf("first push (%d):\n%s\n%s", code, out, errs)
	}
	cfg := mustSh(t, env, dir, "git", "config", "--get-all", "remote.origin.push")
	if !strings.Contains(cfg, "refs/hegel/tasks/*:refs/hegel/tasks/*") {
		t.Errorf("push refspecs: %q", cfg)
	}
	out, _, _ = push("y\n")
	if strings.Contains(out, "Also carry") {
		t.Errorf("asked again:\n%s", out)
	}
}

func run1(t *testing.T, dir string, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := run(args, &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: os.Getenv, Dir: dir, Now: time.Now})
	return out.String(), errb.String(), code
}

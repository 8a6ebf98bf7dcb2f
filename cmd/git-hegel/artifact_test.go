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

// On a terminal, artifact writes an artifact's control characters out
// (an artifact can come from another clone: an escape sequence in it
// would set the window title or write the clipboard); piped, it writes
// the bytes the node submitted.
func TestArtifactOnATerminalShowsControlCharacters(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	env := isolatedEnv(t)
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && (k == "HOME" || strings.HasPrefix(k, "GIT_CONFIG")) {
			t.Setenv(k, v)
		}
	}
	dir := t.TempDir()
	mustSh(t, env, dir, "git", "init", "-q")
	mustSh(t, env, dir, "git", "commit", "-q", "--allow-empty", "-m", "init")
	if out, errs, code := run1(t, dir, "start", "minimal", "--task", "t"); code != 0 {
		t.Fatalf("start: %s %s", out, errs)
	}
	spec := "# Spec\x1b]52;c;ZWNobyBwd25lZA==\x07\r\nhidden\rshown\n"
	if err := os.MkdirAll(filepath.Join(dir, "hegel-tasks", "t"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hegel-tasks", "t", "SPEC.md"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errs, code := run1(t, dir, "next"); code != 0 {
		t.Fatalf("next: %s %s", out, errs)
	}
	artifact := func(terminal bool) string {
		var out, errb bytes.Buffer
		code := run([]string{"artifact", "t", "SPEC.md"}, &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
			Getenv: os.Getenv, Dir: dir, Now: time.Now, Terminal: func(io.Writer) bool { return terminal }})
		if code != 0 {
			t.Fatalf("artifact (terminal %v): %d %s", terminal, code, errb.String())
		}
		return out.String()
	}
	if got, want := artifact(true), "# Spec\\x1b]52;c;ZWNobyBwd25lZA==\\a\r\nhidden\\rshown\n"; got != want {
		t.Errorf("on a terminal:\n got %q\nwant %q", got, want)
	}
	if got := artifact(false); got != spec {
		t.Errorf("piped: got %q, want the submitted bytes %q", got, spec)
	}
}

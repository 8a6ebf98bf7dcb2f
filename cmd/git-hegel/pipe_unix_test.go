//go:build unix

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// runClosedStdout runs a command whose standard output is a pipe nobody
// reads any more, and returns how it ended and what it wrote on stderr.
func runClosedStdout(t *testing.T, env []string, dir string, args ...string) (*os.ProcessState, string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	defer w.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdout = dir, env, w
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%s: %v", strings.Join(args, " "), err)
		}
	}
	return cmd.ProcessState, stderr.String()
}

// diedOfSIGPIPE reports an end by SIGPIPE (or its exit status, 141).
func diedOfSIGPIPE(ps *os.ProcessState) bool {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal() == syscall.SIGPIPE
	}
	return ps.ExitCode() == brokenPipeExit
}

// TestClosedStdoutDoesNotStopAChange: 'rollback --all -y | head -3' once
// died of SIGPIPE between restoring the files and archiving the task. A
// writing command finishes its work and then ends quietly, as git does;
// a reading one ends at once.
func TestClosedStdoutDoesNotStopAChange(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	env := isolatedEnv(t)
	dir := t.TempDir()
	mustSh(t, env, dir, "git", "init", "-q")
	write := func(prefix string) {
		for i := 0; i < 40; i++ {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s%02d.txt", prefix, i)), []byte(prefix+"\n"), 0o644)
		}
	}
	write("f")
	mustSh(t, env, dir, "git", "add", ".")
	mustSh(t, env, dir, "git", "commit", "-q", "-m", "files")
	mustSh(t, env, dir, "git", "hegel", "start", "minimal", "--task", "t")
	write("g")
	mustSh(t, env, dir, "git", "hegel", "next")
	write("h")

	ps, stderr := runClosedStdout(t, env, dir, "git", "hegel", "rollback", "--all", "-y")
	if !diedOfSIGPIPE(ps) || strings.Contains(stderr, "error") {
		t.Errorf("rollback --all: %v, stderr %q; want an end by SIGPIPE, no message", ps, stderr)
	}
	if out := mustSh(t, env, dir, "git", "for-each-ref", "--format=%(refname)", "refs/hegel/archive/", "refs/hegel/tasks/"); out != "refs/hegel/archive/t\n" {
		t.Errorf("the task was not archived: %q", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "h00.txt")); err == nil {
		t.Error("the files were not rolled back")
	}

	ps, stderr = runClosedStdout(t, env, dir, "git", "hegel", "log")
	if !diedOfSIGPIPE(ps) || stderr != "" {
		t.Errorf("log: %v, stderr %q; want an end by SIGPIPE, no message", ps, stderr)
	}
}

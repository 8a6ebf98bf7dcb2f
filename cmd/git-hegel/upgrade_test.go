package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestUpgradeAsksOnATerminal: on a terminal, upgrade shows the diff and
// asks; "n" changes nothing, "y" adopts the file.
func TestUpgradeAsksOnATerminal(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	env := isolatedEnv(t)
	dir := t.TempDir()
	mustSh(t, env, dir, "git", "init", "-q")
	file := filepath.Join(dir, ".hegel", "workflows", "w.yaml")
	os.MkdirAll(filepath.Dir(file), 0o755)
	os.WriteFile(file, []byte(trustTestWF), 0o644)
	mustSh(t, env, dir, "git", "hegel", "start", "w", "--task", "t")
	changed := strings.Replace(trustTestWF, "Do a.", "Do a, carefully.", 1)
	os.WriteFile(file, []byte(changed), 0o644)
	upgrade := func(answer string) (string, string, int) {
		var out, errb bytes.Buffer
		e := envFrom(dir, env, &out, &errb, func(io.Writer) bool { return true })
		e.Stdin = ttyIn{strings.NewReader(answer)}
		code := run([]string{"upgrade"}, e)
		return out.String(), errb.String(), code
	}
	out, errs, code := upgrade("n\n")
	if code != 0 || !strings.Contains(out, "+    prompt: Do a, carefully.\n") || !strings.HasSuffix(out, "? (y/N) Nothing changed\n") || errs != "" {
		t.Fatalf("answer n: exit %d\n%s\n%s", code, out, errs)
	}
	if got := mustSh(t, env, dir, "git", "cat-file", "blob", "refs/hegel/tasks/t:workflow.yaml"); got != trustTestWF {
		t.Fatalf("a declined upgrade changed the task:\n%s", got)
	}
	out, errs, code = upgrade("y\n")
	if code != 0 || !strings.Contains(out, "Upgraded task t to the worktree's definition of w") || errs != "" {
		t.Fatalf("answer y: exit %d\n%s\n%s", code, out, errs)
	}
	if got := mustSh(t, env, dir, "git", "cat-file", "blob", "refs/hegel/tasks/t:workflow.yaml"); got != changed {
		t.Fatalf("the task does not hold the file:\n%s", got)
	}
}

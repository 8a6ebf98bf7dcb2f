package main

import (
	"bytes"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// ttyIn is standard input that is a terminal: what the user types.
type ttyIn struct{ *strings.Reader }

func (ttyIn) Write(p []byte) (int, error) { return len(p), nil }

// TestResumeAsksOnATerminal: without --strategy, resume offers the four
// strategies on a terminal and runs the one chosen; an answer that names
// none changes nothing.
func TestResumeAsksOnATerminal(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	env := isolatedEnv(t)
	dir := t.TempDir()
	mustSh(t, env, dir, "git", "init", "-q")
	mustSh(t, env, dir, "git", "config", "hegel.maxAttempts", "1")
	mustSh(t, env, dir, "git", "hegel", "start", "minimal", "--task", "m")
	mustSh(t, env, dir, "git", "hegel", "next")
	mustSh(t, env, dir, "git", "hegel", "fail", "-m", "broken")
	resume := func(answer string) (string, string, int) {
		var out, errb bytes.Buffer
		e := envFrom(dir, env, &out, &errb, func(io.Writer) bool { return true })
		e.Stdin = ttyIn{strings.NewReader(answer)}
		code := run([]string{"resume"}, e)
		return out.String(), errb.String(), code
	}
	out, errs, code := resume("maybe\n")
	if code != 1 || errs != "error: No strategy chosen; nothing changed\n" {
		t.Fatalf("no choice: exit %d %q", code, errs)
	}
	for _, want := range []string{
		"Task m is failed at plan. How should it go on?\n",
		"  1) retry-current    try the current node again from attempt 1\n",
		"  2) retry-previous   go back to the node before it and redo that first\n",
		"  3) skip-current     skip the current node and move on by its first transition\n",
		"  4) from-checkpoint  roll files, index and HEAD back to a checkpoint and go on from there\n",
		"Choose 1-4 (anything else cancels): ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the offer lacks %q:\n%s", want, out)
		}
	}
	if st := mustSh(t, env, dir, "git", "hegel", "status"); !strings.Contains(st, "Status: failed") {
		t.Fatalf("a cancelled choice changed the task:\n%s", st)
	}
	out, errs, code = resume("2\n")
	if code != 0 || !strings.Contains(out, "Resumed task m (retry-previous)") || !strings.Contains(out, "Current node: spec") {
		t.Fatalf("choice 2: exit %d\n%s%s", code, out, errs)
	}
}

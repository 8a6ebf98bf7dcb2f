package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// stepOutputFlow runs one command step whose output holds an escape
// sequence (it sets the window title), a bell and a carriage return that
// would draw "shown" over "hidden"; the next node's prompt quotes it.
const stepOutputFlow = `mode: s
start_node: one
nodes:
  one:
    run:
      command: printf 'OUT\033]0;pwned\007\r\nhidden\rshown\n'
    transitions:
      - when: one_complete
        to: two
  two:
    prompt: |
      Result: {{results.one}}
    transitions:
      - when: two_complete
        to: done
`

// stepOutputRepo is a repository whose task t stands at node two of
// stepOutputFlow, its step one's result stored.
func stepOutputRepo(t *testing.T) string {
	t.Helper()
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
	if err := os.MkdirAll(filepath.Join(dir, ".hegel", "workflows"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".hegel", "workflows", "s.yaml"), []byte(stepOutputFlow), 0o644); err != nil {
		t.Fatal(err)
	}
	// Node two has no step: the run stops there, the task waiting at it.
	if out, errs, code := run1(t, dir, "run", "s", "--task", "t", "-y"); code != 1 || !strings.Contains(errs, "Missing step handler for step 'two'") {
		t.Fatalf("run: %d %s %s", code, out, errs)
	}
	return dir
}

// runTerminal runs git hegel in dir with its standard output taken for a
// terminal or not.
func runTerminal(t *testing.T, dir string, terminal bool, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: os.Getenv, Dir: dir, Now: time.Now, Terminal: func(io.Writer) bool { return terminal }})
	if code != 0 {
		t.Fatalf("%s (terminal %v): %d %s", strings.Join(args, " "), terminal, code, errb.String())
	}
	return out.String()
}

const (
	stepOutput        = "OUT\x1b]0;pwned\x07\r\nhidden\rshown\n"
	stepOutputVisible = "OUT\\x1b]0;pwned\\a\r\nhidden\\rshown\n"
)

// On a terminal, result writes a step's control characters out (a step's
// output is whatever an adapter or a command printed, and a result can
// come with a fetch); piped, it writes the bytes the step printed.
func TestResultOnATerminalShowsControlCharacters(t *testing.T) {
	dir := stepOutputRepo(t)
	if got := runTerminal(t, dir, true, "result", "one"); got != stepOutputVisible {
		t.Errorf("on a terminal:\n got %q\nwant %q", got, stepOutputVisible)
	}
	if got := runTerminal(t, dir, false, "result", "one"); got != stepOutput {
		t.Errorf("piped: got %q, want the step's bytes %q", got, stepOutput)
	}
}

// A prompt that quotes a step's output is shown the same way on a
// terminal; piped, as an agent reads it, it keeps the bytes.
func TestPromptOnATerminalShowsControlCharacters(t *testing.T) {
	dir := stepOutputRepo(t)
	quoted := func(out string) string {
		_, p, ok := strings.Cut(out, "\nPrompt:\nResult: ")
		if !ok {
			t.Fatalf("no prompt in:\n%s", out)
		}
		return p
	}
	if got, want := quoted(runTerminal(t, dir, true, "repeat")), strings.TrimRight(stepOutputVisible, "\n")+"\n"; got != want {
		t.Errorf("repeat on a terminal:\n got %q\nwant %q", got, want)
	}
	if got, want := quoted(runTerminal(t, dir, false, "repeat")), strings.TrimRight(stepOutput, "\n")+"\n"; got != want {
		t.Errorf("repeat piped: got %q, want the step's bytes %q", got, want)
	}
}

// A guide in .hegel/guides comes with the clone: on a terminal guides
// writes its control characters out; piped, it writes the file's bytes.
func TestGuideOnATerminalShowsControlCharacters(t *testing.T) {
	dir := stepOutputRepo(t)
	if err := os.MkdirAll(filepath.Join(dir, ".hegel", "guides"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".hegel", "guides", "EVIL.md"), []byte(stepOutput), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := runTerminal(t, dir, true, "guides", "EVIL"); got != stepOutputVisible {
		t.Errorf("on a terminal:\n got %q\nwant %q", got, stepOutputVisible)
	}
	if got := runTerminal(t, dir, false, "guides", "EVIL"); got != stepOutput {
		t.Errorf("piped: got %q, want the file's bytes %q", got, stepOutput)
	}
}

// A confirm text quotes an earlier step's result: on a terminal, run
// writes its control characters out where it asks.
func TestConfirmOnATerminalShowsControlCharacters(t *testing.T) {
	dir := stepOutputRepo(t)
	flow := strings.Replace(stepOutputFlow, `    prompt: |
      Result: {{results.one}}
`, `    run:
      confirm: "Go on with {{results.one}}?"
`, 1)
	if err := os.WriteFile(filepath.Join(dir, ".hegel", "workflows", "c.yaml"), []byte(strings.Replace(flow, "mode: s", "mode: c", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, terminal := range []bool{true, false} {
		var out, errb bytes.Buffer
		code := run([]string{"run", "c", "--task", fmt.Sprintf("c-%v", terminal)}, &Env{Stdin: strings.NewReader("n\n"), Stdout: &out, Stderr: &errb,
			Getenv: os.Getenv, Dir: dir, Now: time.Now, Terminal: func(io.Writer) bool { return terminal }})
		if code != 1 || !strings.Contains(errb.String(), "you declined at two") {
			t.Fatalf("run (terminal %v): %d %s", terminal, code, errb.String())
		}
		want := "Go on with " + strings.TrimSuffix(stepOutput, "\n") + "?"
		if terminal {
			want = "Go on with " + strings.TrimSuffix(stepOutputVisible, "\n") + "?"
		}
		if !strings.Contains(errb.String(), want) {
			t.Errorf("terminal %v: the confirm text is not %q in:\n%q", terminal, want, errb.String())
		}
	}
}

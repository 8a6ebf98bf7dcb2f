package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/engine"
)

// On a terminal the progress line sits on stderr below the streamed
// output: it is cleared before output is written, drawn again once the
// output ends a line, and taken away for good at the end. Off a terminal
// each step gets one plain line.
func TestRunProgressLine(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 5, 17, 0, time.UTC)
	var out, errw bytes.Buffer
	c := &cmdCtx{Env: &Env{Stdout: &out, Stderr: &errw, Getenv: func(string) string { return "" },
		Now: func() time.Time { return now }, Terminal: func(io.Writer) bool { return true }}}
	p := c.newRunProgress()
	start := now.Add(-72 * time.Second)
	p.update(&engine.Progress{Task: "t", Workflow: "analyze-refactor", Node: "refactor", Step: 2, Total: 3, Phase: "step", RunStart: start, StepStart: start})
	const line = "git hegel run: step 2 of 3: refactor (1m12s)"
	const clear = "\r\x1b[K"
	if got := errw.String(); got != line {
		t.Fatalf("first draw = %q, want %q", got, line)
	}
	fmt.Fprint(p.stdout, "half a line")
	if got := errw.String(); got != line+clear {
		t.Errorf("output mid-line: stderr = %q, want the line cleared and not drawn", got)
	}
	fmt.Fprint(p.stdout, " ends\n")
	if got := errw.String(); got != line+clear+line {
		t.Errorf("output ended a line: stderr = %q, want the line drawn again", got)
	}
	if got := out.String(); got != "half a line ends\n" {
		t.Errorf("stdout = %q", got)
	}
	p.close()
	if got := errw.String(); got != line+clear+line+clear {
		t.Errorf("after close: stderr = %q", got)
	}
	fmt.Fprint(p.stdout, "after\n")
	if strings.Count(errw.String(), line) != 2 {
		t.Errorf("drawn after close: %q", errw.String())
	}

	// Not a terminal: one plain line per step, no control characters.
	out.Reset()
	errw.Reset()
	c.Terminal = func(io.Writer) bool { return false }
	p = c.newRunProgress()
	p.update(&engine.Progress{Node: "analyze", Step: 1, Total: 2, Phase: "step", RunStart: start})
	p.update(&engine.Progress{Node: "analyze", Step: 1, Total: 2, Phase: "check", RunStart: start})
	p.update(&engine.Progress{Node: "refactor", Step: 2, Total: 2, Phase: "step", RunStart: start})
	p.close()
	if got, want := errw.String(), "step 1 of 2: analyze\nstep 2 of 2: refactor\n"; got != want {
		t.Errorf("off a terminal: stderr = %q, want %q", got, want)
	}
}

// A narrow terminal gets the line cut, so it never wraps.
func TestRunProgressLineWidth(t *testing.T) {
	c := &cmdCtx{Env: &Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" },
		Now: time.Now, Terminal: func(io.Writer) bool { return true }}}
	p := c.newRunProgress()
	p.width = 30
	p.cur = &engine.Progress{Node: strings.Repeat("n", 50), Step: 1, Total: 1, Phase: "step", RunStart: time.Now()}
	if got := []rune(p.text()); len(got) > 29 {
		t.Errorf("text %q is %d wide on a 30-column terminal", string(got), len(got))
	}
}

func TestCompactDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{-time.Second: "0s", 45 * time.Second: "45s", 72 * time.Second: "1m12s", 2*time.Hour + 3*time.Minute + 10*time.Second: "2h3m"} {
		if got := compactDuration(d); got != want {
			t.Errorf("compactDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

package main

import (
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/git-hegel/git-hegel/engine/text"
)

// Env is everything a command may touch outside the repository, injected so
// tests run commands in-process with fixed time and captured output.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	Dir    string           // the working directory
	Now    func() time.Time // the clock
	// Terminal reports whether w is an interactive terminal (for colour).
	Terminal func(w io.Writer) bool

	// Set from the command line and the configuration (colour.go).
	color colorSettings
	// rawNonASCII is core.quotePath=false: bytes from 0x80 up are printed
	// as they are in paths, not as octal escapes.
	rawNonASCII bool
	// pipe tracks a closed standard output (pipe.go); nil in tests that
	// write to buffers.
	pipe *pipeState
	// forAgent: an agent reads the output (the MCP server runs the
	// command): a task's text that arrived with a fetch and is not
	// trusted here is printed as a notice (engine.ForAgent).
	forAgent bool
}

func systemEnv() *Env {
	dir, _ := os.Getwd()
	pipe := &pipeState{}
	return &Env{
		pipe:     pipe,
		Stdin:    os.Stdin,
		Stdout:   &pipeWriter{f: os.Stdout, state: pipe, out: true},
		Stderr:   &pipeWriter{f: os.Stderr, state: pipe},
		Getenv:   os.Getenv,
		Dir:      dir,
		Now:      clock(os.Getenv),
		Terminal: isTerminal,
	}
}

// clock returns the wall clock, or a fixed instant when GIT_HEGEL_DATE holds
// an RFC 3339 time: tests and reproducible demos pin dates this way, as git's
// own tests pin GIT_COMMITTER_DATE.
func clock(getenv func(string) string) func() time.Time {
	if v := getenv("GIT_HEGEL_DATE"); v != "" {
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			return func() time.Time { return t }
		}
	}
	return time.Now
}

// isTerminal asks the terminal driver, as isatty does: /dev/null is a
// character device too, but not a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := outputFile(w)
	return ok && term.IsTerminal(int(f.Fd()))
}

// getenv is Getenv, with a nil Getenv (tests) meaning an empty environment.
func (e *Env) getenv(key string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(key)
}

// quotePath renders a path for people as git does (see text.QuotePath
// and core.quotePath). Every path in human output goes through it; output
// for programs (-z, --json) carries paths as they are.
func (e *Env) quotePath(p string) string { return text.QuotePath(p, !e.rawNonASCII) }

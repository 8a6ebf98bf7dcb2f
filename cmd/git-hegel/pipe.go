package main

import (
	"os"
	"sync/atomic"
)

// A closed standard output must not stop a command half-way: before,
// 'git hegel rollback --all -y | head -3' was killed by SIGPIPE after the
// files were restored and before the task was archived. So the process
// catches SIGPIPE (pipe_unix.go), and a write to a closed stdout or stderr
// fails instead of killing it. What happens next depends on the command:
//
//   - one that writes to the repository pretends the write succeeded, so
//     that nothing between two state changes stops on it, finishes its
//     work, and then exits quietly as git does on a broken pipe (killed by
//     SIGPIPE; a shell reports 141);
//   - one that only reads (command.readOnly) has nothing to finish and
//     stops at once, as it did before, so 'git hegel log | head' or
//     'status --watch | head' ends when head does.

// pipeState is what the process's output writers share.
type pipeState struct {
	// stopNow: the running command only reads; stop at the first broken
	// pipe.
	stopNow atomic.Bool
	// broken: standard output was closed under us.
	broken atomic.Bool
}

// pipeWriter is standard output or error seen through pipeState.
type pipeWriter struct {
	f     *os.File
	state *pipeState
	out   bool // standard output (whose loss sets the exit status)
	// term cleans what goes to a terminal (termguard.go); nil when the
	// file is not one.
	term *termFilter
}

func newPipeWriter(f *os.File, state *pipeState, out bool) *pipeWriter {
	w := &pipeWriter{f: f, state: state, out: out}
	if isTerminal(f) {
		w.term = &termFilter{set: termSequences}
	}
	return w
}

func (w *pipeWriter) Write(p []byte) (int, error) {
	if w.out && w.state.broken.Load() {
		return len(p), nil
	}
	if w.term != nil {
		if _, err := w.write(w.term.filter(p)); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return w.write(p)
}

func (w *pipeWriter) write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil && isBrokenPipe(err) {
		if w.state.stopNow.Load() {
			dieOfBrokenPipe()
		}
		if w.out {
			w.state.broken.Store(true)
		}
		return len(p), nil
	}
	return n, err
}

// File is the file written to: child processes are handed it as it is,
// and terminal checks ask it.
func (w *pipeWriter) File() *os.File { return w.f }

// outputFile is the *os.File behind w, if there is one.
func outputFile(w any) (*os.File, bool) {
	switch f := w.(type) {
	case *os.File:
		return f, true
	case interface{ File() *os.File }:
		return f.File(), true
	}
	return nil, false
}

// brokenPipeExit is the exit status of a command whose standard output
// was closed, where the process could not die of the signal itself.
const brokenPipeExit = 128 + 13

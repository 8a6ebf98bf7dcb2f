package engine

import (
	"context"
	"io"
	"time"
)

// The step runner starts processes (adapters, commands, checks, the
// completion callback) through an Executor, which the command line
// implements with os/exec and process groups; the engine itself never
// starts one, so its tests run on a fake.

// Executor runs processes for the step runner and for checks.
type Executor interface {
	// Run starts p, feeds it its input, streams its output and waits for
	// it. Cancelling ctx, or p.Timeout passing, stops the process and
	// everything it started (its process group): SIGTERM first, SIGKILL
	// if it is still there after StopGrace. Run never returns before the
	// process is gone.
	Run(ctx context.Context, p *Process) *ProcessResult
}

// StopGrace is how long a process is given to stop after SIGTERM before
// it is killed.
const StopGrace = 5 * time.Second

// Process is one process to run: `sh -c Command` in the worktree root.
type Process struct {
	Command string
	// Stdin is what the process reads (nil: nothing, end of input at once).
	Stdin []byte
	// Env are KEY=VALUE pairs added to git-hegel's own environment.
	Env []string
	// Files, if not nil, are written to a new private directory before the
	// process starts, one file per key; FilesEnv names the environment
	// variable that gets the directory's path. The directory is removed
	// afterwards.
	Files    map[string][]byte
	FilesEnv string
	// Stdout and Stderr receive the output as it comes (nil: discarded).
	Stdout, Stderr io.Writer
	// Timeout stops the process after this long (0: never).
	Timeout time.Duration
	// Started, if set, is called with the process id once it runs (it
	// leads its own process group, so the id is the group's too).
	Started func(pid int)
}

// ProcessResult is how a process ended.
type ProcessResult struct {
	// Exit is the exit status; -1 when the process was ended by a signal
	// or never started.
	Exit int
	// Signal names the signal that ended it ("" if none).
	Signal string
	// Cancelled: ctx was cancelled and the process was stopped for it.
	// TimedOut: it ran past its Timeout and was stopped.
	Cancelled, TimedOut bool
	// Killed: it had to be killed (SIGKILL) after StopGrace.
	Killed bool
	// Err is set when the process could not be run at all.
	Err      error
	Duration time.Duration
}

// OK reports a process that ran and exited 0.
func (r *ProcessResult) OK() bool {
	return r.Err == nil && r.Exit == 0 && !r.Cancelled && !r.TimedOut
}

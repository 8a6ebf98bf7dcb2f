// Package runexec runs the step runner's processes (engine.Executor) with
// os/exec: `sh -c COMMAND` in the worktree root, in a process group of its
// own, so that stopping a step stops everything it started.
package runexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/git-hegel/git-hegel/engine"
)

// Executor implements engine.Executor.
type Executor struct {
	// Dir is where processes run: the top of the worktree.
	Dir string
	// Env is the environment every process starts from (os.Environ()).
	Env []string
	// Grace is how long a stopped process group gets between SIGTERM and
	// SIGKILL (0: engine.StopGrace).
	Grace time.Duration
	// Shell runs the command lines ("" : /bin/sh).
	Shell string
}

var _ engine.Executor = (*Executor)(nil)

// pipeWait is how long output is still read after a process exited while
// something it started in the background keeps its output open.
const pipeWait = 2 * time.Second

// Run implements engine.Executor.
func (x *Executor) Run(ctx context.Context, p *engine.Process) *engine.ProcessResult {
	start := time.Now()
	res := &engine.ProcessResult{Exit: -1}
	defer func() { res.Duration = time.Since(start) }()
	env := slices.Clone(x.Env)
	env = append(env, p.Env...)
	if p.Files != nil && p.FilesEnv != "" {
		dir, err := writeFiles(p.Files)
		if err != nil {
			res.Err = err
			return res
		}
		defer os.RemoveAll(dir)
		env = append(env, p.FilesEnv+"="+dir)
	}
	shell := x.Shell
	if shell == "" {
		shell = "/bin/sh"
	}
	cmd := exec.Command(shell, "-c", p.Command)
	cmd.Dir, cmd.Env = x.Dir, env
	if p.Stdin != nil {
		cmd.Stdin = bytes.NewReader(p.Stdin)
	}
	cmd.Stdout, cmd.Stderr = orDiscard(p.Stdout), orDiscard(p.Stderr)
	cmd.SysProcAttr = groupAttr()
	cmd.WaitDelay = pipeWait
	if err := ctx.Err(); err != nil {
		res.Cancelled = true
		return res
	}
	if err := cmd.Start(); err != nil {
		res.Err = err
		return res
	}
	pgid := cmd.Process.Pid
	if p.Started != nil {
		p.Started(pgid)
	}
	grace := x.Grace
	if grace <= 0 {
		grace = engine.StopGrace
	}
	var stopped atomic.Value // time.Time of the SIGTERM
	var cancelled, timedOut, killed atomic.Bool
	done := make(chan struct{})
	go func() {
		var timeout <-chan time.Time
		if p.Timeout > 0 {
			t := time.NewTimer(p.Timeout)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-done:
			return
		case <-ctx.Done():
			cancelled.Store(true)
		case <-timeout:
			timedOut.Store(true)
		}
		stopped.Store(time.Now())
		signalGroup(pgid, sigTerm)
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			killed.Store(true)
			signalGroup(pgid, sigKill)
		}
	}()
	err := cmd.Wait()
	close(done)
	// A stopped step's whole group goes: whatever ignored SIGTERM and
	// outlived the shell is killed once the grace period is over.
	if t, ok := stopped.Load().(time.Time); ok && stopGroup(pgid, t.Add(grace)) {
		killed.Store(true)
	}
	res.Killed = killed.Load()
	res.Cancelled, res.TimedOut = cancelled.Load(), timedOut.Load()
	var ee *exec.ExitError
	switch {
	case err == nil:
		res.Exit = 0
	case errors.As(err, &ee):
		res.Exit = ee.ExitCode()
		res.Signal = signalName(ee.ProcessState)
	case errors.Is(err, exec.ErrWaitDelay):
		res.Exit = cmd.ProcessState.ExitCode()
		res.Signal = signalName(cmd.ProcessState)
	default:
		res.Err = err
	}
	return res
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	// The command's own standard output or error (a wrapper that watches
	// for a closed pipe) is handed on as the file it is, so the process
	// sees what the command sees: a terminal, or a pipe.
	if f, ok := w.(interface{ File() *os.File }); ok {
		return f.File()
	}
	return w
}

// writeFiles writes files into a new private directory.
func writeFiles(files map[string][]byte) (string, error) {
	dir, err := os.MkdirTemp("", "hegel-results-")
	if err != nil {
		return "", fmt.Errorf("cannot make the results directory: %v", err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			os.RemoveAll(dir)
			return "", fmt.Errorf("cannot write the results directory: %v", err)
		}
	}
	return dir, nil
}

// StopLeftover stops what is left of the process group pgid, which a
// killed git-hegel's step led: SIGTERM, then SIGKILL after
// engine.StopGrace. It reports whether any process of the group was left.
func StopLeftover(pgid int) bool {
	if pgid <= 1 || !groupAlive(pgid) {
		return false
	}
	signalGroup(pgid, sigTerm)
	stopGroup(pgid, time.Now().Add(engine.StopGrace))
	return true
}

// stopGroup waits until the process group pgid is gone, and kills it when
// it is still there at deadline. It reports whether it had to kill.
func stopGroup(pgid int, deadline time.Time) bool {
	for groupAlive(pgid) {
		if time.Now().After(deadline) {
			signalGroup(pgid, sigKill)
			for i := 0; i < 100 && groupAlive(pgid); i++ {
				time.Sleep(10 * time.Millisecond)
			}
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/git-hegel/git-hegel/cmd/git-hegel/runexec"
	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore"
)

// `git hegel cancel`: stop a `git hegel run` from another terminal. The
// run's record (gitstore/runs.go) names its process; cancel sends it
// SIGTERM, which the run handles as Ctrl-C: it stops the step's process
// group (SIGTERM, then SIGKILL after 5 s), records the cancel and exits
// 130. cancel waits until the run has gone, so when it returns the cancel
// is recorded.

// cancelWait bounds how long cancel waits for the run to go: the step's
// grace period, and time to record the cancel and run the callback.
const cancelWait = engine.StopGrace + 10*time.Second

func runCancel(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 0); err != nil {
		return err
	}
	e, r, err := c.engine()
	if err != nil {
		return err
	}
	runs := r.Runs()
	task := c.stringFlag("task")
	if task == "" {
		t, err := e.Current("")
		switch {
		case err == nil:
			task = t.State.Task
		case errors.Is(err, engine.ErrNoWorkflow):
			return errors.New("No active workflow here to cancel; name the task with --task (see 'git hegel tasks')")
		default:
			return err
		}
	}
	rec, err := runs.LoadRun(task)
	if err != nil {
		return err
	}
	if rec != nil && rec.Liveness == engine.LiveDead && rec.Child > 0 && runexec.StopLeftover(rec.Child) {
		// A run killed outright left its step running: stop that, and
		// leave the record, so the next run knows where it stopped.
		fmt.Fprintf(c.Stdout, "Stopped what the killed run of task %s left running at step %d of %d (%s): process group %d\n", task, rec.Step, rec.TotalSteps, rec.CurrentStep, rec.Child)
		return nil
	}
	if rec == nil || rec.Liveness == engine.LiveDead {
		return c.cancelWaiting(e, task, rec)
	}
	if rec.Liveness == engine.LiveUnknown {
		if !c.boolFlag("force") {
			return fmt.Errorf("Task '%s' is run by %s, which cannot be checked or signalled from here; cancel it there, or remove its record with 'git hegel cancel --task %s --force'", task, rec.Owner, task)
		}
		if err := runs.RemoveRun(task); err != nil {
			return err
		}
		fmt.Fprintf(c.Stdout, "Removed the record of the run of task %s by %s (no signal was sent)\n", task, rec.Owner)
		return nil
	}
	if err := runexec.Terminate(rec.PID); err != nil {
		if errors.Is(err, runexec.ErrNoProcess) {
			return c.cancelWaiting(e, task, nil)
		}
		return fmt.Errorf("cannot signal %s: %v", rec.Owner, err)
	}
	deadline := time.Now().Add(cancelWait)
	for {
		cur, err := runs.LoadRun(task)
		if err != nil {
			return err
		}
		if cur == nil || cur.Liveness == engine.LiveDead {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("Sent SIGTERM to %s, which has not stopped after %s; it may still be recording the cancel", rec.Owner, cancelWait)
		}
		time.Sleep(25 * time.Millisecond)
	}
	fmt.Fprintf(c.Stdout, "Cancelled the run of task %s (pid %d), which was at step %d of %d (%s)\n", task, rec.PID, rec.Step, rec.TotalSteps, rec.CurrentStep)
	return nil
}

// cancelWaiting cancels a run that waits for a confirmation, when no
// process runs; rec, if set, is the record a killed run left.
func (c *cmdCtx) cancelWaiting(e *engine.Engine, task string, rec *engine.RunRecord) error {
	t, err := e.Lookup(task)
	if err != nil {
		return err
	}
	if !engine.WaitsForRun(t) {
		if rec != nil {
			return fmt.Errorf("No run of task '%s' is running: the last one (%s) was killed; 'git hegel run --task %s' continues it", task, rec.Owner, task)
		}
		return fmt.Errorf("No run of task '%s' is running", task)
	}
	st, err := e.CancelWaiting(t)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.Stdout, "Cancelled the run of task %s, which waited for confirmation at %s; the task is kept ('git hegel run --task %s' continues it)\n", task, st.CurrentNode, task)
	return nil
}

// runningLine is status's "Running: step 2 of 3 (refactor), pid N,
// 1m12s" for the task's run, or "" when none runs. A record a killed run
// left says so.
func (c *cmdCtx) runningLine(r *gitstore.Repo, task string) (*engine.RunRecord, string) {
	rec, err := r.Runs().LoadRun(task)
	if err != nil || rec == nil {
		return nil, ""
	}
	where := fmt.Sprintf("step %d of %d (%s)", rec.Step, rec.TotalSteps, rec.CurrentStep)
	switch rec.Liveness {
	case engine.LiveDead:
		return rec, fmt.Sprintf("Last run: killed at %s; 'git hegel run' continues it", where)
	case engine.LiveUnknown:
		return rec, fmt.Sprintf("Running: %s, pid %d on %s, %s", where, rec.PID, rec.Host, compactDuration(c.Now().Sub(rec.Started)))
	}
	return rec, fmt.Sprintf("Running: %s, pid %d, %s", where, rec.PID, compactDuration(c.Now().Sub(rec.Started)))
}

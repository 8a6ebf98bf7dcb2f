package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// Checks: a node's `check:` commands run when the node is about to end,
// by `git hegel next` as by `git hegel run`. Exit 0 lets the node end; any
// other status records a failed attempt (as `git hegel fail` does) whose
// last_failure is the command and the last lines of its output, and the
// node does not end.

// checkTail is how many lines of a failed check's output are kept.
const checkTail = 20

// CheckError is a check command that did not pass. The failed attempt is
// recorded by the time it is returned.
type CheckError struct {
	Node, Command string
	// Why is "exited with status 1", "was stopped by signal SIGKILL", ...
	Why string
	// Output is the last lines of the command's output.
	Output string
	// Attempt is the attempt that failed, of Max; Failed is set when it
	// was the last one and the task failed.
	Attempt, Max int
	Failed       bool
	// Via is the command that ran the check: "next" or "run".
	Via string
}

func (e *CheckError) Error() string {
	msg := fmt.Sprintf("Check failed at '%s': %s %s", e.Node, e.Command, e.Why)
	if e.Failed {
		return msg + fmt.Sprintf("; that was attempt %d of %d, so the task failed (resume it with 'git hegel resume --strategy %s')", e.Attempt, e.Max, joinStrategies("|"))
	}
	return msg + fmt.Sprintf("; recorded as attempt %d of %d (fix it, then run 'git hegel %s' again)", e.Attempt, e.Max, e.Via)
}

// Failure is the last_failure text: the command, why, and the output.
func (e *CheckError) Failure() string {
	s := fmt.Sprintf("check `%s` %s", e.Command, e.Why)
	if e.Output != "" {
		s += "\n" + e.Output
	}
	return s
}

// ErrInterrupted means a check or step was stopped by Ctrl-C or SIGTERM;
// nothing was recorded for it.
var ErrInterrupted = errors.New("Interrupted")

// checkRun is one check's outcome before it is recorded.
type checkRun struct {
	index   int // of the node's checks, from 0
	command string
	res     *ProcessResult
	output  string
	log     []byte // the attempt's log (logs.go)
}

func outOrDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// runChecks runs node's checks in order and returns the first that did
// not pass (nil: all passed). out, if set, gets each command line and its
// output as it runs. A check stopped by ctx returns ErrInterrupted.
func (e *Engine) runChecks(ctx context.Context, t *Task, wf *workflow.Definition, node string, out io.Writer, log *logBuffer) (*checkRun, error) {
	n := wf.Nodes[node]
	if n == nil || len(n.Checks) == 0 {
		return nil, nil
	}
	if !e.TrustOf(wf.Raw).Trusted {
		return nil, &TrustError{Task: t.State.Task, Node: node, Field: "check", Origin: e.origin(t.State.Task)}
	}
	if e.Exec == nil {
		return nil, fmt.Errorf("'%s' has checks, and they cannot be run here; nothing changed", node)
	}
	env, files, err := e.stepEnv(t, wf, node, "", true)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = &logBuffer{}
	}
	for i, c := range n.Checks {
		cmd := c.Command
		if out != nil {
			fmt.Fprintf(out, "check: %s\n", cmd)
		}
		fmt.Fprintf(log, "check: %s\n", cmd)
		tail := newTail(checkTail, io.MultiWriter(outOrDiscard(out), log))
		res := e.Exec.Run(ctx, &Process{Command: cmd, Env: env, Files: files, FilesEnv: ResultsDirEnv, Stdout: tail, Stderr: tail})
		if res.Cancelled {
			return nil, ErrInterrupted
		}
		if !res.OK() {
			fmt.Fprintf(log, "check %s\n", exitWhy(res))
			return &checkRun{index: i, command: cmd, res: res, output: tail.String(), log: log.Bytes()}, nil
		}
		fmt.Fprintln(log, "check passed")
	}
	return nil, nil
}

// exitWhy says how a process ended, for messages: "exited with status 2".
func exitWhy(r *ProcessResult) string {
	switch {
	case r.Err != nil:
		return "could not be run: " + firstLine(r.Err.Error())
	case r.TimedOut:
		return fmt.Sprintf("ran out of time after %s and was stopped", r.Duration.Round(1e9))
	case r.Signal != "":
		return "was stopped by signal " + r.Signal
	}
	return "exited with status " + strconv.Itoa(r.Exit)
}

// checkNode runs the checks of the node task t is at, before `next`
// moves it on; a failure is recorded as a failed attempt and returned as
// a *CheckError.
// The checks' log is returned for the commit that moves the task on;
// a failure's goes into the failed attempt's commit.
func (e *Engine) checkNode(ctx context.Context, t *Task, wf *workflow.Definition, node, via string, out io.Writer) ([]byte, error) {
	log := &logBuffer{}
	cr, err := e.runChecks(ctx, t, wf, node, out, log)
	if err != nil {
		return nil, err
	}
	if cr == nil {
		return log.Bytes(), nil
	}
	return nil, e.recordCheckFailure(t, wf, node, via, cr, nil)
}

// recordCheckFailure records a failed check as a failed attempt at node
// (with put written in the same commit) and returns its *CheckError.
func (e *Engine) recordCheckFailure(t *Task, wf *workflow.Definition, node, via string, cr *checkRun, put map[string][]byte) error {
	ce := &CheckError{Node: node, Command: cr.command, Why: exitWhy(cr.res), Output: cr.output, Via: via}
	if len(cr.log) > 0 {
		if put == nil {
			put = map[string][]byte{}
		}
		put[LogPath(node, t.State.Attempt)] = cr.log
	}
	st, _, err := e.updateTask(t, updateOpts{wf: wf, put: put}, func(st *State, wf *workflow.Definition) (string, error) {
		if st.CurrentNode != node {
			return "", fmt.Errorf("Task %s moved to '%s' while the checks of '%s' ran; nothing recorded", st.Task, st.CurrentNode, node)
		}
		ce.Attempt, ce.Max = max1(st.Attempt), wf.Attempts(node, e.MaxAttempts)
		return via + ": check failed: " + e.failAttempt(st, wf, ce.Failure()), nil
	})
	if err != nil {
		return err
	}
	ce.Failed = st.Status == StatusFailed
	return ce
}

// ResultsDirEnv names the directory that holds the earlier steps'
// results, one file per node, for adapters, commands and checks.
const ResultsDirEnv = "HEGEL_RESULTS_DIR"

// stepEnv is the environment of a handler or check at node: the task,
// the node, the step number and the total, and the results so far as
// files. adapter names the adapter for adapter steps; values adds the
// run's values as variables (commands and checks: command_env.go).
func (e *Engine) stepEnv(t *Task, wf *workflow.Definition, node, adapter string, values bool) ([]string, map[string][]byte, error) {
	step, total := StepOf(wf, t.State)
	env := []string{
		"HEGEL_TASK=" + t.State.Task,
		"HEGEL_TASK_DIR=" + TaskDir(t.State),
		"HEGEL_WORKFLOW=" + t.State.Workflow,
		"HEGEL_NODE=" + node,
		"HEGEL_STEP=" + strconv.Itoa(step),
		"HEGEL_TOTAL_STEPS=" + strconv.Itoa(total),
	}
	if adapter != "" {
		env = append(env, "HEGEL_ADAPTER="+adapter)
	}
	results, err := e.loadResults(t.State, nil)
	if err != nil {
		return nil, nil, err
	}
	files := make(map[string][]byte, len(results))
	for n, r := range results {
		files[n] = []byte(r)
	}
	if values {
		in, err := e.loadInputs(t.State.Task, nil)
		if err != nil {
			return nil, nil, err
		}
		st := t.State
		venv, skipped := ValueEnv(CommandValues{Prompt: in.Prompt, Context: in.Context, Vars: in.Vars, Results: results,
			Task: map[string]string{"mode": st.Mode, "description": st.Description, "type": st.TaskType, "priority": TaskPriority(st)}})
		for _, s := range skipped {
			e.warn(s)
		}
		env = append(env, venv...)
	}
	return env, files, nil
}

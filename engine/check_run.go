package engine

import (
	"context"
	"fmt"
	"io"
)

// CheckReport is what `git hegel check` found: the current node's checks
// run as `next` would run them, with nothing recorded.
type CheckReport struct {
	Task, Node string
	// Checks counts the node's checks; Ran those that ran (the first
	// failure stops the rest, as at next).
	Checks, Ran int
	// Failed is the check that did not pass (nil: all passed).
	Failed *CheckFailure
}

// CheckFailure is a check that did not pass.
type CheckFailure struct {
	Command string
	Why     string // "exited with status 1", ...
	Output  string // its last lines
}

// Check runs the checks of the node the task is at (the active one, or
// task) and reports the outcome without spending an attempt or changing
// the task: a test written first may fail here as often as it takes.
// Only next (and done, and run) record a failed check. out gets each
// command line and its output as it runs. A check stopped by ctx returns
// ErrInterrupted.
func (e *Engine) Check(ctx context.Context, task string, out io.Writer) (*CheckReport, error) {
	t, err := e.Current(task)
	if err != nil {
		return nil, err
	}
	wf, err := definition(t)
	if err != nil {
		return nil, err
	}
	if err := checkLoaded(t, wf); err != nil {
		return nil, err
	}
	st := t.State
	if st.Finished() {
		return nil, finishedError(st)
	}
	node := st.CurrentNode
	rep := &CheckReport{Task: st.Task, Node: node}
	n := wf.Nodes[node]
	if n == nil {
		return nil, fmt.Errorf("Workflow '%s' has no node '%s'", wf.Name, node)
	}
	rep.Checks = len(n.Checks)
	if rep.Checks == 0 {
		return rep, nil
	}
	if err := e.MayRunNode(st.Task, wf, node); err != nil {
		return nil, err
	}
	cr, err := e.runChecks(ctx, t, wf, node, out, nil)
	if err != nil {
		return nil, err
	}
	rep.Ran = rep.Checks
	if cr != nil {
		rep.Ran = cr.index + 1
		rep.Failed = &CheckFailure{Command: cr.command, Why: exitWhy(cr.res), Output: cr.output}
	}
	return rep, nil
}

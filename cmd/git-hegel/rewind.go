package main

import (
	"fmt"
	"strings"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore"
	"github.com/git-hegel/git-hegel/rollback"
)

// rewinder is the engine's Rewinder: a rollback of the current task to a
// checkpoint through rollback.Manager, shown and confirmed like `git hegel
// rollback --to`, for resume --strategy from-checkpoint and rollback
// --all.
type rewinder struct {
	c *cmdCtx
	r *gitstore.Repo
	e *engine.Engine
}

func (w *rewinder) Rewind(o engine.TaskOptions, id, reason string) (*engine.View, error) {
	c := w.c
	m := c.checkpoints(w.r)
	defer m.Close()
	if j, err := m.Interrupted(); err != nil {
		return nil, err
	} else if j != nil {
		return nil, fmt.Errorf("%s", j.Advice())
	}
	t, err := w.e.Current(o.Task)
	if err != nil {
		return nil, err
	}
	task := t.State.Task
	cps, err := m.List(task) // newest first
	if err != nil {
		return nil, err
	}
	if len(cps) == 0 {
		hint := ""
		if !m.Auto {
			hint = " (hegel.checkpoints is off)"
		}
		return nil, fmt.Errorf("Task %s has no checkpoints to roll back to%s", task, hint)
	}
	if id == "" {
		id = cps[len(cps)-1].ID
	} else if cp, err := m.Find(task, id); err != nil || cp == nil || !strings.HasPrefix(cp.ID, strings.ToLower(id)) {
		return nil, fmt.Errorf("Task %s has no checkpoint '%s'; its checkpoints: %s", task, id, checkpointList(cps))
	}
	req := rollback.Request{To: id, Reason: reason, Yes: c.boolFlag("yes")}
	p, err := m.Prepare(w.e, o, req)
	if err != nil {
		return nil, err
	}
	c.printRollbackPlan(p, false)
	if !req.Yes {
		ok, err := c.confirm(fmt.Sprintf("Roll back to %s? Uncommitted changes are kept in a safety checkpoint. (y/N): ", p.Target.Node), "roll back")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, engine.ErrCancelled
		}
	}
	res, err := m.Execute(w.e, p)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(c.Stdout, "Saved the state before the rollback as safety checkpoint %s\n", res.Safety.ID)
	fmt.Fprintf(c.Stdout, "Rolled back to %s (checkpoint %s). Run 'git hegel rollback --undo' to undo it\n", res.Plan.Target.Node, res.Plan.Target.ID)
	return res.View, nil
}

// checkpointList names checkpoints for a message, oldest first.
func checkpointList(cps []*rollback.Checkpoint) string {
	parts := make([]string, 0, len(cps))
	for i := len(cps) - 1; i >= 0; i-- {
		parts = append(parts, cps[i].ID+" ("+cps[i].Node+")")
	}
	return strings.Join(parts, ", ")
}

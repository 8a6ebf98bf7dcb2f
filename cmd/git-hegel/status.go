package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore"
)

func runStatus(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 0); err != nil {
		return err
	}
	e, r, err := c.engine()
	if err != nil {
		return err
	}
	c.noteInterruptedRollback(r)
	t, err := e.Status()
	if err != nil && !errors.Is(err, engine.ErrNoWorkflow) {
		return err
	}
	head, err := r.Head()
	if err != nil {
		return err
	}
	var uncommitted *int
	if c.boolFlag("verbose") {
		n, err := r.CountUncommitted()
		if err != nil {
			return err
		}
		uncommitted = &n
	}
	if c.boolFlag("json") {
		out := statusJSON{Schema: jsonSchemaVersion, Git: gitJSON{Branch: head.Branch}, UncommittedFiles: uncommitted}
		if !head.Commit.IsZero() {
			out.Git.Head = head.Commit.String()
		}
		if t != nil {
			st := t.State
			out.Workflow = &workflowJSON{
				Task: st.Task, Workflow: st.Workflow, Mode: st.Mode, Status: st.Status,
				CurrentNode: st.CurrentNode, History: st.History, WorkflowID: st.WorkflowID,
				StartedAt: st.StartedAt, PhaseStartedAt: st.PhaseStartTime, EndedAt: st.EndedAt,
				SecondsInPhase: int64(phaseDuration(st, c.Now()).Seconds()),
			}
		}
		return writeJSON(c.Stdout, out)
	}
	if t == nil {
		fmt.Fprintln(c.Stdout, "No active workflow")
		if uncommitted != nil {
			fmt.Fprintf(c.Stdout, "Uncommitted files: %d\n", *uncommitted)
		}
		return nil
	}
	st := t.State
	var b strings.Builder // one write, not one per line
	fmt.Fprintf(&b, "Mode: %s\n", st.Mode)
	fmt.Fprintf(&b, "Current node: %s\n", c.highlight(st.CurrentNode))
	fmt.Fprintf(&b, "History: %s\n", historyLine(st.History))
	fmt.Fprintf(&b, "Status: %s\n", st.Status)
	fmt.Fprintf(&b, "Time in phase: %s\n", humanDuration(phaseDuration(st, c.Now())))
	fmt.Fprintf(&b, "Branch: %s\n", branchLine(head))
	fmt.Fprintf(&b, "Task: %s\n", st.Task)
	if uncommitted != nil {
		fmt.Fprintf(&b, "Uncommitted files: %d\n", *uncommitted)
	}
	_, _ = io.WriteString(c.Stdout, b.String())
	return nil
}

// highlight marks the current node in output on stdout.
func (c *cmdCtx) highlight(s string) string { return c.paint(c.Stdout, "node", s) }

// historyLine renders "spec → plan → [code]": the path so far, current last.
func historyLine(h []string) string {
	if len(h) == 0 {
		return ""
	}
	parts := append([]string(nil), h...)
	parts[len(parts)-1] = "[" + parts[len(parts)-1] + "]"
	return strings.Join(parts, " → ")
}

// phaseDuration is the time spent in the current node; a finished workflow
// stops the clock.
func phaseDuration(st *engine.State, now time.Time) time.Duration {
	end := now
	if st.EndedAt != nil {
		end = *st.EndedAt
	}
	d := end.Sub(st.PhaseStartTime)
	if d < 0 {
		return 0
	}
	return d
}

// humanDuration prints at most two units: "45s", "3m 12s", "2h 5m", "3d 4h".
func humanDuration(d time.Duration) string {
	s := int64(d.Seconds())
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm %ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh %dm", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%dd %dh", s/86400, s%86400/3600)
}

func branchLine(h gitstore.Head) string {
	switch {
	case h.Branch != "" && h.Commit.IsZero():
		return h.Branch + " (no commits yet)"
	case h.Branch != "":
		return h.Branch
	}
	return "(detached at " + h.Commit.String()[:7] + ")"
}

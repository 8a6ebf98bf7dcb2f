package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/engine/workflow"
	"github.com/git-hegel/git-hegel/gitstore"
	"github.com/git-hegel/git-hegel/rollback"
)

func runStatus(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 0); err != nil {
		return err
	}
	if c.boolFlag("watch") {
		return runStatusWatch(c)
	}
	if c.flags.Changed("interval") {
		return usagef(c.name, "--interval goes with --watch")
	}
	return statusOnce(c)
}

// statusOnce prints the status once.
func statusOnce(c *cmdCtx) error {
	e, r, err := c.engine()
	if err != nil {
		return err
	}
	c.noteInterruptedRollback(e)
	t, err := e.Status(c.selected())
	var damaged *engine.DamagedError
	if errors.As(err, &damaged) {
		// Reported, not failed: the worktree can start, switch or reset.
		c.warn(damaged.Warning())
	} else if err != nil && !errors.Is(err, engine.ErrNoWorkflow) {
		return err
	}
	if t != nil {
		// A state no git-hegel wrote (edited by hand, or damaged) is shown
		// as it is, with what is wrong with it: by the rules, and against
		// the workflow it runs (its remembered shape, not a parse).
		if perr := e.CheckTask(t); perr != nil {
			c.warn(perr.Error())
		}
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
	if schema := c.jsonSchema(); schema > 0 {
		out := statusRest{Git: gitJSON{Branch: head.Branch}, UncommittedFiles: uncommitted}
		if !head.Commit.IsZero() {
			out.Git.Head = head.Commit.String()
		}
		if damaged != nil {
			out.Damaged = &damagedJSON{Task: damaged.Task, Ref: damaged.Ref, Problem: damaged.Msg}
		}
		var task *workflowJSON
		if t != nil {
			task = taskJSON(c.forReader(e, t.State), c.Now(), schema)
			task.Archived = t.Archived
			out.RollbackAvailable = !t.Archived && hasCheckpoint(r, t.State.Task)
			_, out.WorkflowFileChanged = e.WorkflowFileChanged(t)
			if t.State.MetaMode != "" {
				if mv, err := e.MetaOf(t.State); err == nil && mv.Done {
					out.NextWorkflows = mv.Next
				}
			}
			if st := t.State; st.Attempt > 1 || st.Status == engine.StatusFailed {
				task.MaxAttempts = maxAttempts(e, t)
			}
			if rec, _ := c.runningLine(r, t.State.Task); rec != nil {
				out.Running = rec.Running()
				if out.Running {
					out.Step, out.TotalSteps, out.CurrentStep = rec.Step, rec.TotalSteps, rec.CurrentStep
				}
				out.Run = &runJSON{PID: rec.PID, Host: rec.Host, Alive: rec.Running(), Worktree: rec.Worktree, StartedAt: rec.Started,
					StepStartedAt: rec.StepStarted}
				if ran := c.Now().Sub(rec.Started); schema >= 2 {
					out.Run.TimeMS = ptr(ran.Milliseconds())
				} else {
					out.Run.Seconds = ptr(int64(ran.Seconds()))
				}
			}
		}
		if schema >= 2 {
			return writeJSON(c.Stdout, statusJSON2{Schema: schema, Task: task, statusRest: out})
		}
		return writeJSON(c.Stdout, statusJSON{Schema: schema, Workflow: task, statusRest: out})
	}
	if damaged != nil {
		fmt.Fprintf(c.Stdout, "Task: %s\nStatus: damaged\nProblem: %s\n", damaged.Task, damaged.Msg)
		fmt.Fprintf(c.Stdout, "Branch: %s\n", branchLine(head))
		return nil
	}
	if t == nil {
		fmt.Fprintln(c.Stdout, "No active workflow")
		if uncommitted != nil {
			fmt.Fprintf(c.Stdout, "Uncommitted files: %d\n", *uncommitted)
		}
		return nil
	}
	st := t.State
	fmt.Fprintf(c.Stdout, "Mode: %s\n", firstLineOf(st.Mode))
	fmt.Fprintf(c.Stdout, "Current node: %s\n", c.highlight(st.CurrentNode))
	fmt.Fprintf(c.Stdout, "History: %s\n", historyLine(st.History))
	fmt.Fprintf(c.Stdout, "Status: %s\n", st.Status)
	if _, line := c.runningLine(r, st.Task); line != "" {
		fmt.Fprintln(c.Stdout, line)
	}
	c.printStateDetail(e, t)
	fmt.Fprintf(c.Stdout, "Time in phase: %s\n", text.HumanDuration(st.TimeInPhase(c.Now())))
	fmt.Fprintf(c.Stdout, "Branch: %s\n", branchLine(head))
	fmt.Fprintf(c.Stdout, "Task: %s\n", st.Task)
	if src, changed := e.WorkflowFileChanged(t); changed {
		fmt.Fprintln(c.Stdout, engine.WorkflowChangeNote(st.Task, st.Workflow, src))
	}
	if uncommitted != nil {
		fmt.Fprintf(c.Stdout, "Uncommitted files: %d\n", *uncommitted)
	}
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

func branchLine(h gitstore.Head) string {
	switch {
	case h.Branch != "" && h.Commit.IsZero():
		return h.Branch + " (no commits yet)"
	case h.Branch != "":
		return h.Branch
	}
	return "(detached at " + h.Commit.String()[:7] + ")"
}

// printStateDetail prints the lines of status that depend on the task's
// status: attempts, gates, questions, the error, skipped nodes. It reads
// the workflow definition only when it must (a retry, a gate), so plain
// status stays as cheap as reading the task.
func (c *cmdCtx) printStateDetail(e *engine.Engine, t *engine.Task) {
	st := t.State
	w := c.Stdout
	if st.TaskType != "" {
		fmt.Fprintf(w, "Type: %s\n", firstLineOf(st.TaskType))
	}
	if st.MetaMode != "" {
		fmt.Fprintf(w, "Meta-mode: %s\n", metaModeName(st.MetaMode))
		if mv, err := e.MetaOf(st); err == nil && mv.Done {
			if line := metaNextLine(mv); line != "" {
				fmt.Fprintln(w, line)
			}
		}
	}
	if st.Subphase != "" {
		// Only a node with sub-phases sets one, so only then is the
		// definition read.
		if wf, err := engine.TaskWorkflow(t); err == nil {
			if line := engine.SubphaseLine(st, wf); line != "" {
				fmt.Fprintf(w, "Sub-phase: %s\n", line)
			}
		}
	}
	if st.Attempt > 1 {
		line := fmt.Sprintf("Attempt %d of %d", st.Attempt, maxAttempts(e, t))
		if st.LastFailure != "" {
			line += " — last failure: " + firstLineOf(st.LastFailure)
		}
		fmt.Fprintln(w, line)
	}
	switch st.Status {
	case engine.StatusAwaitingApproval:
		if g := engine.Gate(t); g != nil && engine.WaitsForRun(t) {
			fmt.Fprintf(w, "Waiting for: confirmation to go from %s to %s ('git hegel run' asks again, 'git hegel run -y' goes on, 'git hegel cancel' gives up)\n", g.Node, g.To)
		} else if g != nil && e.ApprovalBarred(st) != nil {
			// Its owner is told before trying that the approval is not theirs.
			fmt.Fprintf(w, "Waiting for: approval to go from %s to %s, by another person on their clone (hegel.approval.otherPerson; 'git hegel reject -m REASON' sends it back)\n", g.Node, g.To)
		} else if g != nil {
			fmt.Fprintf(w, "Waiting for: approval to go from %s to %s ('git hegel approve' or 'git hegel reject -m REASON')\n", g.Node, g.To)
		}
	case engine.StatusAwaitingAnswer:
		for _, q := range st.Questions {
			if q.AnsweredAt == nil {
				fmt.Fprintf(w, "Question: %s ('git hegel answer TEXT')\n", firstLineOf(q.Question))
			}
		}
	case engine.StatusFailed:
		if st.Error != nil {
			fmt.Fprintf(w, "Error: %s (resume with 'git hegel resume --strategy %s')\n", firstLineOf(st.Error.Message), strategyNames("|"))
		}
	case engine.StatusPaused:
		if st.PauseReason != "" {
			fmt.Fprintf(w, "Paused: %s\n", firstLineOf(st.PauseReason))
		}
	}
	for _, s := range st.SkippedNodes {
		fmt.Fprintf(w, "Skipped: %s (%s)\n", s.Node, firstLineOf(s.Reason))
	}
	c.printLocks(st)
	if st.Cancelled && st.Active() {
		fmt.Fprintf(w, "Cancelled: its last run was cancelled ('git hegel run --task %s' continues it)\n", st.Task)
	}
}

// maxAttempts is the current node's bound on attempts (it parses the
// workflow definition).
func maxAttempts(e *engine.Engine, t *engine.Task) int {
	if v, err := e.ViewOf(t); err == nil {
		return v.MaxAttempts
	}
	return max(e.MaxAttempts, workflow.DefaultMaxAttempts)
}

// hasCheckpoint reports whether task has a checkpoint to roll back to: its
// chain's ref exists (dropping the last checkpoint removes it). It reads
// one ref, so status stays cheap.
func hasCheckpoint(r *gitstore.Repo, task string) bool {
	_, err := r.ReadRef(rollback.RefPrefix + task)
	return err == nil
}

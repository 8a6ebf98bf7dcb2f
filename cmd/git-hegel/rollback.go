package main

import (
	"bufio"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore"
	"github.com/git-hegel/git-hegel/rollback"
)

func rollbackFlags(fs *pflag.FlagSet) {
	fs.String("to", "", "roll back to this checkpoint (an id from 'git hegel checkpoint list')")
	completeValues(fs, "to", kindCheckpoint)
	fs.BoolP("yes", "y", false, "do not ask for confirmation")
	fs.BoolP("dry-run", "n", false, "list what would change and change nothing")
	fs.BoolP("null", "z", false, "with --dry-run: list the files as NUL-terminated records, paths unquoted (see the manual)")
	fs.StringP("message", "m", "", "why, kept in the task's rollback history (--reason is the same)")
	valueName(fs, "message", "REASON")
	fs.Bool("force", false, "roll back even when the loop guard says no")
	fs.Bool("undo", false, "undo the last rollback (its safety checkpoint is restored)")
	fs.Bool("all", false, "roll the whole workflow back to its first checkpoint and end it (rolled_back)")
	fs.Bool("recurse-submodules", false, "also check out, in each submodule, the commit the checkpoint recorded")
	progressFlags(fs)
}

// promptLimit is how many changed files a rollback lists before asking.
const promptLimit = 20

func runRollback(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 1); err != nil {
		return err
	}
	req := rollback.Request{
		To: c.stringFlag("to"), Undo: c.boolFlag("undo"), Reason: c.stringFlag("message"),
		Force: c.boolFlag("force"), Yes: c.boolFlag("yes"), DryRun: c.boolFlag("dry-run"),
		RecurseSubmodules: c.boolFlag("recurse-submodules"),
	}
	if len(args) == 1 {
		req.Node = args[0]
	}
	all := c.boolFlag("all")
	switch {
	case req.Node != "" && req.To != "":
		return usagef("rollback", "give a node or --to <checkpoint>, not both")
	case req.Undo && (req.Node != "" || req.To != "" || all):
		return usagef("rollback", "--undo takes no node, no --to and no --all")
	case all && (req.Node != "" || req.To != "" || req.DryRun):
		return usagef("rollback", "--all takes no node, no --to and no --dry-run")
	case c.boolFlag("null") && !req.DryRun:
		return usagef("rollback", "-z needs --dry-run")
	}
	e, r, err := c.engine()
	if err != nil {
		return err
	}
	if all {
		return c.rollbackAll(e)
	}
	m := c.checkpoints(r)
	defer m.Close()
	if c.Getenv("GOGC") == "" {
		// A rollback's peak heap (the index, the scan, two trees' worth of
		// diff) stays under git reset --hard's own RSS at 200 (79 MB
		// against 112-135 MB on the 100k bench), and collects less often
		// than checkpoints' 50: 2-3% of its time (docs/benchmarks.md,
		// "2026-11-25: rollback scan").
		debug.SetGCPercent(200)
	}
	if j, err := m.Interrupted(); err != nil {
		return err
	} else if j != nil {
		return c.recoverRollback(m, e, j, req)
	}
	p, err := m.Prepare(e, c.taskOptions(), req)
	if err != nil {
		return err
	}
	if req.DryRun && c.boolFlag("null") {
		bw := bufio.NewWriter(c.Stdout)
		writePlanZ(bw, p)
		return bw.Flush()
	}
	c.printRollbackPlan(p, req.DryRun)
	if req.DryRun {
		fmt.Fprintln(c.Stdout, "Dry run: nothing changed")
		return nil
	}
	if !req.Yes {
		ok, err := c.confirm(fmt.Sprintf("Roll back to %s? Uncommitted changes are kept in a safety checkpoint. (y/N): ", p.Target.Node), "roll back")
		if err != nil {
			return err
		}
		if !ok {
			fmt.Fprintln(c.Stdout, "Rollback cancelled")
			return nil
		}
	}
	res, err := m.Execute(e, p)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.Stdout, "Saved the state before the rollback as safety checkpoint %s\n", res.Safety.ID)
	if res.Plan.Undo {
		fmt.Fprintf(c.Stdout, "Undid the rollback: back at %s as it was (checkpoint %s). Run 'git hegel rollback --undo' again to redo it\n", res.Plan.Target.Node, res.Plan.Target.ID)
	} else {
		fmt.Fprintf(c.Stdout, "Rolled back to %s (checkpoint %s). Run 'git hegel rollback --undo' to undo it\n", res.Plan.Target.Node, res.Plan.Target.ID)
	}
	if res.View != nil {
		fmt.Fprintln(c.Stdout)
		c.printView(res.View)
	}
	return nil
}

func (c *cmdCtx) printRollbackPlan(p *rollback.Plan, dryRun bool) {
	what := fmt.Sprintf("Rolling back to %s (checkpoint %s, taken %s)", p.Target.Node, p.Target.ID, c.age(p.Target.CreatedAt))
	if p.Undo {
		what = fmt.Sprintf("Undoing the last rollback: back to %s as it was (safety checkpoint %s, taken %s)", p.Target.Node, p.Target.ID, c.age(p.Target.CreatedAt))
	}
	if dryRun {
		what += " would"
	}
	fmt.Fprintf(c.Stdout, "%s:\n", what)
	if p.Unchanged() {
		fmt.Fprintln(c.Stdout, "  no file, index or HEAD changes")
		return
	}
	limit := promptLimit
	if dryRun {
		limit = -1
	}
	c.printPlan(p, limit)
}

// recoverRollback finishes or undoes a rollback that was interrupted: the
// command run again finishes it, with --undo undoes it.
func (c *cmdCtx) recoverRollback(m *rollback.Manager, e *engine.Engine, j *rollback.Journal, req rollback.Request) error {
	switch {
	case req.Undo && !req.DryRun:
		res, err := m.UndoInterrupted(e, c.taskOptions())
		if err != nil {
			return err
		}
		fmt.Fprintf(c.Stdout, "Undid the interrupted rollback to %s: files, index and HEAD are as they were before it (safety checkpoint %s)\n", j.Node, j.SafetyID)
		if res.View != nil {
			fmt.Fprintln(c.Stdout)
			c.printView(res.View)
		}
		return nil
	case req.DryRun, req.Node != "" && req.Node != j.Node, req.To != "" && !strings.HasPrefix(j.TargetID, strings.ToLower(req.To)):
		return errors.New(j.Advice())
	}
	res, err := m.Finish(e, c.taskOptions())
	if err != nil {
		return err
	}
	fmt.Fprintf(c.Stdout, "Finished the interrupted rollback to %s (checkpoint %s). Run 'git hegel rollback --undo' to undo it\n", j.Node, j.TargetID)
	if res.View != nil {
		fmt.Fprintln(c.Stdout)
		c.printView(res.View)
	}
	return nil
}

// noteInterruptedRollback tells `git hegel status` users about a rollback
// that did not finish (on stderr, so --json output stays parseable).
func (c *cmdCtx) noteInterruptedRollback(r *gitstore.Repo) {
	if !rollback.MayBeInterrupted(r) {
		return
	}
	m := c.checkpoints(r)
	defer m.Close()
	if n := m.InterruptedNotice(); n != "" {
		fmt.Fprintln(c.Stderr, n)
	}
}

// rollbackAll is `git hegel rollback --all`: the whole workflow back to
// its first checkpoint, then the task ends as rolled_back (and is
// archived with its checkpoints, so --undo still works).
func (c *cmdCtx) rollbackAll(e *engine.Engine) error {
	st, err := e.RollbackAll(c.taskOptions(), c.stringFlag("message"))
	if errors.Is(err, engine.ErrCancelled) {
		fmt.Fprintln(c.Stdout, "Rollback cancelled")
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(c.Stdout, "Rolled back the whole workflow: task %s is rolled_back and archived. Run 'git hegel rollback --undo' to undo it\n", st.Task)
	return nil
}

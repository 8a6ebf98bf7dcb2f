package main

import (
	"bufio"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/engine"
)

func rollbackFlags(fs *pflag.FlagSet) {
	fs.String("to", "", "roll back to this checkpoint (an id from 'git hegel checkpoint list')")
	completeValues(fs, "to", kindCheckpoint)
	fs.BoolP("yes", "y", false, "do not ask for confirmation")
	fs.BoolP("dry-run", "n", false, "list what would change and change nothing")
	fs.BoolP("null", "z", false, "with --dry-run: list the files as NUL-terminated records, paths unquoted (see the manual)")
	fs.StringP("message", "m", "", "why, kept in the task's rollback history (--reason is the same)")
	valueName(fs, "message", "REASON")
	fs.Bool("force", false, "roll back past the loop guard or the task's max_rollbacks, or to a checkpoint this clone did not take")
	fs.Bool("undo", false, "undo the last rollback (its safety checkpoint is restored)")
	fs.Bool("all", false, "roll the whole workflow back to its start checkpoint and end it (rolled_back)")
	fs.Bool("recurse-submodules", false, "also check out, in each submodule, the commit the checkpoint recorded")
	progressFlags(fs)
	// A rollback ends at a node, as next does: its -q also leaves out
	// that node's prompt.
	fs.Lookup("quiet").Usage = "do not report progress, and print only where the task went back to, not the prompt ('git hegel repeat' prints it)"
}

// promptLimit is how many changed files a rollback lists before asking.
const promptLimit = 20

func runRollback(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 1); err != nil {
		return err
	}
	o := engine.RollbackOptions{
		Task: c.selected(), To: c.stringFlag("to"), Undo: c.boolFlag("undo"), All: c.boolFlag("all"), Reason: c.stringFlag("message"),
		Force: c.boolFlag("force"), Yes: c.boolFlag("yes"), DryRun: c.boolFlag("dry-run"),
		Recurse: c.boolFlag("recurse-submodules"),
	}
	if len(args) == 1 {
		o.Node = args[0]
	}
	switch {
	case o.Node != "" && o.To != "":
		return usagef("rollback", "give a node or --to <checkpoint>, not both")
	case o.Undo && (o.Node != "" || o.To != "" || o.All):
		return usagef("rollback", "--undo takes no node, no --to and no --all")
	case o.All && (o.Node != "" || o.To != ""):
		return usagef("rollback", "--all takes no node and no --to")
	case c.boolFlag("null") && !o.DryRun:
		return usagef("rollback", "-z needs --dry-run")
	}
	if c.Getenv("GOGC") == "" {
		// A rollback's peak heap (the index, the scan, two trees' worth of
		// diff) stays under git reset --hard's own RSS at 200 (79 MB
		// against 112-135 MB on the 100k bench), and collects less often
		// than checkpoints' 50: 2-3% of its time (docs/benchmarks.md,
		// "2026-11-25: rollback scan").
		c.gcPercent = 200
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	if rec, err := e.InterruptedRollback(); err != nil {
		return err
	} else if rec != nil {
		if o.All || o.DryRun {
			return rec.InterruptedError()
		}
		return c.recoverRollback(e, rec, o)
	}
	p, err := e.PlanRollback(o)
	if err != nil {
		return err
	}
	if o.DryRun && c.boolFlag("null") {
		bw := bufio.NewWriter(c.Stdout)
		writePlanZ(bw, p.Restore)
		return bw.Flush()
	}
	c.printRollbackPlan(p, o.DryRun)
	if o.DryRun {
		fmt.Fprintln(c.Stdout, "Dry run: nothing changed")
		return nil
	}
	if p.NeedsForce != "" {
		return errors.New(p.NeedsForce)
	}
	if ok, err := c.confirmRollback(p, o.Yes); err != nil || !ok {
		return err
	}
	res, err := e.Rollback(p)
	if err != nil {
		return err
	}
	c.printRollbackDone(res)
	if res.View != nil && !p.All {
		fmt.Fprintln(c.Stdout)
		c.printView(res.View)
	}
	return nil
}

// confirmRollback asks before a rollback (unless yes); a "no" prints
// that nothing happened.
func (c *cmdCtx) confirmRollback(p *engine.RollbackPlan, yes bool) (bool, error) {
	if yes {
		return true, nil
	}
	ok, err := c.confirm(fmt.Sprintf("Roll back to %s? Uncommitted changes are kept in a safety checkpoint. (y/N): ", p.Target.Node), "roll back")
	if err == nil && !ok {
		fmt.Fprintln(c.Stdout, "Rollback cancelled")
	}
	return ok, err
}

// printRollbackDone says what a rollback did, and how to undo it (once).
func (c *cmdCtx) printRollbackDone(res *engine.RollbackResult) {
	p := res.Plan
	fmt.Fprintf(c.Stdout, "Saved the state before the rollback as safety checkpoint %s\n", res.Safety.ID)
	switch {
	case p.All:
		fmt.Fprintf(c.Stdout, "Rolled back the whole workflow: task %s is rolled_back and archived. Run 'git hegel rollback --undo' to undo it\n", p.Task)
	case p.Undo:
		fmt.Fprintf(c.Stdout, "Undid the rollback: back at %s as it was (checkpoint %s). Run 'git hegel rollback --undo' again to redo it\n", p.Target.Node, p.Target.ID)
	default:
		fmt.Fprintf(c.Stdout, "Rolled back to %s (checkpoint %s). Run 'git hegel rollback --undo' to undo it\n", p.Target.Node, p.Target.ID)
	}
}

func (c *cmdCtx) printRollbackPlan(p *engine.RollbackPlan, dryRun bool) {
	what := fmt.Sprintf("Rolling back to %s (checkpoint %s, taken %s)", p.Target.Node, p.Target.ID, c.age(p.Target.CreatedAt))
	if p.All {
		what = fmt.Sprintf("Rolling back the whole workflow to its start, %s (checkpoint %s, taken %s), and ending task %s as rolled_back", p.Target.Node, p.Target.ID, c.age(p.Target.CreatedAt), p.Task)
	}
	if p.Undo && !p.All {
		what = fmt.Sprintf("Undoing the last rollback: back to %s as it was (safety checkpoint %s, taken %s)", p.Target.Node, p.Target.ID, c.age(p.Target.CreatedAt))
	}
	if dryRun {
		what += " would"
	}
	fmt.Fprintf(c.Stdout, "%s:\n", what)
	if !p.Target.Local {
		fmt.Fprintf(c.Stdout, "  made elsewhere: checkpoint %s is %s\n", p.Target.ID, p.MadeBy)
	}
	if p.Restore.Unchanged() {
		fmt.Fprintln(c.Stdout, "  no file, index or HEAD changes")
		return
	}
	limit := promptLimit
	if dryRun {
		limit = -1
	}
	c.printPlan(p.Restore, limit)
}

// recoverRollback finishes or undoes a rollback that was interrupted: the
// command run again finishes it, with --undo undoes it.
func (c *cmdCtx) recoverRollback(e *engine.Engine, rec *engine.RollbackRecord, o engine.RollbackOptions) error {
	switch {
	case o.Undo && !o.DryRun:
		_, v, err := e.UndoInterruptedRollback(c.taskOptions())
		if err != nil {
			return err
		}
		fmt.Fprintf(c.Stdout, "Undid the interrupted rollback to %s: files, index and HEAD are as they were before it (safety checkpoint %s)\n", rec.Node, rec.SafetyID)
		if v != nil {
			fmt.Fprintln(c.Stdout)
			c.printView(v)
		}
		return nil
	case o.DryRun, o.Node != "" && o.Node != rec.Node, o.To != "" && !strings.HasPrefix(rec.TargetID, strings.ToLower(o.To)):
		return rec.InterruptedError()
	}
	_, v, err := e.FinishRollback(c.taskOptions())
	if err != nil {
		return err
	}
	fmt.Fprintf(c.Stdout, "Finished the interrupted rollback to %s (checkpoint %s). Run 'git hegel rollback --undo' to undo it\n", rec.Node, rec.TargetID)
	if v != nil {
		fmt.Fprintln(c.Stdout)
		c.printView(v)
	}
	return nil
}

// noteInterruptedRollback tells `git hegel status` users about a rollback
// that did not finish (on stderr, so --json output stays parseable).
func (c *cmdCtx) noteInterruptedRollback(e *engine.Engine) {
	rec, err := e.InterruptedRollback()
	switch {
	case err != nil:
		fmt.Fprintln(c.Stderr, "warning: "+err.Error())
	case rec != nil:
		fmt.Fprintln(c.Stderr, "warning: "+rec.InterruptedError().Error())
	}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/agent"
	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

func startFlags(fs *pflag.FlagSet) {
	fs.String("task", "", "name the task (default: generated, unique)")
	fs.String("type", "", "the task type, one the workflow declares (default: its default type)")
	completeValues(fs, "type", kindTaskType)
	fs.StringP("description", "d", "", "describe the task")
	valueName(fs, "description", "TEXT")
	fs.String("priority", "", "low, normal, high or urgent (default: normal)")
	completeValues(fs, "priority", kindPriority)
}

func runStart(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 1, 2); err != nil {
		return err
	}
	if c.flags.Changed("type") && c.stringFlag("type") == "" {
		return usagef(c.name, "--type needs a task type")
	}
	if p := c.stringFlag("priority"); c.flags.Changed("priority") && !contains(engine.Priorities, p) {
		return usagef(c.name, "unknown priority '%s' (use low, normal, high or urgent)", p)
	}
	if task := c.stringFlag("task"); task != "" {
		if err := engine.CheckTaskName(task); err != nil {
			return err
		}
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	o := engine.StartOptions{Workflow: args[0], Task: c.stringFlag("task"), Type: c.stringFlag("type"),
		Description: c.stringFlag("description"), Priority: c.stringFlag("priority")}
	if len(args) == 2 {
		o.Node = args[1]
	}
	v, err := e.StartTask(o)
	if err != nil {
		return err
	}
	c.printParked(v)
	fmt.Fprintf(c.Stdout, "Task: %s\n", v.Task)
	fmt.Fprintf(c.Stdout, "Task files: %s/\n", engine.TaskDir(v.State))
	c.printView(v)
	return nil
}

// printParked tells which task start or switch parked.
func (c *cmdCtx) printParked(v *engine.View) {
	if p := v.Parked; p != nil {
		fmt.Fprintf(c.Stdout, "Parked task %s (%s/%s): it stays open; 'git hegel switch %s' comes back to it\n",
			p.Task, p.Mode, p.CurrentNode, p.Task)
	}
}

func nextFlags(fs *pflag.FlagSet) {
	fs.StringArray("force", nil, "bypass the node's guard rules, or only those of one `rule_type`; plain --force also moves on without the node's artifact, back past the task's max_rollbacks, or on another worktree's task (all recorded in the task)")
	fs.BoolP("yes", "y", false, "do not ask before a transition marked confirm")
	quietMoved(fs)
	fs.Lookup("force").NoOptDefVal = forceAll
	completeValues(fs, "force", kindRuleType)
}

// forceAll is --force without a rule type.
const forceAll = "all"

// force reads --force: "--force" bypasses every rule, "--force=TYPE" or
// "--force TYPE" one type. pflag cannot tell "--force TYPE" from "--force"
// followed by a claim, so a first argument naming a rule type is taken as
// the type. It returns the remaining arguments.
func (c *cmdCtx) force(args []string) (engine.Force, []string, error) {
	var f engine.Force
	vals, _ := c.flags.GetStringArray("force")
	for _, v := range vals {
		switch {
		case v == forceAll:
			if len(args) > 0 && contains(forceRuleTypes(), args[0]) {
				f.Rules = append(f.Rules, args[0])
				args = args[1:]
			} else {
				f.All = true
			}
		case contains(forceRuleTypes(), v):
			f.Rules = append(f.Rules, v)
		default:
			return f, nil, usagef(c.name, "unknown rule type '%s' for --force (one of %s)", v, strings.Join(forceRuleTypes(), ", "))
		}
	}
	return f, args, nil
}

// forceRuleTypes are the guard rule types --force can name: the workflow
// file's, and locked_files, which every node has.
func forceRuleTypes() []string {
	return append(append([]string(nil), workflow.RuleTypes...), engine.RuleLockedFiles)
}

func runNext(c *cmdCtx, args []string) error {
	if c.boolFlag("sub") {
		return runNextSub(c, args)
	}
	force, args, err := c.force(args)
	if err != nil {
		return err
	}
	if err := c.wantArgs(args, 0, 1); err != nil {
		return err
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	// A node's checks print their command lines and output on stderr.
	o := engine.NextOptions{Task: c.selected(), Force: force, Ctx: ctx, CheckOutput: c.Stderr}
	if len(args) == 1 {
		o.Claim = args[0]
	}
	v, err := e.NextWith(o)
	if errors.Is(err, engine.ErrInterrupted) {
		fmt.Fprintln(c.Stderr, "Interrupted while the checks ran; nothing changed")
		return &silentError{code: exitCancelled}
	}
	if errors.Is(err, engine.ErrCancelled) {
		fmt.Fprintln(c.Stdout, "Cancelled")
		return nil
	}
	if err != nil {
		return c.guardFailure(err)
	}
	c.printView(v)
	c.noteWorkflowChange(e, v)
	return nil
}

// confirmTransition is the engine's Confirm: -y agrees, else the person at
// the terminal is asked; a closed stdin fails with nothing changed.
func (c *cmdCtx) confirmTransition(question string) (bool, error) {
	if c.boolFlag("yes") {
		return true, nil
	}
	ok, err := c.confirm(question, "change")
	if err != nil {
		return false, fmt.Errorf("This transition needs confirmation and no answer came on standard input; nothing changed (use -y to confirm without asking)")
	}
	return ok, nil
}

func runDone(c *cmdCtx, args []string) error {
	force, args, err := c.force(args)
	if err != nil {
		return err
	}
	if err := c.wantArgs(args, 0, 0); err != nil {
		return err
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	v, err := e.Done(engine.DoneOptions{Task: c.selected(), Force: force})
	// done runs the node's checks without streaming them: a failed one's
	// last lines are shown here.
	var ce *engine.CheckError
	if errors.As(err, &ce) && ce.Output != "" {
		fmt.Fprintln(c.Stderr, indentLines(ce.Output))
	}
	if errors.Is(err, engine.ErrCancelled) {
		fmt.Fprintln(c.Stdout, "Cancelled")
		return nil
	}
	if err != nil {
		return c.guardFailure(err)
	}
	c.printView(v)
	return nil
}

// guardFailure prints what a guard rule saw, and how to comply, before the
// one-line error.
func (c *cmdCtx) guardFailure(err error) error {
	var ge *agent.GuardError
	if errors.As(err, &ge) {
		fmt.Fprint(c.Stderr, ge.Details())
	}
	return err
}

func runPrev(c *cmdCtx, args []string) error {
	return c.move(args, (*engine.Engine).Prev)
}

func runRestart(c *cmdCtx, args []string) error {
	return c.move(args, (*engine.Engine).Restart)
}

func runGoto(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 1, 1); err != nil {
		return err
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	v, err := e.Goto(engine.GotoOptions{Task: c.selected(), Node: args[0], Reason: c.stringFlag("message"), Force: c.boolFlag("force")})
	if err != nil {
		return err
	}
	c.printView(v)
	return nil
}

func runRepeat(c *cmdCtx, args []string) error {
	return c.move(args, func(e *engine.Engine, o engine.TaskOptions) (*engine.View, error) { return e.Repeat(o.Task) })
}

// move runs an argument-less command that ends by showing a node.
func (c *cmdCtx) move(args []string, op func(*engine.Engine, engine.TaskOptions) (*engine.View, error)) error {
	if err := c.wantArgs(args, 0, 0); err != nil {
		return err
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	v, err := op(e, c.taskOptions())
	if err != nil {
		return err
	}
	c.printView(v)
	return nil
}

func runSwitch(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 1, 1); err != nil {
		return err
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	v, err := e.Switch(args[0])
	if err != nil {
		return err
	}
	c.printParked(v)
	c.printView(v)
	return nil
}

func runAbort(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 0); err != nil {
		return err
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	st, err := e.Abort(c.taskOptions())
	if errors.Is(err, engine.ErrNoWorkflow) {
		return errors.New("No active workflow to abort")
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(c.Stdout, "Aborted %s/%s (task %s)\n", st.Mode, st.CurrentNode, st.Task)
	return nil
}

func runReset(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 0); err != nil {
		return err
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	// Whether reset ends the task decides what it must say: an open task
	// is aborted and archived, a finished one only let go.
	wasOpen := false
	if t, err := e.Current(c.selected()); err == nil {
		wasOpen = t.State.Active()
	}
	st, err := e.Reset(c.taskOptions())
	if err != nil {
		return err
	}
	switch {
	case st == nil:
		fmt.Fprintln(c.Stdout, "No active workflow; nothing to reset")
	case st.Status == engine.StatusDamaged:
		fmt.Fprintf(c.Stdout, "This worktree has no workflow now; task %s cannot be read and is kept as it is for 'git hegel doctor'\n", st.Task)
	case wasOpen:
		at := st.CurrentNode // the node it was at, before "aborted"
		if n := len(st.History); n >= 2 {
			at = st.History[n-2]
		}
		fmt.Fprintf(c.Stdout, "Aborted task %s at %s and archived it; this worktree has no workflow now ('git hegel show %s' shows the task)\n",
			st.Task, at, st.Task)
	default:
		fmt.Fprintf(c.Stdout, "This worktree has no workflow now; task %s (%s) is kept: 'git hegel show %s' shows it\n", st.Task, st.Status, st.Task)
	}
	return nil
}

// printView prints the block start, next, prev, restart and repeat end
// with: the node, what was skipped on the way, and its prompt, or the
// gate the task now waits at.
func (c *cmdCtx) printView(v *engine.View) {
	fmt.Fprintf(c.Stdout, "Mode: %s\nCurrent node: %s\n", v.Mode, c.paint(c.Stdout, "node", v.Node))
	if v.State != nil && v.State.Status == engine.StatusPaused {
		// A rollback leaves the task paused: say how it goes on.
		fmt.Fprintln(c.Stdout, "Status: paused. Go on with 'git hegel resume' (or 'git hegel next')")
	}
	for _, s := range v.Skipped {
		fmt.Fprintf(c.Stdout, "Skipped: %s (%s)\n", s.Node, s.Reason)
	}
	if v.Gate != nil {
		fmt.Fprintf(c.Stdout, "\n%s\n", gateText(v.Gate))
		return
	}
	switch {
	case c.boolFlag("quiet"):
	case strings.TrimSpace(v.Prompt) != "":
		fmt.Fprintf(c.Stdout, "\nPrompt:\n%s\n", c.promptText(v.Prompt))
	case v.Step:
		// A step git hegel run carries out: nothing for a person to read.
		fmt.Fprintf(c.Stdout, "\n%s has no prompt: 'git hegel run' runs its step\n", v.Node)
	}
	c.printMetaAfter(v)
}

// gateText tells who may decide at an approval gate, and how.
func gateText(g *engine.GateView) string {
	who := "anyone; the decision is recorded under your git config user.name"
	if len(g.Approvers) > 0 {
		who = strings.Join(g.Approvers, " or ") + " (by git config user.name)"
	}
	approve := "git hegel approve [-m COMMENT]"
	if g.OtherPerson {
		// The owner's approval is refused: say so before they try.
		if len(g.Approvers) > 0 {
			who += ", "
		} else {
			who = ""
		}
		who += "not you: another person approves, on their clone (hegel.approval.otherPerson); 'git hegel sync' carries the task there"
		approve = fmt.Sprintf("git hegel approve --task %s [-m COMMENT] (on their clone)", g.Task)
	}
	return fmt.Sprintf("Waiting for approval to go from %s to %s.\nWho may decide: %s\n"+
		"Approve: %s\nReject:  git hegel reject -m REASON [--to NODE]", g.Node, g.To, who, approve)
}

// promptText is a node's prompt as printed: on a terminal its control
// characters are written out (\x1b, \r), since a prompt quotes a step's
// output, a check's output in the last failure, a run's context and a
// description, and an escape sequence in any of them would set the window
// title or draw one line over another. Piped, as an agent reads it, it is
// the prompt's bytes.
func (c *cmdCtx) promptText(p string) string {
	p = trimNL(p)
	if c.Terminal != nil && c.Terminal(c.Stdout) {
		return text.Visible(p)
	}
	return p
}

func trimNL(s string) string {
	for len(s) > 0 && s[len(s)-1] == '\n' {
		s = s[:len(s)-1]
	}
	return s
}

// runNextSub is `next --sub`: the node's next sub-phase.
func runNextSub(c *cmdCtx, args []string) error {
	if len(args) > 0 || c.flags.Changed("force") || c.flags.Changed("yes") {
		return usagef(c.name, "--sub takes no claim, --force or -y")
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	v, err := e.NextSubphase(engine.TaskOptions{Task: c.selected()})
	if err != nil {
		return err
	}
	fmt.Fprintf(c.Stdout, "Mode: %s\nCurrent node: %s\nSub-phase: %s\n", v.Mode, c.paint(c.Stdout, "node", v.Node), v.State.Subphase)
	fmt.Fprintf(c.Stdout, "\nPrompt:\n%s\n", c.promptText(v.Prompt))
	return nil
}

func runClaim(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 1, 1); err != nil {
		return err
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	v, prev, err := e.ClaimTask(args[0])
	if err != nil {
		return err
	}
	if prev == nil {
		fmt.Fprintf(c.Stdout, "Task %s is already this worktree's\n", args[0])
	} else {
		fmt.Fprintf(c.Stdout, "Claimed task %s %s\n", args[0], formerOwner(e, prev))
	}
	c.printParked(v)
	c.printView(v)
	return nil
}

// formerOwner says whose a claimed task was: the person its state named
// and the place, for display only (both arrived with the task, so they
// are cut to one printable line).
func formerOwner(e *engine.Engine, prev *engine.State) string {
	where := e.OwnerLabel(prev)
	if where == "-" {
		return "(it was parked: nobody held it)"
	}
	if where == "another clone" && prev.Worktree != "" {
		where += ", " + text.Printable(prev.Worktree, 200)
	}
	if who := text.Printable(prev.OwnerEmail, 200); who != "" {
		return fmt.Sprintf("from %s (%s)", who, where)
	}
	return fmt.Sprintf("from %s", where)
}

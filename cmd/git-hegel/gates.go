package main

import (
	"bufio"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/text"
)

// Failures, gates and resume: fail, approve, reject, ask, answer, pause,
// resume, skip.

func runFail(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 0); err != nil {
		return err
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	v, err := e.Fail(c.taskOptions(), c.stringFlag("message"))
	if err != nil {
		return err
	}
	st := v.State
	if st.Status == engine.StatusFailed {
		fmt.Fprintf(c.Stdout, "Task %s failed at %s after %d %s: %s\n", st.Task, st.CurrentNode, st.Attempt,
			pluralWord(st.Attempt, "attempt", "attempts"), firstLineOf(st.LastFailure))
		fmt.Fprintf(c.Stdout, "'git hegel next' refuses until it is resumed: git hegel resume --strategy %s\n", strategyNames("|"))
		return nil
	}
	fmt.Fprintf(c.Stdout, "Recorded the failure; attempt %d of %d at %s\n\n", st.Attempt, v.MaxAttempts, st.CurrentNode)
	c.printView(v)
	return nil
}

func runApprove(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 0); err != nil {
		return err
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	v, err := e.Approve(engine.ApproveOptions{TaskOptions: c.taskOptions(), Comment: c.stringFlag("message"), Unseen: c.boolFlag("unseen")})
	if err != nil {
		return c.atNoGate(e, err)
	}
	a := v.State.Approvals[len(v.State.Approvals)-1]
	fmt.Fprintf(c.Stdout, "Approved %s by %s\n", a.Node, a.By)
	c.printApproved(v.State, a)
	fmt.Fprintln(c.Stdout)
	if v.State.Active() && !e.Owns(v.State) {
		// A reviewer's approval: the next node's prompt is for whoever
		// works on the task, and the approval reaches them by a sync.
		fmt.Fprintf(c.Stdout, "Mode: %s\nCurrent node: %s\n\n", v.Mode, c.paint(c.Stdout, "node", v.Node))
		fmt.Fprintf(c.Stdout, "Task %s is not this worktree's (owner: %s): 'git hegel sync' carries the approval to whoever works on it\n", v.Task, e.OwnerLabel(v.State))
		return nil
	}
	c.printView(v)
	return nil
}

// printApproved lists the artifacts approval a covers, each with its
// size and blob id, in the columns `git hegel show` lists artifacts in.
func (c *cmdCtx) printApproved(st *engine.State, a engine.Approval) {
	if len(a.Artifacts) == 0 {
		return
	}
	fmt.Fprintln(c.Stdout, "Approved artifacts:")
	tw := tabwriter.NewWriter(c.Stdout, 0, 0, 1, ' ', 0)
	for _, art := range a.Artifacts {
		size := "size unknown"
		for _, s := range st.Submitted[a.Node] {
			if s.Path == art.Path && s.Blob == art.Blob {
				size = text.Plural(int(s.Size), "byte", "bytes")
			}
		}
		fmt.Fprintf(tw, "  %-12s\t%-24s\t%s (blob %s)\n", a.Node, c.quotePath(art.Path), size, engine.ShortID(art.Blob))
	}
	tw.Flush()
}

func runReject(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 0); err != nil {
		return err
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	if strings.TrimSpace(c.stringFlag("message")) == "" {
		return usagef(c.name, "a rejection needs a reason: -m REASON")
	}
	if c.flags.Changed("to") && c.stringFlag("to") == "" {
		return usagef(c.name, "--to needs a node")
	}
	v, err := e.Reject(c.taskOptions(), c.stringFlag("message"), c.stringFlag("to"))
	if err != nil {
		return c.atNoGate(e, err)
	}
	ev := v.State.RollbackHistory[len(v.State.RollbackHistory)-1]
	if ev.From == ev.To {
		fmt.Fprintf(c.Stdout, "Rejected at %s; back to work at %s\n\n", ev.From, ev.To)
	} else {
		fmt.Fprintf(c.Stdout, "Rejected at %s; sent back to %s\n\n", ev.From, ev.To)
	}
	c.printView(v)
	return nil
}

// atNoGate answers approve or reject in a worktree without a workflow:
// the person is most likely deciding for a task that runs elsewhere, so
// the tasks waiting for a decision are named, with how to pick one.
func (c *cmdCtx) atNoGate(e *engine.Engine, err error) error {
	if !errors.Is(err, engine.ErrNoWorkflow) {
		return err
	}
	list, lerr := e.ListTasks(engine.ListOptions{})
	if lerr != nil {
		return err
	}
	var waiting []string
	for _, t := range list {
		if t.Err == nil && t.State.Status == engine.StatusAwaitingApproval {
			waiting = append(waiting, t.Name)
		}
	}
	how := "git hegel " + c.name + " --task "
	if c.name == "reject" {
		how = "git hegel reject -m REASON --task "
	}
	switch len(waiting) {
	case 0:
		return errors.New("No active workflow here, and no task waits for approval (see 'git hegel tasks')")
	case 1:
		return fmt.Errorf("No active workflow here; task %s waits for approval: %s%s", waiting[0], how, waiting[0])
	}
	return fmt.Errorf("No active workflow here; tasks waiting for approval: %s. Name one: %sNAME", strings.Join(waiting, ", "), how)
}

func runAsk(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 1, 1); err != nil {
		return err
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	st, err := e.Ask(c.taskOptions(), args[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(c.Stdout, "Task %s waits for an answer at %s. Answer with: git hegel answer TEXT\n", st.Task, st.CurrentNode)
	return nil
}

func runAnswer(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 1, 1); err != nil {
		return err
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	q, v, err := e.Answer(c.taskOptions(), args[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(c.Stdout, "Question: %s\nAnswer: %s\n\n", text.Clean(q.Question), text.Clean(q.Answer))
	c.printView(v)
	return nil
}

func runPause(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 0); err != nil {
		return err
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	st, err := e.Pause(c.taskOptions(), c.stringFlag("message"))
	if err != nil {
		return err
	}
	fmt.Fprintf(c.Stdout, "Paused task %s at %s. Go on with 'git hegel resume' (or 'git hegel next')\n", st.Task, st.CurrentNode)
	return nil
}

func runResume(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 0); err != nil {
		return err
	}
	strategy := c.stringFlag("strategy")
	if c.flags.Changed("strategy") && !engine.ValidStrategy(strategy) {
		return usagef(c.name, "unknown strategy '%s' (use %s)", strategy, strategyNames(", "))
	}
	if c.flags.Changed("checkpoint") && strategy != engine.FromCheckpoint && strategy != "" {
		return usagef(c.name, "--checkpoint goes with --strategy from-checkpoint")
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	if c.flags.Changed("checkpoint") {
		strategy = engine.FromCheckpoint
	}
	if strategy == "" {
		// A paused task (by pause, or by a rollback) goes on where it
		// stopped; a failed one needs a choice, asked on a terminal. The
		// status is checked first: asking about a task that cannot be
		// resumed would waste the person's time.
		t, err := e.Current(c.selected())
		if err != nil {
			return err
		}
		switch t.State.Status {
		case engine.StatusFailed:
			if !c.inputIsTerminal() {
				return usagef(c.name, "a failed task needs a strategy: --strategy %s; there is no terminal to ask on", strategyNames(" | "))
			}
			if strategy, err = c.chooseStrategy(t.State); err != nil {
				return err
			}
		default:
			// Paused; any other status is refused by Resume, with why.
			strategy = engine.RetryCurrent
		}
	}
	o := engine.ResumeOptions{Task: c.selected(), Force: c.boolFlag("force"), Strategy: strategy, Reason: c.stringFlag("message")}
	if strategy == engine.FromCheckpoint {
		// The rollback it makes is shown and asked about as
		// `git hegel rollback --to` does.
		p, err := e.PlanRollback(engine.RollbackOptions{Task: c.selected(), Resume: true, To: c.stringFlag("checkpoint"),
			Force: c.boolFlag("force"), Yes: c.boolFlag("yes")})
		if err != nil {
			return err
		}
		c.printRollbackPlan(p, false)
		if p.NeedsForce != "" {
			return errors.New(p.NeedsForce)
		}
		if ok, err := c.confirmRollback(p, c.boolFlag("yes")); err != nil || !ok {
			return err
		}
		o.Rollback = p
	}
	v, err := e.Resume(o)
	if err != nil {
		return err
	}
	if v.Rollback != nil {
		c.printRollbackDone(v.Rollback)
	}
	fmt.Fprintf(c.Stdout, "Resumed task %s (%s)\n\n", v.Task, strategy)
	c.printView(v)
	return nil
}

// chooseStrategy offers the four strategies on the terminal.
func (c *cmdCtx) chooseStrategy(st *engine.State) (string, error) {
	fmt.Fprintf(c.Stdout, "Task %s is %s at %s. How should it go on?\n", st.Task, st.Status, st.CurrentNode)
	for i, s := range engine.Strategies {
		fmt.Fprintf(c.Stdout, "  %d) %-16s %s\n", i+1, s.Name, s.Explain)
	}
	fmt.Fprint(c.Stdout, "Choose 1-4 (anything else cancels): ")
	line, _ := bufio.NewReader(c.Stdin).ReadString('\n')
	line = strings.TrimSpace(line)
	if n, err := strconv.Atoi(line); err == nil && n >= 1 && n <= len(engine.Strategies) {
		return engine.Strategies[n-1].Name, nil
	}
	for _, s := range engine.Strategies {
		if line == s.Name {
			return s.Name, nil
		}
	}
	return "", errors.New("No strategy chosen; nothing changed")
}

func strategyNames(sep string) string {
	names := make([]string, len(engine.Strategies))
	for i, s := range engine.Strategies {
		names[i] = s.Name
	}
	return strings.Join(names, sep)
}

func runSkip(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 0); err != nil {
		return err
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	v, err := e.Skip(c.taskOptions(), c.stringFlag("message"))
	if err != nil {
		return err
	}
	c.printView(v)
	return nil
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

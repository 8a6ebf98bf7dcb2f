package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/engine"
)

func runStart(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 1, 2); err != nil {
		return err
	}
	if c.flags.Changed("task") && c.stringFlag("task") == "" {
		return usagef(c.name, "--task needs a name")
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
	node := ""
	if len(args) == 2 {
		node = args[1]
	}
	v, err := e.Start(args[0], node, c.stringFlag("task"))
	if err != nil {
		return err
	}
	c.printView(v)
	return nil
}

func nextFlags(fs *pflag.FlagSet) {
	fs.StringArray("force", nil, "bypass the node's guard rules, or only those of one `rule_type` (recorded in the task's overrides)")
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
			if len(args) > 0 && contains(engine.RuleTypes, args[0]) {
				f.Rules = append(f.Rules, args[0])
				args = args[1:]
			} else {
				f.All = true
			}
		case contains(engine.RuleTypes, v):
			f.Rules = append(f.Rules, v)
		default:
			return f, nil, usagef(c.name, "unknown rule type '%s' for --force (one of %s)", v, strings.Join(engine.RuleTypes, ", "))
		}
	}
	return f, args, nil
}

func runNext(c *cmdCtx, args []string) error {
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
	e.Force = force
	claim := ""
	if len(args) == 1 {
		claim = args[0]
	}
	v, err := e.Next(claim)
	if err != nil {
		return c.guardFailure(err)
	}
	c.printView(v)
	return nil
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
	e.Force = force
	v, err := e.Done()
	if err != nil {
		return c.guardFailure(err)
	}
	c.printView(v)
	return nil
}

// guardFailure prints what a guard rule saw, and how to comply, before the
// one-line error.
func (c *cmdCtx) guardFailure(err error) error {
	var ge *engine.GuardError
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

func runRepeat(c *cmdCtx, args []string) error {
	return c.move(args, (*engine.Engine).Repeat)
}

// move runs an argument-less command that ends by showing a node.
func (c *cmdCtx) move(args []string, op func(*engine.Engine) (*engine.View, error)) error {
	if err := c.wantArgs(args, 0, 0); err != nil {
		return err
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	v, err := op(e)
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
	st, err := e.Abort()
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
	st, err := e.Reset()
	if err != nil {
		return err
	}
	if st == nil {
		fmt.Fprintln(c.Stdout, "No active workflow; nothing to reset")
		return nil
	}
	fmt.Fprintf(c.Stdout, "Cleared workflow state (task %s is kept in refs/hegel/tasks/%s)\n", st.Task, st.Task)
	return nil
}

// printView prints the block start, next, prev, restart and repeat end with.
func (c *cmdCtx) printView(v *engine.View) {
	node := c.paint(c.Stdout, "node", v.Node)
	fmt.Fprintf(c.Stdout, "Mode: %s\nCurrent node: %s\n\nPrompt:\n%s\n", v.Mode, node, trimNL(v.Prompt))
}

func trimNL(s string) string {
	for len(s) > 0 && s[len(s)-1] == '\n' {
		s = s[:len(s)-1]
	}
	return s
}

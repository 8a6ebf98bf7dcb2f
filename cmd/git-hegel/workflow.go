package main

import (
	"errors"
	"fmt"

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

func runNext(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 1); err != nil {
		return err
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	claim := ""
	if len(args) == 1 {
		claim = args[0]
	}
	v, err := e.Next(claim)
	if err != nil {
		return err
	}
	c.printView(v)
	return nil
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

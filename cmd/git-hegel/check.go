package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/text"
)

// `git hegel check`: the current node's checks, run as next runs them,
// with nothing recorded: no attempt spent, the task unchanged.

func checkFlags(fs *pflag.FlagSet) {
	taskFlag(fs)
	jsonFlagSaying("print the outcome as JSON (the checks' output goes to stderr)")(fs)
}

type checkJSON struct {
	Schema int              `json:"schema"`
	Task   string           `json:"task"`
	Node   string           `json:"node"`
	Checks int              `json:"checks"`
	Ran    int              `json:"ran"`
	Passed bool             `json:"passed"`
	Failed *checkFailedJSON `json:"failed,omitempty"`
}

type checkFailedJSON struct {
	Command string `json:"command"`
	Why     string `json:"why"`
	Output  string `json:"output"`
}

func runCheck(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 0); err != nil {
		return err
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	asJSON := c.boolFlag("json")
	out := c.Stdout
	if asJSON {
		out = c.Stderr
	}
	rep, err := e.Check(ctx, c.selected(), out)
	if errors.Is(err, engine.ErrInterrupted) {
		fmt.Fprintln(c.Stderr, "Interrupted while the checks ran; nothing changed")
		return &silentError{code: exitCancelled}
	}
	if err != nil {
		return err
	}
	if asJSON {
		j := checkJSON{Schema: c.jsonSchema(), Task: rep.Task, Node: rep.Node, Checks: rep.Checks, Ran: rep.Ran, Passed: rep.Failed == nil}
		if f := rep.Failed; f != nil {
			j.Failed = &checkFailedJSON{Command: f.Command, Why: f.Why, Output: f.Output}
		}
		if err := writeJSON(c.Stdout, j); err != nil {
			return err
		}
		if rep.Failed != nil {
			return &silentError{code: exitFailed}
		}
		return nil
	}
	switch {
	case rep.Checks == 0:
		fmt.Fprintf(c.Stdout, "'%s' has no checks (task %s)\n", rep.Node, rep.Task)
	case rep.Failed == nil:
		fmt.Fprintf(c.Stdout, "%s of '%s' passed (task %s); no attempt spent\n", text.Plural(rep.Checks, "check", "checks"), rep.Node, rep.Task)
	default:
		return fmt.Errorf("Check failed at '%s': %s %s; not recorded (no attempt spent): 'git hegel next' runs the checks again and records a failure",
			rep.Node, rep.Failed.Command, rep.Failed.Why)
	}
	return nil
}

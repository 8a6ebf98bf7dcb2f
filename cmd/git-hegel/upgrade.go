package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/engine"
)

// git hegel upgrade [<task>]: show how the worktree's definition of a
// running task's workflow differs from the one the task holds, and adopt
// it (engine/upgrade.go).

func upgradeFlags(fs *pflag.FlagSet) {
	fs.BoolP("yes", "y", false, "adopt it without asking (after reading what this prints)")
	fs.BoolP("dry-run", "n", false, "show the difference only; change nothing")
	ownerForce(fs)
	jsonFlag(fs)
}

func runUpgrade(c *cmdCtx, args []string) (err error) {
	if err := c.wantArgs(args, 0, 1); err != nil {
		return err
	}
	if c.boolFlag("yes") && c.boolFlag("dry-run") {
		return usagef(c.name, "-y and --dry-run exclude each other")
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	o := engine.TaskOptions{Task: optArg(args), Force: c.boolFlag("force")}
	p, err := e.PlanUpgrade(o)
	if errors.Is(err, engine.ErrNoWorkflow) {
		return errors.New("No active workflow; name the task: git hegel upgrade <task>")
	}
	if err != nil {
		return err
	}
	asJSON := c.boolFlag("json")
	upgraded := false
	if asJSON {
		defer func() {
			if err == nil {
				err = writeJSON(c.Stdout, upgradeToJSON(p, upgraded, c.jsonSchema()))
			}
		}()
	}
	if p.Same {
		if !asJSON {
			fmt.Fprintf(c.Stdout, "Task %s runs the worktree's definition of %s (%s) already; nothing to upgrade\n", p.Task, p.Workflow, c.quotePath(p.Source))
		}
		return nil
	}
	if !asJSON {
		fmt.Fprintf(c.Stdout, "Task %s (at %s) runs a definition of %s that differs from the worktree's %s:\n\n", p.Task, p.Node, p.Workflow, c.quotePath(p.Source))
		unifiedDiff(c.Stdout, upgradeOldName(p), p.Source, string(p.Old), string(p.New))
		fmt.Fprintln(c.Stdout)
	}
	switch {
	case c.boolFlag("dry-run"):
		if !asJSON {
			fmt.Fprintln(c.Stdout, "Dry run: nothing changed")
		}
		return nil
	case c.boolFlag("yes"):
	case asJSON || !c.inputIsTerminal():
		return fmt.Errorf("Not upgraded: there is no terminal to ask on; read the difference, then run 'git hegel upgrade %s -y'", p.Task)
	default:
		ok, aerr := c.confirm(fmt.Sprintf("Adopt this definition for task %s (it is trusted on this machine from now on)? (y/N) ", p.Task), "upgrade")
		if aerr != nil {
			return aerr
		}
		if !ok {
			fmt.Fprintln(c.Stdout, "Nothing changed")
			return nil
		}
	}
	if _, err = e.Upgrade(p, o); err != nil {
		return err
	}
	upgraded = true
	if !asJSON {
		fmt.Fprintf(c.Stdout, "Upgraded task %s to the worktree's definition of %s (blob %s, was %s)\n", p.Task, p.Workflow, short(p.NewID), short(p.OldID))
	}
	return nil
}

// upgradeOldName names the task's definition in the diff, as git names
// a blob: the ref and path.
func upgradeOldName(p *engine.UpgradePlan) string {
	return "refs/hegel/tasks/" + p.Task + ":workflow.yaml"
}

// upgradeJSON is upgrade's --json document (docs/json.md).
type upgradeJSON struct {
	Schema   int    `json:"schema"`
	Task     string `json:"task"`
	Workflow string `json:"workflow"`
	Node     string `json:"node"`
	Source   string `json:"source"`
	From     string `json:"from"` // the blob id of the task's definition before
	To       string `json:"to"`   // the blob id of the worktree's
	Changed  bool   `json:"changed"`
	Upgraded bool   `json:"upgraded"`
	Diff     string `json:"diff"`
}

func upgradeToJSON(p *engine.UpgradePlan, upgraded bool, schema int) upgradeJSON {
	var b strings.Builder
	unifiedDiff(&b, upgradeOldName(p), p.Source, string(p.Old), string(p.New))
	return upgradeJSON{Schema: schema, Task: p.Task, Workflow: p.Workflow, Node: p.Node, Source: p.Source,
		From: p.OldID, To: p.NewID, Changed: !p.Same, Upgraded: upgraded, Diff: b.String()}
}

// noteWorkflowChange prints, on stderr, the line next prints when the
// worktree's definition of the task's workflow differs from the task's.
func (c *cmdCtx) noteWorkflowChange(e *engine.Engine, v *engine.View) {
	if v == nil {
		return
	}
	if src, changed := e.WorkflowDiffers(v.State, v.Definition); changed {
		fmt.Fprintln(c.Stderr, "hint: "+engine.WorkflowChangeNote(v.Task, v.State.Workflow, src))
	}
}

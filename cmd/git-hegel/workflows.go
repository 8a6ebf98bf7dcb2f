package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/workflow"
	"github.com/git-hegel/git-hegel/gitstore"
	"github.com/git-hegel/git-hegel/gitstore/gitdir"
)

func runWorkflows(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 1); err != nil {
		return err
	}
	asYAML := c.boolFlag("yaml")
	if asYAML && (len(args) == 0 || c.boolFlag("json")) {
		return usagef(c.name, "--yaml prints one workflow: git hegel workflows <name> --yaml (without --json)")
	}
	reg, where, err := c.workflowRegistry()
	if err != nil {
		return err
	}
	if where != "" {
		// Like git help, this works anywhere; say why the list is short.
		c.hint(where + ": only the built-in workflows are listed")
	}
	if len(args) == 1 {
		wf, ok := reg.Get(args[0])
		if b, broken := reg.GetBroken(args[0]); !ok && broken {
			// 'git hegel workflows NAME --yaml > .hegel/workflows/NAME.yaml'
			// creates the file empty before this runs: the copy starts from
			// the built-in it was asked for.
			if raw, builtin := workflow.BuiltinSources()[args[0]]; asYAML && b.Empty && builtin {
				c.hint(c.quotePath(b.Source) + " is empty: this is the built-in " + args[0])
				_, err := c.Stdout.Write(raw)
				return err
			}
			return fmt.Errorf("Workflow '%s' cannot be loaded: %v", args[0], b.Err)
		}
		if !ok {
			return engine.BadName(fmt.Errorf("Unknown workflow '%s'. Run 'git hegel workflows' to list them", args[0]))
		}
		if asYAML {
			// The definition exactly as loaded: what a task started from it
			// stores, and what a copy in .hegel/workflows/ starts from.
			_, err := c.Stdout.Write(wf.Raw)
			return err
		}
		if c.boolFlag("json") {
			return writeJSON(c.Stdout, workflowJSONOne{Schema: c.jsonSchema(), Workflow: defJSON(wf, c.maxAttempts())})
		}
		printWorkflow(c, wf)
		return nil
	}
	list := reg.List()
	broken := reg.Broken()
	if c.boolFlag("json") {
		out := workflowsJSON{Schema: c.jsonSchema(), Workflows: []workflowDefJSON{}, Broken: []brokenJSON{}}
		withheld := c.definitionsWithheld()
		for _, wf := range list {
			d := defJSON(wf, c.maxAttempts())
			if withheld(wf) {
				withholdDefText(&d)
			}
			out.Workflows = append(out.Workflows, d)
		}
		brokenWithheld := c.brokenWithheld()
		for _, b := range broken {
			j := brokenJSON{Name: b.Name, Source: b.Source, Error: b.Err.Error()}
			if brokenWithheld(b) {
				j.Error = brokenNotice(b.Source)
			}
			out.Broken = append(out.Broken, j)
		}
		return writeJSON(c.Stdout, out)
	}
	for _, w := range reg.Warnings() {
		c.warn(w.String())
	}
	width := 10
	for _, wf := range list {
		width = max(width, len(wf.Name))
	}
	for _, b := range broken {
		width = max(width, len(b.Name))
	}
	for _, wf := range list {
		src := ""
		if wf.Source != "built-in" {
			src = "  (" + c.quotePath(wf.Source) + ")"
		}
		run := ""
		if wf.Runnable() {
			run = "  [run]"
		}
		fmt.Fprintf(c.Stdout, "%-*s  %s%s%s\n", width, wf.Name, mainPath(wf), run, src)
	}
	for _, b := range broken {
		name := b.Name
		if name == "" {
			name = "-"
		}
		fmt.Fprintf(c.Stdout, "%-*s  broken: %s\n", width, name, b.Err)
	}
	return nil
}

func defJSON(wf *workflow.Definition, maxAttempts int) workflowDefJSON {
	d := workflowDefJSON{Name: wf.Name, Mode: wf.Mode, Source: wf.Source, StartNode: wf.StartNode, Title: wf.Title, Nodes: []nodeJSON{},
		TaskTypes: wf.TaskTypes, DefaultTaskType: wf.DefaultTaskType, Skips: wf.Skips(), Runnable: wf.Runnable()}
	if d.TaskTypes == nil {
		d.TaskTypes = []string{}
	}
	for _, name := range wf.Order {
		n := wf.Nodes[name]
		nj := nodeJSON{Name: name, Summary: n.Summary, Transitions: []transitionJSON{},
			DisplayName: n.DisplayName, Description: n.Description, Artifacts: n.Artifacts, Produces: n.Produces, Requires: n.Requires,
			Conditional: n.Conditional, SkipFor: n.SkipFor, Gate: n.Gate, Approvers: n.Approvers,
			MaxAttempts: wf.Attempts(name, maxAttempts), Terminal: n.Terminal, Rules: []ruleJSON{}, Checks: []string{}}
		if len(n.Artifacts) > 0 {
			nj.Artifact = n.Artifacts[0]
		}
		if h := n.Run; h != nil {
			nj.Run = &handlerJSON{Kind: h.Kind, Adapter: h.Adapter, Text: h.Text}
			if h.Timeout > 0 {
				nj.Run.Timeout = h.Timeout.String()
			}
		}
		for _, ch := range n.Checks {
			nj.Checks = append(nj.Checks, ch.Command)
		}
		for _, tr := range n.Transitions {
			nj.Transitions = append(nj.Transitions, transitionJSON{When: tr.When, To: tr.To, Confirm: tr.Confirm})
		}
		for _, r := range n.Rules {
			nj.Rules = append(nj.Rules, ruleJSON{Type: r.Type, LookbackPhases: r.LookbackPhases, Pattern: r.Pattern,
				PathPattern: r.PathPattern, Threshold: r.Threshold, Window: r.Window, MaxDuration: r.MaxDuration, MaxTokens: r.MaxTokens})
		}
		d.Nodes = append(d.Nodes, nj)
	}
	return d
}

// printWorkflow shows one workflow: its nodes with what they produce and
// read, gates and transitions, and what each task type skips.
func printWorkflow(c *cmdCtx, wf *workflow.Definition) {
	w := c.Stdout
	src := wf.Source
	fmt.Fprintf(w, "%s (%s), mode %s, starts at %s\n", wf.Name, src, wf.Mode, wf.StartNode)
	if len(wf.TaskTypes) > 0 {
		types := make([]string, len(wf.TaskTypes))
		for i, t := range wf.TaskTypes {
			types[i] = t
			if t == wf.DefaultTaskType {
				types[i] += " (default)"
			}
		}
		fmt.Fprintf(w, "Task types: %s\n", strings.Join(types, ", "))
	}
	for _, name := range wf.Order {
		n := wf.Nodes[name]
		fmt.Fprintln(w)
		head := name
		if n.DisplayName != "" {
			head += "  " + n.DisplayName
		}
		fmt.Fprintln(w, head)
		if n.Summary != "" {
			fmt.Fprintf(w, "    %s\n", n.Summary)
		}
		if len(n.Artifacts) > 0 {
			fmt.Fprintf(w, "    artifact: %s\n", strings.Join(n.Artifacts, ", "))
		}
		if len(n.Produces) > 0 {
			fmt.Fprintf(w, "    produces: %s\n", strings.Join(n.Produces, ", "))
		}
		if len(n.Requires) > 0 {
			fmt.Fprintf(w, "    requires: %s\n", strings.Join(n.Requires, ", "))
		}
		if n.Gate != "" {
			g := n.Gate
			if len(n.Approvers) > 0 {
				g += " by " + strings.Join(n.Approvers, " or ")
			}
			fmt.Fprintf(w, "    gate: %s\n", g)
		}
		if n.Conditional {
			fmt.Fprintln(w, "    conditional: may be skipped with 'git hegel skip'")
		}
		if n.MaxAttempts > 0 {
			fmt.Fprintf(w, "    max attempts: %d\n", n.MaxAttempts)
		}
		if len(n.SkipFor) > 0 {
			fmt.Fprintf(w, "    skipped for: %s\n", strings.Join(n.SkipFor, ", "))
		}
		for _, r := range n.Rules {
			fmt.Fprintf(w, "    rule: %s\n", r.Type)
		}
		if h := n.Run; h != nil {
			switch h.Kind {
			case workflow.HandlerAdapter:
				a := h.Adapter
				if a == workflow.DefaultAdapter {
					a = "the run's adapter (--adapter, else git config hegel.adapter)"
				}
				fmt.Fprintf(w, "    run: adapter %s\n", a)
			case workflow.HandlerCommand:
				fmt.Fprintf(w, "    run: command %s\n", firstLineOf(h.Text))
			case workflow.HandlerConfirm:
				fmt.Fprintf(w, "    run: asks to confirm: %s\n", firstLineOf(h.Text))
			}
		}
		for _, ch := range n.Checks {
			fmt.Fprintf(w, "    check: %s\n", firstLineOf(ch.Command))
		}
		if n.Terminal {
			fmt.Fprintln(w, "    terminal: reaching it ends the run")
		}
		for _, tr := range n.Transitions {
			conf := ""
			if tr.Confirm {
				conf = " (asks to confirm)"
			}
			fmt.Fprintf(w, "    %s -> %s%s\n", tr.When, tr.To, conf)
		}
	}
	if len(wf.TaskTypes) > 0 {
		fmt.Fprintln(w, "\nSkipped by task type:")
		skips := wf.Skips()
		for _, t := range wf.TaskTypes {
			s := strings.Join(skips[t], ", ")
			if s == "" {
				s = "(none)"
			}
			fmt.Fprintf(w, "  %-10s %s\n", t, s)
		}
	}
}

// workflowRegistry returns the workflows this worktree can start. Outside
// a repository, or in one without a work tree, it returns the built-ins
// and says where it is ("not in a git repository").
func (c *cmdCtx) workflowRegistry() (reg *workflow.Registry, outside string, err error) {
	e, _, err := c.engine()
	switch {
	case errors.Is(err, gitdir.ErrNotRepo):
		outside = "not in a git repository"
	case errors.Is(err, gitstore.ErrNoWorkTree):
		outside = "not in a work tree"
	case err != nil:
		return nil, "", err
	}
	if outside != "" {
		reg, err = workflow.NewRegistry(nil)
		return reg, outside, err
	}
	reg, err = e.Workflows()
	return reg, "", err
}

// maxAttempts is hegel.maxAttempts (the default outside a repository).
func (c *cmdCtx) maxAttempts() int {
	if r, err := gitstore.Open(c.Dir, c.Getenv); err == nil {
		return int(r.Config().Int("hegel", "maxattempts", workflow.DefaultMaxAttempts))
	}
	return workflow.DefaultMaxAttempts
}

// mainPath renders the nodes in file order ending at done: the shape of the
// workflow at a glance. A workflow whose last node ends it (no
// transitions) ends there; one that never reaches done ends in ↺.
func mainPath(wf *workflow.Definition) string {
	nodes := append([]string(nil), wf.Order...)
	switch {
	case len(nodes) > 0 && wf.Nodes[nodes[len(nodes)-1]].Terminal:
	case !reachesDone(wf):
		return strings.Join(nodes, " → ") + " ↺"
	default:
		nodes = append(nodes, workflow.NodeDone)
	}
	return strings.Join(nodes, " → ")
}

// reachesDone reports whether any transition leads to done.
func reachesDone(wf *workflow.Definition) bool {
	for _, n := range wf.Nodes {
		for _, t := range n.Transitions {
			if t.To == workflow.NodeDone {
				return true
			}
		}
	}
	return false
}

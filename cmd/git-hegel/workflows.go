package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore"
)

func runWorkflows(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 0); err != nil {
		return err
	}
	reg, where, err := c.workflowRegistry()
	if err != nil {
		return err
	}
	if where != "" {
		// Like git help, this works anywhere; say why the list is short.
		c.hint(where + ": only the built-in workflows are listed")
	}
	list := reg.List()
	broken := reg.Broken()
	if c.boolFlag("json") {
		out := workflowsJSON{Schema: jsonSchemaVersion, Workflows: []workflowDefJSON{}, Broken: []brokenJSON{}}
		for _, wf := range list {
			d := workflowDefJSON{Name: wf.Name, Mode: wf.Mode, Source: wf.Source, StartNode: wf.StartNode, Title: wf.Title, Nodes: []nodeJSON{}}
			for _, name := range wf.Order {
				n := wf.Nodes[name]
				nj := nodeJSON{Name: name, Summary: n.Summary, Transitions: []transitionJSON{}, Terminal: n.Terminal, Rules: []ruleJSON{}}
				for _, tr := range n.Transitions {
					nj.Transitions = append(nj.Transitions, transitionJSON{When: tr.When, To: tr.To})
				}
				for _, r := range n.Rules {
					nj.Rules = append(nj.Rules, ruleJSON{Type: r.Type, LookbackPhases: r.LookbackPhases, Pattern: r.Pattern,
						PathPattern: r.PathPattern, Threshold: r.Threshold, Window: r.Window, MaxDuration: r.MaxDuration, MaxTokens: r.MaxTokens})
				}
				d.Nodes = append(d.Nodes, nj)
			}
			out.Workflows = append(out.Workflows, d)
		}
		for _, b := range broken {
			out.Broken = append(out.Broken, brokenJSON{Name: b.Name, Source: b.Source, Error: b.Err.Error()})
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
		fmt.Fprintf(c.Stdout, "%-*s %s%s\n", width, wf.Name, mainPath(wf), src)
	}
	for _, b := range broken {
		name := b.Name
		if name == "" {
			name = "-"
		}
		fmt.Fprintf(c.Stdout, "%-*s broken: %s\n", width, name, b.Err)
	}
	return nil
}

// workflowRegistry returns the workflows this worktree can start. Outside
// a repository, or in one without a work tree, it returns the built-ins
// and says where it is ("not in a git repository").
func (c *cmdCtx) workflowRegistry() (reg *engine.Registry, outside string, err error) {
	e, _, err := c.engine()
	switch {
	case errors.Is(err, gitstore.ErrNotRepo):
		outside = "not in a git repository"
	case errors.Is(err, gitstore.ErrNoWorkTree):
		outside = "not in a work tree"
	case err != nil:
		return nil, "", err
	}
	if outside != "" {
		reg, err = engine.NewRegistry(nil)
		return reg, outside, err
	}
	reg, err = e.Workflows()
	return reg, "", err
}

// mainPath renders the nodes in file order ending at done: the shape of the
// workflow at a glance. A workflow whose last node ends it (no
// transitions) ends there; one that never reaches done ends in ↺.
func mainPath(wf *engine.Workflow) string {
	nodes := append([]string(nil), wf.Order...)
	switch {
	case len(nodes) > 0 && wf.Nodes[nodes[len(nodes)-1]].Terminal:
	case !reachesDone(wf):
		return strings.Join(nodes, " → ") + " ↺"
	default:
		nodes = append(nodes, engine.NodeDone)
	}
	return strings.Join(nodes, " → ")
}

// reachesDone reports whether any transition leads to done.
func reachesDone(wf *engine.Workflow) bool {
	for _, n := range wf.Nodes {
		for _, t := range n.Transitions {
			if t.To == engine.NodeDone {
				return true
			}
		}
	}
	return false
}

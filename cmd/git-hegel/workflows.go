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
	if c.boolFlag("json") {
		out := workflowsJSON{Schema: jsonSchemaVersion, Workflows: []workflowDefJSON{}}
		for _, wf := range list {
			d := workflowDefJSON{Name: wf.Name, Mode: wf.Mode, Source: wf.Source, StartNode: wf.StartNode, Nodes: []nodeJSON{}}
			for _, name := range wf.Order {
				n := wf.Nodes[name]
				nj := nodeJSON{Name: name, Summary: n.Summary, Transitions: []transitionJSON{}}
				for _, tr := range n.Transitions {
					nj.Transitions = append(nj.Transitions, transitionJSON{When: tr.When, To: tr.To})
				}
				d.Nodes = append(d.Nodes, nj)
			}
			out.Workflows = append(out.Workflows, d)
		}
		return writeJSON(c.Stdout, out)
	}
	for _, wf := range list {
		src := ""
		if wf.Source != "built-in" {
			src = "  (" + c.quotePath(wf.Source) + ")"
		}
		fmt.Fprintf(c.Stdout, "%-10s %s%s\n", wf.Name, mainPath(wf), src)
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
// workflow at a glance.
func mainPath(wf *engine.Workflow) string {
	return strings.Join(append(append([]string(nil), wf.Order...), engine.NodeDone), " → ")
}

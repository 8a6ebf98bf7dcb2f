package main

import (
	"fmt"
	"strings"

	"github.com/git-hegel/git-hegel/engine"
)

func runWorkflows(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 0); err != nil {
		return err
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	reg, err := e.Workflows()
	if err != nil {
		return err
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
			src = "  (" + wf.Source + ")"
		}
		fmt.Fprintf(c.Stdout, "%-10s %s%s\n", wf.Name, mainPath(wf), src)
	}
	return nil
}

// mainPath renders the nodes in file order ending at done: the shape of the
// workflow at a glance.
func mainPath(wf *engine.Workflow) string {
	return strings.Join(append(append([]string(nil), wf.Order...), engine.NodeDone), " → ")
}

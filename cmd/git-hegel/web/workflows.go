package web

import (
	"strings"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// The workflows the repository can start, and one drawn as a graph.

type workflowsData struct {
	pageData
	Workflows []workflowRow
	Broken    []brokenRow
}

type workflowRow struct{ Name, Title, Source, Path string }

type brokenRow struct{ Name, Source, Error string }

type workflowData struct {
	pageData
	Workflow *workflow.Definition
	Task     string // set when drawn for a task
	Source   string
	Graph    *Graph
	Nodes    []nodeRow
	Skips    []skipRow
}

type nodeRow struct {
	Name, Label, Summary, Artifact, Gate, Transitions string
	Requires, SkipFor, Rules                          string
	// Checks are the node's check: commands, run before it ends.
	Checks                []string
	Conditional, Terminal bool
	MaxAttempts           int
}

type skipRow struct{ Type, Nodes string }

func (s *Server) workflows(req *request) (string, any, error) {
	reg, err := req.repo.Engine.Workflows()
	if err != nil {
		return "", nil, err
	}
	d := workflowsData{pageData: s.base(req, "Workflows")}
	d.Nav = "workflows"
	for _, wf := range reg.List() {
		d.Workflows = append(d.Workflows, workflowRow{Name: wf.Name, Title: wf.Title, Source: wf.Source, Path: strings.Join(wf.Order, " → ")})
	}
	for _, b := range reg.Broken() {
		d.Broken = append(d.Broken, brokenRow{Name: b.Name, Source: b.Source, Error: b.Err.Error()})
	}
	return "workflows.html", d, nil
}

func (s *Server) workflow(req *request) (string, any, error) {
	name := req.PathValue("name")
	reg, err := req.repo.Engine.Workflows()
	if err != nil {
		return "", nil, err
	}
	if b, broken := reg.GetBroken(name); broken {
		return "", nil, &pageError{409, b.Err}
	}
	wf, ok := reg.Get(name)
	if !ok {
		return "", nil, notFound("No workflow named '%s'", name)
	}
	d := workflowData{pageData: s.base(req, "Workflow "+wf.Name), Workflow: wf, Graph: LayoutWorkflow(wf, nil), Source: wf.Source}
	d.Nav = "workflows"
	d.Nodes = nodeRows(wf, req.repo.Engine.MaxAttempts)
	skips := wf.Skips()
	for _, t := range wf.TaskTypes {
		d.Skips = append(d.Skips, skipRow{Type: t, Nodes: strings.Join(skips[t], ", ")})
	}
	return "workflow.html", d, nil
}

// nodeRows is the table under a graph: each node's gate, guard rules,
// checks, skips.
func nodeRows(wf *workflow.Definition, defAttempts int) []nodeRow {
	var out []nodeRow
	for _, name := range wf.Order {
		n := wf.Nodes[name]
		r := nodeRow{Name: name, Label: wf.Label(name), Summary: n.Summary, Artifact: strings.Join(n.Kept(), ", "), Gate: n.Gate,
			Requires: strings.Join(n.Requires, ", "), SkipFor: strings.Join(n.SkipFor, ", "), Conditional: n.Conditional,
			Terminal: n.Terminal, MaxAttempts: wf.Attempts(name, defAttempts)}
		if len(n.Approvers) > 0 {
			r.Gate += " by " + strings.Join(n.Approvers, " or ")
		}
		var tr []string
		for _, t := range n.Transitions {
			s := t.When + " → " + t.To
			if t.Confirm {
				s += " (asks to confirm)"
			}
			tr = append(tr, s)
		}
		r.Transitions = strings.Join(tr, "; ")
		var rules []string
		for _, rule := range n.Rules {
			rules = append(rules, rule.Type)
		}
		r.Rules = strings.Join(rules, ", ")
		for _, c := range n.Checks {
			r.Checks = append(r.Checks, c.Command)
		}
		out = append(out, r)
	}
	return out
}

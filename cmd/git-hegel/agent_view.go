package main

import (
	"fmt"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

// forReader is st as this command's reader may see it: as it is for a
// person; for an agent reading through the MCP server, with the text a
// fetch brought and this machine does not trust replaced by a notice
// (engine.ForAgent), as the agent's prompt has it.
func (c *cmdCtx) forReader(e *engine.Engine, st *engine.State) *engine.State {
	if !c.forAgent || st == nil {
		return st
	}
	return e.ForAgent(st)
}

// resultForReader is the stored result b of node's step as this
// command's reader may see it (forReader); withheld says the notice
// stands in its place.
func (c *cmdCtx) resultForReader(e *engine.Engine, st *engine.State, node string, b []byte) (out []byte, withheld bool) {
	if !c.forAgent {
		return b, false
	}
	if notice, ok := e.ResultWithheld(st, node, b); ok {
		return []byte(notice), true
	}
	return b, false
}

// descriptionsForReader returns the description a run record keeps as
// this command's reader may see it (forReader), reading each task once.
func (c *cmdCtx) descriptionsForReader(e *engine.Engine) func(task, desc string) string {
	if !c.forAgent {
		return func(_, desc string) string { return desc }
	}
	seen := map[[2]string]string{}
	return func(task, desc string) string {
		k := [2]string{task, desc}
		if out, ok := seen[k]; ok {
			return out
		}
		out := desc
		if notice, ok := e.DescriptionWithheld(task, desc); ok {
			out = notice
		}
		seen[k] = out
		return out
	}
}

// errorsForReader returns the error a run record keeps as this command's
// reader may see it (forReader), reading each task once.
func (c *cmdCtx) errorsForReader(e *engine.Engine) func(task, msg string) string {
	if !c.forAgent {
		return func(_, msg string) string { return msg }
	}
	seen := map[[2]string]string{}
	return func(task, msg string) string {
		k := [2]string{task, msg}
		if out, ok := seen[k]; ok {
			return out
		}
		out := msg
		if notice, ok := e.ErrorWithheld(task, msg); ok {
			out = notice
		}
		seen[k] = out
		return out
	}
}

// runnerForReader returns the user or worktree a run record keeps as this
// command's reader may see it (forReader).
func (c *cmdCtx) runnerForReader(e *engine.Engine, who string) string {
	if !c.forAgent {
		return who
	}
	if notice, ok := e.RunnerWithheld(who); ok {
		return notice
	}
	return who
}

// labelsForReader puts a notice in place of each label of run j that
// is not a name (engine.RunLabel), for an agent reading it.
func (c *cmdCtx) labelsForReader(j *executionJSON) {
	if !c.forAgent {
		return
	}
	one := func(s *string) {
		if !engine.RunLabel(*s) {
			*s = engine.RunLabelNotice
		}
	}
	list := func(l []string) []string {
		out := make([]string, len(l))
		for i, s := range l {
			out[i] = s
			one(&out[i])
		}
		return out
	}
	for _, s := range []*string{&j.Workflow, &j.Mode, &j.TaskType, &j.Status, &j.Start.Branch, &j.End.Branch, &j.Start.Head, &j.End.Head} {
		one(s)
	}
	j.NodesCompleted, j.NodesFailed, j.NodesSkipped = list(j.NodesCompleted), list(j.NodesFailed), list(j.NodesSkipped)
	for n := range j.Nodes {
		if !engine.RunLabel(n) {
			delete(j.Nodes, n) // a key no agent can be given
		}
	}
	if m := j.Metadata; m != nil {
		c := *m
		c.MCPServers, c.Tools = list(m.MCPServers), list(m.Tools)
		c.Agents = make([]engine.AgentSeen, len(m.Agents))
		for i, a := range m.Agents {
			one(&a.Name)
			a.Models = list(a.Models)
			c.Agents[i] = a
		}
		one(&c.Version)
		j.Metadata = &c
	}
}

// definitionsWithheld says which workflow files an agent reading this
// command's output may not read the words of: those exactly as a commit
// brought them that this machine has not trusted (engine.CheckedOut),
// whose titles and node summaries are the committer's, as their prompts
// are. For a person, none.
func (c *cmdCtx) definitionsWithheld() func(*workflow.Definition) bool {
	none := func(*workflow.Definition) bool { return false }
	if !c.forAgent {
		return none
	}
	e, _, err := c.engine()
	if err != nil {
		return none // outside a repository: the built-ins only
	}
	return e.CheckedOut
}

// brokenWithheld says which workflow files that could not be loaded an
// agent may not read the error of (definitionsWithheld): the error may
// quote the file. For a person, none.
func (c *cmdCtx) brokenWithheld() func(*workflow.BrokenFile) bool {
	none := func(*workflow.BrokenFile) bool { return false }
	if !c.forAgent {
		return none
	}
	e, _, err := c.engine()
	if err != nil {
		return none
	}
	return e.BrokenCheckedOut
}

// brokenNotice is what an agent reads in place of a withheld file's error.
func brokenNotice(source string) string {
	return fmt.Sprintf("(%s came with a commit and could not be loaded; its error quotes it and is not shown to the agent: a person reads it with 'git hegel workflows'.)", source)
}

// withholdDefText replaces a definition's words (title, node summaries,
// descriptions and display names, approvers, the commands and questions
// it runs, its rules' patterns) with a notice; names, transitions,
// artifact paths and the rest of its shape stay.
func withholdDefText(d *workflowDefJSON) {
	notice := fmt.Sprintf("(%s came with a commit and its words are not shown to the agent until this machine trusts it: 'git hegel trust --workflow %s'.)", d.Source, d.Name)
	d.Title = notice
	put := func(s *string) {
		if *s != "" {
			*s = notice
		}
	}
	for i := range d.Nodes {
		n := &d.Nodes[i]
		n.Summary, n.Description, n.DisplayName = notice, "", ""
		if len(n.Approvers) > 0 {
			n.Approvers = []string{notice}
		}
		for j := range n.Checks {
			n.Checks[j] = notice
		}
		if n.Run != nil {
			put(&n.Run.Text)
		}
		for j := range n.Rules {
			put(&n.Rules[j].Pattern)
			put(&n.Rules[j].PathPattern)
		}
	}
}

package main

import "github.com/git-hegel/git-hegel/engine"

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

package engine

import "encoding/json"

// What an agent reads through git-hegel's MCP server (the state
// resource, the status, show, tasks, log and result tools) is held to
// the rule its prompt is held to (fetched_text.go): a task's text that
// arrived with a fetch and that this machine does not trust reaches the
// agent as the one-line notice, not as written. JSON fields are data to
// a program, but an agent reads them as it reads a prompt.

// ForAgent returns st as an agent may read it: its description, last
// failure and step results, when a fetch brought them and they are not
// trusted here, replaced by the notice that stands in the prompt (each
// step result by the notice as a JSON string). st is not changed.
func (e *Engine) ForAgent(st *State) *State {
	texts := e.untrustedState(st)
	if len(texts) == 0 {
		return st
	}
	c := *st
	for _, t := range texts {
		notice := withheld(st.Task, t)
		switch t.Field {
		case "description":
			c.Description = notice
		case "last_failure":
			c.LastFailure = notice
		case "step_results":
			q, err := json.Marshal(notice)
			if err != nil {
				continue
			}
			c.StepResults = make(map[string]json.RawMessage, len(st.StepResults))
			for k := range st.StepResults {
				c.StepResults[k] = q
			}
		}
	}
	return &c
}

// ResultWithheld says whether the stored result of node's step (b, as
// Result read it), or what the state records of the step, arrived with a
// fetch and is not trusted here; notice is what an agent reads instead.
func (e *Engine) ResultWithheld(st *State, node string, b []byte) (notice string, ok bool) {
	for _, t := range e.untrustedState(st) {
		if t.Field == "step_results" {
			return withheld(st.Task, t), true
		}
	}
	if inlineResult(st, node) {
		return "", false // kept in the state, whose step results are trusted
	}
	if t, ok := e.untrustedFile(st.Task, ResultPath(node), string(b)); ok {
		return withheld(st.Task, t), true
	}
	return "", false
}

// DescriptionWithheld says whether desc, a task's description as a
// record of its run keeps it (git hegel log), may not reach an agent:
// it may unless it is the description of task that ForAgent withholds,
// or task is gone and the text is not one this machine trusts.
func (e *Engine) DescriptionWithheld(task, desc string) (notice string, ok bool) {
	if desc == "" || e.textTrusted(desc) {
		return "", false
	}
	t, err := e.load(task)
	if err != nil || t.State.Description != desc {
		return "(A description this clone cannot vouch for is not shown to the agent: see it with 'git hegel log'.)", true
	}
	if a := e.ForAgent(t.State); a.Description != desc {
		return a.Description, true
	}
	return "", false
}

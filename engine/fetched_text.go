package engine

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Text a task carries reaches an agent inside its prompt: the description
// ({{task.description}}), why the last attempt failed, a run's prompt,
// context and variables, and earlier steps' results. Whoever can push to
// the remote writes those as freely as the definition, so, like a
// definition, text that arrived with a fetch instructs an agent only once
// this machine trusts it: the user reviewed it with `git hegel trust`,
// which records the blob id of its bytes (TrustText). Until then the
// prompt carries a one-line notice in its place. Text written here (start,
// describe, fail, run) is the user's own. Where text came from is read
// from this clone's reflog of the task's ref, which no remote can write
// (the chain itself can claim anything). People see all of it, as text,
// in show, status and the web pages.

// TrustText marks a record of a task's text reviewed with git hegel
// trust (TrustRecord.How): it never makes a definition trusted.
const TrustText = "text"

// TextOrigin says which of a task's state fields arrived with a fetch.
type TextOrigin interface {
	// TextFetched returns, for each of fields (keys of state.json) whose
	// value a fetch last changed, the remote it came from.
	TextFetched(task string, fields []string) map[string]string
}

// UnrecordedOrigin is the remote a TextOrigin or InputOrigin names for a
// text the task's ref held before this clone's record of it starts (git
// expired the older reflog entries): no origin can be vouched for, so it
// is treated as fetched.
const UnrecordedOrigin = "a state older than this clone's record of the task"

// TextTrustStore is a TrustStore that also keeps reviewed texts.
type TextTrustStore interface {
	// TrustedText returns the record of a text with blob id id, or nil.
	TrustedText(id string) (*TrustRecord, error)
}

// FetchedText is one text of a task that arrived with a fetch and that
// this machine does not trust.
type FetchedText struct {
	// Field is the state field ("description", "last_failure",
	// "step_results") or the task's file ("inputs/prompt",
	// "results/<node>") that holds it.
	Field  string
	Remote string
	Text   string
	ID     string // the blob id of Text
}

// Label names the text for people.
func (t FetchedText) Label() string {
	switch t.Field {
	case "description":
		return "description"
	case "last_failure":
		return "last failure"
	case "step_results":
		return "step results"
	case inputPrompt:
		return "run prompt"
	case inputContext:
		return "run context"
	case inputVars:
		return "run variables"
	}
	if n, ok := strings.CutPrefix(t.Field, resultsDir); ok {
		return "result of step " + n
	}
	return t.Field
}

// withheld is the notice that stands in a prompt for text t of task.
func withheld(task string, t FetchedText) string {
	return fmt.Sprintf("(The task's %s came from %s and is not shown to the agent until this machine trusts it: review it with 'git hegel trust %s'.)",
		t.Label(), t.Remote, task)
}

// textTrusted says whether a text may instruct an agent here. With no
// store of texts (the in-memory test stores) every text is.
func (e *Engine) textTrusted(s string) bool {
	ts, ok := e.Trust.(TextTrustStore)
	if e.Trust == nil || !ok {
		return true
	}
	r, err := ts.TrustedText(DefinitionID([]byte(s)))
	if err != nil {
		e.warn(fmt.Sprintf("cannot read which texts are trusted: %v", err))
		return false
	}
	return r != nil
}

// stateTextOnce returns untrustedState(st), read at most once.
func (e *Engine) stateTextOnce(st *State) func() []FetchedText {
	return sync.OnceValue(func() []FetchedText { return e.untrustedState(st) })
}

// untrustedState lists st's state fields whose text arrived with a fetch
// and is not trusted here.
func (e *Engine) untrustedState(st *State) []FetchedText {
	o, ok := e.Tasks.(TextOrigin)
	if !ok {
		return nil
	}
	vals := map[string]string{"description": st.Description, "last_failure": st.LastFailure}
	if len(st.StepResults) > 0 {
		raw := make(map[string]string, len(st.StepResults))
		for k, v := range st.StepResults {
			raw[k] = string(v)
		}
		vals["step_results"] = keyedText(raw)
	}
	var fields []string
	for _, f := range []string{"description", "last_failure", "step_results"} {
		if vals[f] != "" {
			fields = append(fields, f)
		}
	}
	if len(fields) == 0 {
		return nil
	}
	fetched := o.TextFetched(st.Task, fields)
	var out []FetchedText
	for _, f := range fields {
		remote, ok := fetched[f]
		if !ok || e.textTrusted(vals[f]) {
			continue
		}
		out = append(out, FetchedText{Field: f, Remote: remote, Text: vals[f], ID: DefinitionID([]byte(vals[f]))})
	}
	return out
}

// untrustedFile says whether the task's file path, holding text, arrived
// with a fetch and is not trusted here.
func (e *Engine) untrustedFile(task, path, text string) (FetchedText, bool) {
	o, ok := e.Tasks.(InputOrigin)
	if !ok || text == "" {
		return FetchedText{}, false
	}
	remote, fetched := o.InputFetched(task, path)
	if !fetched || e.textTrusted(text) {
		return FetchedText{}, false
	}
	return FetchedText{Field: path, Remote: remote, Text: text, ID: DefinitionID([]byte(text))}, true
}

// withholdRunData puts notices in place of the run data d holds that
// arrived with a fetch and is not trusted (the state's step results are
// st's; stateText lists st's untrusted fields).
func (e *Engine) withholdRunData(st *State, d *runData, stateText []FetchedText) {
	for _, t := range stateText {
		if t.Field == "step_results" {
			for n := range st.StepResults {
				if _, ok := d.results[n]; ok {
					d.results[n] = withheld(st.Task, t)
				}
			}
		}
	}
	for _, f := range []struct {
		path string
		text *string
	}{{inputPrompt, &d.in.Prompt}, {inputContext, &d.in.Context}} {
		if t, ok := e.untrustedFile(st.Task, f.path, *f.text); ok {
			*f.text = withheld(st.Task, t)
		}
	}
	if len(d.in.Vars) > 0 {
		if t, ok := e.untrustedFile(st.Task, inputVars, keyedText(d.in.Vars)); ok {
			for k := range d.in.Vars {
				d.in.Vars[k] = withheld(st.Task, t)
			}
		}
	}
	for n, v := range d.results {
		if inlineResult(st, n) {
			continue // the state's own: step_results above
		}
		if t, ok := e.untrustedFile(st.Task, ResultPath(n), v); ok {
			d.results[n] = withheld(st.Task, t)
		}
	}
}

// inlineResult says whether node's result is kept in the state itself
// (a JSON string in step_results), not in the task's file
// results/<node>, which the state's entry then describes.
func inlineResult(st *State, node string) bool {
	var s string
	return json.Unmarshal(st.StepResults[node], &s) == nil
}

// keyedText is a map of texts (a run's variables, the state's step
// results) as one text, in key order, each key and value followed by a
// NUL: what trust records and what trust shows.
func keyedText(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(m[k])
		b.WriteByte(0)
	}
	return b.String()
}

// UntrustedText lists every text of the task that arrived with a fetch
// and is not trusted here: what `git hegel trust` shows and trusts.
func (e *Engine) UntrustedText(st *State) ([]FetchedText, error) {
	out := e.untrustedState(st)
	in, err := e.loadInputs(st.Task, nil)
	if err != nil {
		return nil, err
	}
	for _, f := range []struct{ path, text string }{{inputPrompt, in.Prompt}, {inputContext, in.Context}} {
		if t, ok := e.untrustedFile(st.Task, f.path, f.text); ok {
			out = append(out, t)
		}
	}
	if len(in.Vars) > 0 {
		if t, ok := e.untrustedFile(st.Task, inputVars, keyedText(in.Vars)); ok {
			out = append(out, t)
		}
	}
	results, err := e.loadResults(st, nil)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(results))
	for n := range results {
		if !inlineResult(st, n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		if t, ok := e.untrustedFile(st.Task, ResultPath(n), results[n]); ok {
			out = append(out, t)
		}
	}
	return out, nil
}

// TrustTexts records texts as trusted on this machine.
func (e *Engine) TrustTexts(task string, texts []FetchedText) error {
	if len(texts) == 0 {
		return nil
	}
	if e.Trust == nil {
		return fmt.Errorf("this repository keeps no record of trusted texts")
	}
	for _, t := range texts {
		if err := e.Trust.TrustDefinition(TrustRecord{ID: t.ID, Task: task, How: TrustText, At: e.now().UTC()}); err != nil {
			return fmt.Errorf("Could not trust the %s of task %s: %v", t.Label(), task, err)
		}
	}
	return nil
}

package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// What the step runner keeps on the task's ref, beside state.json:
//
//	results/<node>     the output of the node's last step, one blob (at
//	                   most hegel.maxResultSize; longer output is cut,
//	                   with a note saying so)
//	inputs/prompt      the run's -p
//	inputs/context     the run's --context files (or standard input)
//	inputs/vars.json   the run's --set KEY=VALUE pairs, a JSON object
//	inputs/adapter     the run's --adapter
//
// state.json's step_results indexes the results: one StepResult per
// node, so a result blob left from an earlier run of a reused task name
// is never mistaken for this run's.
const (
	resultsDir   = "results/"
	inputPrompt  = "inputs/prompt"
	inputContext = "inputs/context"
	inputVars    = "inputs/vars.json"
	inputAdapter = "inputs/adapter"
	// MaxInputBytes bounds the prompt and the context a run keeps: the
	// largest blob a fetch accepts by default (hegel.syncMaxBlobSize).
	MaxInputBytes = 4 << 20
)

// ResultPath is the tree path of node's result on the task's ref.
func ResultPath(node string) string { return resultsDir + node }

// TaskFileReader reads the entries a task's tree holds besides its state
// (results and inputs). The git store implements it next to TaskStore.
type TaskFileReader interface {
	// ReadTaskFile returns the entry at path of task's tree (the live
	// task, else the archived one), or an error wrapping ErrNotFound.
	ReadTaskFile(task, path string) ([]byte, error)
}

// TaskDirReader is an optional TaskFileReader that reads all the entries
// of one directory of a task's tree at once (all results for a step).
type TaskDirReader interface {
	// ReadTaskDir returns the files of dir ("results") of task's tree,
	// by name; none when the tree has no such directory.
	ReadTaskDir(task, dir string) (map[string][]byte, error)
}

// StepResult is what state.json records about a node's last step; the
// output itself is the blob results/<node>.
type StepResult struct {
	// Handler is what ran: "adapter NAME", "command" or "confirm".
	Handler string    `json:"handler"`
	At      time.Time `json:"at"`
	Seconds float64   `json:"seconds"`
	// Bytes is the size of the output the step printed; Truncated is set
	// when the stored result was cut at hegel.maxResultSize.
	Bytes     int64 `json:"bytes"`
	Truncated bool  `json:"truncated,omitempty"`
	// Exit is the handler's exit status; Error why the step failed ("" if
	// it did not).
	Exit  int    `json:"exit"`
	Error string `json:"error,omitempty"`
	// Files and RequiresConfirmation come from the handler's trailing JSON
	// object (docs/run.md).
	Files                []string `json:"files,omitempty"`
	RequiresConfirmation bool     `json:"requires_confirmation,omitempty"`
}

// StepResultOf returns node's step result metadata, if it has one. A
// result stored as a plain JSON string (before the runner) has only its
// text.
func StepResultOf(st *State, node string) (*StepResult, bool) {
	raw, ok := st.StepResults[node]
	if !ok {
		return nil, false
	}
	var r StepResult
	if json.Unmarshal(raw, &r) != nil {
		return &StepResult{}, true
	}
	return &r, true
}

func setStepResult(st *State, node string, r *StepResult) {
	b, err := json.Marshal(r)
	if err != nil {
		return // a struct of plain fields always marshals
	}
	if st.StepResults == nil {
		st.StepResults = map[string]json.RawMessage{}
	}
	st.StepResults[node] = b
}

// ResultNodes lists the nodes with a stored result: in the workflow's
// order, then any others sorted.
func ResultNodes(st *State, wf *workflow.Definition) []string {
	var out, rest []string
	for _, n := range wf.Order {
		if _, ok := st.StepResults[n]; ok {
			out = append(out, n)
		}
	}
	for n := range st.StepResults {
		if !slices.Contains(out, n) {
			rest = append(rest, n)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// Result returns the stored output of node's last step in task t.
func (e *Engine) Result(t *Task, node string) ([]byte, *StepResult, error) {
	meta, ok := StepResultOf(t.State, node)
	if !ok {
		return nil, nil, &NoResultError{Task: t.State.Task, Node: node, Have: resultNames(t.State)}
	}
	var s string
	if json.Unmarshal(t.State.StepResults[node], &s) == nil {
		return []byte(s), meta, nil // a plain string result
	}
	fr, ok := e.Tasks.(TaskFileReader)
	if !ok {
		return nil, nil, fmt.Errorf("cannot read results here")
	}
	b, err := fr.ReadTaskFile(t.State.Task, ResultPath(node))
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, nil, fmt.Errorf("Task '%s' records a result for '%s', but its blob %s is missing from the task's ref", t.State.Task, node, ResultPath(node))
		}
		return nil, nil, err
	}
	return b, meta, nil
}

// NoResultError: the node has no stored result.
type NoResultError struct {
	Task, Node string
	Have       []string
}

func (e *NoResultError) Error() string {
	if len(e.Have) == 0 {
		return fmt.Sprintf("Task '%s' has no step results yet ('git hegel run' stores them)", e.Task)
	}
	return fmt.Sprintf("Task '%s' has no result for '%s' (results: %s)", e.Task, e.Node, strings.Join(e.Have, ", "))
}

func resultNames(st *State) []string {
	var out []string
	for n := range st.StepResults {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// runInputs are a run's -p, --context and --set as stored on the task.
type runInputs struct {
	Prompt  string
	Context string
	Vars    map[string]string
	Adapter string
}

// loadInputs reads the stored inputs the template uses (all, when t is
// nil).
func (e *Engine) loadInputs(task string, t *workflow.Template) (*runInputs, error) {
	in := &runInputs{}
	fr, ok := e.Tasks.(TaskFileReader)
	if !ok {
		return in, nil
	}
	read := func(path string) ([]byte, error) {
		b, err := fr.ReadTaskFile(task, path)
		if errors.Is(err, ErrNotFound) {
			return nil, nil
		}
		return b, err
	}
	if t == nil || t.Uses(workflow.DataPrompt) {
		b, err := read(inputPrompt)
		if err != nil {
			return nil, err
		}
		in.Prompt = string(b)
	}
	if t == nil || t.Uses(workflow.DataContext) {
		b, err := read(inputContext)
		if err != nil {
			return nil, err
		}
		in.Context = string(b)
	}
	if t == nil {
		b, err := read(inputAdapter)
		if err != nil {
			return nil, err
		}
		in.Adapter = strings.TrimSpace(string(b))
	}
	if t == nil || t.Uses(workflow.DataVars) {
		b, err := read(inputVars)
		if err != nil {
			return nil, err
		}
		if len(b) > 0 {
			if err := json.Unmarshal(b, &in.Vars); err != nil {
				return nil, fmt.Errorf("task %s: %s does not parse: %v", task, inputVars, err)
			}
		}
	}
	return in, nil
}

// loadResults reads the results of the nodes named, as text (all the
// task has, when nodes is nil).
func (e *Engine) loadResults(st *State, nodes []string) (map[string]string, error) {
	out := map[string]string{}
	fr, hasFiles := e.Tasks.(TaskFileReader)
	all := nodes == nil
	if all {
		nodes = resultNames(st)
	}
	// All of them (a step's HEGEL_RESULTS_DIR): one read of the tree.
	var blobs map[string][]byte
	if dr, ok := e.Tasks.(TaskDirReader); ok && all && len(nodes) > 1 {
		var err error
		if blobs, err = dr.ReadTaskDir(st.Task, strings.TrimSuffix(resultsDir, "/")); err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
	}
	for _, n := range nodes {
		raw, ok := st.StepResults[n]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			out[n] = s
			continue
		}
		if blobs != nil {
			if b, ok := blobs[n]; ok {
				out[n] = string(b)
			}
			continue
		}
		if !hasFiles {
			continue
		}
		b, err := fr.ReadTaskFile(st.Task, ResultPath(n))
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[n] = string(b)
	}
	return out, nil
}

// resultRefs lists the node names a template uses as {{results.NODE}}.
func resultRefs(t *workflow.Template) []string {
	out := []string{}
	for _, r := range t.Results {
		if !slices.Contains(out, r.Name) {
			out = append(out, r.Name)
		}
	}
	return out
}

// InputOrigin says whether a run input in a task's ref arrived with a
// fetch: the task's chain cannot tell (anyone who can push writes any
// commit into it), this clone's own record of its ref can.
type InputOrigin interface {
	// InputFetched returns the remote whose fetch last changed path in
	// task's tree, and true; "" and false when a command here wrote it.
	InputFetched(task, path string) (remote string, fetched bool)
}

// storedAdapter is the adapter a continued run uses when none is given:
// the one its inputs name, when this clone chose it. Which of this
// machine's adapters runs (each with its own permissions) is this
// machine's choice: a name that arrived with a fetch, whoever wrote it
// into the task, is not followed, and the default adapter runs instead.
func (e *Engine) storedAdapter(task, name string) string {
	if name == "" {
		return ""
	}
	o, ok := e.Tasks.(InputOrigin)
	if !ok {
		return name
	}
	if remote, fetched := o.InputFetched(task, inputAdapter); fetched {
		e.warn(fmt.Sprintf("the run's adapter %q was set on %s, not here: this machine's default adapter runs ('git hegel run --task %s --adapter NAME' chooses one)",
			name, remote, task))
		return ""
	}
	return name
}

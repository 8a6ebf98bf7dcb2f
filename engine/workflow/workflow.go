package workflow

import (
	"fmt"
	"regexp"
	"sync"
)

// The implicit terminal nodes. Every workflow may transition to them, none may
// define them, so the engine can rely on their meaning in every workflow.
const (
	NodeDone    = "done"
	NodeAborted = "aborted"
)

// Transition is one edge out of a node: claiming When moves the task to To.
type Transition struct {
	When string `json:"when"`
	To   string `json:"to"`
	// Confirm asks the person at the terminal before the transition is
	// taken (a confirmation gate); declining changes nothing.
	Confirm bool `json:"confirm,omitempty"`
}

// Node is one phase of a workflow.
type Node struct {
	Name    string
	Summary string // one line; may be empty
	Prompt  string // instructions for the phase as written (a template), without a trailing newline
	// Transitions are tried in file order; the first matching claim wins.
	Transitions []Transition

	// PromptHbs is set when the prompt was written as prompt_hbs.
	PromptHbs bool
	// Template is the parsed prompt (nil for an end node without one);
	// PromptLine is the file line its first line is on.
	Template   *Template
	PromptLine int
	// Rules are the node's guard rules, checked at next and on agent
	// events (engine/agent's rules.go).
	Rules []Rule
	// Terminal is set for a node with no transitions: reaching it ends
	// the run, as done does.
	Terminal bool
	// Stage metadata, gates and retries (stage.go).
	StageMeta
	// The step runner's handler and checks (load_run.go).
	RunMeta
}

// Definition is a parsed, validated workflow definition. Treat it as read-only:
// built-ins are shared between callers.
type Definition struct {
	Name      string // file base name without .yaml/.yml, or the built-in's name
	Mode      string // shown to users; defaults to Name
	StartNode string
	Nodes     map[string]*Node // defined nodes only
	Order     []string         // defined node names in file order
	Source    string           // "built-in" or the file name it was loaded from
	// Raw is the YAML exactly as loaded. It is stored with each task so a
	// task keeps running the definition it started with.
	Raw []byte
	// Title is hegel's top-level name: a display name; may be empty.
	Title string
	// Warnings are problems that did not stop the file from loading
	// (unknown keys, nodes that cannot reach an end).
	Warnings []Warning
	// TaskTypes are the task types the workflow accepts (none: it takes
	// no --type); DefaultTaskType is used when start names none.
	TaskTypes       []string
	DefaultTaskType string
	// MaxRollbacks is max_rollbacks: moves back to an earlier node a task
	// may make before the next needs --force (0: not given, the setting
	// or DefaultMaxRollbacks decides; -1: off).
	MaxRollbacks int
}

// IsTerminal reports whether reaching node ends the run: the implicit
// done and aborted, and defined nodes without transitions.
func (w *Definition) IsTerminal(node string) bool {
	if node == NodeDone || node == NodeAborted {
		return true
	}
	n, ok := w.Nodes[node]
	return ok && n.Terminal
}

// RestartCycle is hegel's global claim: from any node, back to the start
// node (a node's own transition with that claim wins).
const RestartCycle = "restart_cycle"

// HasNode reports whether a task of this workflow may be at node.
func (w *Definition) HasNode(node string) bool {
	_, ok := w.Nodes[node]
	return ok || w.IsTerminal(node)
}

// Transition returns the target of the first transition of node whose When
// equals claim.
func (w *Definition) Transition(node, claim string) (to string, ok bool) {
	n, found := w.Nodes[node]
	if !found {
		return "", false
	}
	for _, t := range n.Transitions {
		if t.When == claim {
			return t.To, true
		}
	}
	if claim == RestartCycle && !n.Terminal {
		return w.StartNode, true
	}
	return "", false
}

// DoneClaim returns the claim of node's first transition to an end (done,
// or a node without transitions), for `git hegel done`.
func (w *Definition) DoneClaim(node string) (string, bool) {
	n, ok := w.Nodes[node]
	if !ok {
		return "", false
	}
	for _, t := range n.Transitions {
		if t.To == NodeDone || (t.To != NodeAborted && w.IsTerminal(t.To)) {
			return t.When, true
		}
	}
	return "", false
}

// Prompt returns the instructions for node. The terminal nodes get a fixed
// text because users cannot define them.
func (w *Definition) Prompt(node string) string {
	switch node {
	case NodeDone:
		return fmt.Sprintf("The %s workflow is complete; there is nothing more to do in it.\n"+
			"Start another with `git hegel start <workflow>`; `git hegel workflows` lists them.", w.Name)
	case NodeAborted:
		return fmt.Sprintf("The %s workflow was aborted; its history is kept.\n"+
			"Start another with `git hegel start <workflow>`; `git hegel workflows` lists them.", w.Name)
	}
	if n, ok := w.Nodes[node]; ok {
		if n.Terminal && n.Prompt == "" {
			return fmt.Sprintf("The %s workflow is complete (it ended at '%s'); there is nothing more to do in it.\n"+
				"Start another with `git hegel start <workflow>`; `git hegel workflows` lists them.", w.Name, node)
		}
		return n.Prompt
	}
	return ""
}

// Summary returns the one-line description of node, or "" if it has none.
func (w *Definition) Summary(node string) string {
	switch node {
	case NodeDone:
		return "Workflow complete"
	case NodeAborted:
		return "Workflow aborted"
	}
	if n, ok := w.Nodes[node]; ok {
		return n.Summary
	}
	return ""
}

// maxNameLen keeps names well inside git's ref component limits.
const maxNameLen = 64

// Names end up inside git ref names and JSON, so they are restricted to
// characters that are safe in both without escaping.
var nameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`) })

const nameRule = "use lowercase letters, digits, '_' and '-', starting with a letter or digit, at most 64 characters"

// validName reports whether s may be used as a workflow, node or claim name.
func validName(s string) bool {
	return len(s) <= maxNameLen && nameRe().MatchString(s)
}

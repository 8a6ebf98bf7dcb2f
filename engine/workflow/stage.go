package workflow

import (
	"fmt"
	"slices"
	"strings"

	"github.com/git-hegel/git-hegel/engine/text"
)

// GateApproval is the one gate a node may have: `next` stops there until a
// person approves (or rejects) the move.
const GateApproval = "approval"

// DefaultMaxAttempts is how many attempts a node gets when neither its
// max_attempts nor hegel.maxAttempts says otherwise.
const DefaultMaxAttempts = 3

// DefaultMaxRollbacks is how many moves back to an earlier node a task
// may make before the next one needs --force, when neither the
// workflow's max_rollbacks nor hegel.maxRollbacks says otherwise: enough
// for a few honest review rounds on every gate of the pipeline, few
// enough to stop an agent bouncing between two nodes for ever.
const DefaultMaxRollbacks = 10

// MaxRollbacksLimit is the largest cap: a task keeps its last 50 moves
// back (engine's MaxRollbackEvents), which is what the cap counts.
const MaxRollbacksLimit = 50

// StageMeta is what a workflow file may say about a node besides its
// prompt and transitions: stage metadata, gates and retries.
// Every field is optional.
type StageMeta struct {
	DisplayName string // shown instead of the node name where people read it
	Description string // longer than Summary; may span lines
	// Artifacts are the files the stage must produce (artifact: one path
	// or a list), slash-separated and relative to the top of the
	// worktree; each may name task fields (artifact_path.go). `next`
	// refuses while one is missing or empty. No two share a file name.
	Artifacts []string
	// Produces are files the stage writes that are kept with the task as
	// its artifacts are (submitted when the node ends, archived when the
	// task ends) but whose absence does not stop `next`.
	Produces []string
	// Requires are files of earlier stages the stage reads; entering the
	// stage warns about those that are missing. They may name task
	// fields as artifacts do.
	Requires []string
	// Conditional stages may be skipped with `git hegel skip`.
	Conditional bool
	// SkipFor lists the task types that do not run this stage at all.
	SkipFor []string
	// Gate is "" or GateApproval; Approvers, if set, are the user.name
	// values allowed to decide at the gate.
	Gate      string
	Approvers []string
	// MaxAttempts bounds `git hegel fail` at this node (0: the default).
	MaxAttempts int
	// Subphases are the steps within the node, in order (`git hegel next
	// --sub` moves from one to the next); the node starts at the first.
	Subphases []string
}

// Label is the node's display name, or its name.
func (w *Definition) Label(node string) string {
	if n, ok := w.Nodes[node]; ok && n.DisplayName != "" {
		return n.DisplayName
	}
	return node
}

// AcceptsType reports whether a task of type t may run this workflow.
func (w *Definition) AcceptsType(t string) bool { return slices.Contains(w.TaskTypes, t) }

// SkippedFor reports whether tasks of type t skip node.
func (w *Definition) SkippedFor(node, t string) bool {
	n, ok := w.Nodes[node]
	return ok && t != "" && slices.Contains(n.SkipFor, t)
}

// Skips returns, for each task type the workflow declares, the nodes it
// skips, in file order.
func (w *Definition) Skips() map[string][]string {
	out := map[string][]string{}
	for _, t := range w.TaskTypes {
		out[t] = []string{}
		for _, name := range w.Order {
			if w.SkippedFor(name, t) {
				out[t] = append(out[t], name)
			}
		}
	}
	return out
}

// Attempts is how many attempts node gets: its max_attempts, else def
// (hegel.maxAttempts), else DefaultMaxAttempts.
func (w *Definition) Attempts(node string, def int) int {
	if n, ok := w.Nodes[node]; ok && n.MaxAttempts > 0 {
		return n.MaxAttempts
	}
	if def > 0 {
		return def
	}
	return DefaultMaxAttempts
}

// Kept returns the files node n keeps with the task: its artifacts,
// then the files it produces.
func (n *Node) Kept() []string {
	return append(slices.Clone(n.Artifacts), n.Produces...)
}

// Artifacts returns every file the workflow's nodes keep with the task
// (artifact: and produces:), as written (task fields not filled in), in
// node order, each once.
func (w *Definition) Artifacts() []string {
	var out []string
	for _, name := range w.Order {
		for _, a := range w.Nodes[name].Kept() {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out
}

// Producer returns the first node that names artifact path (as
// written), or "".
func (w *Definition) Producer(path string) string {
	for _, name := range w.Order {
		if slices.Contains(w.Nodes[name].Kept(), path) {
			return name
		}
	}
	return ""
}

// CheckArtifactPath refuses paths that could leave the worktree or reach
// into the repository: absolute, "..", ".git" in any case, backslashes
// (paths are slash-separated on every system), empty parts.
func CheckArtifactPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("is empty")
	case strings.HasPrefix(p, "/") || (len(p) > 1 && p[1] == ':'):
		return fmt.Errorf("%s is absolute; give a path relative to the top of the worktree", text.Quote(p))
	case strings.ContainsAny(p, "\\\x00\r\n"):
		return fmt.Errorf("%s must be a slash-separated path on one line", text.Quote(p))
	}
	for _, part := range strings.Split(p, "/") {
		switch {
		case part == "" || part == ".":
			return fmt.Errorf("%s has an empty or '.' part", text.Quote(p))
		case part == "..":
			return fmt.Errorf("%s contains '..'; artifacts stay inside the worktree", text.Quote(p))
		case isDotGit(part):
			return fmt.Errorf("%s points into .git", text.Quote(p))
		}
	}
	return nil
}

// isDotGit reports names a filesystem may treat as ".git" (any case,
// trailing dots or spaces).
func isDotGit(name string) bool {
	n := strings.TrimRight(strings.ToLower(name), ". ")
	return n == ".git" || n == "git~1"
}

package engine

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

// StateError lists what is wrong with a task's state. Every write checks
// the state it is about to store and refuses with one of these, so a
// broken state is never written; reads report it.
type StateError struct {
	Task     string
	Problems []string
}

func (e *StateError) Error() string {
	return fmt.Sprintf("Task '%s' has an invalid state: %s", e.Task, strings.Join(e.Problems, "; "))
}

// knownStatuses are the statuses a stored state may have.
var knownStatuses = []string{
	StatusInitializing, StatusActive, StatusAwaitingApproval, StatusAwaitingAnswer, StatusPaused, StatusFailed,
	StatusCompleted, StatusAborted, StatusRolledBack, StatusStashed,
}

// ValidateState checks st against the rules every stored state obeys
// (docs/tasks.md, "Validation", lists them). wf, if not nil, is
// the definition the task runs; nodes are then checked against it. It
// returns nil or a *StateError naming every problem found. `git hegel
// doctor` builds on it.
func ValidateState(st *State, wf *workflow.Definition) error {
	if st == nil {
		return &StateError{Problems: []string{"no state"}}
	}
	var p []string
	add := func(format string, a ...any) { p = append(p, fmt.Sprintf(format, a...)) }
	for _, f := range []struct{ name, v string }{
		{"task", st.Task}, {"workflow", st.Workflow}, {"mode", st.Mode}, {"status", st.Status},
	} {
		if f.v == "" {
			add("missing '%s'", f.name)
		}
	}
	// A meta_mode is only a name, but one from another clone is printed
	// and looked up: it must be a name, not a path or a page of text.
	if st.MetaMode != "" && !workflow.ValidMetaModeName(st.MetaMode) {
		add("invalid meta_mode %s", text.Quote(st.MetaMode))
	}
	// Labels every listing prints: one from another clone must not carry
	// what a terminal would act on (free text, such as the description,
	// is cleaned where it is printed instead).
	for _, f := range []struct{ name, v string }{
		{"workflow", st.Workflow}, {"mode", st.Mode}, {"task_type", st.TaskType}, {"priority", st.Priority},
	} {
		if strings.ContainsAny(f.v, "\n") || text.Clean(f.v) != f.v {
			add("'%s' %s holds control characters", f.name, text.Quote(f.v))
		}
	}
	if st.Status != "" && !slices.Contains(knownStatuses, st.Status) {
		add("unknown status '%s'", st.Status)
	}
	if st.Active() {
		switch {
		case st.CurrentNode == "":
			add("%s status requires 'current_node'", st.Status)
		// A node without transitions ends the run when a transition
		// reaches it; a task started there stays open until it leaves
		// (restart_cycle) or is aborted, so only done and aborted count.
		case st.CurrentNode == workflow.NodeDone || st.CurrentNode == workflow.NodeAborted:
			add("%s status at the terminal node '%s'", st.Status, st.CurrentNode)
		case wf != nil && !wf.HasNode(st.CurrentNode):
			add("current node '%s' is not in workflow '%s'", st.CurrentNode, wf.Name)
		}
	}
	if st.Finished() && st.EndedAt == nil {
		add("%s status requires 'ended_at'", st.Status)
	}
	// A completed task is at done, or at a node without transitions
	// (hegel's end nodes), which only the definition can tell.
	if st.Status == StatusCompleted && st.CurrentNode != workflow.NodeDone && (wf == nil || !wf.IsTerminal(st.CurrentNode)) {
		if wf != nil || st.CurrentNode == "" || st.CurrentNode == workflow.NodeAborted {
			add("completed status at '%s', not '%s'", st.CurrentNode, workflow.NodeDone)
		}
	}
	if st.Status == StatusFailed && st.Error == nil {
		add("failed status requires 'error' object")
	}
	if st.Status == StatusAwaitingAnswer && openQuestion(st) < 0 {
		add("awaiting_answer status requires an unanswered question")
	}
	for _, n := range st.CompletedNodes {
		if slices.Contains(st.FailedNodes, n) {
			add("node '%s' is both completed and failed", n)
		}
	}
	if st.EndedAt != nil && !st.StartedAt.IsZero() && st.EndedAt.Before(st.StartedAt) {
		add("'ended_at' (%s) is before 'started_at' (%s)", st.EndedAt.UTC().Format(timeLayout), st.StartedAt.UTC().Format(timeLayout))
	}
	if st.Attempt < 0 {
		add("'attempt' is negative")
	}
	for n, c := range st.Retries {
		if c < 0 {
			add("'retries' of '%s' is negative", n)
		}
	}
	// The index of submitted artifacts names tree entries and worktree
	// files: a fetched state must not name anything else.
	if st.ArtifactDir != "" && workflow.CheckArtifactPath(st.ArtifactDir) != nil {
		add("'artifact_dir' %q leaves the worktree", st.ArtifactDir)
	}
	for _, n := range slices.Sorted(maps.Keys(st.Submitted)) {
		if wf != nil && !wf.HasNode(n) {
			add("'submitted' names node '%s', which is not in workflow '%s'", n, wf.Name)
		}
		for _, a := range st.Submitted[n] {
			if workflow.CheckArtifactPath(a.Path) != nil || !objectID(a.Blob) || a.Size < 0 {
				add("'submitted' of '%s' holds a bad entry (path %q, blob %q)", n, a.Path, a.Blob)
			}
		}
	}
	// A lock is matched against the files an agent edits: a fetched one
	// must be a lock `git hegel lock` would take.
	for _, l := range st.FilesLocked {
		if CheckLockPath(l.Path) != nil {
			add("'files_locked' holds a bad path %s", text.Quote(l.Path))
		}
	}
	if len(p) == 0 {
		return nil
	}
	return &StateError{Task: st.Task, Problems: p}
}

const timeLayout = "2006-01-02T15:04:05Z07:00"

// openQuestion returns the index of the newest unanswered question, or -1.
func openQuestion(st *State) int {
	for i := len(st.Questions) - 1; i >= 0; i-- {
		if st.Questions[i].AnsweredAt == nil {
			return i
		}
	}
	return -1
}

// objectID reports whether s is a full SHA-1 object id in lower-case hex.
func objectID(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

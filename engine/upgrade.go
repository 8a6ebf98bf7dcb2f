package engine

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

// A running task keeps the definition it started with (its ref's
// workflow.yaml), so a teammate's clone runs the same thing. When the
// worktree's file for that workflow changes, the task does not follow it
// silently: status and next say the two differ, and `git hegel upgrade`
// shows the difference and adopts the worktree's definition, as one more
// commit on the task's chain. Only a file the user chose to adopt is
// trusted by adopting it, as with start; a definition a fetch brought
// into the task's ref is never adopted or trusted here by this.

// WorkflowFileReader reads the worktree's own file for a workflow by
// name (gitstore: .hegel/workflows/<name>.yaml): its path for people, and
// its bytes. No file is an error wrapping ErrNotFound; a file too large
// for a task to store is another error, and is not read.
type WorkflowFileReader func(name string) (path string, data []byte, err error)

// worktreeDefinition is the definition a new start of workflow name
// would take in this worktree: the user's file, else the built-in of
// that name. source is the file's path or "built-in". ErrNotFound: the
// worktree has neither (or the engine cannot read files).
func (e *Engine) worktreeDefinition(name string) (source string, data []byte, err error) {
	if e.WorkflowFile != nil {
		p, b, err := e.WorkflowFile(name)
		if err == nil || !errors.Is(err, ErrNotFound) {
			return p, b, err
		}
	} else {
		return "", nil, ErrNotFound
	}
	for _, w := range workflow.Builtins() {
		if w.Name == name {
			return w.Source, w.Raw, nil
		}
	}
	return "", nil, ErrNotFound
}

// WorkflowFileChanged reports whether the worktree's definition of the
// workflow an open, live task runs differs from the one the task holds,
// and names it (a file's path, or "built-in"). A file that cannot be read
// (too large, unreadable) differs too: upgrade says why. A finished,
// archived or stashed task, or a worktree with no definition of the
// workflow, is never reported. It reads one file and parses nothing, so
// status stays cheap.
func (e *Engine) WorkflowFileChanged(t *Task) (source string, changed bool) {
	if t == nil || t.Archived {
		return "", false
	}
	return e.WorkflowDiffers(t.State, t.Definition)
}

// WorkflowDiffers is WorkflowFileChanged for a state and the definition
// it runs (a View's).
func (e *Engine) WorkflowDiffers(st *State, def []byte) (source string, changed bool) {
	if st == nil || !st.Active() || def == nil {
		return "", false
	}
	src, data, err := e.worktreeDefinition(st.Workflow)
	if errors.Is(err, ErrNotFound) {
		return "", false
	}
	if err != nil {
		return src, true
	}
	return src, !bytes.Equal(data, def)
}

// WorkflowChangeNote is the one line status and next print when the
// worktree's definition of the task's workflow (source: its file, or
// "built-in") differs from the one the task runs.
func WorkflowChangeNote(task, workflowName, source string) string {
	what := "The worktree's " + text.QuotePath(source, true)
	if source == "built-in" {
		what = "The built-in workflow " + workflowName
	}
	return fmt.Sprintf("%s differs from the definition task %s runs; 'git hegel upgrade' shows the difference and adopts it", what, task)
}

// UpgradePlan is what `git hegel upgrade` shows before it asks: the
// task's definition and the worktree's.
type UpgradePlan struct {
	Task     string
	Workflow string
	Node     string // the task's current node
	// Source is where the worktree's definition is: its file, or
	// "built-in".
	Source string
	// Old is the definition the task holds; New the worktree's.
	Old, New []byte
	OldID    string
	NewID    string
	// Same: the task runs the worktree's definition already.
	Same bool

	wf *workflow.Definition // New, parsed and checked
}

// PlanUpgrade reads the task o selects and the worktree's definition of
// its workflow, and checks that the task can take it: it is open and
// live, the worktree's file loads (with the registry's checks), and it
// still has the node the task is at. Nothing changes.
func (e *Engine) PlanUpgrade(o TaskOptions) (*UpgradePlan, error) {
	t, err := e.Current(o.Task)
	if err != nil {
		return nil, err
	}
	st := t.State
	switch {
	case st.Status == StatusStashed:
		return nil, fmt.Errorf("Task '%s' is stashed; 'git hegel stash pop' restores it, then upgrade it", st.Task)
	case t.Archived || !st.Active():
		return nil, fmt.Errorf("Task '%s' is %s: its run is over, so there is nothing to upgrade", st.Task, st.Status)
	}
	p := &UpgradePlan{Task: st.Task, Workflow: st.Workflow, Node: st.CurrentNode, Old: t.Definition, OldID: DefinitionID(t.Definition)}
	src, data, err := e.worktreeDefinition(st.Workflow)
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("This worktree has no definition of workflow '%s' (no .hegel/workflows/%s.yaml, and it is not a built-in): nothing to upgrade to", st.Workflow, st.Workflow)
	}
	if err != nil {
		return nil, fmt.Errorf("Cannot upgrade task '%s': %v; nothing changed", st.Task, err)
	}
	p.Source, p.New, p.NewID = src, data, DefinitionID(data)
	if bytes.Equal(data, t.Definition) {
		p.Same = true
		return p, nil
	}
	if e.Workflows == nil {
		return nil, errors.New("This worktree cannot load workflows; nothing changed")
	}
	reg, err := e.Workflows()
	if err != nil {
		return nil, err
	}
	if b, broken := reg.GetBroken(st.Workflow); broken {
		return nil, fmt.Errorf("Workflow '%s' cannot be loaded, so task '%s' keeps its definition: %v", st.Workflow, st.Task, b.Err)
	}
	wf, ok := reg.Get(st.Workflow)
	if !ok || !bytes.Equal(wf.Raw, data) {
		return nil, fmt.Errorf("%s changed while it was read; run 'git hegel upgrade' again", text.QuotePath(src, true))
	}
	if !wf.HasNode(st.CurrentNode) {
		return nil, fmt.Errorf("Workflow '%s' in %s has no node '%s', where task '%s' is, so it cannot be upgraded (its nodes: %s); move the task to one of them first ('git hegel goto')",
			st.Workflow, text.QuotePath(src, true), st.CurrentNode, st.Task, text.JoinQuoted(wf.Order))
	}
	p.wf = wf
	return p, nil
}

// ErrUpgradeChanged means the task's definition changed between the
// plan and the upgrade (another command, or a fetch): nothing changed.
var ErrUpgradeChanged = errors.New("changed since it was shown")

// Upgrade adopts p's worktree definition into the task: one more commit
// on its chain, holding the new definition and a state that obeys it.
// The definition is trusted here the way start trusts the file it
// starts (the user chose it). It refuses, changing nothing, when the
// task's definition is no longer the one p showed, or its node is no
// longer in the new definition.
func (e *Engine) Upgrade(p *UpgradePlan, o TaskOptions) (*State, error) {
	if p.Same || p.wf == nil {
		return nil, fmt.Errorf("Task '%s' runs the worktree's definition already; nothing to upgrade", p.Task)
	}
	o.Task = p.Task
	cur, err := e.Current(o.Task)
	if err != nil {
		return nil, err
	}
	st, _, err := e.updateTask(cur, updateOpts{call: o, adopt: p.wf, adoptFrom: p.Old}, func(st *State, _ *workflow.Definition) (string, error) {
		return e.applyUpgrade(st, p)
	})
	if err != nil {
		return nil, err
	}
	e.trustStarted(p.Task, p.New)
	return st, nil
}

// applyUpgrade makes st fit p's new definition; the stored definition is
// checked by updateTask's adopt (it must still be p.Old).
func (e *Engine) applyUpgrade(st *State, p *UpgradePlan) (string, error) {
	if !st.Active() {
		return "", fmt.Errorf("Task '%s' is %s now: its run is over, so there is nothing to upgrade", st.Task, st.Status)
	}
	if !p.wf.HasNode(st.CurrentNode) {
		return "", fmt.Errorf("Task '%s' moved to '%s', which workflow '%s' in %s does not have; nothing changed",
			st.Task, st.CurrentNode, p.Workflow, text.QuotePath(p.Source, true))
	}
	if n, ok := p.wf.Nodes[st.CurrentNode]; st.Subphase != "" && (!ok || !slices.Contains(n.Subphases, st.Subphase)) {
		st.Subphase = firstSubphase(p.wf, st.CurrentNode)
	}
	return fmt.Sprintf("upgrade: workflow %s from %s (definition %s -> %s)", p.Workflow, p.Source, shortID(p.OldID), shortID(p.NewID)), nil
}

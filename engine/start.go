package engine

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

// Priorities a task may have; "" reads as PriorityNormal.
var Priorities = []string{"low", "normal", "high", "urgent"}

// PriorityNormal is the priority of a task that names none.
const PriorityNormal = "normal"

// TaskPriority is the task's priority as every output gives it:
// PriorityNormal when it names none.
func TaskPriority(st *State) string {
	if st.Priority == "" {
		return PriorityNormal
	}
	return st.Priority
}

// StartOptions are the arguments of `git hegel start`.
type StartOptions struct {
	Workflow    string
	Node        string // the workflow's start node when empty
	Task        string // generated when empty
	Type        string // the workflow's default task type when empty
	Description string
	Priority    string
	// Initializing creates the task as initializing instead of active:
	// `git hegel run` sets it up before its first step (run.go).
	Initializing bool
	// MetaMode is the meta-mode the task is started in (meta.go).
	MetaMode string
}

// Start begins workflow name at node (its start node if empty) as task
// (a generated unique name if empty).
func (e *Engine) Start(name, node, task string) (*View, error) {
	return e.StartTask(StartOptions{Workflow: name, Node: node, Task: task})
}

// StartTask begins a task. A task this worktree was on is parked: it stays
// open, owned by no worktree, until someone switches to it. The task's ref
// and the session are written
// under the session's lock, so a start that cannot update the session
// leaves no task behind; if the session write itself fails after the ref
// was written, running the same start again adopts the task.
func (e *Engine) StartTask(o StartOptions) (*View, error) {
	cur, _, err := e.currentOrDamaged("")
	if err != nil && !errors.Is(err, ErrNoWorkflow) {
		return nil, err
	}
	if cur != nil && (!cur.State.Active() || !e.owns(cur.State)) {
		cur = nil
	}
	reg, err := e.Workflows()
	if err != nil {
		return nil, err
	}
	wf, ok := reg.Get(o.Workflow)
	if !ok {
		if b, broken := reg.GetBroken(o.Workflow); broken {
			return nil, fmt.Errorf("Workflow '%s' cannot be loaded: %v", o.Workflow, b.Err)
		}
		return nil, badNamef("Unknown workflow '%s'. Run 'git hegel workflows' to list them", o.Workflow)
	}
	for _, w := range wf.Warnings {
		e.warn(w.String())
	}
	node := o.Node
	if node == "" {
		node = wf.StartNode
	} else if _, ok := wf.Nodes[node]; !ok {
		return nil, badNamef("Workflow '%s' has no node '%s' (nodes: %s)", wf.Name, node, text.JoinQuoted(wf.Order))
	}
	typ, err := taskType(wf, o.Type)
	if err != nil {
		return nil, err
	}
	if o.MetaMode != "" && !workflow.ValidMetaModeName(o.MetaMode) {
		return nil, badNamef("Invalid meta-mode name %s", text.Quote(o.MetaMode))
	}
	if o.Priority != "" && !slices.Contains(Priorities, o.Priority) {
		return nil, badNamef("Unknown priority '%s' (use %s)", o.Priority, text.JoinQuoted(Priorities))
	}
	now := e.now()
	task := o.Task
	if task == "" {
		task = fmt.Sprintf("%s-%s-%s", wf.Name, now.UTC().Format("20060102-150405"), e.suffix())
	} else if err := CheckTaskName(task); err != nil {
		return nil, err
	}
	st := &State{
		Task:            task,
		Workflow:        wf.Name,
		Mode:            wf.Mode,
		WorkflowID:      now.UTC().Format(time.RFC3339),
		Status:          StatusActive,
		StartedAt:       now,
		UpdatedAt:       now,
		RollbackHistory: []RollbackEvent{},
		TaskType:        typ,
		Description:     o.Description,
		Priority:        o.Priority,
		MetaMode:        o.MetaMode,
	}
	if st.ArtifactDir, err = e.newArtifactDir(st); err != nil {
		return nil, err
	}
	var gi *GitInfo
	if e.Git != nil {
		gi = e.Git()
	}
	if gi != nil {
		st.StartBranch, st.StartHead = gi.Branch, gi.Head
	}
	skipped := e.arrive(st, wf, node, "")
	// A start node without transitions is where the run ends, as reaching
	// such a node later would be: the task is complete on arrival.
	e.settle(st, wf)
	if o.Initializing && st.Status == StatusActive {
		st.Status = StatusInitializing
	}
	base := &Task{Definition: wf.Raw}
	old, err := e.load(task)
	switch {
	case err == nil && old.State.Active():
		if v := e.adopt(old, wf, node); v != nil {
			return v, nil
		}
		if ownedByNobody(old.State) {
			return nil, fmt.Errorf("Task '%s' is already active, parked; 'git hegel switch %s' takes it, or pick another name with --task", task, task)
		}
		return nil, fmt.Errorf("Task '%s' is already active in %s; pick another name with --task", task, ownerOf(old.State))
	case err == nil && old.State.Status == StatusStashed:
		return nil, fmt.Errorf("Task '%s' is stashed; restore it with 'git hegel stash pop', or pick another name with --task", task)
	case err == nil:
		// A finished task's name may be reused: the new run continues its
		// chain (from the archive if it was archived), so the old run
		// stays in the history.
		base.Rev, base.Archived = old.Rev, old.Archived
	case !errors.Is(err, ErrNotFound):
		return nil, err
	}
	// The user chose to start this file: its content is trusted here
	// (trust.go), before the task exists, so nothing shows it untrusted;
	// and the task is this worktree's by this clone's own record. A file
	// exactly as a commit brought it is not the user's own: it waits for
	// a review, as a definition a fetch brought does.
	if e.CheckedOut(wf) {
		e.warn(fmt.Sprintf("%s is as a commit brought it and this machine has not trusted it: its commands do not run and its prompts are not shown until you review it with 'git hegel trust %s'",
			text.QuotePath(wf.Source, true), task))
	} else {
		e.trustStarted(task, wf.Raw)
	}
	if err := e.Claim(st); err != nil {
		return nil, err
	}
	msg := fmt.Sprintf("start: %s at %s", wf.Name, node)
	if st.CurrentNode != node {
		msg += fmt.Sprintf(" (skipped to %s for task type %s)", st.CurrentNode, typ)
	}
	_, err = e.Session.UpdateSession(func(s *Session) error {
		if _, err := e.save(base, st, wf, msg); err != nil {
			return err
		}
		s.ActiveTask = task
		s.Totals.WorkflowsStarted++
		if gi != nil {
			gi.CachedAt = e.now()
			s.GitInfo = gi
		}
		return nil
	})
	if errors.Is(err, ErrConflict) {
		return nil, fmt.Errorf("Task '%s' was created by another process at the same time; pick another name with --task", task)
	}
	if err != nil {
		return nil, err
	}
	v := e.view(st, wf)
	v.Skipped = skipped
	// The task this worktree was on stays open, parked, as with switch.
	if cur != nil && cur.State.Task != task {
		if err := e.park(cur, task); err != nil {
			e.warn(fmt.Sprintf("task %s could not be parked: %v", cur.State.Task, err))
		} else {
			v.Parked = cur.State
		}
	}
	e.warnRequires(st, wf)
	e.checkpoint(st)
	return v, nil
}

// adopt finishes a start whose task ref was written but whose session
// write failed: the task is this worktree's, open, untouched since it was
// started at node, and the session does not point at it. Anything else
// is another task of the same name, and nil is returned.
func (e *Engine) adopt(old *Task, wf *workflow.Definition, node string) *View {
	st := old.State
	if !e.owns(st) || st.Workflow != wf.Name || len(st.History) != 1 || st.History[0] != node || (st.Status != StatusActive && st.Status != StatusInitializing) {
		return nil
	}
	if sess, err := e.Session.LoadSession(); err == nil && sess.ActiveTask == st.Task {
		return nil
	}
	if err := e.touchSession(func(s *Session) {
		s.ActiveTask = st.Task
		s.Totals.WorkflowsStarted++
	}); err != nil {
		return nil
	}
	owf, err := definition(old)
	if err != nil {
		return nil
	}
	return e.view(st, owf)
}

// taskType checks the type start was given against the workflow's.
func taskType(wf *workflow.Definition, typ string) (string, error) {
	switch {
	case typ == "":
		return wf.DefaultTaskType, nil
	case len(wf.TaskTypes) == 0:
		return "", badNamef("Workflow '%s' has no task types, so --type does not apply (the pipeline workflow has them)", wf.Name)
	case !wf.AcceptsType(typ):
		return "", badNamef("Unknown task type '%s' for workflow '%s' (types: %s)", typ, wf.Name, text.JoinQuoted(wf.TaskTypes))
	}
	return typ, nil
}

package engine

import (
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"sync"
	"time"
)

// Engine runs workflows for one worktree. It decides; the stores it is given
// do the reading and writing.
type Engine struct {
	Tasks   TaskStore
	Session SessionStore
	Stashes StashStore
	// Workflows loads the registry (built-ins plus the user's files). It
	// is called only by commands that need a definition by name.
	Workflows func() (*Registry, error)
	// Worktree is this worktree's absolute path, recorded for display.
	Worktree string
	// WorktreeID identifies this worktree stably ("main",
	// "worktrees/<name>"); tasks record it so a lost session can be rebuilt
	// from the refs, and so a worktree never adopts another's task.
	WorktreeID string
	// Now is the clock; tests fix it.
	Now func() time.Time
	// Git, if set, reports the branch and HEAD to cache in the session.
	Git func() *GitInfo
	// NewSuffix, if set, replaces the random part of generated task names.
	NewSuffix func() string
	// Checkpoint, if set, runs after start, next, prev and restart enter a
	// node, with the saved state. Its error does not undo the transition:
	// it is passed to Warn and the command succeeds (see rollback.go).
	Checkpoint func(st *State) error
	// Warn reports a problem that does not fail the command.
	Warn func(msg string)
	// Guides supplies the user's guides, partials and optional context
	// for rendering prompts (nil: built-ins only).
	Guides GuideSource
	// Events is the agent event log (nil: no agent events); Force,
	// NoCommitGuard and CommitTimes configure the guard rules (rules.go).
	Events        EventStore
	Force         Force
	NoCommitGuard bool
	CommitTimes   func(since time.Time) ([]time.Time, error)
}

// ErrNoWorkflow means this worktree has no workflow: none was started, or
// the last one was reset.
var ErrNoWorkflow = errors.New("No active workflow. Start one with 'git hegel start <workflow>' (see 'git hegel workflows')")

// ErrNoMatch means a claim matched no transition; the workflow stays put.
type ErrNoMatch struct {
	Node, Claim string
	Valid       []string
}

func (e *ErrNoMatch) Error() string {
	msg := fmt.Sprintf("No transition from '%s' matches '%s'; staying at '%s'", e.Node, e.Claim, e.Node)
	if len(e.Valid) > 0 {
		msg += fmt.Sprintf(" (try: %s)", joinQuoted(e.Valid))
	}
	return msg
}

// View is what start, next, prev, restart and repeat show.
type View struct {
	Task   string
	State  *State
	Mode   string
	Node   string
	Prompt string
}

var taskNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$`) })

// ValidTaskName reports whether name can be used as a task name (it becomes
// one component of a ref name).
func ValidTaskName(name string) bool { return taskNameRe().MatchString(name) }

// Current returns the task this worktree's session points at, or
// ErrNoWorkflow. A missing or corrupt session, or one naming a task that no
// longer exists, is rebuilt from the refs: the newest active task owned by
// this worktree becomes the active one again.
func (e *Engine) Current() (*Task, error) {
	sess, err := e.Session.LoadSession()
	missing := false
	switch {
	case err == nil:
		if sess.ActiveTask == "" {
			return nil, ErrNoWorkflow
		}
		// The session may name a task that is gone, that another worktree
		// or clone took over, or that is stashed (a crash between the stash
		// and the session write): none of those is ours any more, so look
		// again from the refs.
		t, err := e.Tasks.LoadTask(sess.ActiveTask)
		if err == nil && e.owns(t.State) && t.State.Status != StatusStashed {
			return t, nil
		}
		if err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
	case errors.Is(err, ErrNotFound):
		missing = true
	case errors.Is(err, ErrCorruptSession):
	default:
		return nil, err
	}
	return e.rebuild(missing)
}

// owns reports whether st belongs to this worktree: by worktree id, or by
// path when either side has no id (the in-memory test stores).
func (e *Engine) owns(st *State) bool {
	if st.WorktreeID != "" && e.WorktreeID != "" {
		return st.WorktreeID == e.WorktreeID
	}
	return st.Worktree == e.Worktree
}

// Claim makes st belong to this worktree (start, and restoring a stash).
func (e *Engine) Claim(st *State) {
	st.Worktree, st.WorktreeID = e.Worktree, e.WorktreeID
}

// rebuild finds this worktree's active task from the refs alone, and
// records the answer in the session so the scan is not repeated. In a
// repository with no tasks at all and no session file it writes nothing:
// reading the status of a repository that never used git-hegel must not
// create files in it.
func (e *Engine) rebuild(sessionMissing bool) (*Task, error) {
	names, err := e.Tasks.ListTasks()
	if err != nil {
		return nil, err
	}
	var best *Task
	for _, n := range names {
		t, err := e.Tasks.LoadTask(n)
		if err != nil {
			continue // a damaged task must not hide the others
		}
		// Only a task this worktree created or took over: fetched data
		// can carry any worktree id (adopt.go).
		if !t.State.Active() || !e.owns(t.State) || !e.adopted(t.State) {
			continue
		}
		if best == nil || t.State.UpdatedAt.After(best.State.UpdatedAt) {
			best = t
		}
	}
	active := ""
	if best != nil {
		active = best.State.Task
	} else if sessionMissing && len(names) == 0 {
		return nil, ErrNoWorkflow
	}
	if _, err := e.Session.UpdateSession(func(s *Session) error {
		s.ActiveTask = active
		return nil
	}); err != nil {
		return nil, err
	}
	if best == nil {
		return nil, ErrNoWorkflow
	}
	return best, nil
}

// Start begins workflow name at node (its start node if empty) as task
// (a generated unique name if empty).
func (e *Engine) Start(name, node, task string) (*View, error) {
	cur, err := e.Current()
	if err != nil && !errors.Is(err, ErrNoWorkflow) {
		return nil, err
	}
	if cur != nil && cur.State.Active() {
		return nil, fmt.Errorf("Workflow '%s/%s' is already active (task %s). Run 'git hegel abort' or 'git hegel stash' first",
			cur.State.Mode, cur.State.CurrentNode, cur.State.Task)
	}
	reg, err := e.Workflows()
	if err != nil {
		return nil, err
	}
	wf, ok := reg.Get(name)
	if !ok {
		if b, broken := reg.GetBroken(name); broken {
			return nil, fmt.Errorf("Workflow '%s' cannot be loaded: %v", name, b.Err)
		}
		return nil, badNamef("Unknown workflow '%s'. Run 'git hegel workflows' to list them", name)
	}
	for _, w := range wf.Warnings {
		e.warn(w.String())
	}
	if node == "" {
		node = wf.StartNode
	} else if _, ok := wf.Nodes[node]; !ok {
		return nil, badNamef("Workflow '%s' has no node '%s' (nodes: %s)", wf.Name, node, joinQuoted(wf.Order))
	}
	now := e.now()
	if task == "" {
		task = fmt.Sprintf("%s-%s-%s", wf.Name, now.UTC().Format("20060102-150405"), e.suffix())
	} else if err := CheckTaskName(task); err != nil {
		return nil, err
	}
	st := &State{
		Task:            task,
		Workflow:        wf.Name,
		Mode:            wf.Mode,
		CurrentNode:     node,
		History:         []string{node},
		WorkflowID:      now.UTC().Format(time.RFC3339),
		Status:          StatusActive,
		StartedAt:       now,
		PhaseStartTime:  now,
		UpdatedAt:       now,
		Attempt:         1,
		RollbackHistory: []RollbackEvent{},
	}
	st.logPhase(now)
	e.Claim(st)
	rev := ""
	if old, err := e.Tasks.LoadTask(task); err == nil {
		if old.State.Active() {
			return nil, fmt.Errorf("Task '%s' is already active in %s; pick another name with --task", task, old.State.Worktree)
		}
		rev = old.Rev // a finished task's name may be reused; its history stays in the chain
	} else if !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	t := &Task{State: st, Definition: wf.Raw, Rev: rev}
	if _, err := e.Tasks.SaveTask(t, fmt.Sprintf("start: %s at %s", wf.Name, node)); err != nil {
		if errors.Is(err, ErrConflict) {
			return nil, fmt.Errorf("Task '%s' was created by another process at the same time; pick another name with --task", task)
		}
		return nil, err
	}
	if err := e.touchSession(func(s *Session) {
		s.ActiveTask = task
		s.Totals.WorkflowsStarted++
	}); err != nil {
		return nil, err
	}
	e.checkpoint(st)
	return e.view(st, wf), nil
}

// Next follows the first transition of the current node whose `when`
// equals claim (default: "<node>_complete").
func (e *Engine) Next(claim string) (*View, error) {
	var from string
	st, wf, err := e.update(func(st *State, wf *Workflow) (string, error) {
		if wf.IsTerminal(st.CurrentNode) {
			return "", finishedError(st)
		}
		c := claim
		if c == "" {
			c = st.CurrentNode + "_complete"
		}
		to, ok := wf.Transition(st.CurrentNode, c)
		if !ok {
			return "", &ErrNoMatch{Node: st.CurrentNode, Claim: c, Valid: claims(wf, st.CurrentNode)}
		}
		from = st.CurrentNode
		forced, err := e.guard(st, wf, to, c)
		if err != nil {
			return "", err
		}
		e.enter(st, to)
		return fmt.Sprintf("next: %s -> %s (%s)%s", from, to, c, forced), nil
	})
	if err != nil {
		return nil, err
	}
	if err := e.touchSession(func(s *Session) {
		s.Totals.Transitions++
		switch st.Status {
		case StatusCompleted:
			s.Totals.WorkflowsCompleted++
		case StatusAborted:
			s.Totals.WorkflowsAborted++
		}
	}); err != nil {
		return nil, err
	}
	e.checkpoint(st)
	return e.view(st, wf), nil
}

// Prev returns to the node before the current one in the history.
func (e *Engine) Prev() (*View, error) {
	st, wf, err := e.update(func(st *State, wf *Workflow) (string, error) {
		if st.Status == StatusAborted {
			return "", finishedError(st)
		}
		if len(st.History) < 2 {
			return "", fmt.Errorf("Already at the first node '%s'; nothing to go back to", st.CurrentNode)
		}
		from := st.CurrentNode
		st.History = st.History[:len(st.History)-1]
		st.CurrentNode = st.History[len(st.History)-1]
		e.reopen(st)
		return fmt.Sprintf("prev: %s -> %s", from, st.CurrentNode), nil
	})
	if err != nil {
		return nil, err
	}
	if err := e.touchSession(func(s *Session) { s.Totals.Transitions++ }); err != nil {
		return nil, err
	}
	e.checkpoint(st)
	return e.view(st, wf), nil
}

// Restart goes back to the workflow's start node with a fresh history.
func (e *Engine) Restart() (*View, error) {
	st, wf, err := e.update(func(st *State, wf *Workflow) (string, error) {
		if st.Status == StatusAborted {
			return "", finishedError(st)
		}
		from := st.CurrentNode
		st.History = []string{wf.StartNode}
		st.CurrentNode = wf.StartNode
		e.reopen(st)
		return fmt.Sprintf("restart: %s -> %s", from, wf.StartNode), nil
	})
	if err != nil {
		return nil, err
	}
	if err := e.touchSession(func(s *Session) { s.Totals.Transitions++ }); err != nil {
		return nil, err
	}
	e.checkpoint(st)
	return e.view(st, wf), nil
}

// Repeat shows the current node's prompt again; nothing changes.
func (e *Engine) Repeat() (*View, error) {
	t, err := e.Current()
	if err != nil {
		return nil, err
	}
	wf, err := definition(t)
	if err != nil {
		return nil, err
	}
	return e.view(t.State, wf), nil
}

// Abort ends the active workflow at the implicit "aborted" node.
func (e *Engine) Abort() (*State, error) {
	var from string
	st, _, err := e.update(func(st *State, wf *Workflow) (string, error) {
		if !st.Active() {
			return "", fmt.Errorf("No active workflow to abort (task %s is %s)", st.Task, st.Status)
		}
		from = st.CurrentNode
		e.enter(st, NodeAborted)
		return fmt.Sprintf("abort: at %s", from), nil
	})
	if err != nil {
		return nil, err
	}
	if err := e.touchSession(func(s *Session) { s.Totals.WorkflowsAborted++ }); err != nil {
		return nil, err
	}
	at := *st
	at.CurrentNode = from // report where it was, not the terminal node
	return &at, nil
}

// Reset detaches this worktree from its workflow, aborting it first if it
// is still active. The task's ref keeps its history. It returns the task
// that was detached, or nil if there was none.
func (e *Engine) Reset() (*State, error) {
	t, err := e.Current()
	if errors.Is(err, ErrNoWorkflow) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	st := t.State
	if st.Active() {
		if st, err = e.Abort(); err != nil {
			return nil, err
		}
	}
	if _, err := e.Session.UpdateSession(func(s *Session) error {
		s.ActiveTask = ""
		return nil
	}); err != nil {
		return nil, err
	}
	return st, nil
}

// Status returns the current task, or ErrNoWorkflow.
func (e *Engine) Status() (*Task, error) { return e.Current() }

// update applies fn to the active task with compare-and-swap, reloading and
// reapplying fn when another process wrote first, so concurrent commands
// behave as if they had run one after the other.
func (e *Engine) update(fn func(*State, *Workflow) (string, error)) (*State, *Workflow, error) {
	e.foldEvents()
	cur, err := e.Current()
	if err != nil {
		return nil, nil, err
	}
	return e.updateTask(cur, fn)
}

// updateTask is update for a given task, starting from cur as loaded.
func (e *Engine) updateTask(cur *Task, fn func(*State, *Workflow) (string, error)) (*State, *Workflow, error) {
	var err error
	name := cur.State.Task
	const attempts = 50
	for i := 0; i < attempts; i++ {
		t := cur
		if i > 0 {
			if t, err = e.Tasks.LoadTask(name); err != nil {
				return nil, nil, err
			}
		}
		wf, err := definition(t)
		if err != nil {
			return nil, nil, err
		}
		st := t.State.Clone()
		msg, err := fn(st, wf)
		if err != nil {
			return nil, nil, err
		}
		e.settle(st, wf)
		st.UpdatedAt = e.now()
		_, err = e.Tasks.SaveTask(&Task{State: st, Definition: t.Definition, Rev: t.Rev}, msg)
		if err == nil {
			return st, wf, nil
		}
		if !errors.Is(err, ErrConflict) {
			return nil, nil, err
		}
		// Back off with jitter so racing processes stop colliding.
		time.Sleep(time.Duration(rand.IntN(1+min(i, 10)*2)) * time.Millisecond)
	}
	return nil, nil, fmt.Errorf("Task '%s' kept changing while this command ran; try again", name)
}

// enter moves st to node, keeping status and timestamps consistent.
func (e *Engine) enter(st *State, node string) {
	now := e.now()
	st.CurrentNode = node
	st.History = append(st.History, node)
	st.PhaseStartTime = now
	st.logPhase(now)
	st.Attempt = 1
	st.LastFailure = ""
	switch node {
	case NodeDone:
		st.Status = StatusCompleted
		st.EndedAt = &now
	case NodeAborted:
		st.Status = StatusAborted
		st.EndedAt = &now
	}
}

// reopen marks st active again after prev or restart left a terminal node.
func (e *Engine) reopen(st *State) {
	st.Status = StatusActive
	st.EndedAt = nil
	st.PhaseStartTime = e.now()
	st.logPhase(st.PhaseStartTime)
	st.Attempt = 1
	st.LastFailure = ""
}

func (e *Engine) touchSession(fn func(*Session)) error {
	var gi *GitInfo
	if e.Git != nil {
		gi = e.Git()
	}
	_, err := e.Session.UpdateSession(func(s *Session) error {
		fn(s)
		if gi != nil {
			gi.CachedAt = e.now()
			s.GitInfo = gi
		}
		return nil
	})
	return err
}

func (e *Engine) view(st *State, wf *Workflow) *View {
	prompt, err := e.RenderPrompt(st, wf)
	if err != nil {
		e.warn(err.Error() + " (showing the prompt as written)")
		prompt = wf.Prompt(st.CurrentNode)
	}
	return &View{Task: st.Task, State: st, Mode: st.Mode, Node: st.CurrentNode, Prompt: prompt}
}

func (e *Engine) warn(msg string) {
	if e.Warn != nil {
		e.Warn(msg)
	}
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *Engine) suffix() string {
	if e.NewSuffix != nil {
		return e.NewSuffix()
	}
	var b [3]byte
	_, _ = crand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// definition parses the workflow a task runs: the copy stored with it, so
// editing or deleting a workflow file never breaks a running task.
func definition(t *Task) (*Workflow, error) {
	wf, err := ParseWorkflow(t.State.Workflow, "refs/hegel/tasks/"+t.State.Task+":workflow.yaml", t.Definition)
	if err != nil {
		return nil, fmt.Errorf("Task '%s' holds an invalid workflow definition: %v", t.State.Task, err)
	}
	return wf, nil
}

func finishedError(st *State) error {
	return fmt.Errorf("Workflow '%s' is %s (at '%s'). Start a new one with 'git hegel start <workflow>'", st.Mode, st.Status, st.CurrentNode)
}

func claims(wf *Workflow, node string) []string {
	n, ok := wf.Nodes[node]
	if !ok {
		return nil
	}
	out := make([]string, 0, len(n.Transitions))
	for _, tr := range n.Transitions {
		out = append(out, tr.When)
	}
	return out
}

func joinQuoted(items []string) string {
	s := ""
	for i, it := range items {
		if i > 0 {
			s += ", "
		}
		s += "'" + it + "'"
	}
	return s
}

package engine

import (
	"bytes"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/git-hegel/git-hegel/engine/agent"
	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

// Engine runs workflows for one worktree. It decides; the stores it is given
// do the reading and writing. Its fields are what lives as long as the
// worktree's settings: stores, clocks, callbacks. What one call is told
// (--task, --force, a claim) is an argument of the method, so one Engine
// can serve many calls, as the web server's does.
type Engine struct {
	Tasks   TaskStore
	Session SessionStore
	Stashes StashStore
	// Archive keeps finished and deleted tasks; nil leaves finished tasks
	// where they are.
	Archive ArchiveStore
	// History keeps one entry per run that ended (nil: none is kept).
	History HistoryStore
	// Shapes remembers the shapes of stored definitions, so CheckTask
	// need not parse them (nil: it parses every time).
	Shapes workflow.ShapeStore
	// Workflows loads the registry (built-ins plus the user's files). It
	// is called only by commands that need a definition by name.
	Workflows func() (*workflow.Registry, error)
	// MetaModes loads the meta-modes (built-ins plus .hegel/meta/*.yaml);
	// nil: the built-ins only.
	MetaModes func() (*workflow.MetaRegistry, error)
	// MetaAuto is hegel.meta.auto: when a task of a meta-mode this
	// worktree owns is done and one workflow follows, it starts itself.
	MetaAuto bool
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
	// Snapshots snapshots and restores this worktree's files, index and
	// HEAD: checkpoints and rollbacks (snapshots.go). Nil: there are
	// none, and rollbacks refuse.
	Snapshots Snapshots
	// Parking parks this worktree's files with a stash and writes them
	// back (parking.go). Nil: stash push --files refuses, and so does
	// popping a stash that parked files.
	Parking Parking
	// Actions keeps the snapshots taken around agent tool calls and
	// restores their paths (actions.go). Nil: undo refuses.
	Actions ActionStore
	// NoAutoCheckpoints is hegel.checkpoints=off: no checkpoint is taken
	// when a node is entered (by hand and safety ones still are).
	NoAutoCheckpoints bool
	// Warn reports a problem that does not fail the command.
	Warn func(msg string)
	// Guides supplies the user's guides, partials and optional context
	// for rendering prompts (nil: built-ins only).
	Guides workflow.GuideSource
	// Events is the agent event log (nil: no agent events).
	Events agent.EventStore
	// CommitTimes lists the branch's commits since a time, for the
	// require_commits guard rule (nil: that rule is not checked, as with
	// git config hegel.commitGuard false).
	CommitTimes func(since time.Time) ([]time.Time, error)
	// CommitsAfter counts the branch's commits made after base (the
	// commit HEAD was at when a phase started; "" when unknown) and not
	// before since, for require_commits. Nil: CommitTimes counts them by
	// time alone, where a commit in the phase's first second counts.
	CommitsAfter func(base string, since time.Time) (int, error)
	// Files reads this worktree's files: artifacts are checked and copied
	// into the archive through it. Nil: artifacts are not checked.
	Files Files
	// ArtifactDir is hegel.artifactDir: the folder a new task's files go
	// to, naming its fields ("": DefaultArtifactDir).
	ArtifactDir string
	// MaxAttempts is hegel.maxAttempts: attempts per node when the node
	// does not say (0: workflow.DefaultMaxAttempts).
	MaxAttempts int
	// CheckpointInterval is hegel.checkpointInterval: an automatic
	// checkpoint every that many node entries, besides the task's start
	// (0 or 1: at every entry).
	CheckpointInterval int
	// HistoryOff is hegel.history=false: runs that end write no history
	// entry.
	HistoryOff bool
	// FoldCase is core.ignorecase: names that differ only in case are
	// one file here, so a lock on src/x.go also stops an edit of
	// SRC/X.go.
	FoldCase bool
	// Version is git-hegel's version, kept in the run metadata
	// (run_metadata.go).
	Version string
	// KeepCheckpoints is hegel.keepCheckpointsOnDone: a completed or
	// aborted task keeps its checkpoints in the archive.
	KeepCheckpoints bool
	// AgentReads says an agent reads what the command prints (the MCP
	// server runs it): the engine's messages then leave out what another
	// clone wrote about who it is (its worktree's path, a commit's
	// author), which its maker chose, as the agent's view leaves out its
	// other texts (agent_view.go).
	AgentReads bool
	// User names the person deciding at a gate (git config user.name).
	User func() string
	// Email is the person's git user.email, recorded as a task's owner
	// when this worktree starts or takes it (nil or "": none).
	Email func() string
	// ApprovalOtherPerson is hegel.approval.otherPerson: an approval gate
	// refuses the approval of the task's own owner.
	ApprovalOtherPerson bool
	// Confirm asks a yes/no question before a `confirm: true` transition.
	// Nil: such transitions refuse.
	Confirm func(question string) (bool, error)
	// OnFinish, if set, runs once when a run finishes (done, abort,
	// rollback --all), before the task is archived. Its error is passed
	// to Warn.
	OnFinish func(st *State) error
	// Exec runs processes: the nodes' check commands (next and run) and
	// the step runner's handlers (run.go). Nil: a node with checks cannot
	// end.
	Exec Executor
	// Trust is this machine's record of trusted definitions (trust.go):
	// only a trusted definition runs commands or shows its prompt. Nil:
	// every definition is trusted (the in-memory test stores).
	Trust TrustStore
	// WorkflowFile reads the worktree's own file for a workflow
	// (upgrade.go). Nil: the worktree's definitions are not compared
	// with the tasks', and upgrade refuses.
	WorkflowFile WorkflowFileReader
	// Committed reports whether the file at path (relative to the top of
	// the worktree) holds def as HEAD's commit has it: a clone, pull or
	// checkout wrote it, not the user. Start does not trust such a
	// definition by itself (trust.go). Nil: no file is.
	Committed func(path string, def []byte) bool
	// MaxRollbacks is hegel.maxRollbacks: moves back to an earlier node a
	// task may make before the next one needs --force, when its workflow
	// does not say (0: DefaultMaxRollbacks; negative: no cap).
	MaxRollbacks int

	// warnedDamaged: refs this command warned about already.
	warnedDamaged map[string]bool
}

// Files is what the engine reads from the worktree it runs in.
type Files interface {
	// ReadFile returns a regular file by its slash-separated path relative
	// to the top of the worktree: an error wrapping ErrNotFound when it is
	// missing, another error when it is not a regular file or larger than
	// limit bytes.
	ReadFile(path string, limit int64) ([]byte, error)
	// Size returns a regular file's size (ErrNotFound when missing).
	Size(path string) (int64, error)
	// Ignored returns the paths among paths that git's ignore rules
	// (.gitignore files, info/exclude, core.excludesFile) ignore: such a
	// file is never copied into the archive, which syncs.
	Ignored(paths []string) (map[string]bool, error)
}

// TaskOptions are what every command that acts on one task is told per
// call.
type TaskOptions struct {
	// Task is the task named with --task; "" is this worktree's active
	// task.
	Task string
	// Force (--force) changes a task another worktree owns, recorded in
	// the task; each command may give it a meaning of its own besides
	// (skip a stage that is not conditional, decide without being an
	// approver).
	Force bool
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
		msg += fmt.Sprintf(" (try: %s)", text.JoinQuoted(e.Valid))
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
	// Label is the node's display name (its name when it has none).
	Label string
	// MaxAttempts is the current node's bound on attempts.
	MaxAttempts int
	// Skipped are the nodes this command moved past without running them.
	Skipped []SkippedNode
	// Gate is set when next stopped at an approval gate instead of moving.
	Gate *GateView
	// Parked is the task start or switch parked to make room.
	Parked *State
	// Step: the node has a run: handler (git hegel run carries it out).
	Step bool
	// Untrusted is set when the definition is not trusted here: Prompt
	// is then a notice saying so, not the node's prompt (trust.go).
	Untrusted bool
	// Rollback is the rollback the command made first (resume --strategy
	// from-checkpoint).
	Rollback *RollbackResult
	// Definition is the workflow definition the task runs, as stored.
	Definition []byte
}

// ValidTaskName reports whether name can be used as a task name (it becomes
// one component of a ref name): 1 to 100 ASCII letters, digits, '_' and
// '-', not starting with '_' or '-'. A loop, not a regular expression: a
// sync classifies every stored ref with it, 20,000 with 10,000 tasks.
func ValidTaskName(name string) bool {
	if len(name) == 0 || len(name) > 100 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case (c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// Current returns the task a command acts on: the one named task (--task),
// else, when task is "", the one this worktree's session points at, or
// ErrNoWorkflow. A missing or corrupt session, or one naming a task that no
// longer exists, is rebuilt from the refs: the newest open task owned by
// this worktree becomes the active one again. A finished task that is not
// archived yet is archived here, the first time a command sees it.
func (e *Engine) Current(task string) (*Task, error) {
	if task != "" {
		return e.Lookup(task)
	}
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
		t, err := e.load(sess.ActiveTask)
		if err == nil && e.owns(t.State) && t.State.Status != StatusStashed {
			return e.sighted(t), nil
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

// load returns the task called name: the live one if there is one, else
// the archived one.
func (e *Engine) load(name string) (*Task, error) {
	t, err := e.Tasks.LoadTask(name)
	if err == nil || !errors.Is(err, ErrNotFound) || e.Archive == nil {
		return t, err
	}
	return e.Archive.LoadArchived(name)
}

// TaskNotFoundError is a task name that names no task, live or archived.
type TaskNotFoundError struct{ Name string }

func (e *TaskNotFoundError) Error() string {
	return fmt.Sprintf("No task named '%s' (see 'git hegel tasks --all --archived')", e.Name)
}

// Is makes errors.Is(err, ErrNotFound) true.
func (e *TaskNotFoundError) Is(target error) bool { return target == ErrNotFound }

// Lookup returns the task called name, live or archived, whoever owns it.
func (e *Engine) Lookup(name string) (*Task, error) {
	if err := CheckTaskName(name); err != nil {
		return nil, err
	}
	t, err := e.load(name)
	if errors.Is(err, ErrNotFound) {
		return nil, &TaskNotFoundError{Name: name}
	}
	if err != nil {
		return nil, err
	}
	return e.sighted(t), nil
}

// ownedByNobody reports a task no worktree owns (parked by switch).
func ownedByNobody(st *State) bool { return st.Worktree == "" && st.WorktreeID == "" }

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
		if t.State.Finished() {
			e.sighted(t)
			continue
		}
		// Only a task this worktree created or took over: fetched data
		// can carry any worktree id (adopt.go).
		if !t.State.Active() || !e.owns(t.State) {
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

// Prev returns to the node before the current one in the history.
func (e *Engine) Prev(o TaskOptions) (*View, error) {
	st, wf, err := e.update(o, func(st *State, wf *workflow.Definition) (string, error) {
		if err := e.allowed(st, "prev"); err != nil {
			return "", err
		}
		if len(st.History) < 2 {
			return "", fmt.Errorf("Already at the first node '%s'; nothing to go back to", st.CurrentNode)
		}
		from := st.CurrentNode
		if err := e.wentBack(st, wf, from, st.History[len(st.History)-2], "prev", o.Force); err != nil {
			return "", err
		}
		st.History = st.History[:len(st.History)-1]
		st.CurrentNode = st.History[len(st.History)-1]
		e.reopen(st, wf)
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
func (e *Engine) Restart(o TaskOptions) (*View, error) {
	st, wf, err := e.update(o, func(st *State, wf *workflow.Definition) (string, error) {
		if err := e.allowed(st, "restart"); err != nil {
			return "", err
		}
		from := st.CurrentNode
		st.History = []string{wf.StartNode}
		st.CurrentNode = wf.StartNode
		st.CompletedNodes, st.SkippedNodes = nil, nil
		e.reopen(st, wf)
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
func (e *Engine) Repeat(task string) (*View, error) {
	t, err := e.Current(task)
	if err != nil {
		return nil, err
	}
	wf, err := definition(t)
	if err != nil {
		return nil, err
	}
	return e.view(t.State, wf), nil
}

// Abort ends the workflow at the implicit "aborted" node. It works on a
// task whose state is invalid too: ending it is how such a task is given
// up.
func (e *Engine) Abort(o TaskOptions) (*State, error) {
	var from string
	st, _, err := e.updateOpts(updateOpts{call: o, damaged: true}, func(st *State, wf *workflow.Definition) (string, error) {
		if st.Status == StatusStashed || !st.Active() {
			return "", fmt.Errorf("No active workflow to abort (task %s is %s)", st.Task, st.Status)
		}
		from = st.CurrentNode
		e.enter(st, wf, workflow.NodeAborted)
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
func (e *Engine) Reset(o TaskOptions) (*State, error) {
	t, d, err := e.currentOrDamaged(o.Task)
	if d != nil {
		return e.resetDamaged(d, o.Task)
	}
	if errors.Is(err, ErrNoWorkflow) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	st := t.State
	if st.Active() {
		if st, err = e.Abort(o); err != nil {
			return nil, err
		}
	}
	if _, err := e.Session.UpdateSession(func(s *Session) error {
		if o.Task == "" || s.ActiveTask == st.Task {
			s.ActiveTask = ""
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return st, nil
}

// Status returns the task a command acts on (Current), or ErrNoWorkflow.
func (e *Engine) Status(task string) (*Task, error) { return e.Current(task) }

// updateOpts are the call's options, and what relaxes the checks update
// makes before it applies a change.
type updateOpts struct {
	// call selects the task and says whether another worktree's task may
	// be changed.
	call TaskOptions
	// anyOwner: the change is a person's decision at a gate (approve,
	// reject, answer), which anyone may make wherever the task runs.
	anyOwner bool
	// damaged: the stored state may break the rules (abort, which is how
	// such a task is ended); the new state must still obey them.
	damaged bool
	// wf, if set, is the definition of the task as passed in, parsed
	// already: the first attempt does not parse it again.
	wf *workflow.Definition
	// put are tree entries written in the same commit (Task.Put).
	put map[string][]byte
	// adopt, if set, replaces the task's definition (upgrade.go) in the
	// same commit, when the task still holds adoptFrom: the new state is
	// settled and checked against it.
	adopt     *workflow.Definition
	adoptFrom []byte
}

// update applies fn to the task o selects with compare-and-swap,
// reloading and reapplying fn when another process wrote first, so
// concurrent commands behave as if they had run one after the other.
func (e *Engine) update(o TaskOptions, fn func(*State, *workflow.Definition) (string, error)) (*State, *workflow.Definition, error) {
	return e.updateOpts(updateOpts{call: o}, fn)
}

func (e *Engine) updateOpts(o updateOpts, fn func(*State, *workflow.Definition) (string, error)) (*State, *workflow.Definition, error) {
	e.foldEvents()
	cur, err := e.Current(o.call.Task)
	if err != nil {
		return nil, nil, err
	}
	return e.updateTask(cur, o, fn)
}

// updateTask is update for a given task, starting from cur as loaded.
func (e *Engine) updateTask(cur *Task, o updateOpts, fn func(*State, *workflow.Definition) (string, error)) (*State, *workflow.Definition, error) {
	var err error
	name := cur.State.Task
	const attempts = 50
	for i := 0; i < attempts; i++ {
		t := cur
		if i > 0 {
			if t, err = e.load(name); err != nil {
				return nil, nil, err
			}
		}
		wf := o.wf
		if i > 0 || wf == nil {
			if wf, err = definition(t); err != nil {
				return nil, nil, err
			}
		}
		if !o.damaged {
			if err := checkLoaded(t, wf); err != nil {
				return nil, nil, err
			}
		}
		forced, err := e.checkOwner(t.State, o)
		if err != nil {
			return nil, nil, err
		}
		base := t
		if o.adopt != nil {
			if !bytes.Equal(t.Definition, o.adoptFrom) {
				return nil, nil, fmt.Errorf("The definition of task '%s' %w (another command or a fetch wrote it); nothing changed, run 'git hegel upgrade' again", name, ErrUpgradeChanged)
			}
			base = &Task{State: t.State, Definition: o.adopt.Raw, Rev: t.Rev, Archived: t.Archived}
		}
		st := t.State.Clone()
		msg, err := fn(st, wf)
		if err != nil {
			return nil, nil, err
		}
		if o.adopt != nil {
			wf = o.adopt
		}
		e.settle(st, wf)
		now := e.now()
		if forced {
			st.Overrides = append(st.Overrides, Override{Node: t.State.CurrentNode, What: "owner",
				Reason: fmt.Sprintf("changed from %s while %s owns it", e.Worktree, ownerOf(t.State)), At: now})
		}
		st.UpdatedAt = now
		nt, err := e.saveWith(base, st, wf, msg, o.put)
		if err == nil {
			return nt.State, wf, nil
		}
		if !errors.Is(err, ErrConflict) {
			return nil, nil, err
		}
		// Back off with jitter so racing processes stop colliding.
		time.Sleep(time.Duration(rand.IntN(1+min(i, 10)*2)) * time.Millisecond)
	}
	return nil, nil, fmt.Errorf("Task '%s' kept changing while this command ran; try again", name)
}

// checkLoaded reports a stored state that breaks the rules: commands
// refuse to build on it (abort can still end it).
func checkLoaded(t *Task, wf *workflow.Definition) error {
	if err := ValidateState(t.State, wf); err != nil {
		return fmt.Errorf("%w. Nothing changed; 'git hegel show %s' shows it, 'git hegel abort' ends it", err, t.State.Task)
	}
	return nil
}

// OwnerError refuses to change a task another worktree owns.
type OwnerError struct {
	// Owner is the owning worktree's path ("" when it is not to be shown).
	Task, Owner string
	// OtherClone: the owner is a worktree of another clone (its path is
	// on that machine), which claim takes the task from.
	OtherClone bool
}

func (e *OwnerError) Error() string {
	if e.OtherClone {
		where := ""
		if e.Owner != "" {
			where = " (its worktree " + e.Owner + ")"
		}
		return fmt.Sprintf("Task '%s' is held by another clone%s; 'git hegel claim %s' takes it over, or add --force to change it from here (recorded in the task)", e.Task, where, e.Task)
	}
	return fmt.Sprintf("Task '%s' belongs to the worktree %s; run the command there, or add --force to change it from here (recorded in the task)", e.Task, e.Owner)
}

// checkOwner refuses a change to an open task another worktree owns,
// unless the call forces it; forced reports that it had to.
func (e *Engine) checkOwner(st *State, o updateOpts) (forced bool, err error) {
	if o.anyOwner || e.owns(st) || ownedByNobody(st) || !st.Active() {
		return false, nil
	}
	if !o.call.Force {
		other := st.WorktreeID != "" && e.WorktreeID != "" && !sameInstance(st.WorktreeID, e.WorktreeID)
		owner := ownerOf(st)
		if other && e.AgentReads {
			owner = "" // the other clone's path, as that clone wrote it
		}
		return false, &OwnerError{Task: st.Task, Owner: owner, OtherClone: other}
	}
	return true, nil
}

func ownerOf(st *State) string {
	if st.Worktree != "" {
		return st.Worktree
	}
	return st.WorktreeID
}

// save is the one place a task's state is written. It refuses a state
// that breaks the rules (ValidateState), stores it as the next revision of
// old, and when the write ended the run (done, aborted, rolled back) it
// runs finish. It returns the stored task.
func (e *Engine) save(old *Task, st *State, wf *workflow.Definition, msg string) (*Task, error) {
	return e.saveWith(old, st, wf, msg, nil)
}

// saveWith is save writing the tree entries put in the same commit.
func (e *Engine) saveWith(old *Task, st *State, wf *workflow.Definition, msg string, put map[string][]byte) (*Task, error) {
	if err := ValidateState(st, wf); err != nil {
		return nil, fmt.Errorf("%w; refusing to write it, nothing changed", err)
	}
	nt := &Task{State: st, Definition: old.Definition, Rev: old.Rev, Archived: old.Archived, Put: put}
	rev, err := e.Tasks.SaveTask(nt, msg)
	if err != nil {
		return nil, err
	}
	nt.Rev, nt.Put = rev, nil
	nt.Archived = old.Archived && st.Finished()
	if st.Finished() && !old.State.Finished() {
		e.finish(nt, wf)
	}
	return nt, nil
}

// enter moves st to node, keeping status and timestamps consistent: the
// node left counts as completed, the node entered starts at attempt 1.
func (e *Engine) enter(st *State, wf *workflow.Definition, node string) {
	now := e.now()
	if from := st.CurrentNode; from != "" && from != node && !wf.IsTerminal(from) && node != workflow.NodeAborted {
		// Completed now, so no longer failed: a node is never both.
		st.CompletedNodes = appendOnce(st.CompletedNodes, from)
		st.FailedNodes = remove(st.FailedNodes, from)
	}
	st.CompletedNodes = remove(st.CompletedNodes, node)
	st.CurrentNode = node
	st.Subphase = firstSubphase(wf, node)
	st.History = append(st.History, node)
	st.PhaseStartTime = now
	// An attempt starts with each new visit (not with a repeat of the
	// same entry, which changes nothing).
	if st.logPhase(now) {
		if e.Git != nil && !wf.IsTerminal(node) {
			if gi := e.Git(); gi != nil {
				st.PhaseLog[len(st.PhaseLog)-1].Head = gi.Head
			}
		}
		if !wf.IsTerminal(node) {
			st.countAttempt(node)
		}
	}
	st.Attempt = 1
	st.LastFailure = ""
	st.PendingClaim = ""
	switch node {
	case workflow.NodeDone:
		st.Status = StatusCompleted
		st.EndedAt = &now
	case workflow.NodeAborted:
		st.Status = StatusAborted
		st.EndedAt = &now
	default:
		if st.Status == StatusPaused {
			st.ResumedAt = &now
		}
		st.Status = StatusActive
		st.Error = nil
		st.PauseReason = ""
	}
}

// reopen marks st active again after prev or restart left a terminal node;
// the node starts again at its first sub-phase.
func (e *Engine) reopen(st *State, wf *workflow.Definition) {
	st.Subphase = firstSubphase(wf, st.CurrentNode)
	if st.Status == StatusPaused {
		now := e.now()
		st.ResumedAt = &now
	}
	st.Status = StatusActive
	st.EndedAt = nil
	st.EndedBy = ""
	st.Error = nil
	st.PendingClaim = ""
	st.PauseReason = ""
	st.PhaseStartTime = e.now()
	if st.logPhase(st.PhaseStartTime) && st.CurrentNode != workflow.NodeDone && st.CurrentNode != workflow.NodeAborted {
		st.countAttempt(st.CurrentNode)
	}
	st.Attempt = 1
	st.LastFailure = ""
	st.CompletedNodes = remove(st.CompletedNodes, st.CurrentNode)
	st.FailedNodes = remove(st.FailedNodes, st.CurrentNode)
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

// view is what a command shows after it moved (or showed) a task. A retry
// starts with why the last attempt failed, so an agent trying again knows
// what went wrong.
func (e *Engine) view(st *State, wf *workflow.Definition) *View {
	v := &View{Task: st.Task, State: st, Mode: st.Mode, Node: st.CurrentNode, Definition: wf.Raw,
		Label: wf.Label(st.CurrentNode), MaxAttempts: wf.Attempts(st.CurrentNode, e.MaxAttempts)}
	if e.AgentReads && !RunLabel(v.Mode) {
		v.Mode = stateLabelNotice // a label a fetch may have written (agent_view.go)
	}
	if n := wf.Nodes[st.CurrentNode]; n != nil {
		v.Step = n.Run != nil
	}
	// A prompt is instructions to whoever reads it, a coding agent
	// included: an untrusted definition's never reaches it. (The text of
	// done and aborted is git-hegel's own, whoever wrote the definition.)
	if st.CurrentNode != workflow.NodeDone && st.CurrentNode != workflow.NodeAborted {
		if notice := e.PromptTrusted(st.Task, wf); notice != "" {
			v.Prompt, v.Untrusted = notice, true
			return v
		}
	}
	stateText := e.stateTextOnce(st) // read by the prompt and the failure alike
	prompt, err := e.renderPrompt(st, wf, stateText)
	if err != nil {
		e.warn(err.Error() + " (showing the prompt as written)")
		prompt = wf.Prompt(st.CurrentNode)
	}
	v.Prompt = prompt
	if st.LastFailure != "" && !wf.IsTerminal(st.CurrentNode) {
		head := fmt.Sprintf("The last attempt at '%s' failed:", st.CurrentNode)
		if st.Attempt > 1 {
			head = fmt.Sprintf("This is attempt %d of %d at '%s'. The last attempt failed:", st.Attempt, v.MaxAttempts, st.CurrentNode)
		}
		failure := st.LastFailure
		for _, t := range stateText() {
			if t.Field == "last_failure" {
				failure = withheld(st.Task, t) // fetched_text.go
			}
		}
		v.Prompt = head + "\n" + indent(failure) + "\n\n" + v.Prompt
	}
	return v
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n")
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *Engine) warn(msg string) {
	if e.Warn != nil {
		e.Warn(msg)
	}
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
func definition(t *Task) (*workflow.Definition, error) {
	ns := "tasks"
	if t.Archived {
		ns = "archive"
	}
	wf, err := workflow.Parse(t.State.Workflow, "refs/hegel/"+ns+"/"+t.State.Task+":yaml", t.Definition)
	if err != nil {
		return nil, fmt.Errorf("Task '%s' holds an invalid workflow definition: %v", t.State.Task, err)
	}
	return wf, nil
}

func finishedError(st *State) error {
	return fmt.Errorf("Workflow '%s' is %s (at '%s'). Start a new one with 'git hegel start <workflow>'", st.Mode, st.Status, st.CurrentNode)
}

func claims(wf *workflow.Definition, node string) []string {
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

func appendOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// remove returns list without s; nil stays nil, and an emptied list
// becomes nil so the field is left out of the JSON.
func remove(list []string, s string) []string {
	if !slices.Contains(list, s) {
		return list
	}
	var out []string
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

// ViewOf is what repeat would show for t.
func (e *Engine) ViewOf(t *Task) (*View, error) {
	wf, err := definition(t)
	if err != nil {
		return nil, err
	}
	return e.view(t.State, wf), nil
}

// Owns reports whether this worktree owns st.
func (e *Engine) Owns(st *State) bool { return e.owns(st) }

// OwnerLabel names the worktree that owns st for people: "this worktree",
// "-" (parked: nobody), "another clone", the owning worktree's path, or
// "unverified" for a state naming a worktree of this clone that this
// clone's record does not confirm (it arrived with a fetch). A finished
// or stashed task is nobody's now: the label says who finished or parked
// it ("finished here", "stashed in /path", "finished in another clone").
func (e *Engine) OwnerLabel(st *State) string {
	label := e.ownerNow(st)
	verb := ""
	switch {
	case st.Status == StatusStashed:
		verb = "stashed"
	case st.Finished():
		verb = "finished"
	}
	switch {
	case verb == "" || label == "-" || label == OwnerUnverified:
		return label
	case label == "this worktree":
		return verb + " here"
	}
	return verb + " in " + label
}

// ownerNow is OwnerLabel's worktree, whatever the task's status.
func (e *Engine) ownerNow(st *State) string {
	switch {
	case e.owns(st):
		return "this worktree"
	case st.Worktree == "" && st.WorktreeID == "":
		return "-"
	case !sameInstance(st.WorktreeID, e.WorktreeID):
		return "another clone"
	case !e.verified(st):
		return OwnerUnverified
	}
	// The record vouches for the id, not the path beside it, which the
	// state (perhaps fetched) gives: one printable line.
	return text.Printable(st.Worktree, 200)
}

// OwnerUnverified is the owner label of a task whose state names a
// worktree of this clone without this clone's record agreeing.
const OwnerUnverified = "unverified"

// sameInstance reports whether two worktree ids belong to one clone
// ("<instance>:<worktree>").
func sameInstance(a, b string) bool {
	ia, _, _ := strings.Cut(a, ":")
	ib, _, _ := strings.Cut(b, ":")
	return ia == ib
}

// TaskWorkflow parses the workflow a stored task runs.
func TaskWorkflow(t *Task) (*workflow.Definition, error) { return definition(t) }

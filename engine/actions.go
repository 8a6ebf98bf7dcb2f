package engine

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/git-hegel/git-hegel/engine/text"
)

// Agent actions: a snapshot of the worktree before each file-changing
// tool call of a coding agent (and one after it), kept per task, so that
// `git hegel undo` can put back exactly what one or more actions changed,
// whatever tool made the change. The snapshots are taken by the agent
// hooks; what an undo restores, and when it must refuse, is decided here.

// Phases of an action snapshot.
const (
	// ActionBefore is taken when a tool call is about to run.
	ActionBefore = "pre"
	// ActionAfter is taken once it ran; it names the ActionBefore it
	// closes (Action).
	ActionAfter = "post"
	// ActionUndo is the safety snapshot an undo takes before it changes
	// anything: restoring it is the redo.
	ActionUndo = "undo"
	// ActionRedo is the safety snapshot a redo takes.
	ActionRedo = "redo"
)

// ActionSnapshot is one snapshot of an action chain as the engine sees
// it.
type ActionSnapshot struct {
	ID        string
	Phase     string // ActionBefore, ActionAfter, ActionUndo, ActionRedo
	CreatedAt time.Time
	Session   string
	Agent     string
	Tool      string
	// Input is the command line (shell tools) or the file path (edit
	// tools), cut to a bound.
	Input string
	// Action is, on an ActionAfter, the id of its ActionBefore; on an
	// ActionUndo, the id of the ActionBefore the undo went back to.
	Action string
	// Paths is, on an ActionUndo, what the undo restored.
	Paths []string
	// Local reports that this clone took it (never read from a ref).
	Local bool
	// Handle is the implementation's own record of it.
	Handle any
}

// ActionStore keeps the action snapshots of each task and restores some
// of their paths. rollback's chains implement it
// (cmd/git-hegel/worktree).
type ActionStore interface {
	// ActionSnapshots returns a task's action snapshots, oldest first.
	ActionSnapshots(task string) ([]*ActionSnapshot, error)
	// NewestActionSnapshot returns the newest of them only (nil: none),
	// without reading the others.
	NewestActionSnapshot(task string) (*ActionSnapshot, error)
	// TakeActionSnapshot snapshots the working tree and the index and
	// appends s (its Phase and attribution) to the task's chain; the
	// chain's bound applies.
	TakeActionSnapshot(task string, s ActionSnapshot) error
	// CurrentSnapshot is the working tree and index now, stored nowhere.
	CurrentSnapshot() (*ActionSnapshot, error)
	// ChangedPaths lists, sorted, the paths whose file or index entry
	// differs between two snapshots.
	ChangedPaths(a, b *ActionSnapshot) ([]string, error)
	// RestorePaths writes paths (files and index entries) back as target
	// holds them, after storing safety (its Phase and Paths) in the chain;
	// no other path, nor HEAD, changes.
	RestorePaths(task string, target *ActionSnapshot, paths []string, safety ActionSnapshot) error
	// CheckRestore reports whether RestorePaths would refuse now (a file
	// in the way that no snapshot holds, one it cannot write), changing
	// nothing.
	CheckRestore(task string, target *ActionSnapshot, paths []string) error
	// TakeBackUndo ends an undo that was interrupted by putting its
	// paths back as they were before it; taken is false when there was
	// none.
	TakeBackUndo() (taken bool, err error)
}

// ErrUndoInterrupted reports an undo of agent actions that did not
// finish: snapshots and restores wait until git hegel undo takes it back.
var ErrUndoInterrupted = errors.New("an undo of agent actions was interrupted; run 'git hegel undo --list' to take it back, then undo again")

// RecoverUndo takes back an undo that was interrupted (see
// ActionStore.TakeBackUndo); every undo command runs it first.
func (e *Engine) RecoverUndo() (bool, error) {
	if e.Actions == nil {
		return false, nil
	}
	return e.Actions.TakeBackUndo()
}

// Action is one tool call: its snapshot before, and after (nil when the
// call is still running or its PostToolUse never came).
type Action struct {
	Before, After *ActionSnapshot
	// Changed are the paths it changed (before against after, or against
	// what followed it).
	Changed []string
	// Elsewhere: it is still running in the worktree that owns the task,
	// listed from another one; what it changed so far cannot be seen from
	// here, and Changed is empty.
	Elsewhere bool
}

// ErrNoActions reports a task with no action left to undo or redo.
var ErrNoActions = errors.New("no agent action to undo")

// RecordAction takes the snapshot of an agent tool call for task (which
// the caller found active): s says its phase and attribution. An
// ActionAfter closes the chain's newest snapshot when that is the
// ActionBefore of the same session; otherwise (its PreToolUse took no
// snapshot) there is nothing to close and nothing is taken.
func (e *Engine) RecordAction(task string, s ActionSnapshot) error {
	if e.Actions == nil {
		return ErrNoWorktree
	}
	if s.Phase == ActionAfter {
		newest, err := e.Actions.NewestActionSnapshot(task)
		if err != nil {
			return err
		}
		if newest == nil || newest.Phase != ActionBefore || newest.Session != s.Session {
			return nil
		}
		s.Action = newest.ID
	}
	return e.Actions.TakeActionSnapshot(task, s)
}

// CloseOpenAction ends session's newest tool call when it has a
// snapshot before it and none after: a call the person denied, or one
// whose PostToolUse never came. The hook calls it when the agent's turn
// ends or the person writes to it (Stop, UserPromptSubmit, SessionEnd):
// what changes after that is not the call's doing, and an undo of the
// call must not take it back. Another session's open call is left as it
// is (it may still be running).
func (e *Engine) CloseOpenAction(task, session string) error {
	if e.Actions == nil {
		return ErrNoWorktree
	}
	newest, err := e.Actions.NewestActionSnapshot(task)
	if err != nil {
		return err
	}
	if newest == nil || newest.Phase != ActionBefore || newest.Session != session {
		return nil
	}
	return e.Actions.TakeActionSnapshot(task, ActionSnapshot{Phase: ActionAfter, Session: session,
		Agent: newest.Agent, Tool: newest.Tool, Input: newest.Input, Action: newest.ID})
}

// actionTimeline is a chain read as actions: undone actions (those an
// undo went back over, which the chain keeps only behind the undo's
// safety snapshot) and the undo and redo snapshots are left out.
type actionTimeline struct {
	seq     []*ActionSnapshot // pre and post snapshots in order, undone ones left out
	actions []actionAt        // indexes into seq
	// lastUndo is the chain's newest snapshot when it is an ActionUndo
	// (what a redo restores), with the ActionBefore it went back to.
	lastUndo, undoTarget *ActionSnapshot
}

type actionAt struct{ before, after int } // after: -1 none yet

// readTimeline folds a chain (oldest first) into its timeline. An undo
// cuts the chain back to the ActionBefore it restored, followed by the
// undo's snapshot; a redo puts the chain back as it was, followed by the
// redo's snapshot.
func readTimeline(chain []*ActionSnapshot) actionTimeline {
	var t actionTimeline
	for i, s := range chain {
		switch s.Phase {
		case ActionBefore:
			if i+1 < len(chain) && chain[i+1].Phase == ActionUndo {
				continue // the target of an undo: its action is undone
			}
			t.seq = append(t.seq, s)
			t.actions = append(t.actions, actionAt{before: len(t.seq) - 1, after: -1})
		case ActionAfter:
			t.seq = append(t.seq, s)
			if n := len(t.actions); n > 0 {
				a := &t.actions[n-1]
				if a.after < 0 && t.seq[a.before].ID == s.Action && a.before == len(t.seq)-2 {
					a.after = len(t.seq) - 1
				}
			}
		}
	}
	if n := len(chain); n > 0 && chain[n-1].Phase == ActionUndo {
		t.lastUndo = chain[n-1]
		if n > 1 && chain[n-2].Phase == ActionBefore {
			t.undoTarget = chain[n-2]
		}
	}
	return t
}

// ListActions returns the task's actions, oldest first, each with the
// paths it changed (an action still running: against now, when this
// worktree owns the task). Undone actions are not listed.
func (e *Engine) ListActions(task string) (*State, []*Action, error) {
	st, store, err := e.actionTask(task)
	if err != nil {
		return nil, nil, err
	}
	chain, err := store.ActionSnapshots(st.Task)
	if err != nil {
		return st, nil, err
	}
	t := readTimeline(chain)
	var now *ActionSnapshot
	out := make([]*Action, 0, len(t.actions))
	own := e.owns(st)
	for _, at := range t.actions {
		a := &Action{Before: t.seq[at.before]}
		if at.after < 0 && at.before+1 == len(t.seq) && !own {
			// Its files are in the task's worktree, not in this one.
			a.Elsewhere = true
			out = append(out, a)
			continue
		}
		after, err := t.afterOf(at, func() (*ActionSnapshot, error) {
			if now == nil {
				now, err = store.CurrentSnapshot()
			}
			return now, err
		})
		if err != nil {
			return st, nil, err
		}
		if at.after >= 0 {
			a.After = after
		}
		if a.Changed, err = store.ChangedPaths(a.Before, after); err != nil {
			return st, nil, err
		}
		out = append(out, a)
	}
	return st, out, nil
}

// afterOf is the snapshot that ends action at: its ActionAfter, else the
// next snapshot of the timeline, else now.
func (t *actionTimeline) afterOf(at actionAt, now func() (*ActionSnapshot, error)) (*ActionSnapshot, error) {
	if at.after >= 0 {
		return t.seq[at.after], nil
	}
	if at.before+1 < len(t.seq) {
		return t.seq[at.before+1], nil
	}
	return now()
}

func (e *Engine) actionTask(task string) (*State, ActionStore, error) {
	if e.Actions == nil {
		return nil, nil, ErrNoWorktree
	}
	t, err := e.Current(task)
	if err != nil {
		return nil, nil, err
	}
	return t.State, e.Actions, nil
}

// UndoOptions are what one undo is told.
type UndoOptions struct {
	// N is how many of the newest actions to undo (at least 1).
	N int
	// Redo restores what the newest undo changed instead.
	Redo bool
	// Force restores paths that something else changed after the
	// actions too (their later change is lost, kept only in the safety
	// snapshot).
	Force bool
	// Newest, when set, is the id of the newest action the caller showed
	// (its snapshot before), or for a redo the id of the undo it showed
	// (NewestUndo): the undo or redo is refused (ErrActionsChanged) when
	// the task's newest action, or undo, is another by now. An agent keeps
	// acting (and may undo) while a person looks at the list; what they
	// take back must be what they saw.
	Newest string
}

// UndoPlan is what an undo (or redo) will do; nothing has changed yet.
type UndoPlan struct {
	Task    string
	Redo    bool
	Actions []*Action // the actions undone, oldest first (undo only)
	// Target is the snapshot the paths are restored from.
	Target *ActionSnapshot
	// Touched are the paths the actions changed (for a redo: the paths
	// the undo restored); only these are ever written.
	Touched []string
	// Changes are the touched paths that differ now from Target: what
	// the undo writes.
	Changes []string
	// Later are touched paths something other than the actions changed
	// after them: the undo refuses unless forced.
	Later []string
	Force bool
}

// ErrActionsChanged reports an undo refused because the task's actions
// are no longer the ones the caller showed (UndoOptions.Newest).
var ErrActionsChanged = errors.New("the agent actions changed since they were listed")

// ErrChangedLater reports an undo refused because something other than
// the actions changed some of their paths afterwards.
var ErrChangedLater = errors.New("changed after the action by something else")

// PlanUndo works out `git hegel undo [N]` (or `--redo`) for task (""
// the active one): which snapshot the touched paths come back from, which
// of them change, and which something else changed later (refused
// without Force). It changes nothing.
func (e *Engine) PlanUndo(task string, o UndoOptions) (*UndoPlan, error) {
	st, store, err := e.actionTask(task)
	if err != nil {
		return nil, err
	}
	if !e.owns(st) {
		return nil, fmt.Errorf("Task %s is not this worktree's: an undo writes this worktree's files, so run it where the task runs", st.Task)
	}
	chain, err := store.ActionSnapshots(st.Task)
	if err != nil {
		return nil, err
	}
	t := readTimeline(chain)
	now, err := store.CurrentSnapshot()
	if err != nil {
		return nil, err
	}
	p := &UndoPlan{Task: st.Task, Redo: o.Redo, Force: o.Force}
	if o.Redo {
		if err = checkNewestUndo(st.Task, t, o.Newest); err == nil {
			err = planRedo(p, t, store, now)
		}
	} else if err = checkNewest(st.Task, t, o.Newest); err == nil {
		err = planUndo(p, t, store, now, max(o.N, 1))
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// checkNewest refuses an undo when the timeline's newest action is not
// the one the caller listed as newest ("" checks nothing).
func checkNewest(task string, t actionTimeline, listed string) error {
	if listed == "" {
		return nil
	}
	if n := len(t.actions); n == 0 {
		return fmt.Errorf("%w: task %s has no agent action now, and the list showed %s; nothing changed: reload the page and look again", ErrActionsChanged, task, text.Printable(listed, 40))
	} else if newest := t.seq[t.actions[n-1].before]; newest.ID != listed {
		return fmt.Errorf("%w: the newest agent action of task %s is %s (%s) now, not %s, the newest the list showed; nothing changed: reload the page and look again",
			ErrActionsChanged, task, newest.ID, text.Printable(newest.Tool, 40), text.Printable(listed, 40))
	}
	return nil
}

// checkNewestUndo refuses a redo when the undo it would take back is not
// the one the caller showed ("" checks nothing).
func checkNewestUndo(task string, t actionTimeline, listed string) error {
	if listed == "" || t.lastUndo != nil && t.lastUndo.ID == listed {
		return nil
	}
	return fmt.Errorf("%w: the undo of task %s that a redo takes back is no longer %s, the one the page showed; nothing changed: reload the page and look again",
		ErrActionsChanged, task, text.Printable(listed, 40))
}

// NewestUndo returns the undo a redo of task's actions would take back
// (its safety snapshot), or nil when the newest snapshot is not one.
func (e *Engine) NewestUndo(task string) (*ActionSnapshot, error) {
	st, store, err := e.actionTask(task)
	if err != nil {
		return nil, err
	}
	s, err := store.NewestActionSnapshot(st.Task)
	if err != nil || s == nil || s.Phase != ActionUndo {
		return nil, err
	}
	return s, nil
}

// localOnly refuses snapshots this clone did not take. Not only the one
// the files come back from: every snapshot an undo reads decides which
// paths it writes and which it refuses as changed later, so a forged one
// among them could make it overwrite a file no action touched.
func localOnly(snaps []*ActionSnapshot) error {
	for _, s := range snaps {
		if !s.Local {
			return fmt.Errorf("snapshot %s was not taken in this clone (fetched or forged); undo restores only what this clone recorded", s.ID)
		}
	}
	return nil
}

func planUndo(p *UndoPlan, t actionTimeline, store ActionStore, now *ActionSnapshot, n int) error {
	if len(t.actions) == 0 {
		return fmt.Errorf("%w: task %s has none recorded", ErrNoActions, p.Task)
	}
	if n > len(t.actions) {
		return fmt.Errorf("task %s has %d agent %s recorded, not %d", p.Task, len(t.actions), plural(len(t.actions), "action", "actions"), n)
	}
	undone := t.actions[len(t.actions)-n:]
	if err := localOnly(t.seq[undone[0].before:]); err != nil {
		return err
	}
	touched := map[string]bool{}
	// ownPairs are the steps of the timeline that are the actions' own
	// (before → after); any other step that changed a touched path was
	// something else.
	ownPairs := map[int]bool{}
	nowFn := func() (*ActionSnapshot, error) { return now, nil }
	for _, at := range undone {
		after, _ := t.afterOf(at, nowFn)
		changed, err := store.ChangedPaths(t.seq[at.before], after)
		if err != nil {
			return err
		}
		for _, c := range changed {
			touched[c] = true
		}
		a := &Action{Before: t.seq[at.before], Changed: changed}
		if at.after >= 0 {
			a.After = after
			ownPairs[at.before] = true
		} else {
			ownPairs[at.before] = true // before → the next snapshot (or now)
		}
		p.Actions = append(p.Actions, a)
	}
	p.Target = t.seq[undone[0].before]
	for c := range touched {
		p.Touched = append(p.Touched, c)
	}
	slices.Sort(p.Touched)
	if len(p.Touched) == 0 {
		return nil
	}
	later := map[string]bool{}
	steps := append(append([]*ActionSnapshot(nil), t.seq[undone[0].before:]...), now)
	for i := 0; i+1 < len(steps); i++ {
		if ownPairs[undone[0].before+i] {
			continue
		}
		changed, err := store.ChangedPaths(steps[i], steps[i+1])
		if err != nil {
			return err
		}
		for _, c := range changed {
			if touched[c] {
				later[c] = true
			}
		}
	}
	return finishPlan(p, store, now, later)
}

func planRedo(p *UndoPlan, t actionTimeline, store ActionStore, now *ActionSnapshot) error {
	if t.lastUndo == nil || t.undoTarget == nil {
		return fmt.Errorf("%w: task %s has no undo to redo (only the newest undo can be redone, before any new action)", ErrNoActions, p.Task)
	}
	if err := localOnly([]*ActionSnapshot{t.lastUndo, t.undoTarget}); err != nil {
		return err
	}
	p.Target = t.lastUndo
	p.Touched = slices.Clone(t.lastUndo.Paths)
	slices.Sort(p.Touched)
	if len(p.Touched) == 0 {
		return nil
	}
	touched := map[string]bool{}
	for _, c := range p.Touched {
		touched[c] = true
	}
	// Since the undo, the touched paths held what its target holds;
	// anything else there now was written since.
	changed, err := store.ChangedPaths(t.undoTarget, now)
	if err != nil {
		return err
	}
	later := map[string]bool{}
	for _, c := range changed {
		if touched[c] {
			later[c] = true
		}
	}
	return finishPlan(p, store, now, later)
}

func finishPlan(p *UndoPlan, store ActionStore, now *ActionSnapshot, later map[string]bool) error {
	for c := range later {
		p.Later = append(p.Later, c)
	}
	slices.Sort(p.Later)
	differs, err := store.ChangedPaths(now, p.Target)
	if err != nil {
		return err
	}
	for _, c := range differs {
		if _, ok := slices.BinarySearch(p.Touched, c); ok {
			p.Changes = append(p.Changes, c)
		}
	}
	return nil
}

// Refusal is the error the plan stops at (nil: it may go on): paths
// something else changed after the actions, without Force.
func (p *UndoPlan) Refusal() error {
	if len(p.Later) == 0 || p.Force {
		return nil
	}
	what := "the undo"
	if p.Redo {
		what = "the redo"
	}
	them, their := "them", "their"
	if len(p.Later) == 1 {
		them, their = "it", "its"
	}
	return fmt.Errorf("%w: %s would overwrite %s; use --force to restore %s anyway (%s current content is kept in the safety snapshot)",
		ErrChangedLater, what, listPaths(p.Later, 5), them, their)
}

// CheckUndo reports whether carrying out p would be refused by the
// working tree as it is now (what a dry run cannot see from the
// snapshots alone: an ignored file where a restored one goes), changing
// nothing. A plan Refusal already stops is not checked further.
func (e *Engine) CheckUndo(p *UndoPlan) error {
	if e.Actions == nil {
		return ErrNoWorktree
	}
	if p.Refusal() != nil || len(p.Changes) == 0 {
		return nil
	}
	return e.Actions.CheckRestore(p.Task, p.Target, p.Changes)
}

// Undo carries out p: a safety snapshot of everything first (restoring it
// is the redo), then the changed paths written back; nothing else.
func (e *Engine) Undo(p *UndoPlan) error {
	if e.Actions == nil {
		return ErrNoWorktree
	}
	if err := p.Refusal(); err != nil {
		return err
	}
	if len(p.Changes) == 0 {
		return nil
	}
	phase := ActionUndo
	if p.Redo {
		phase = ActionRedo
	}
	safety := ActionSnapshot{Phase: phase, Action: p.Target.ID, Paths: p.Changes}
	return e.Actions.RestorePaths(p.Task, p.Target, p.Changes, safety)
}

// listPaths names the first n paths, git-quoted, and counts the rest.
func listPaths(paths []string, n int) string {
	out := ""
	for i, p := range paths {
		if i == n {
			return fmt.Sprintf("%s and %d more", out, len(paths)-n)
		}
		if i > 0 {
			out += ", "
		}
		out += text.QuotePath(p, true)
	}
	return out
}

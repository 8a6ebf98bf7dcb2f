package engine

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/git-hegel/git-hegel/engine/text"
)

// Checkpoint kinds.
const (
	// CheckpointEnter is taken when a node is entered (start, next, prev,
	// restart).
	CheckpointEnter = "enter"
	// CheckpointManual is taken by hand (git hegel checkpoint).
	CheckpointManual = "manual"
	// CheckpointSafety is taken by a rollback before it changes anything;
	// restoring it undoes the rollback.
	CheckpointSafety = "safety"
)

// Checkpoint is a snapshot of a worktree's files, index and HEAD taken for
// a task, as the engine sees it: which node it belongs to and what the
// task's history was then. Snapshots stores and restores it.
type Checkpoint struct {
	ID         string
	Task       string
	WorkflowID string
	Node       string
	Kind       string // CheckpointEnter, CheckpointManual, CheckpointSafety
	Message    string
	CreatedAt  time.Time
	// History is the task's node history when it was taken; an undo
	// restores it.
	History []string
	// RollbackTo is set on safety checkpoints: the node the rollback went
	// back to.
	RollbackTo string
	// Branch is the branch HEAD was on, short ("" when detached); Head
	// the commit ("" on an unborn branch).
	Branch, Head string
	// FilesChanged lists what differs from the previous checkpoint, at
	// most a thousand of FilesChangedCount.
	FilesChanged      []string
	FilesChangedCount int
	// Skipped are the untracked files left out of it.
	Skipped []SkippedFile
	// Commit is its commit on the chain today (eviction rewrites it; the
	// id is stable).
	Commit string
	// Local reports that this clone took it: its id is derived from its
	// content, and this clone's own record (never a ref) lists that
	// content. A checkpoint fetched from another clone, one forged there,
	// and one taken by a git-hegel that kept no record are not Local.
	Local bool
	// Author is who its commit names ("Name <email>"), to say who made a
	// checkpoint that is not Local.
	Author string
	// Handle is the Snapshots implementation's own record of it; the
	// engine hands it back.
	Handle any
}

// SkippedFile is an untracked file a checkpoint left out.
type SkippedFile struct {
	Path   string
	Size   int64
	Reason string
}

// Describe is a checkpoint's description in one line: "enter plan",
// "plan: <message>", "safety at code (before rolling back to plan)".
func (c *Checkpoint) Describe() string {
	switch c.Kind {
	case CheckpointSafety:
		if c.RollbackTo != "" {
			return fmt.Sprintf("safety at %s (before rolling back to %s)", c.Node, c.RollbackTo)
		}
		return "safety at " + c.Node
	case CheckpointManual:
		// The message may be another clone's: no control character of it
		// reaches a terminal.
		if m := text.Clean(firstLine(c.Message)); m != "" {
			return c.Node + ": " + m
		}
		return "at " + c.Node
	}
	return "enter " + c.Node
}

// IsStart reports whether a checkpoint of kind taken with history is
// its task's start: the one taken as the task entered its first node.
func IsStart(kind string, history []string) bool {
	return kind == CheckpointEnter && len(history) == 1
}

// PinStart reports whether the checkpoint of kind about to be taken for
// st is its run's start, which no bound may evict while the task lives:
// taken on entering the first node for the first time (prev back to it
// later takes an ordinary one).
func PinStart(st *State, kind string) bool {
	return IsStart(kind, st.History) && len(st.PhaseLog) <= 1
}

// Start reports whether c is its task's start checkpoint.
func (c *Checkpoint) Start() bool { return IsStart(c.Kind, c.History) }

// EvictionNotice is the line that reports a checkpoint the FIFO bound
// evicted.
func EvictionNotice(c *Checkpoint) string {
	line := fmt.Sprintf("Evicted oldest snapshot (FIFO): checkpoint %s at %s", c.ID, c.Node)
	switch {
	case c.Kind == CheckpointManual && c.Message != "":
		line += fmt.Sprintf(" (taken by hand: %q)", firstLine(c.Message))
	case c.Kind == CheckpointManual:
		line += " (taken by hand)"
	case c.Kind == CheckpointSafety:
		line += " (safety checkpoint of an earlier rollback)"
	}
	return line
}

// ErrNoCheckpoint matches errors about a checkpoint that does not exist.
var ErrNoCheckpoint = errors.New("no such checkpoint")

// noCheckpoint is an error about a missing checkpoint, with its message.
type noCheckpoint struct{ msg string }

func (e *noCheckpoint) Error() string        { return e.msg }
func (e *noCheckpoint) Is(target error) bool { return target == ErrNoCheckpoint }

func noCheckpointf(format string, a ...any) error {
	return &noCheckpoint{msg: fmt.Sprintf(format, a...)}
}

// FindCheckpoint selects one of a task's checkpoints (oldest first) by id
// (or a unique prefix of at least four hex digits), or else by node: the
// newest taken when that node was entered, or failing that the newest at
// that node.
func FindCheckpoint(cps []*Checkpoint, task, sel string) (*Checkpoint, error) {
	if cp, err := FindCheckpointID(cps, sel); cp != nil || err != nil {
		return cp, err
	}
	if cp := newestAt(cps, sel, true); cp != nil {
		return cp, nil
	}
	if cp := newestAt(cps, sel, false); cp != nil {
		return cp, nil
	}
	return nil, noCheckpointf("Task %s has no checkpoint '%s'. Run 'git hegel checkpoint list' to see them", task, sel)
}

// FindCheckpointID selects a checkpoint by id or unique id prefix (at
// least four hex digits): nil when none matches, an error when several do.
func FindCheckpointID(cps []*Checkpoint, sel string) (*Checkpoint, error) {
	if len(sel) < 4 || !isHex(sel) {
		return nil, nil
	}
	sel = strings.ToLower(sel)
	var found []*Checkpoint
	for _, c := range cps {
		if strings.HasPrefix(c.ID, sel) {
			found = append(found, c)
		}
	}
	switch len(found) {
	case 0:
		return nil, nil
	case 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("checkpoint id '%s' is ambiguous; give more characters", sel)
}

func isHex(s string) bool {
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}

// newestAt returns the newest checkpoint at node (only those taken on
// entering it, with enterOnly).
func newestAt(cps []*Checkpoint, node string, enterOnly bool) *Checkpoint {
	for i := len(cps) - 1; i >= 0; i-- {
		c := cps[i]
		if c.Node == node && (!enterOnly || c.Kind == CheckpointEnter) {
			return c
		}
	}
	return nil
}

// checkpointList names checkpoints (oldest first) for a message.
func checkpointList(cps []*Checkpoint) string {
	parts := make([]string, 0, len(cps))
	for _, c := range cps {
		parts = append(parts, c.ID+" ("+c.Node+")")
	}
	return strings.Join(parts, ", ")
}

// Checkpoints returns the task a command acts on (the active one, or the
// one named with --task, task) and its checkpoints, oldest first.
func (e *Engine) Checkpoints(task string) (*State, []*Checkpoint, error) {
	if e.Snapshots == nil {
		return nil, nil, ErrNoWorktree
	}
	t, err := e.Current(task)
	if err != nil {
		return nil, nil, err
	}
	cps, err := e.Snapshots.Checkpoints(t.State.Task)
	return t.State, cps, err
}

// TakeCheckpoint is `git hegel checkpoint [-m MSG]`: a checkpoint taken by
// hand of the task this worktree runs (or task, named with --task, which
// must be this worktree's). created is false when nothing changed since
// the newest checkpoint at the node (and there is no message).
func (e *Engine) TakeCheckpoint(task, message string) (cp *Checkpoint, created bool, err error) {
	if e.Snapshots == nil {
		return nil, false, ErrNoWorktree
	}
	t, err := e.Current(task)
	if err != nil {
		return nil, false, err
	}
	if !e.owns(t.State) {
		return nil, false, fmt.Errorf("Task %s is not this worktree's: a checkpoint saves this worktree's files, so take it where the task runs", t.State.Task)
	}
	return e.Snapshots.TakeCheckpoint(t.State, CheckpointManual, message)
}

// CheckpointToDrop finds the checkpoint `git hegel checkpoint drop <id>`
// names (an id or unique id prefix) among the checkpoints of task ("":
// the active one); an active task another worktree runs keeps its
// checkpoints.
func (e *Engine) CheckpointToDrop(task, sel string) (*State, *Checkpoint, error) {
	if e.Snapshots == nil {
		return nil, nil, ErrNoWorktree
	}
	t, err := e.Current(task)
	if err != nil {
		return nil, nil, err
	}
	st := t.State
	if !e.owns(st) && st.Active() && st.Worktree+st.WorktreeID != "" {
		return nil, nil, fmt.Errorf("Task %s is another worktree's (%s); drop its checkpoints there", st.Task, st.Worktree)
	}
	cps, err := e.Snapshots.Checkpoints(st.Task)
	if err != nil {
		return nil, nil, err
	}
	cp, err := FindCheckpointID(cps, sel)
	if err == nil && cp == nil {
		err = noCheckpointf("Task %s has no checkpoint '%s'. Run 'git hegel checkpoint list' to see them", st.Task, sel)
	}
	return st, cp, err
}

// DropCheckpoint removes cp (from CheckpointToDrop) from its task's list.
func (e *Engine) DropCheckpoint(st *State, cp *Checkpoint) error {
	if e.Snapshots == nil {
		return ErrNoWorktree
	}
	return e.Snapshots.DropCheckpoint(st.Task, cp.ID)
}

// PreviewRestore works out what rolling back to cp would change now,
// without changing anything (git hegel checkpoint show).
func (e *Engine) PreviewRestore(cp *Checkpoint) (*RestorePlan, error) {
	if e.Snapshots == nil {
		return nil, ErrNoWorktree
	}
	p, err := e.Snapshots.PlanRestore(cp, RestoreOptions{Preview: true})
	if err == nil {
		e.nameLeavingCommits(p)
	}
	return p, err
}

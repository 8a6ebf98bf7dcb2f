package engine

import (
	"errors"
	"fmt"
	"time"
)

// Snapshots are the snapshots of this worktree's files, index and HEAD
// that a task's checkpoints keep and a rollback restores. The engine decides which checkpoint to
// take or restore and records the outcome in the task; the implementation only
// snapshots and restores, and keeps a journal so that a restore cut short
// can be finished or undone. cmd/git-hegel/worktree implements it with
// package rollback; the engine's tests use an in-memory one.
//
// A rollback is, in this order: PlanRestore (nothing is written),
// Snapshot (a safety checkpoint of everything now, and the journal),
// Restore (HEAD, branches, files, index), the engine's record of it in the
// task, then Settle. Replay finishes (forward) or undoes a restore from
// its journal.
type Snapshots interface {
	// Checkpoints returns a task's checkpoints, oldest first. A damaged
	// entry is left out (and reported as a warning), so one bad entry
	// never hides the others.
	Checkpoints(task string) ([]*Checkpoint, error)
	// TakeCheckpoint snapshots the files, the index and HEAD for task st
	// at its current node. created is false when nothing changed since
	// the newest checkpoint at that node (which is returned): a
	// checkpoint taken by hand with a message is always stored. The
	// chain's FIFO bounds apply.
	TakeCheckpoint(st *State, kind, message string) (cp *Checkpoint, created bool, err error)
	// DropCheckpoint removes one checkpoint from a task's list.
	DropCheckpoint(task, id string) error
	// PlanRestore works out what restoring cp would change, and checks
	// that it can be done; it changes nothing.
	PlanRestore(cp *Checkpoint, o RestoreOptions) (*RestorePlan, error)
	// Snapshot stores the safety checkpoint of a planned restore (the
	// files, index and HEAD as they are now, for the task as st has it)
	// and the journal that holds rec; it fills rec's TargetID and
	// SafetyID. From its return the restore can be finished or undone
	// whatever happens. It changes nothing in the working tree.
	Snapshot(p *RestorePlan, st *State, rec *RollbackRecord) (*Checkpoint, error)
	// Restore moves HEAD and the branches, and writes the files and the
	// index as the plan says.
	Restore(p *RestorePlan) error
	// Replay makes the working tree, index, HEAD and branches what the
	// journal's restore goes to (forward) or came from (back), given that
	// they hold some mix of the two, as a restore cut short leaves them.
	// A file changed since by someone else is never overwritten: it is an
	// error, and nothing changes.
	Replay(rec *RollbackRecord, forward bool) error
	// Settle ends a restore once the engine recorded it: restored says it
	// went through (the checkpoints taken after its target leave the list,
	// the safety checkpoint follows the target), else it was undone. The
	// journal is removed.
	Settle(rec *RollbackRecord, restored bool) error
	// Interrupted returns the journal of a restore that did not finish,
	// or nil. A restore that another process is running is an error
	// (a *RollbackInterruptedError with Running set).
	Interrupted() (*RollbackRecord, error)
}

// RestoreOptions tune PlanRestore.
type RestoreOptions struct {
	// Store writes the snapshot's objects now: no question will be asked
	// before Snapshot, so the working tree need not be read twice.
	Store bool
	// Recurse also checks out, in each submodule, the commit the
	// checkpoint recorded.
	Recurse bool
	// Preview plans for `checkpoint show`: a branch the restore could not
	// move is reported in Refused rather than as an error.
	Preview bool
}

// RestorePlan is what restoring a checkpoint would change. Commits are
// full hex ids, "" for none.
type RestorePlan struct {
	// HeadRef is the branch HEAD is on after ("" when detached); HeadFrom
	// and HeadTo the commits HEAD is at before and after.
	HeadRef          string
	HeadFrom, HeadTo string
	CheckedOut       string // the branch HEAD is on now ("" when detached)
	Branches         []BranchMove
	Files            []FileChange
	Kept             []string // ignored files the restore leaves in place
	// Settings are git-hegel's and the agents' settings files that git
	// does not track, which the restore leaves as they are.
	Settings   []string
	Submodules []SubmoduleChange
	Recurse    bool // submodules' checkouts are restored too
	IndexPaths int  // index entries that change
	Refused    string
	// Handle is the implementation's own plan; the engine hands it back.
	Handle any
}

// BranchMove is a branch a restore moves: From "" when it creates it, To
// "" when it deletes it (undoing a rollback that created it).
type BranchMove struct {
	Name     string
	From, To string
	// MovedOn: the branch has moved on since the checkpoint (the safety
	// checkpoint keeps From reachable).
	MovedOn bool
	// Leaving are the commits the move leaves behind, newest first: at
	// most ten of LeavingCount (LeavingMore: at least that many).
	Leaving      []LeavingCommit
	LeavingCount int
	LeavingMore  bool
}

// LeavingCommit is a commit a rollback takes off a branch.
type LeavingCommit struct {
	ID      string // full hex
	Subject string
	When    time.Time
	// Task is the task that made it, when exactly one task ran on the
	// branch at that time ("" when unknown).
	Task string
}

// FileChange is one working-tree path a restore changes.
type FileChange struct {
	Path string `json:"path"`
	// Op is "create", "modify", "delete", "mode" (executable bit only) or
	// "type" (file, link or submodule replaced by another kind).
	Op   string `json:"op"`
	From string `json:"from_mode,omitempty"` // git's octal mode; "" when absent
	To   string `json:"to_mode,omitempty"`
}

// SubmoduleChange is a submodule a restore reports: From is the commit
// checked out now, To the one the checkpoint recorded ("" for none).
type SubmoduleChange struct {
	Path         string
	From, To     string
	LocalChanges bool
}

// Unchanged reports whether the restore changes nothing at all.
func (p *RestorePlan) Unchanged() bool {
	return len(p.Files) == 0 && p.IndexPaths == 0 && len(p.Branches) == 0 && p.HeadFrom == p.HeadTo &&
		p.HeadRef == p.CheckedOut && len(p.Submodules) == 0
}

// movesHead reports whether the restore moves a branch, or HEAD to
// another branch or commit.
func (p *RestorePlan) movesHead() bool {
	return len(p.Branches) > 0 || p.HeadFrom != p.HeadTo || p.HeadRef != p.CheckedOut
}

// RollbackRecord is what a restore's journal keeps for the engine: the
// request to record once the files are back, and where the task was.
type RollbackRecord struct {
	RollbackRequest
	// From is the node the task was at.
	From string
	// TargetID and SafetyID are the checkpoint restored and the safety
	// checkpoint of everything before (set by Snapshots.Snapshot).
	TargetID, SafetyID string
	// SafetyHistory is the task's history the safety checkpoint recorded
	// (undoing an interrupted rollback puts it back).
	SafetyHistory []string
	// Handle is the implementation's own journal.
	Handle any
}

// ErrRollbackInterrupted matches a *RollbackInterruptedError.
var ErrRollbackInterrupted = errors.New("a rollback was interrupted")

// ErrRollbackRunning matches a *RollbackInterruptedError whose rollback
// another process is carrying out.
var ErrRollbackRunning = errors.New("a rollback is running")

// RollbackInterruptedError is a rollback that did not finish: killed, or
// still running in another process.
type RollbackInterruptedError struct {
	Node    string // where it goes
	Undo    bool   // it undoes an earlier rollback
	Running bool   // its process still runs
	PID     int
}

func (e *RollbackInterruptedError) what() string {
	if e.Undo {
		return "An undo of a rollback (back to '" + e.Node + "')"
	}
	return "A rollback to '" + e.Node + "'"
}

func (e *RollbackInterruptedError) Error() string {
	if e.Running {
		return fmt.Sprintf("%s is running in another process (pid %d); wait for it to end", e.what(), e.PID)
	}
	return e.what() + " was interrupted. Run 'git hegel rollback' to finish it, or 'git hegel rollback --undo' to undo it"
}

// Is makes errors.Is match ErrRollbackInterrupted, and ErrRollbackRunning
// while its process runs.
func (e *RollbackInterruptedError) Is(target error) bool {
	return target == ErrRollbackInterrupted || (e.Running && target == ErrRollbackRunning)
}

// InterruptedError is the error that reports rec's rollback as
// interrupted.
func (rec *RollbackRecord) InterruptedError() *RollbackInterruptedError {
	return &RollbackInterruptedError{Node: rec.Node, Undo: rec.Undo}
}

// recordedIn reports whether st already holds rec's rollback (the last
// event of its rollback history is rec's).
func (rec *RollbackRecord) recordedIn(st *State) bool {
	n := len(st.RollbackHistory)
	if st.Task != rec.Task || n == 0 {
		return false
	}
	last := st.RollbackHistory[n-1]
	return last.Timestamp.Equal(rec.At) && last.To == rec.Node
}

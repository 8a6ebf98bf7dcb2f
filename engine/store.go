package engine

import (
	"errors"
	"time"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// Storage errors the engine understands. Stores wrap them so errors.Is
// works. ErrNotFound is workflow.ErrNotFound, so "not found" means the
// same to a guide source and to a task store.
var (
	ErrNotFound = workflow.ErrNotFound
	ErrConflict = errors.New("changed concurrently")
)

// Task is a stored task: its state, the definition it runs, and an opaque
// revision the store uses for compare-and-swap.
type Task struct {
	State      *State
	Definition []byte // workflow YAML, exactly as it was when the task started
	Rev        string
	// Archived is set on a task read from the archive. Saving it continues
	// its chain: a finished state stays in the archive, an open one (prev
	// after done, a rollback undone, the name started again) goes back to
	// the task ref, and the archive keeps the last finished run.
	Archived bool
	// Put, when saving, adds or replaces these entries of the task's tree
	// (slash-separated paths below results/ or inputs/, see run_store.go)
	// in the same commit as the state. Loading leaves it nil.
	Put map[string][]byte
}

// TaskStore keeps tasks. gitstore implements it with one commit chain per
// task; tests use an in-memory map.
type TaskStore interface {
	// LoadTask returns the task or an error wrapping ErrNotFound.
	LoadTask(name string) (*Task, error)
	// SaveTask writes t as the task's new state if the stored revision is
	// still t.Rev (empty Rev: the task must not exist yet); otherwise it
	// returns an error wrapping ErrConflict and writes nothing. msg says
	// what happened, for the history. It returns the new revision.
	SaveTask(t *Task, msg string) (string, error)
	// ListTasks returns every stored task name, sorted.
	ListTasks() ([]string, error)
}

// ArchiveStore keeps finished tasks (refs/hegel/archive/<task> in git)
// and the tasks `git hegel delete` removed. gitstore implements it next to
// the TaskStore; tests use an in-memory one.
type ArchiveStore interface {
	// LoadArchived returns the archived task or an error wrapping
	// ErrNotFound. Its Archived is set.
	LoadArchived(name string) (*Task, error)
	// ListArchived returns every archived task name, sorted.
	ListArchived() ([]string, error)
	// ArchiveTask moves t, a finished task as loaded from the task ref, to
	// the archive: one more commit on its chain (msg) whose tree also holds
	// files under artifacts/. The task ref is removed if it still points at
	// t.Rev; dropCheckpoints removes the task's checkpoints too. A task the
	// archive holds already is not stored again. It returns the archive
	// revision.
	ArchiveTask(t *Task, files []ArchivedFile, msg string, dropCheckpoints bool) (string, error)
	// ArchivedFiles lists the artifact copies an archived task holds (Data
	// left nil).
	ArchivedFiles(name string) ([]ArchivedFile, error)
	// ReadArchivedFile returns the copy of artifact path an archived task
	// holds: an error wrapping ErrNotFound when it has none, another when
	// it is larger than limit bytes.
	ReadArchivedFile(name, path string, limit int64) ([]byte, error)
	// ListStates reads the state of every live task, and of every archived
	// one when archived is set, without the workflow definitions. A task
	// that cannot be read comes back with Err set.
	ListStates(archived bool) ([]ListedTask, error)

	// DeleteTask removes a finished task (its archive or task ref, and its
	// checkpoints) and keeps a record that holds what it removed, so
	// RestoreTask can bring it back.
	DeleteTask(name string, at time.Time) (*DeletedTask, error)
	// DeletedTasks returns the records of deleted tasks, newest first.
	DeletedTasks() ([]*DeletedTask, error)
	// RestoreTask puts a deleted task back as it was and removes its
	// record. A task of that name that exists again is an error wrapping
	// ErrExists.
	RestoreTask(name string) (*DeletedTask, error)
	// ExpireDeleted drops the records of tasks deleted before t, so git gc
	// can reclaim what they held.
	ExpireDeleted(before time.Time) (int, error)
}

// ArchivedFile is one artifact copy kept with an archived task.
type ArchivedFile struct {
	Path string // as the workflow names it, below artifacts/ in the tree
	Size int64
	Data []byte
}

// ListedTask is one task as `git hegel tasks` lists it.
type ListedTask struct {
	Name     string
	State    *State
	Archived bool
	Err      error
}

// DeletedTask records a task `git hegel delete` removed.
type DeletedTask struct {
	Task      string    `json:"task"`
	Workflow  string    `json:"workflow"`
	Status    string    `json:"status"`
	Archived  bool      `json:"archived"` // it was removed from the archive (else from the task refs)
	DeletedAt time.Time `json:"deleted_at"`
	// Commit is the task's last commit; Checkpoints the tip of its
	// checkpoint chain ("" when it had none).
	Commit      string `json:"commit"`
	Checkpoints string `json:"checkpoints,omitempty"`
}

// Session is the per-worktree session metadata (.hegel/state.json). It never
// holds workflow state: losing it loses nothing that the refs do not keep.
type Session struct {
	SessionID  string    `json:"session_id"`
	StartedAt  time.Time `json:"started_at"`
	ActiveTask string    `json:"active_task,omitempty"`
	Totals     Totals    `json:"cumulative_totals"`
	GitInfo    *GitInfo  `json:"git_info,omitempty"`
}

// Totals are cumulative counters for this worktree's session.
type Totals struct {
	WorkflowsStarted   int `json:"workflows_started"`
	WorkflowsCompleted int `json:"workflows_completed"`
	WorkflowsAborted   int `json:"workflows_aborted"`
	Transitions        int `json:"transitions"`
}

// GitInfo caches what git said when the session last changed.
type GitInfo struct {
	Branch   string    `json:"branch,omitempty"`
	Head     string    `json:"head,omitempty"`
	CachedAt time.Time `json:"cached_at"`
}

// SessionStore reads and updates the session file.
type SessionStore interface {
	// LoadSession returns the session, or (nil, error wrapping ErrNotFound)
	// when there is none; a corrupt file is reported as an error wrapping
	// ErrCorruptSession so the engine can rebuild it.
	LoadSession() (*Session, error)
	// UpdateSession applies fn to the current session (a fresh one if
	// missing or corrupt) under a lock and writes it atomically.
	UpdateSession(fn func(*Session) error) (*Session, error)
}

// ErrCorruptSession marks a session file that cannot be parsed.
var ErrCorruptSession = errors.New("session file is corrupt")

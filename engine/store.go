package engine

import (
	"errors"
	"time"
)

// Storage errors the engine understands. Stores wrap them so errors.Is works.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("changed concurrently")
)

// Task is a stored task: its state, the definition it runs, and an opaque
// revision the store uses for compare-and-swap.
type Task struct {
	State      *State
	Definition []byte // workflow YAML, exactly as it was when the task started
	Rev        string
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

package engine

import (
	"fmt"
	"time"
)

// The running record: while `git hegel run` drives a task, a record names
// the process (pid and host, with what the storage layer needs to tell a
// live owner from a dead one) and the step it is at. `git hegel status`
// shows it from any worktree of the clone, `git hegel cancel` signals the
// process it names, and a second run of the same task is refused while
// the record's process lives. A run killed with SIGKILL leaves its record
// behind; its process is then provably dead, and the next run replaces it.

// RunRecord is one running `git hegel run`.
type RunRecord struct {
	Task     string    `json:"task"`
	Workflow string    `json:"workflow"`
	Worktree string    `json:"worktree"`
	PID      int       `json:"pid"`
	Host     string    `json:"host"` // the host name, for people
	Started  time.Time `json:"started_at"`
	// The step it is at, as status shows it ("step 2 of 3").
	Step        int       `json:"step"`
	TotalSteps  int       `json:"total_steps"`
	CurrentStep string    `json:"current_step"`
	StepStarted time.Time `json:"step_started_at"`
	// Child is the process group of the handler running now (0: none).
	// A run killed outright cannot stop it; the next run or cancel of
	// the task does (Runner.Leftover).
	Child int `json:"child,omitempty"`

	// Liveness is filled in by LoadRun and never stored: LiveAlive,
	// LiveDead or LiveUnknown (another host or container).
	Liveness string `json:"-"`
	// Owner describes the process for messages ("git-hegel process 4242
	// on build-7"), filled in by LoadRun.
	Owner string `json:"-"`
}

// Liveness values of a RunRecord.
const (
	LiveAlive   = "alive"
	LiveDead    = "dead"
	LiveUnknown = "unknown"
)

// Running reports whether the record's process still runs (or may: one
// on another host cannot be checked, and counts as running).
func (r *RunRecord) Running() bool { return r != nil && r.Liveness != LiveDead }

// RunRecords keeps the running records (gitstore: one file per task in
// the common git dir, outside the synced refs).
type RunRecords interface {
	// BeginRun records that this process runs rec.Task. A record whose
	// process is dead is replaced; one whose process runs (or cannot be
	// checked) makes it fail with a *RunningError.
	BeginRun(rec *RunRecord) error
	// UpdateRun rewrites this process's record (the step it is at).
	UpdateRun(rec *RunRecord) error
	// EndRun removes this process's record of task.
	EndRun(task string) error
	// LoadRun returns task's record with its Liveness, or nil when there
	// is none.
	LoadRun(task string) (*RunRecord, error)
}

// RunningError refuses a second run of a task that a live run drives.
type RunningError struct{ Rec *RunRecord }

func (e *RunningError) Error() string {
	r := e.Rec
	where := ""
	if r.CurrentStep != "" {
		where = fmt.Sprintf(", at step %d of %d (%s)", r.Step, r.TotalSteps, r.CurrentStep)
	}
	if r.Liveness == LiveUnknown {
		return fmt.Sprintf("Task '%s' is being run by %s%s, which cannot be checked from here; if it is gone, remove its record with 'git hegel cancel --task %s --force'", r.Task, r.Owner, where, r.Task)
	}
	return fmt.Sprintf("Task '%s' is already being run by %s%s; wait for it, or stop it with 'git hegel cancel --task %s'", r.Task, r.Owner, where, r.Task)
}

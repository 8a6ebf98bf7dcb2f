package engine

import (
	"encoding/json"
	"time"
)

// Task statuses. A task is "active" until it reaches done (completed) or is
// aborted; only an active task blocks starting another in the same worktree.
const (
	StatusActive    = "active"
	StatusCompleted = "completed"
	StatusAborted   = "aborted"
)

// State is one task's workflow state, stored as state.json on the task's ref.
// Field names follow the seeds (01, 04, 05) so stashes and later features can
// carry them unchanged; fields later work fills in are already here so the
// format does not need a version bump to grow into them.
type State struct {
	Task           string     `json:"task"`
	Workflow       string     `json:"workflow"`
	Mode           string     `json:"mode"`
	CurrentNode    string     `json:"current_node"`
	History        []string   `json:"history"`
	WorkflowID     string     `json:"workflow_id"`
	Status         string     `json:"status"`
	StartedAt      time.Time  `json:"started_at"`
	PhaseStartTime time.Time  `json:"phase_start_time"`
	UpdatedAt      time.Time  `json:"updated_at"`
	EndedAt        *time.Time `json:"ended_at,omitempty"`
	// Worktree and WorktreeID name the worktree that owns the task (path
	// for people, id for matching), so a lost session file can be rebuilt
	// from the refs alone.
	Worktree   string `json:"worktree"`
	WorktreeID string `json:"worktree_id,omitempty"`

	TaskType        string                     `json:"task_type,omitempty"`
	Description     string                     `json:"description,omitempty"`
	Attempt         int                        `json:"attempt"`
	LastFailure     string                     `json:"last_failure,omitempty"`
	RollbackHistory []RollbackEvent            `json:"rollback_history"`
	StepResults     map[string]json.RawMessage `json:"step_results,omitempty"`
}

// RollbackEvent records one rollback; the history feeds the loop guard.
type RollbackEvent struct {
	Timestamp time.Time `json:"timestamp"`
	From      string    `json:"from"`
	To        string    `json:"to"`
	Reason    string    `json:"reason,omitempty"`
}

// Active reports whether the task still blocks starting another workflow.
func (s *State) Active() bool { return s != nil && s.Status == StatusActive }

// Clone returns a deep copy, so a retried update always starts from the
// state as loaded.
func (s *State) Clone() *State {
	c := *s
	// Copy into non-nil slices: an empty list must stay [] in JSON, not
	// become null.
	c.History = append(make([]string, 0, len(s.History)), s.History...)
	if s.RollbackHistory != nil {
		c.RollbackHistory = append(make([]RollbackEvent, 0, len(s.RollbackHistory)), s.RollbackHistory...)
	}
	if s.EndedAt != nil {
		t := *s.EndedAt
		c.EndedAt = &t
	}
	if s.StepResults != nil {
		c.StepResults = make(map[string]json.RawMessage, len(s.StepResults))
		for k, v := range s.StepResults {
			c.StepResults[k] = append(json.RawMessage(nil), v...)
		}
	}
	return &c
}

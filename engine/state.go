package engine

import (
	"encoding/json"
	"slices"
	"time"
)

// Task statuses. The first six are "open": the task is still running and
// blocks starting another in the worktree that owns it. The last three are
// "finished": the run is over and the task can be archived. StatusStashed
// (stash.go) marks a task whose state is parked in a stash.
const (
	// StatusInitializing is a task `git hegel run` has just created and
	// is setting up (taking its running record, storing its prompt,
	// context and values) before the first step; the run makes it active,
	// or failed when the setup fails (run.go).
	StatusInitializing     = "initializing"
	StatusActive           = "active"
	StatusAwaitingApproval = "awaiting_approval" // a gate: approve or reject
	StatusAwaitingAnswer   = "awaiting_answer"   // the agent asked the human a question; answer
	StatusPaused           = "paused"            // stopped on purpose, or after a rollback; resume or next
	StatusFailed           = "failed"            // attempts used up (ERROR in executions.jsonl); resume
	StatusCompleted        = "completed"
	StatusAborted          = "aborted"
	StatusRolledBack       = "rolled_back" // the whole workflow was rolled back (rollback --all)
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
	// EndedBy says what ended the run when no command on the task did:
	// "stash drop <id>" or "stash clear <id>" (the stash that held it was
	// dropped), "doctor" (no stash held it any more). stash restore reads
	// it to tell the run its drop ended from one ended otherwise.
	EndedBy string `json:"ended_by,omitempty"`
	// Worktree and WorktreeID name the worktree that owns the task (path
	// for people, id for matching), so a lost session file can be rebuilt
	// from the refs alone.
	Worktree   string `json:"worktree"`
	WorktreeID string `json:"worktree_id,omitempty"`
	// OwnerEmail is the git user.email of the person whose clone started
	// the task or took it last; parking keeps it (nobody took it over).
	// It travels with the task, so it is for people to read and for
	// refusing: which clone owns a task is decided by that clone's own
	// record (AdoptionRecord), never by this field.
	OwnerEmail string `json:"owner_email,omitempty"`

	TaskType        string                     `json:"task_type,omitempty"`
	Description     string                     `json:"description,omitempty"`
	Priority        string                     `json:"priority,omitempty"` // low, normal, high, urgent; "" reads as normal
	Attempt         int                        `json:"attempt"`
	LastFailure     string                     `json:"last_failure,omitempty"`
	RollbackHistory []RollbackEvent            `json:"rollback_history"`
	StepResults     map[string]json.RawMessage `json:"step_results,omitempty"`

	// Failures, gates and resume (seeds 04 and 05). All optional, so a
	// state.json written before they existed loads unchanged.
	Retries        map[string]int `json:"retries,omitempty"` // node -> failed attempts so far
	Error          *TaskError     `json:"error,omitempty"`   // set while status is failed
	CompletedNodes []string       `json:"completed_nodes,omitempty"`
	SkippedNodes   []SkippedNode  `json:"skipped_nodes,omitempty"`
	FailedNodes    []string       `json:"failed_nodes,omitempty"`
	PausedAt       *time.Time     `json:"paused_at,omitempty"`
	ResumedAt      *time.Time     `json:"resumed_at,omitempty"`
	Approvals      []Approval     `json:"approvals,omitempty"`
	Questions      []Question     `json:"questions,omitempty"`
	// PendingClaim is the claim `next` asked for at an approval gate:
	// approve moves on along it. PauseReason says why the task was paused.
	PendingClaim string `json:"pending_claim,omitempty"`
	PauseReason  string `json:"pause_reason,omitempty"`
	// Overrides records every --force that let a refused operation through
	// (a missing artifact, a guard rule, another worktree's task), so the
	// history shows what was bypassed and by whom.
	Overrides []Override `json:"overrides,omitempty"`
	// Cancelled is set when a `git hegel run` was cancelled; the task is
	// kept as it was.
	Cancelled bool `json:"cancelled,omitempty"`
	// PhaseLog records when each node was entered, newest last (at most
	// MaxPhaseLog): require_commits looks back over it and metrics time
	// the phases with it. History says where the task went; this says when.
	PhaseLog []PhaseVisit `json:"phase_log,omitempty"`
	// NodeAttempts counts the attempts started at each node over the
	// task's life (every entry, and every retry after a failed attempt),
	// so the history can give each node's failure rate: retries[node] of
	// node_attempts[node] failed.
	NodeAttempts map[string]int `json:"node_attempts,omitempty"`
	// StartBranch and StartHead are git's branch and HEAD when the run
	// started, for its history entry (which adds those at its end).
	StartBranch string `json:"start_branch,omitempty"`
	StartHead   string `json:"start_head,omitempty"`
	// ArtifactDir is the task's folder ({{task.dir}} in artifact paths),
	// fixed when it starts (artifacts.go).
	ArtifactDir string `json:"artifact_dir,omitempty"`
	// Submitted indexes, by node, the artifacts each node left when it
	// last ended; their content is in the task's tree under submitted/.
	Submitted map[string][]Submitted `json:"submitted,omitempty"`
	// FilesLocked are the paths this task owns (locks.go): another open
	// task is stopped before it edits them. Sync merges them as a set:
	// union with removal (MergeLocks).
	FilesLocked []FileLock `json:"files_locked,omitempty"`
	// Subphase is where the task is within its node's sub-phases
	// (subphase.go); "" when the node has none.
	Subphase string `json:"subphase,omitempty"`
	// NodeMoves records every node set by hand (goto.go).
	NodeMoves []NodeMove `json:"node_moves,omitempty"`
	// AwayLog records when the task left its worktree (stashed, parked)
	// and came back (away.go), oldest first: metrics leave that time out.
	AwayLog []AwayEvent `json:"away_log,omitempty"`
	// MetaMode names the meta-mode (a workflow of workflows, meta.go) the
	// task was started in; "" when it was started on its own. It is set
	// when the task starts and says which workflows are offered when it
	// is done; it never starts anything by itself.
	MetaMode string `json:"meta_mode,omitempty"`
}

// PhaseVisit is one entry into a node.
type PhaseVisit struct {
	Node  string    `json:"node"`
	Start time.Time `json:"start"`
	// Head is the commit HEAD was at when the phase started: the phase's
	// commits are the ones after it, which a commit made in the same
	// second just before the phase started is not.
	Head string `json:"head,omitempty"`
}

// MaxPhaseLog bounds the phase log so a long-looping task's state stays
// small; older visits are dropped.
const MaxPhaseLog = 250

// logPhase records entering st.CurrentNode at t, and reports whether
// that was a new visit.
func (s *State) logPhase(t time.Time) bool {
	if n := len(s.PhaseLog); n > 0 && s.PhaseLog[n-1].Node == s.CurrentNode && s.PhaseLog[n-1].Start.Equal(t) {
		return false // re-entering the same node at the same instant changes nothing
	}
	s.PhaseLog = append(s.PhaseLog, PhaseVisit{Node: s.CurrentNode, Start: t})
	if n := len(s.PhaseLog); n > MaxPhaseLog {
		s.PhaseLog = slices.Clone(s.PhaseLog[n-MaxPhaseLog:])
	}
	return true
}

// TaskError says why the task failed (state.json's "error").
type TaskError struct {
	Node        string    `json:"node"`
	Message     string    `json:"message"`
	Timestamp   time.Time `json:"timestamp"`
	Recoverable bool      `json:"recoverable"`
}

// SkippedNode records a node the task did not run, and why.
type SkippedNode struct {
	Node   string    `json:"node"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// Approval records a decision at an approval gate.
type Approval struct {
	Node     string    `json:"node"`
	By       string    `json:"by"`
	At       time.Time `json:"at"`
	Comment  string    `json:"comment,omitempty"`
	Rejected bool      `json:"rejected,omitempty"`
	// Artifacts are the node's submitted artifacts the decision was
	// about, by blob id, so a later change to them shows.
	Artifacts []ApprovedArtifact `json:"artifacts,omitempty"`
}

// ApprovedArtifact is one artifact as an approval saw it.
type ApprovedArtifact struct {
	Path string `json:"path"`
	Blob string `json:"blob"`
}

// Question is a clarification the agent asked and the human's answer.
type Question struct {
	Node       string     `json:"node"`
	Question   string     `json:"question"`
	Answer     string     `json:"answer,omitempty"`
	AskedAt    time.Time  `json:"asked_at"`
	AnsweredAt *time.Time `json:"answered_at,omitempty"`
}

// Override records one forced operation.
type Override struct {
	Node   string    `json:"node"`
	What   string    `json:"what"` // e.g. "artifact", "rule:require_commits", "owner"
	Reason string    `json:"reason,omitempty"`
	At     time.Time `json:"at"`
}

// RollbackEvent records one rollback; the history feeds the loop guard.
type RollbackEvent struct {
	Timestamp time.Time `json:"timestamp"`
	From      string    `json:"from"`
	To        string    `json:"to"`
	Reason    string    `json:"reason,omitempty"`
}

// TimeInPhase is the time spent in the current node until now; a
// finished run stops the clock.
func (s *State) TimeInPhase(now time.Time) time.Duration {
	end := now
	if s.EndedAt != nil {
		end = *s.EndedAt
	}
	return max(end.Sub(s.PhaseStartTime), 0)
}

// Active reports whether the task still blocks starting another workflow:
// it is running, waiting at a gate, paused or failed (open, not finished).
func (s *State) Active() bool {
	if s == nil {
		return false
	}
	switch s.Status {
	case StatusInitializing, StatusActive, StatusAwaitingApproval, StatusAwaitingAnswer, StatusPaused, StatusFailed:
		return true
	}
	return false
}

// Finished reports whether the run is over (completed, aborted or rolled
// back as a whole), so the task may be archived.
func (s *State) Finished() bool {
	if s == nil {
		return false
	}
	switch s.Status {
	case StatusCompleted, StatusAborted, StatusRolledBack:
		return true
	}
	return false
}

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
	c.Retries = cloneCounts(s.Retries)
	c.NodeAttempts = cloneCounts(s.NodeAttempts)
	if s.Error != nil {
		e := *s.Error
		c.Error = &e
	}
	c.CompletedNodes = cloneSlice(s.CompletedNodes)
	c.SkippedNodes = cloneSlice(s.SkippedNodes)
	c.FailedNodes = cloneSlice(s.FailedNodes)
	c.Approvals = cloneSlice(s.Approvals)
	if s.Submitted != nil {
		c.Submitted = make(map[string][]Submitted, len(s.Submitted))
		for k, v := range s.Submitted {
			c.Submitted[k] = cloneSlice(v)
		}
	}
	c.Overrides = cloneSlice(s.Overrides)
	c.PhaseLog = cloneSlice(s.PhaseLog)
	c.FilesLocked = cloneSlice(s.FilesLocked)
	c.NodeMoves = cloneSlice(s.NodeMoves)
	c.AwayLog = cloneSlice(s.AwayLog)
	c.PausedAt = clonePtr(s.PausedAt)
	c.ResumedAt = clonePtr(s.ResumedAt)
	if s.Questions != nil {
		c.Questions = make([]Question, len(s.Questions))
		for i, q := range s.Questions {
			q.AnsweredAt = clonePtr(q.AnsweredAt)
			c.Questions[i] = q
		}
	}
	return &c
}

// cloneSlice copies a slice of plain values; nil stays nil so omitempty
// fields stay absent.
func cloneSlice[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}

func cloneCounts(m map[string]int) map[string]int {
	if m == nil {
		return nil
	}
	c := make(map[string]int, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// countAttempt records that an attempt at node started.
func (s *State) countAttempt(node string) {
	if s.NodeAttempts == nil {
		s.NodeAttempts = map[string]int{}
	}
	s.NodeAttempts[node]++
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/git-hegel/git-hegel/engine"
)

// The --json output types. They are the documented, stable schema
// (docs/json.md): fields are only ever added, never renamed or removed, and
// they are separate from the stored formats so those can change freely.

// statusJSON is status --json; schema 2 names the task "task", as show
// does (statusJSON2), schema 1 "workflow".
type statusJSON struct {
	Schema   int           `json:"schema"`
	Workflow *workflowJSON `json:"workflow"` // null: no workflow in this worktree
	statusRest
}

// statusJSON2 is statusJSON in schema 2.
type statusJSON2 struct {
	Schema int           `json:"schema"`
	Task   *workflowJSON `json:"task"` // null: no workflow in this worktree
	statusRest
}

// statusRest is what both schemas of status --json share.
type statusRest struct {
	Git              gitJSON `json:"git"`
	UncommittedFiles *int    `json:"uncommitted_files,omitempty"` // only with -v
	// Damaged is this worktree's task when it cannot be read (the task
	// is then null).
	Damaged *damagedJSON `json:"damaged,omitempty"`
	// Running is whether a git hegel run drives the task now; step,
	// total_steps and current_step are where that run is.
	Running     bool     `json:"running"`
	Step        int      `json:"step,omitempty"`
	TotalSteps  int      `json:"total_steps,omitempty"`
	CurrentStep string   `json:"current_step,omitempty"`
	Run         *runJSON `json:"run,omitempty"`
	// RollbackAvailable says whether the task has a checkpoint to go
	// back to (false without a task).
	RollbackAvailable bool `json:"rollback_available"`
	// WorkflowFileChanged says whether the worktree's definition of the
	// task's workflow differs from the one the task runs (git hegel
	// upgrade adopts it); false without a task.
	WorkflowFileChanged bool `json:"workflow_file_changed"`
	// NextWorkflows are the workflows git hegel next-workflow may start:
	// present only when the task was started in a meta-mode defined here
	// and is done.
	NextWorkflows []string `json:"next_workflows,omitempty"`
}

// runJSON describes the git hegel run that drives a task, or the one a
// killed run left behind (alive false).
type runJSON struct {
	PID           int       `json:"pid"`
	Host          string    `json:"host"`
	Alive         bool      `json:"alive"`
	Worktree      string    `json:"worktree"`
	StartedAt     time.Time `json:"started_at"`
	StepStartedAt time.Time `json:"step_started_at"`
	Seconds       *int64    `json:"seconds,omitempty"` // schema 1
	TimeMS        *int64    `json:"time_ms,omitempty"` // schema 2
}

// resultJSON is `git hegel result <node> --json`.
type resultJSON struct {
	Schema               int       `json:"schema"`
	Task                 string    `json:"task"`
	Node                 string    `json:"node"`
	Handler              string    `json:"handler"`
	At                   time.Time `json:"at"`
	Seconds              *float64  `json:"seconds,omitempty"`     // schema 1
	DurationMS           *int64    `json:"duration_ms,omitempty"` // schema 2
	Bytes                int64     `json:"bytes"`
	Truncated            bool      `json:"truncated"`
	Exit                 int       `json:"exit"`
	Error                string    `json:"error,omitempty"`
	Files                []string  `json:"files"`
	RequiresConfirmation bool      `json:"requires_confirmation"`
	Result               string    `json:"result"`
}

// damagedJSON is a task whose ref cannot be read.
type damagedJSON struct {
	Task    string `json:"task"`
	Ref     string `json:"ref"`
	Problem string `json:"problem"`
}

type workflowJSON struct {
	Task     string `json:"task"`
	Workflow string `json:"workflow"`
	Mode     string `json:"mode"`
	// ArtifactDir is the task's folder for its files ({{task.dir}}).
	ArtifactDir    string     `json:"artifact_dir"`
	Status         string     `json:"status"`
	CurrentNode    string     `json:"current_node"`
	History        []string   `json:"history"`
	WorkflowID     string     `json:"workflow_id"`
	StartedAt      time.Time  `json:"started_at"`
	PhaseStartedAt time.Time  `json:"phase_started_at"`
	SecondsInPhase *int64     `json:"seconds_in_phase,omitempty"` // schema 1
	TimeInPhaseMS  *int64     `json:"time_in_phase_ms,omitempty"` // schema 2
	EndedAt        *time.Time `json:"ended_at,omitempty"`

	// Tasks, failures and gates. Optional fields are left out when empty.
	TaskType        string                 `json:"task_type,omitempty"`
	Description     string                 `json:"description,omitempty"`
	Priority        string                 `json:"priority"`
	UpdatedAt       time.Time              `json:"updated_at"`
	Worktree        string                 `json:"worktree"` // the owner's path; "" when parked
	OwnerEmail      string                 `json:"owner_email,omitempty"`
	Archived        bool                   `json:"archived,omitempty"`
	Attempt         int                    `json:"attempt"`
	MaxAttempts     int                    `json:"max_attempts,omitempty"`
	LastFailure     string                 `json:"last_failure,omitempty"`
	Retries         map[string]int         `json:"retries,omitempty"`
	Error           *engine.TaskError      `json:"error,omitempty"`
	CompletedNodes  []string               `json:"completed_nodes,omitempty"`
	SkippedNodes    []engine.SkippedNode   `json:"skipped_nodes,omitempty"`
	FailedNodes     []string               `json:"failed_nodes,omitempty"`
	PausedAt        *time.Time             `json:"paused_at,omitempty"`
	PauseReason     string                 `json:"pause_reason,omitempty"`
	ResumedAt       *time.Time             `json:"resumed_at,omitempty"`
	PendingClaim    string                 `json:"pending_claim,omitempty"`
	Approvals       []engine.Approval      `json:"approvals,omitempty"`
	Questions       []engine.Question      `json:"questions,omitempty"`
	RollbackHistory []engine.RollbackEvent `json:"rollback_history,omitempty"`
	Overrides       []engine.Override      `json:"overrides,omitempty"`
	// Cancelled: the task's last git hegel run was cancelled.
	Cancelled bool `json:"cancelled,omitempty"`
	// FilesLocked are the paths the task has locked (an open task's).
	FilesLocked []engine.FileLock `json:"files_locked,omitempty"`
	// NodeMoves are the nodes set by hand (git hegel goto).
	NodeMoves []engine.NodeMove `json:"node_moves,omitempty"`
	// Subphase is where the task is within its node's sub-phases.
	Subphase string `json:"subphase,omitempty"`
	// MetaMode is the meta-mode the task was started in.
	MetaMode string `json:"meta_mode,omitempty"`
	// Rounds are each node's entries and how each ended (engine.Rounds).
	Rounds map[string][]engine.Round `json:"rounds,omitempty"`
	// complete becomes one "<node>_complete" key per node entered
	// (MarshalJSON).
	complete map[string]bool
}

// MarshalJSON adds the "<node>_complete" booleans (from completed_nodes)
// after the fixed fields, sorted by node. No fixed key ends in
// "_complete", so a node's name cannot collide with one.
func (w workflowJSON) MarshalJSON() ([]byte, error) {
	type plain workflowJSON
	b, err := json.Marshal(plain(w))
	if err != nil || len(w.complete) == 0 {
		return b, err
	}
	var buf bytes.Buffer
	buf.Write(b[:len(b)-1])
	nodes := make([]string, 0, len(w.complete))
	for n := range w.complete {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	for _, n := range nodes {
		k, _ := json.Marshal(n + "_complete")
		fmt.Fprintf(&buf, ",%s:%t", k, w.complete[n])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// taskJSON is the task part of status and show --json in schema.
func taskJSON(st *engine.State, now time.Time, schema int) *workflowJSON {
	priority := engine.TaskPriority(st)
	j := &workflowJSON{
		Task: st.Task, Workflow: st.Workflow, Mode: st.Mode, Status: st.Status, ArtifactDir: engine.TaskDir(st),
		CurrentNode: st.CurrentNode, History: nonNil(st.History), WorkflowID: st.WorkflowID,
		StartedAt: st.StartedAt, PhaseStartedAt: st.PhaseStartTime, EndedAt: st.EndedAt,
		TaskType: st.TaskType, Description: st.Description, Priority: priority, UpdatedAt: st.UpdatedAt,
		Worktree: st.Worktree, OwnerEmail: st.OwnerEmail, Attempt: max(st.Attempt, 1), LastFailure: st.LastFailure, Retries: st.Retries, Error: st.Error,
		CompletedNodes: st.CompletedNodes, SkippedNodes: st.SkippedNodes, FailedNodes: st.FailedNodes,
		PausedAt: st.PausedAt, PauseReason: st.PauseReason, ResumedAt: st.ResumedAt, PendingClaim: st.PendingClaim,
		Approvals: st.Approvals, Questions: st.Questions, RollbackHistory: st.RollbackHistory, Overrides: st.Overrides,
		Cancelled: st.Cancelled, FilesLocked: st.FilesLocked, NodeMoves: st.NodeMoves,
		Subphase: st.Subphase, MetaMode: st.MetaMode, Rounds: engine.Rounds(st, nil), complete: engine.NodesComplete(st),
	}
	if schema >= 2 {
		j.TimeInPhaseMS = ptr(st.TimeInPhase(now).Milliseconds())
	} else {
		j.SecondsInPhase = ptr(int64(st.TimeInPhase(now).Seconds()))
	}
	return j
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

type tasksJSON struct {
	Schema int            `json:"schema"`
	Tasks  []taskLineJSON `json:"tasks"`
}

// taskLineJSON is one task of `tasks --json`.
type taskLineJSON struct {
	Task        string    `json:"task"`
	Workflow    string    `json:"workflow"`
	Mode        string    `json:"mode"`
	CurrentNode string    `json:"current_node"`
	Status      string    `json:"status"`
	TaskType    string    `json:"task_type,omitempty"`
	Priority    string    `json:"priority"`
	Description string    `json:"description,omitempty"`
	Worktree    string    `json:"worktree"` // "" when parked
	Mine        bool      `json:"mine"`     // owned by this worktree
	Current     bool      `json:"current"`  // this worktree's active task
	Archived    bool      `json:"archived"`
	OwnerEmail  string    `json:"owner_email,omitempty"`
	UpdatedAt   time.Time `json:"updated_at"`
	// Damaged says why the task could not be read; the other fields are
	// then empty.
	Damaged string `json:"damaged,omitempty"`
}

type showJSON struct {
	Schema      int              `json:"schema"`
	Task        *workflowJSON    `json:"task"`
	Artifacts   []artifactJSON   `json:"artifacts"`
	Checkpoints []checkpointJSON `json:"checkpoints"` // schema 2: null when unreadable
	// CheckpointsError says why the checkpoints cannot be read.
	CheckpointsError string                     `json:"checkpoints_error,omitempty"`
	StepResults      map[string]json.RawMessage `json:"step_results"`
	Problems         []string                   `json:"problems"`
	// Warnings: artifacts that changed after they were approved.
	Warnings []string `json:"warnings"`
	// Metadata is what the run used so far (null when it cannot be
	// read: MetadataError says why).
	Metadata      *engine.RunMetadata `json:"metadata"`
	MetadataError string              `json:"metadata_error,omitempty"`
}

type artifactJSON struct {
	Node    string `json:"node"`
	Path    string `json:"path"`
	Present bool   `json:"present"`
	Size    int64  `json:"size"`
	Skipped bool   `json:"skipped"` // the node was skipped, or the task's type skips it
	Pending bool   `json:"pending"` // the node has not ended yet
	// Submitted is the copy the node left in the task's ref when it
	// ended; null when there is none.
	Submitted *submittedJSON `json:"submitted"`
}

type submittedJSON struct {
	Blob string    `json:"blob"`
	Size int64     `json:"size"`
	At   time.Time `json:"at"`
}

type deletedJSON struct {
	Schema  int                   `json:"schema"`
	Deleted []*engine.DeletedTask `json:"deleted"`
}

type gitJSON struct {
	Branch string `json:"branch"` // "" when HEAD is detached
	Head   string `json:"head"`   // "" on an unborn branch
}

type workflowsJSON struct {
	Schema    int               `json:"schema"`
	Workflows []workflowDefJSON `json:"workflows"`
	Broken    []brokenJSON      `json:"broken"` // files that could not be loaded
}

type workflowDefJSON struct {
	Name            string              `json:"name"`
	Mode            string              `json:"mode"`
	Source          string              `json:"source"`
	StartNode       string              `json:"start_node"`
	Nodes           []nodeJSON          `json:"nodes"`
	TaskTypes       []string            `json:"task_types"`
	DefaultTaskType string              `json:"default_task_type,omitempty"`
	Skips           map[string][]string `json:"skips"`           // task type -> nodes it skips
	Title           string              `json:"title,omitempty"` // hegel's top-level name
	// Runnable: git hegel run can take it from start to end (every node
	// has a handler).
	Runnable bool `json:"runnable"`
}

// workflowJSONOne is `git hegel workflows <name> --json`.
type workflowJSONOne struct {
	Schema   int             `json:"schema"`
	Workflow workflowDefJSON `json:"workflow"`
}

type nodeJSON struct {
	Name        string           `json:"name"`
	Summary     string           `json:"summary"`
	Transitions []transitionJSON `json:"transitions"`
	DisplayName string           `json:"display_name,omitempty"`
	Description string           `json:"description,omitempty"`
	Artifact    string           `json:"artifact,omitempty"`  // the first of artifacts
	Artifacts   []string         `json:"artifacts,omitempty"` // as written, task fields not filled in
	Produces    []string         `json:"produces,omitempty"`  // kept like artifacts, not required
	Requires    []string         `json:"requires,omitempty"`
	Conditional bool             `json:"conditional,omitempty"`
	SkipFor     []string         `json:"skip_for,omitempty"`
	Gate        string           `json:"gate,omitempty"`
	Approvers   []string         `json:"approvers,omitempty"`
	MaxAttempts int              `json:"max_attempts"` // its own, or hegel.maxAttempts' default
	Terminal    bool             `json:"terminal"`     // no transitions: reaching it ends the run
	Rules       []ruleJSON       `json:"rules"`
	Run         *handlerJSON     `json:"run,omitempty"` // the step runner's handler
	Checks      []string         `json:"checks"`        // check commands, as written
}

// handlerJSON is a node's run: handler.
type handlerJSON struct {
	Kind    string `json:"kind"`              // adapter, command or confirm
	Adapter string `json:"adapter,omitempty"` // "default": the run's adapter
	Text    string `json:"text,omitempty"`    // the command or the question, as written
	Timeout string `json:"timeout,omitempty"` // a Go duration
}

type ruleJSON struct {
	Type           string `json:"type"`
	LookbackPhases int    `json:"lookback_phases,omitempty"`
	Pattern        string `json:"pattern,omitempty"`
	PathPattern    string `json:"path_pattern,omitempty"`
	Threshold      int    `json:"threshold,omitempty"`
	Window         int    `json:"window,omitempty"`
	MaxDuration    int    `json:"max_duration,omitempty"`
	MaxTokens      int64  `json:"max_tokens,omitempty"`
}

type brokenJSON struct {
	Name   string `json:"name"` // "" when the file name gives none
	Source string `json:"source"`
	Error  string `json:"error"`
}

type transitionJSON struct {
	When    string `json:"when"`
	To      string `json:"to"`
	Confirm bool   `json:"confirm,omitempty"`
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

type guidesJSON struct {
	Schema int         `json:"schema"`
	Guides []guideJSON `json:"guides"`
}

type guideJSON struct {
	Schema    int    `json:"schema,omitempty"` // set when a single guide is printed
	Name      string `json:"name"`
	Source    string `json:"source"`
	Title     string `json:"title"`
	Overrides bool   `json:"overrides_builtin,omitempty"`
	Text      string `json:"text,omitempty"`
}

// syncJSON is the --json output of fetch, push and sync.
type syncJSON struct {
	Schema    int    `json:"schema"`
	Operation string `json:"operation"` // fetch, push or sync
	Remote    string `json:"remote"`
	// OK: everything was fetched, merged and pushed as asked; false when
	// refs were refused or the command failed (see refused, error).
	OK              bool            `json:"ok"`
	ReceivedObjects int             `json:"received_objects"`
	SentObjects     int             `json:"sent_objects"`
	Merged          syncMergedJSON  `json:"merged"`
	Pushed          []string        `json:"pushed"`
	PushRetries     int             `json:"push_retries"`
	Refused         []syncIssueJSON `json:"refused"`
	Skipped         []syncIssueJSON `json:"skipped"`
	Warnings        []string        `json:"warnings"`
	Notes           []string        `json:"notes"`
	Error           string          `json:"error,omitempty"`
}

type syncMergedJSON struct {
	Stashes            syncCountsJSON `json:"stashes"`
	History            syncCountsJSON `json:"history"`
	Checkpoints        syncCountsJSON `json:"checkpoints"`
	Tasks              []syncTaskJSON `json:"tasks"`
	CheckpointsUpdated []string       `json:"checkpoints_updated"`
	CheckpointsKept    []string       `json:"checkpoints_kept"`
}

type syncCountsJSON struct {
	Added     int `json:"added"`
	Dropped   int `json:"dropped"`
	Conflicts int `json:"conflicts"`
}

type syncTaskJSON struct {
	Task   string `json:"task"`
	Change string `json:"change"` // added, fast-forwarded, merged, conflicted
	// FromOurs and FromTheirs: for a merged task, the fields each side
	// brought; Conflicts the fields both changed differently, Resolved
	// the side they were taken from ("" when the task stopped).
	FromOurs   []string           `json:"from_ours,omitempty"`
	FromTheirs []string           `json:"from_theirs,omitempty"`
	Conflicts  []syncConflictJSON `json:"conflicts,omitempty"`
	Resolved   string             `json:"resolved,omitempty"`
	// Unrelated: the two versions share no history (each clone started
	// its own task of that name).
	Unrelated bool          `json:"unrelated,omitempty"`
	Held      *syncHeldJSON `json:"held,omitempty"`
	// Archived: the change was to the task's archive ref (it finished).
	Archived bool `json:"archived,omitempty"`
	// Definition: the fetch brought a task this clone holds a workflow
	// definition it did not have.
	Definition *syncDefinitionJSON `json:"definition,omitempty"`
}

// syncConflictJSON is one field both sides of a task changed differently.
type syncConflictJSON struct {
	Field  string `json:"field"`
	Ours   string `json:"ours"`
	Theirs string `json:"theirs"`
}

// syncDefinitionJSON is a workflow definition a fetch brought: its blob
// id, and whether this machine trusts it (git hegel trust).
type syncDefinitionJSON struct {
	ID      string `json:"id"`
	Trusted bool   `json:"trusted"`
}

type syncHeldJSON struct {
	Worktree    string `json:"worktree"`
	WorktreeID  string `json:"worktree_id"`
	Node        string `json:"node"`
	Status      string `json:"status"`
	Owner       string `json:"owner,omitempty"`
	OwnerPath   string `json:"owner_path,omitempty"`
	YoursStash  string `json:"yours_stash,omitempty"`
	StillActive bool   `json:"still_active"`
	// For a task the remote archived while it was open here.
	WasNode    string `json:"was_node,omitempty"`
	ArchivedBy string `json:"archived_by,omitempty"`
}

type syncIssueJSON struct {
	Ref    string `json:"ref"`
	Reason string `json:"reason"`
	Check  string `json:"check,omitempty"`
	// RemovedTrackingRef: the tracking ref a plain git fetch had written
	// with the refused data, removed.
	RemovedTrackingRef string `json:"removed_tracking_ref,omitempty"`
}

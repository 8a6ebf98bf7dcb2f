package main

import (
	"encoding/json"
	"io"
	"time"
)

// The --json output types. They are the documented, stable schema
// (docs/json.md): fields are only ever added, never renamed or removed, and
// they are separate from the stored formats so those can change freely.

const jsonSchemaVersion = 1

type statusJSON struct {
	Schema           int           `json:"schema"`
	Workflow         *workflowJSON `json:"workflow"` // null: no workflow in this worktree
	Git              gitJSON       `json:"git"`
	UncommittedFiles *int          `json:"uncommitted_files,omitempty"` // only with -v
}

type workflowJSON struct {
	Task           string     `json:"task"`
	Workflow       string     `json:"workflow"`
	Mode           string     `json:"mode"`
	Status         string     `json:"status"`
	CurrentNode    string     `json:"current_node"`
	History        []string   `json:"history"`
	WorkflowID     string     `json:"workflow_id"`
	StartedAt      time.Time  `json:"started_at"`
	PhaseStartedAt time.Time  `json:"phase_started_at"`
	SecondsInPhase int64      `json:"seconds_in_phase"`
	EndedAt        *time.Time `json:"ended_at,omitempty"`
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
	Name      string     `json:"name"`
	Mode      string     `json:"mode"`
	Source    string     `json:"source"`
	StartNode string     `json:"start_node"`
	Nodes     []nodeJSON `json:"nodes"`
	Title     string     `json:"title,omitempty"` // hegel's top-level name
}

type nodeJSON struct {
	Name        string           `json:"name"`
	Summary     string           `json:"summary"`
	Transitions []transitionJSON `json:"transitions"`
	Terminal    bool             `json:"terminal"` // no transitions: reaching it ends the run
	Rules       []ruleJSON       `json:"rules"`
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
	When string `json:"when"`
	To   string `json:"to"`
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
	Task   string        `json:"task"`
	Change string        `json:"change"`          // added, fast-forwarded, diverged
	Stash  string        `json:"stash,omitempty"` // diverged: the stash holding the remote's version
	Held   *syncHeldJSON `json:"held,omitempty"`
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
}

type syncIssueJSON struct {
	Ref    string `json:"ref"`
	Reason string `json:"reason"`
	Check  string `json:"check,omitempty"`
}

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
}

type workflowDefJSON struct {
	Name      string     `json:"name"`
	Mode      string     `json:"mode"`
	Source    string     `json:"source"`
	StartNode string     `json:"start_node"`
	Nodes     []nodeJSON `json:"nodes"`
}

type nodeJSON struct {
	Name        string           `json:"name"`
	Summary     string           `json:"summary"`
	Transitions []transitionJSON `json:"transitions"`
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

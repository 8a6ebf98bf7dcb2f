package main

import (
	"time"

	"github.com/git-hegel/git-hegel/engine"
)

// --json of log and stats, and log's --format=jsonl (docs/json.md).

type logJSON struct {
	Schema     int             `json:"schema"`
	Executions []executionJSON `json:"executions"`
}

// executionJSON is one run: a history entry, or an open task (open true,
// no id and no end).
type executionJSON struct {
	ID             string                 `json:"id,omitempty"`
	Open           bool                   `json:"open"`
	Task           string                 `json:"task"`
	Workflow       string                 `json:"workflow"`
	Mode           string                 `json:"mode,omitempty"`
	Description    string                 `json:"description,omitempty"`
	TaskType       string                 `json:"task_type,omitempty"`
	Status         string                 `json:"status"`
	StartedAt      time.Time              `json:"started_at"`
	EndedAt        *time.Time             `json:"ended_at"`
	DurationMS     int64                  `json:"duration_ms"`
	NodesCompleted []string               `json:"nodes_completed"`
	NodesFailed    []string               `json:"nodes_failed"`
	NodesSkipped   []string               `json:"nodes_skipped"`
	Attempts       int                    `json:"attempts"`
	Rollbacks      int                    `json:"rollbacks"`
	Error          string                 `json:"error,omitempty"`
	Worktree       string                 `json:"worktree,omitempty"`
	User           string                 `json:"user,omitempty"`
	Start          gitPointJSON           `json:"start"`
	End            gitPointJSON           `json:"end"`
	Nodes          map[string]nodeRunJSON `json:"nodes"`
	// Metadata is what the run used (absent for open tasks and runs
	// recorded before it was kept).
	Metadata *engine.RunMetadata `json:"metadata,omitempty"`
}

type gitPointJSON struct {
	Branch string `json:"branch,omitempty"`
	Head   string `json:"head,omitempty"`
}

type nodeRunJSON struct {
	TimeMS   int64 `json:"time_ms"`
	Visits   int   `json:"visits"`
	Attempts int   `json:"attempts"`
	Retries  int   `json:"retries"`
	Failed   bool  `json:"failed"`
}

func executionOf(r engine.LogRecord) executionJSON {
	h := r.HistoryEntry
	j := executionJSON{ID: h.ID, Open: r.Open, Task: h.Task, Workflow: h.Workflow, Mode: h.Mode, Description: h.Description,
		TaskType: h.TaskType, Status: h.Status, StartedAt: h.StartedAt.UTC(), DurationMS: h.DurationMS,
		NodesCompleted: orEmpty(h.Completed), NodesFailed: orEmpty(h.Failed), NodesSkipped: orEmpty(h.Skipped),
		Attempts: h.Attempts, Rollbacks: h.Rollbacks, Error: h.Error, Worktree: h.Worktree, User: h.User,
		Start: gitPointJSON(h.Start), End: gitPointJSON(h.End), Nodes: map[string]nodeRunJSON{}, Metadata: h.Metadata}
	if !r.Open {
		end := h.EndedAt.UTC()
		j.EndedAt = &end
	}
	for n, v := range h.Nodes {
		j.Nodes[n] = nodeRunJSON(v)
	}
	return j
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// jsonlExecutionJSON is one line of --format=jsonl: the executions.jsonl
// layout earlier workflow tools wrote (names, units in milliseconds), so
// tools written for it read git-hegel's history.
type jsonlExecutionJSON struct {
	ID              string `json:"id"`
	WorkflowName    string `json:"workflowName"`
	UserTask        string `json:"userTask"`
	Status          string `json:"status"`
	Duration        *int64 `json:"duration"`
	PhasesCompleted int    `json:"phasesCompleted"`
	PhasesFailed    int    `json:"phasesFailed"`
	PhasesSkipped   int    `json:"phasesSkipped"`
	Timestamp       int64  `json:"timestamp"`
	// PluginsUsed are the coding agents the hooks saw, MCPsUsed the MCP
	// servers they called (empty for open tasks and older entries).
	PluginsUsed []string `json:"pluginsUsed"`
	MCPsUsed    []string `json:"mcpsUsed"`
	Error       *string  `json:"error"`
}

// jsonlStatus is a status as executions.jsonl names it.
var jsonlStatus = map[string]string{
	engine.StatusCompleted: "COMPLETED", engine.StatusFailed: "ERROR", engine.StatusRolledBack: "ROLLBACK",
	engine.StatusAborted: "ABORTED", engine.StatusActive: "EXECUTING", engine.StatusPaused: "PAUSED",
	engine.StatusAwaitingApproval: "PAUSED", engine.StatusAwaitingAnswer: "PAUSED", engine.StatusInitializing: "INITIALIZING",
}

func jsonlExecutionOf(r engine.LogRecord) jsonlExecutionJSON {
	h := r.HistoryEntry
	j := jsonlExecutionJSON{ID: h.ID, WorkflowName: h.Workflow, UserTask: h.Description, Status: jsonlStatus[h.Status],
		PhasesCompleted: len(h.Completed), PhasesFailed: len(h.Failed), PhasesSkipped: len(h.Skipped),
		Timestamp: h.StartedAt.UnixMilli(), PluginsUsed: []string{}, MCPsUsed: []string{}}
	if m := h.Metadata; m != nil {
		for _, a := range m.Agents {
			j.PluginsUsed = append(j.PluginsUsed, a.Name)
		}
		j.MCPsUsed = orEmpty(m.MCPServers)
	}
	if j.UserTask == "" {
		j.UserTask = h.Task
	}
	if j.Status == "" {
		j.Status = h.Status
	}
	if r.Open {
		j.ID = h.Task // no history id before the run ends
	} else {
		d := h.DurationMS
		j.Duration = &d
	}
	if h.Error != "" {
		e := h.Error
		j.Error = &e
	}
	return j
}

type taskLogJSON struct {
	Schema     int          `json:"schema"`
	Task       string       `json:"task"`
	Ref        string       `json:"ref"`
	Operations []taskOpJSON `json:"operations"` // newest first
}

type taskOpJSON struct {
	Commit  string    `json:"commit"`
	Time    time.Time `json:"time"`
	Op      string    `json:"op"`
	From    string    `json:"from"`
	To      string    `json:"to"`
	Claim   string    `json:"claim,omitempty"`
	Status  string    `json:"status"`
	Who     string    `json:"who"`
	Message string    `json:"message"`
}

type statsJSON struct {
	Schema    int           `json:"schema"`
	From      time.Time     `json:"from"`
	To        time.Time     `json:"to"`
	By        string        `json:"by,omitempty"`
	Summaries []summaryJSON `json:"summaries"`
	// HistoryOff is set when hegel.history is false: runs that end are
	// not recorded, so the summaries miss them.
	HistoryOff bool `json:"history_off,omitempty"`
}

// summaryJSON is a summary in schema 1: the daily summary layout earlier
// workflow tools wrote (camelCase, durations in milliseconds, a rate from
// 0 to 1), plus the counts and per-node figures git-hegel adds.
type summaryJSON struct {
	Group               string         `json:"group"`
	Date                string         `json:"date,omitempty"` // when the group is one day
	From                time.Time      `json:"from"`
	To                  time.Time      `json:"to"`
	TotalWorkflows      int            `json:"totalWorkflows"`
	CompletedWorkflows  int            `json:"completedWorkflows"`
	FailedWorkflows     int            `json:"failedWorkflows"`
	AbortedWorkflows    int            `json:"abortedWorkflows"`
	RolledBackWorkflows int            `json:"rolledBackWorkflows"`
	ActiveWorkflows     int            `json:"activeWorkflows"`
	TotalDuration       int64          `json:"totalDuration"`
	AverageDuration     int64          `json:"averageDuration"`
	WorkflowBreakdown   map[string]int `json:"workflowBreakdown"`
	MostUsedWorkflow    string         `json:"mostUsedWorkflow"`
	SuccessRate         float64        `json:"successRate"`
	Nodes               []nodeStatJSON `json:"nodes"`
}

type nodeStatJSON struct {
	Workflow       string  `json:"workflow"`
	Node           string  `json:"node"`
	Runs           int     `json:"runs"`
	MedianDuration int64   `json:"medianDuration"`
	Attempts       int     `json:"attempts"`
	Retries        int     `json:"retries"`
	FailureRate    float64 `json:"failureRate"`
}

func summaryOf(s engine.Summary, by string) summaryJSON {
	j := summaryJSON{Group: s.Label, From: s.From.UTC(), To: s.To.UTC(), TotalWorkflows: s.Total, CompletedWorkflows: s.Completed,
		FailedWorkflows: s.Failed, AbortedWorkflows: s.Aborted, RolledBackWorkflows: s.RolledBack, ActiveWorkflows: s.Active,
		TotalDuration: s.TotalMS, AverageDuration: s.AverageMS, WorkflowBreakdown: s.Workflows, MostUsedWorkflow: s.MostUsed,
		SuccessRate: s.SuccessRate, Nodes: []nodeStatJSON{}}
	if by == engine.ByDay || (by == "" && len(s.Label) == len(engine.HistoryDayLayout)) {
		j.Date = s.Label
	}
	for _, n := range s.Nodes {
		j.Nodes = append(j.Nodes, nodeStatJSON{Workflow: n.Workflow, Node: n.Node, Runs: n.Runs, MedianDuration: n.MedianMS,
			Attempts: n.Attempts, Retries: n.Retries, FailureRate: n.FailureRate})
	}
	return j
}

// statsJSON2 is stats --json=2: snake_case, durations in milliseconds
// named so.
type statsJSON2 struct {
	Schema    int            `json:"schema"`
	From      time.Time      `json:"from"`
	To        time.Time      `json:"to"`
	By        string         `json:"by,omitempty"`
	Summaries []summaryJSON2 `json:"summaries"`
	// HistoryOff: as in statsJSON.
	HistoryOff bool `json:"history_off,omitempty"`
}

type summaryJSON2 struct {
	Group               string          `json:"group"`
	Date                string          `json:"date,omitempty"`
	From                time.Time       `json:"from"`
	To                  time.Time       `json:"to"`
	TotalWorkflows      int             `json:"total_workflows"`
	CompletedWorkflows  int             `json:"completed_workflows"`
	FailedWorkflows     int             `json:"failed_workflows"`
	AbortedWorkflows    int             `json:"aborted_workflows"`
	RolledBackWorkflows int             `json:"rolled_back_workflows"`
	ActiveWorkflows     int             `json:"active_workflows"`
	TotalDurationMS     int64           `json:"total_duration_ms"`
	AverageDurationMS   int64           `json:"average_duration_ms"`
	WorkflowBreakdown   map[string]int  `json:"workflow_breakdown"`
	MostUsedWorkflow    string          `json:"most_used_workflow"`
	SuccessRate         float64         `json:"success_rate"`
	Nodes               []nodeStatJSON2 `json:"nodes"`
}

type nodeStatJSON2 struct {
	Workflow         string  `json:"workflow"`
	Node             string  `json:"node"`
	Runs             int     `json:"runs"`
	MedianDurationMS int64   `json:"median_duration_ms"`
	Attempts         int     `json:"attempts"`
	Retries          int     `json:"retries"`
	FailureRate      float64 `json:"failure_rate"`
}

func summaryOf2(s engine.Summary, by string) summaryJSON2 {
	v1 := summaryOf(s, by)
	j := summaryJSON2{Group: v1.Group, Date: v1.Date, From: v1.From, To: v1.To, TotalWorkflows: v1.TotalWorkflows,
		CompletedWorkflows: v1.CompletedWorkflows, FailedWorkflows: v1.FailedWorkflows, AbortedWorkflows: v1.AbortedWorkflows,
		RolledBackWorkflows: v1.RolledBackWorkflows, ActiveWorkflows: v1.ActiveWorkflows, TotalDurationMS: v1.TotalDuration,
		AverageDurationMS: v1.AverageDuration, WorkflowBreakdown: v1.WorkflowBreakdown, MostUsedWorkflow: v1.MostUsedWorkflow,
		SuccessRate: v1.SuccessRate, Nodes: []nodeStatJSON2{}}
	for _, n := range v1.Nodes {
		j.Nodes = append(j.Nodes, nodeStatJSON2{Workflow: n.Workflow, Node: n.Node, Runs: n.Runs, MedianDurationMS: n.MedianDuration,
			Attempts: n.Attempts, Retries: n.Retries, FailureRate: n.FailureRate})
	}
	return j
}

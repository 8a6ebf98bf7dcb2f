package engine

import (
	"slices"
	"strings"
	"time"

	"github.com/git-hegel/git-hegel/engine/agent"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

// Run metadata: what a run used, gathered from what git-hegel already
// records (the agent events the hooks journal, the definition, the
// history), never from a separate record, so it is the same on every
// clone the task reaches.

// RunMetadata describes one run of a task.
type RunMetadata struct {
	// Version is the git-hegel that reads it (show) or wrote the entry
	// (history).
	Version string `json:"version,omitempty"`
	// Agents are the coding agents seen through the hooks, each with the
	// models its payloads named, in the order first seen.
	Agents []AgentSeen `json:"agents"`
	// MCPServers are the MCP servers whose tools the agents called, and
	// Tools every tool name called, both sorted.
	MCPServers []string `json:"mcps_used"`
	Tools      []string `json:"tools_used"`
	// TotalNodes counts the workflow's nodes, end nodes left out.
	TotalNodes int `json:"total_nodes"`
	// EstimatedDurationMS is the median duration of the last completed
	// runs of the same workflow (nil: none yet, or the run has ended).
	// Only show fills it in.
	EstimatedDurationMS *int64 `json:"estimated_duration_ms,omitempty"`
}

// AgentSeen is one agent the hooks reported, and the models it named.
type AgentSeen struct {
	Name   string   `json:"name"`
	Models []string `json:"models"`
}

// estimateRuns is how many of a workflow's latest completed runs the
// estimate reads: recent enough to follow how the workflow is used now,
// and a bounded read of the history.
const estimateRuns = 25

// mcpToolPrefix starts the tool names Claude Code and Codex give MCP
// tools: mcp__<server>__<tool>.
const mcpToolPrefix = "mcp__"

// MCPServerOf returns the MCP server a tool name belongs to ("" for a
// tool that is not an MCP tool).
func MCPServerOf(tool string) string {
	rest, ok := strings.CutPrefix(tool, mcpToolPrefix)
	if !ok {
		return ""
	}
	server, _, ok := strings.Cut(rest, "__")
	if !ok || server == "" {
		return ""
	}
	return server
}

// metadataOf is st's run metadata from its events (nil: none recorded).
func metadataOf(st *State, wf *workflow.Definition, evs []agent.Event, version string) *RunMetadata {
	m := &RunMetadata{Version: version, Agents: []AgentSeen{}, MCPServers: []string{}, Tools: []string{}}
	for _, ev := range evs {
		if ev.Agent != "" {
			i := slices.IndexFunc(m.Agents, func(a AgentSeen) bool { return a.Name == ev.Agent })
			if i < 0 {
				m.Agents = append(m.Agents, AgentSeen{Name: ev.Agent, Models: []string{}})
				i = len(m.Agents) - 1
			}
			if ev.Model != "" && !slices.Contains(m.Agents[i].Models, ev.Model) {
				m.Agents[i].Models = append(m.Agents[i].Models, ev.Model)
			}
		}
		if ev.Tool == "" || (ev.Kind != agent.EventPostTool && ev.Kind != agent.EventPreTool) {
			continue
		}
		if !slices.Contains(m.Tools, ev.Tool) {
			m.Tools = append(m.Tools, ev.Tool)
		}
		if s := MCPServerOf(ev.Tool); s != "" && !slices.Contains(m.MCPServers, s) {
			m.MCPServers = append(m.MCPServers, s)
		}
	}
	slices.Sort(m.Tools)
	slices.Sort(m.MCPServers)
	if wf != nil {
		for name := range wf.Nodes {
			if !wf.IsTerminal(name) {
				m.TotalNodes++
			}
		}
	}
	return m
}

// runEvents are the agent events of st's run (none without an event
// store).
func (e *Engine) runEvents(st *State) ([]agent.Event, error) {
	if e.Events == nil {
		return nil, nil
	}
	return e.Events.Events(st.Task, RunKey(st), time.Time{})
}

// Metadata returns the metadata of t's run as it stands, with, while
// the run is open, the estimated duration from the history.
func (e *Engine) Metadata(t *Task) (*RunMetadata, error) {
	wf, err := definition(t)
	if err != nil {
		wf = nil // a damaged definition still has events to show
	}
	evs, err := e.runEvents(t.State)
	if err != nil {
		return nil, err
	}
	m := metadataOf(t.State, wf, evs, e.Version)
	if t.State.Active() {
		m.EstimatedDurationMS, err = e.estimate(t.State.Workflow)
	}
	return m, err
}

// estimate is the median duration of the latest completed runs of
// workflow, newest days first (nil when there are none).
func (e *Engine) estimate(name string) (*int64, error) {
	if e.History == nil {
		return nil, nil
	}
	days, err := e.History.HistoryDays()
	if err != nil {
		return nil, err
	}
	var ds []int64
	for i := len(days) - 1; i >= 0 && len(ds) < estimateRuns; i-- {
		digests, err := e.History.HistoryDigests(days[i])
		if err != nil {
			return nil, err
		}
		slices.SortFunc(digests, func(a, b Digest) int { return b.StartedAt.Compare(a.StartedAt) })
		for _, d := range digests {
			if d.Workflow == name && d.Status == StatusCompleted && len(ds) < estimateRuns {
				ds = append(ds, d.DurationMS)
			}
		}
	}
	if len(ds) == 0 {
		return nil, nil
	}
	slices.Sort(ds)
	mid := len(ds) / 2
	med := ds[mid]
	if len(ds)%2 == 0 {
		med = (ds[mid-1] + ds[mid]) / 2
	}
	return &med, nil
}

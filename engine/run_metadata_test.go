package engine

import (
	"reflect"
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/engine/agent"
)

func TestMCPServerOf(t *testing.T) {
	for tool, want := range map[string]string{
		"mcp__github__create_issue": "github",
		"mcp__chrome-devtools__nav": "chrome-devtools",
		"mcp__github":               "",
		"mcp____x":                  "",
		"Bash":                      "",
		"mcpgithub__x":              "",
	} {
		if got := MCPServerOf(tool); got != want {
			t.Errorf("MCPServerOf(%q) = %q, want %q", tool, got, want)
		}
	}
}

// The metadata of a run: agents in the order first seen with the models
// they named, tools and MCP servers from the tool calls (sorted, once
// each), and the nodes of the workflow without its end nodes.
func TestRunMetadataFromEvents(t *testing.T) {
	te := newTestEngine(t, nil)
	reg, err := te.Workflows()
	if err != nil {
		t.Fatal(err)
	}
	wf, _ := reg.Get("minimal")
	evs := []agent.Event{
		{Kind: agent.EventSessionStart, Agent: "codex", Model: "gpt-5-codex"},
		{Kind: agent.EventPostTool, Agent: "codex", Tool: "mcp__github__create_issue"},
		{Kind: agent.EventPostTool, Agent: "claude", Tool: "Bash"},
		{Kind: agent.EventPostTool, Agent: "claude", Model: "opus", Tool: "mcp__github__list"},
		{Kind: agent.EventPreTool, Agent: "claude", Tool: "mcp__linear__get"},
		{Kind: agent.EventPostTool, Agent: "codex", Model: "gpt-5", Tool: "Bash"},
		{Kind: agent.EventPrompt, Agent: "codex", Model: "gpt-5-codex"},
		{Kind: agent.EventViolation, Tool: "Write"}, // not a call
	}
	m := metadataOf(&State{}, wf, evs, "1.2.3")
	want := &RunMetadata{Version: "1.2.3",
		Agents:     []AgentSeen{{Name: "codex", Models: []string{"gpt-5-codex", "gpt-5"}}, {Name: "claude", Models: []string{"opus"}}},
		MCPServers: []string{"github", "linear"},
		Tools:      []string{"Bash", "mcp__github__create_issue", "mcp__github__list", "mcp__linear__get"},
		TotalNodes: 2,
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("metadata\n%+v\nwant\n%+v", m, want)
	}
}

// The estimate is the median duration of the workflow's completed runs:
// failed runs and other workflows do not count; none gives nil.
func TestRunMetadataEstimate(t *testing.T) {
	te, h := newHistoryEngine(t)
	if d, err := te.estimate("minimal"); err != nil || d != nil {
		t.Fatalf("no runs: %v %v", d, err)
	}
	add := func(id, wf, status string, day int, min int64) {
		start := time.Date(2026, 1, day, 3, 0, 0, 0, time.UTC)
		if err := h.AddHistory(&HistoryEntry{ID: start.Format("20060102T150405Z") + "-" + id, Workflow: wf, Status: status, StartedAt: start, DurationMS: min * 60000}); err != nil {
			t.Fatal(err)
		}
	}
	add("00000001", "minimal", StatusCompleted, 1, 10)
	add("00000002", "minimal", StatusCompleted, 2, 30)
	add("00000003", "minimal", StatusFailed, 3, 500)
	add("00000004", "other", StatusCompleted, 3, 900)
	add("00000005", "minimal", StatusCompleted, 4, 20)
	d, err := te.estimate("minimal")
	if err != nil || d == nil || *d != 20*60000 {
		t.Fatalf("median of 10, 30, 20 min: %v %v", d, err)
	}
	add("00000006", "minimal", StatusCompleted, 5, 40)
	if d, _ := te.estimate("minimal"); d == nil || *d != 25*60000 {
		t.Errorf("median of 10, 20, 30, 40 min: %v", d)
	}
}

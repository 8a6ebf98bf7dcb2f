package engine

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/engine/agent"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

func TestComputeMetrics(t *testing.T) {
	m := func(d int) time.Time { return t0.Add(time.Duration(d) * time.Minute) }
	ended := m(30)
	st := &State{
		Task: "t", Workflow: "discovery", Status: StatusCompleted, CurrentNode: workflow.NodeDone, EndedAt: &ended,
		PhaseLog:  []PhaseVisit{{"spec", m(0), ""}, {"plan", m(10), ""}, {"spec", m(15), ""}, {"plan", m(20), ""}, {workflow.NodeDone, m(30), ""}},
		Overrides: []Override{{Node: "plan", What: "rule:require_commits", At: m(30)}},
	}
	evs := []agent.Event{
		{Time: m(1), Kind: agent.EventPostTool, Tool: "Bash", Action: agent.ActionCommand, Command: "go test", Node: "spec"},
		{Time: m(2), Kind: agent.EventPostTool, Tool: "Bash", Action: agent.ActionCommand, Command: "go test", Node: "spec"},
		{Time: m(3), Kind: agent.EventPostTool, Tool: "Edit", Action: agent.ActionEdit, File: "SPEC.md", Node: "spec"},
		{Time: m(4), Kind: agent.EventStop, TokensIn: 100, TokensOut: 10, TokensCached: 1000, Node: "spec"},
		// On the boundary between spec and plan, folded at spec: spec's.
		{Time: m(10), Kind: agent.EventPostTool, Tool: "Read", Action: agent.ActionRead, File: "SPEC.md", Node: "spec"},
		{Time: m(12), Kind: agent.EventViolation, Rule: workflow.RuleRepeatedCommand, Node: "plan"},
		{Time: m(16), Kind: agent.EventPostTool, Tool: "Write", Action: agent.ActionEdit, File: "SPEC.md", Node: "spec"},
	}
	got := agent.ComputeMetrics(MetricsRun(st, m(50)), evs, []time.Time{m(5), m(25), m(40)})
	if len(got.Phases) != 4 {
		t.Fatalf("phases %+v", got.Phases)
	}
	p0, p1, p2, p3 := got.Phases[0], got.Phases[1], got.Phases[2], got.Phases[3]
	if p0.Node != "spec" || p0.Duration() != 10*time.Minute || p0.ToolCalls != 4 || p0.CommandCount != 2 ||
		!slices.Equal(p0.Commands, []agent.Count{{Name: "go test", Count: 2}}) || !slices.Equal(p0.Files, []agent.Count{{Name: "SPEC.md", Count: 1}}) ||
		p0.TokensIn != 100 || p0.TokensOut != 10 || p0.TokensCached != 1000 || p0.Commits != 1 {
		t.Errorf("spec phase %+v", p0)
	}
	if !slices.Equal(p0.Tools, []agent.Count{{Name: "Bash", Count: 2}, {Name: "Edit", Count: 1}, {Name: "Read", Count: 1}}) {
		t.Errorf("tools %v", p0.Tools)
	}
	if p1.Node != "plan" || !slices.Equal(p1.Violations, []agent.Count{{Name: workflow.RuleRepeatedCommand, Count: 1}}) || p1.ToolCalls != 0 {
		t.Errorf("plan phase %+v", p1)
	}
	if p2.Node != "spec" || p2.EditCount != 1 {
		t.Errorf("second spec phase %+v", p2)
	}
	if p3.Node != "plan" || p3.Commits != 1 || !slices.Equal(p3.Bypasses, []agent.Count{{Name: "rule:require_commits", Count: 1}}) || p3.Current {
		t.Errorf("last plan phase %+v", p3)
	}
	if got.Total.ToolCalls != 5 || got.Total.Commits != 2 || got.Total.Duration() != 30*time.Minute {
		t.Errorf("total %+v", got.Total)
	}
}

func TestPathGraph(t *testing.T) {
	m := func(d int) time.Time { return t0.Add(time.Duration(d) * time.Minute) }
	st := &State{Task: "t", Status: StatusActive, CurrentNode: "plan",
		PhaseLog: []PhaseVisit{{"spec", m(0), ""}, {"plan", m(10), ""}, {"spec", m(15), ""}, {"plan", m(20), ""}}}
	dot, err := agent.PathGraph(MetricsRun(st, m(23)), agent.GraphDot)
	if err != nil {
		t.Fatal(err)
	}
	want := `digraph "t" {
  rankdir=LR;
  node [shape=box];
  "spec" [label="spec"];
  "plan" [label="plan\n(current, 3m 0s so far)", style=bold];
  "spec" -> "plan" [label="15m 0s (2×)"];
  "plan" -> "spec" [label="5m 0s"];
}
`
	if dot != want {
		t.Errorf("dot:\n%s\nwant:\n%s", dot, want)
	}
	mer, err := agent.PathGraph(MetricsRun(st, m(23)), agent.GraphMermaid)
	if err != nil {
		t.Fatal(err)
	}
	wantM := `flowchart LR
  n0["spec"]
  n1["plan<br/>(current, 3m 0s so far)"]
  n0 -->|15m 0s (2×)| n1
  n1 -->|5m 0s| n0
  style n1 stroke-width:3px
`
	if mer != wantM {
		t.Errorf("mermaid:\n%s\nwant:\n%s", mer, wantM)
	}
	if _, err := agent.PathGraph(MetricsRun(st, m(23)), "svg"); err == nil || !strings.Contains(err.Error(), "unknown graph format") {
		t.Errorf("svg: %v", err)
	}
}

package agent

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

// Metrics: what happened in each phase of a task's run, from its phase log,
// its agent events, the branch's commits and its overrides.

// Count is a name and how often it occurred.
type Count struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// PhaseMetrics describes one visit to a node.
type PhaseMetrics struct {
	Node         string
	Start        time.Time
	End          time.Time // the next phase's start, the run's end, or now
	Current      bool      // the task is still in this phase
	Tools        []Count   // tool calls by tool, most first
	ToolCalls    int
	Commands     []Count // shell commands, most run first
	CommandCount int
	Files        []Count // files edited, most edited first
	EditCount    int
	TokensIn     int64
	TokensOut    int64
	TokensCached int64
	Commits      int
	Violations   []Count // by rule type
	Bypasses     []Count // overrides by what was bypassed
	// Away is the time within the phase the task was stashed or parked
	// (its worktree worked on something else); Duration leaves it out.
	Away time.Duration
}

// Duration is the time the task spent in the phase: its length less the
// time it was away.
func (p *PhaseMetrics) Duration() time.Duration { return max(p.End.Sub(p.Start)-p.Away, 0) }

// TaskMetrics is a task's run, phase by phase.
type TaskMetrics struct {
	Task     string
	Workflow string
	Status   string
	Phases   []PhaseMetrics
	Total    PhaseMetrics // sums over the phases (Node, Start, End span the run)
}

// Run is what the metrics read of a task's run: the visits of its phase
// log, when it ended and the overrides recorded in it (engine.MetricsRun
// reads them from a task's state).
type Run struct {
	Task, Workflow, Status string
	// Phases are the run's visits to nodes, oldest first; never empty.
	Phases []Phase
	// End is when the run ended, or now for a run still going.
	End time.Time
	// Open is set while the run goes on: its last phase is current.
	Open bool
	// Bypasses are the overrides recorded in the task.
	Bypasses []Bypass
	// Away are the spans the task was stashed or parked, oldest first:
	// their time and the commits made in them are not the task's.
	Away []Interval
}

// Interval is a span of time, From inclusive, To exclusive.
type Interval struct{ From, To time.Time }

// overlap is how much of [from, to) lies in the intervals.
func overlap(iv []Interval, from, to time.Time) time.Duration {
	var d time.Duration
	for _, a := range iv {
		s, e := a.From, a.To
		if s.Before(from) {
			s = from
		}
		if e.After(to) {
			e = to
		}
		if e.After(s) {
			d += e.Sub(s)
		}
	}
	return d
}

// within reports whether t lies in one of the intervals.
func within(iv []Interval, t time.Time) bool {
	for _, a := range iv {
		if !t.Before(a.From) && t.Before(a.To) {
			return true
		}
	}
	return false
}

// Phase is one visit to a node: the node, and when it was entered.
type Phase struct {
	Node  string
	Start time.Time
}

// Bypass is one override recorded in a task: at Node, at time At, What
// was bypassed ("artifact", "rule:<type>" ...).
type Bypass struct {
	Node, What string
	At         time.Time
}

// ComputeMetrics splits events, commit times and the run's bypasses over
// its phases.
func ComputeMetrics(r Run, events []Event, commits []time.Time) *TaskMetrics {
	visits, end := r.Phases, r.End
	m := &TaskMetrics{Task: r.Task, Workflow: r.Workflow, Status: r.Status}
	acc := make([]*phaseAcc, len(visits))
	for i, v := range visits {
		pe := end
		if i+1 < len(visits) {
			pe = visits[i+1].Start
		}
		acc[i] = newPhaseAcc(PhaseMetrics{Node: v.Node, Start: v.Start, End: pe, Current: i == len(visits)-1 && r.Open,
			Away: overlap(r.Away, v.Start, pe)})
	}
	// A task that ended at done or aborted: that last visit is no phase.
	if n := len(acc); n > 1 && (visits[n-1].Node == workflow.NodeDone || visits[n-1].Node == workflow.NodeAborted) {
		acc = acc[:n-1]
	}
	total := newPhaseAcc(PhaseMetrics{Node: "total", Start: visits[0].Start, End: end, Away: overlap(r.Away, visits[0].Start, end)})
	for _, ev := range events {
		if i := phaseOf(acc, ev.Time, ev.Node); i >= 0 {
			acc[i].add(&ev)
			total.add(&ev)
		}
	}
	for _, c := range commits {
		if within(r.Away, c) {
			continue // made while another task had the worktree
		}
		if i := phaseOf(acc, c, ""); i >= 0 && c.Before(acc[i].p.End.Add(time.Second)) {
			acc[i].p.Commits++
			total.p.Commits++
		}
	}
	for _, o := range r.Bypasses {
		if i := phaseOf(acc, o.At, o.Node); i >= 0 {
			acc[i].bypass[o.What]++
			total.bypass[o.What]++
		}
	}
	for _, a := range acc {
		m.Phases = append(m.Phases, a.done())
	}
	m.Total = total.done()
	return m
}

// phaseOf picks the phase an instant belongs to: the last one started at
// or before it, preferring one of node when given (events carry the node
// they were folded at, which settles instants on a phase boundary).
func phaseOf(acc []*phaseAcc, t time.Time, node string) int {
	last := -1
	for i, a := range acc {
		if !a.p.Start.After(t) {
			last = i
		}
	}
	if last < 0 || node == "" || acc[last].p.Node == node {
		return last
	}
	// On a boundary (a phase ended at t): the phase of node it ended.
	for i := last - 1; i >= 0 && !acc[i].p.End.Before(t); i-- {
		if acc[i].p.Node == node {
			return i
		}
	}
	return last
}

type phaseAcc struct {
	p          PhaseMetrics
	tools      map[string]int
	commands   map[string]int
	files      map[string]int
	violations map[string]int
	bypass     map[string]int
}

func newPhaseAcc(p PhaseMetrics) *phaseAcc {
	return &phaseAcc{p: p, tools: map[string]int{}, commands: map[string]int{}, files: map[string]int{}, violations: map[string]int{}, bypass: map[string]int{}}
}

func (a *phaseAcc) add(ev *Event) {
	switch ev.Kind {
	case EventPostTool:
		if ev.Tool != "" {
			a.tools[ev.Tool]++
			a.p.ToolCalls++
		}
		if ev.IsCommand() {
			a.commands[ev.Command]++
			a.p.CommandCount++
		}
		if ev.IsEdit() {
			a.files[ev.File]++
			a.p.EditCount++
		}
	case EventViolation:
		a.violations[ev.Rule]++
	}
	a.p.TokensIn += ev.TokensIn
	a.p.TokensOut += ev.TokensOut
	a.p.TokensCached += ev.TokensCached
}

func (a *phaseAcc) done() PhaseMetrics {
	p := a.p
	p.Tools, p.Commands, p.Files = counts(a.tools), counts(a.commands), counts(a.files)
	p.Violations, p.Bypasses = counts(a.violations), counts(a.bypass)
	return p
}

// counts sorts a tally, most first, then by name.
func counts(m map[string]int) []Count {
	out := make([]Count, 0, len(m))
	for k, v := range m {
		out = append(out, Count{k, v})
	}
	slices.SortFunc(out, func(a, b Count) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// Graph formats.
const (
	GraphDot     = "dot"
	GraphMermaid = "mermaid"
)

// PathGraph draws the task's path through its workflow: one node per
// workflow node visited, one edge per move, labelled with the time spent
// in the node it leaves (moves taken more than once are summed and
// counted). The current node is marked; a finished run ends in done or
// aborted.
func PathGraph(r Run, format string) (string, error) {
	visits, end := r.Phases, r.End
	type edge struct{ from, to string }
	var order []string
	seen := map[string]bool{}
	var edges []edge
	spent := map[edge]time.Duration{}
	times := map[edge]int{}
	for i, v := range visits {
		if !seen[v.Node] {
			seen[v.Node] = true
			order = append(order, v.Node)
		}
		if i+1 < len(visits) {
			e := edge{v.Node, visits[i+1].Node}
			if times[e] == 0 {
				edges = append(edges, e)
			}
			times[e]++
			spent[e] += max(visits[i+1].Start.Sub(v.Start), 0)
		}
	}
	last := visits[len(visits)-1]
	current := ""
	if r.Open {
		current = last.Node
	}
	label := func(e edge) string {
		l := text.HumanDuration(spent[e])
		if times[e] > 1 {
			l += fmt.Sprintf(" (%d×)", times[e])
		}
		return l
	}
	nodeLabel := func(n string) string {
		if n == current {
			return fmt.Sprintf("%s\n(current, %s so far)", n, text.HumanDuration(end.Sub(last.Start)))
		}
		return n
	}
	var b strings.Builder
	switch format {
	case GraphDot:
		fmt.Fprintf(&b, "digraph %q {\n  rankdir=LR;\n  node [shape=box];\n", r.Task)
		for _, n := range order {
			attrs := fmt.Sprintf("label=%q", nodeLabel(n))
			if n == current {
				attrs += ", style=bold"
			}
			if n == workflow.NodeDone || n == workflow.NodeAborted {
				attrs += ", shape=doublecircle"
			}
			fmt.Fprintf(&b, "  %q [%s];\n", n, attrs)
		}
		for _, e := range edges {
			fmt.Fprintf(&b, "  %q -> %q [label=%q];\n", e.from, e.to, label(e))
		}
		b.WriteString("}\n")
	case GraphMermaid:
		b.WriteString("flowchart LR\n")
		ids := map[string]string{}
		for i, n := range order {
			ids[n] = fmt.Sprintf("n%d", i)
			text := strings.ReplaceAll(nodeLabel(n), "\n", "<br/>")
			shape := "[\"%s\"]"
			if n == workflow.NodeDone || n == workflow.NodeAborted {
				shape = "((\"%s\"))"
			}
			fmt.Fprintf(&b, "  %s"+shape+"\n", ids[n], text)
		}
		for _, e := range edges {
			fmt.Fprintf(&b, "  %s -->|%s| %s\n", ids[e.from], label(e), ids[e.to])
		}
		if current != "" {
			fmt.Fprintf(&b, "  style %s stroke-width:3px\n", ids[current])
		}
	default:
		return "", fmt.Errorf("unknown graph format '%s' (dot or mermaid)", format)
	}
	return b.String(), nil
}

package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/agent"
	"github.com/git-hegel/git-hegel/engine/text"
)

// `git hegel metrics`: per phase of a task's run, time, tool calls, shell
// commands, files edited, tokens, commits, rule violations and bypasses;
// `--graph` draws its path through the workflow for a pull request.

func metricsFlags(fs *pflag.FlagSet) {
	taskFlag(fs)
	jsonFlag(fs)
	fs.Bool("graph", false, "draw the task's path through its workflow, with the time spent per node")
	fs.String("format", agent.GraphDot, "graph format: dot (Graphviz) or mermaid")
	completeValues(fs, "format", kindGraphFormat)
	valueName(fs, "format", "dot|mermaid")
	nestFlag(fs, "graph", "format")
}

func runMetrics(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 0); err != nil {
		return err
	}
	format := c.stringFlag("format")
	if format != agent.GraphDot && format != agent.GraphMermaid {
		return usagef(c.name, "unknown --format '%s' (dot or mermaid)", format)
	}
	if c.flags.Changed("format") && !c.boolFlag("graph") {
		return usagef(c.name, "--format needs --graph")
	}
	if c.boolFlag("graph") && c.boolFlag("json") {
		return usagef(c.name, "--graph and --json cannot be used together")
	}
	if c.flags.Changed("task") && c.stringFlag("task") == "" {
		return usagef(c.name, "--task needs a name")
	}
	e, r, err := c.engine()
	if err != nil {
		return err
	}
	// --task finds archived tasks too.
	t, err := e.Current(c.selected())
	if err != nil {
		return err
	}
	st := t.State
	now := c.Now()
	if c.boolFlag("graph") {
		g, err := agent.PathGraph(engine.MetricsRun(st, now), format)
		if err != nil {
			return err
		}
		fmt.Fprint(c.Stdout, g)
		return nil
	}
	// Fold first so the numbers include what the agent did just now.
	if err := r.Events().Fold(); err != nil {
		c.warn("agent events not folded yet: " + err.Error())
	}
	start := st.StartedAt
	if len(st.PhaseLog) > 0 && st.PhaseLog[0].Start.Before(start) {
		start = st.PhaseLog[0].Start
	}
	evs, err := r.Events().Events(st.Task, engine.RunKey(st), start)
	if err != nil {
		return err
	}
	commits, err := r.CommitTimes(start)
	if err != nil {
		return err
	}
	m := agent.ComputeMetrics(engine.MetricsRun(st, now), evs, commits)
	if c.boolFlag("json") {
		return writeJSON(c.Stdout, metricsToJSON(m, c.jsonSchema()))
	}
	c.printMetrics(m)
	return nil
}

func (c *cmdCtx) printMetrics(m *agent.TaskMetrics) {
	fmt.Fprintf(c.Stdout, "Task %s (%s, %s): %s, %s\n", m.Task, m.Workflow, m.Status, text.Plural(len(m.Phases), "phase", "phases"), text.HumanDuration(m.Total.Duration()))
	for _, p := range m.Phases {
		cur := ""
		if p.Current {
			cur = ", current"
		}
		fmt.Fprintf(c.Stdout, "\n%s  %s%s%s (from %s)\n", c.highlight(p.Node), text.HumanDuration(p.Duration()), awayText(&p), cur, p.Start.UTC().Format("2006-01-02 15:04:05"))
		c.printPhaseBody(&p)
	}
	if len(m.Phases) > 1 {
		fmt.Fprintf(c.Stdout, "\nTotal  %s%s\n", text.HumanDuration(m.Total.Duration()), awayText(&m.Total))
		c.printPhaseBody(&m.Total)
	}
}

func (c *cmdCtx) printPhaseBody(p *agent.PhaseMetrics) {
	fmt.Fprintf(c.Stdout, "  tool calls:   %d%s\n", p.ToolCalls, countList(p.Tools, 6, false))
	fmt.Fprintf(c.Stdout, "  commands:     %d%s\n", p.CommandCount, countList(p.Commands, 5, true))
	fmt.Fprintf(c.Stdout, "  files edited: %d%s\n", len(p.Files), countList(p.Files, 5, true))
	fmt.Fprintf(c.Stdout, "  tokens:       %s in, %s out", groupInt(p.TokensIn), groupInt(p.TokensOut))
	if p.TokensCached > 0 {
		fmt.Fprintf(c.Stdout, " (%s cached)", groupInt(p.TokensCached))
	}
	fmt.Fprintln(c.Stdout)
	fmt.Fprintf(c.Stdout, "  commits:      %d\n", p.Commits)
	fmt.Fprintf(c.Stdout, "  violations:   %d%s\n", total(p.Violations), countList(p.Violations, 5, false))
	fmt.Fprintf(c.Stdout, "  bypasses:     %d%s\n", total(p.Bypasses), countList(p.Bypasses, 5, false))
}

// countList renders " (a 3, b 1, …)".
func countList(cs []agent.Count, limit int, quote bool) string {
	if len(cs) == 0 {
		return ""
	}
	var parts []string
	for i, x := range cs {
		if i == limit {
			parts = append(parts, fmt.Sprintf("%d more", len(cs)-limit))
			break
		}
		name := x.Name
		if quote {
			name = shorten(name, 60)
		}
		if x.Count > 1 || !quote {
			name += fmt.Sprintf(" ×%d", x.Count)
		}
		parts = append(parts, name)
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func total(cs []agent.Count) int {
	n := 0
	for _, x := range cs {
		n += x.Count
	}
	return n
}

func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func groupInt(n int64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	return b.String()
}

type metricsJSON struct {
	Schema   int                `json:"schema"`
	Task     string             `json:"task"`
	Workflow string             `json:"workflow"`
	Status   string             `json:"status"`
	Phases   []phaseMetricsJSON `json:"phases"`
	Total    phaseMetricsJSON   `json:"total"`
}

type phaseMetricsJSON struct {
	Node      string    `json:"node"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`
	Current   bool      `json:"current"`
	Seconds   *int64    `json:"seconds,omitempty"` // schema 1
	TimeMS    *int64    `json:"time_ms,omitempty"` // schema 2
	// AwaySeconds and AwayMS are the time within the phase the task was
	// stashed or parked, which seconds and time_ms leave out.
	AwaySeconds  *int64        `json:"away_seconds,omitempty"` // schema 1
	AwayMS       *int64        `json:"away_ms,omitempty"`      // schema 2
	ToolCalls    int           `json:"tool_calls"`
	Tools        []agent.Count `json:"tools"`
	Commands     []agent.Count `json:"commands"`
	FilesEdited  []agent.Count `json:"files_edited"`
	TokensIn     int64         `json:"tokens_in"`
	TokensOut    int64         `json:"tokens_out"`
	TokensCached int64         `json:"tokens_cached"`
	Commits      int           `json:"commits"`
	Violations   []agent.Count `json:"violations"`
	Bypasses     []agent.Count `json:"bypasses"`
}

func metricsToJSON(m *agent.TaskMetrics, schema int) metricsJSON {
	conv := func(p *agent.PhaseMetrics) phaseMetricsJSON {
		nz := func(c []agent.Count) []agent.Count {
			if c == nil {
				return []agent.Count{}
			}
			return c
		}
		j := phaseMetricsJSON{
			Node: p.Node, StartedAt: p.Start.UTC(), EndedAt: p.End.UTC(), Current: p.Current,
			ToolCalls: p.ToolCalls, Tools: nz(p.Tools),
			Commands: nz(p.Commands), FilesEdited: nz(p.Files), TokensIn: p.TokensIn, TokensOut: p.TokensOut,
			TokensCached: p.TokensCached, Commits: p.Commits, Violations: nz(p.Violations), Bypasses: nz(p.Bypasses),
		}
		if schema >= 2 {
			j.TimeMS, j.AwayMS = ptr(p.Duration().Milliseconds()), ptr(p.Away.Milliseconds())
		} else {
			j.Seconds, j.AwaySeconds = ptr(int64(p.Duration().Seconds())), ptr(int64(p.Away.Seconds()))
		}
		return j
	}
	out := metricsJSON{Schema: schema, Task: m.Task, Workflow: m.Workflow, Status: m.Status, Phases: []phaseMetricsJSON{}}
	for i := range m.Phases {
		out.Phases = append(out.Phases, conv(&m.Phases[i]))
	}
	out.Total = conv(&m.Total)
	return out
}

// awayText says how long the task was away within a phase, which its
// time leaves out ("" when it never was).
func awayText(p *agent.PhaseMetrics) string {
	if p.Away <= 0 {
		return ""
	}
	return fmt.Sprintf(" (and %s away: stashed or parked)", text.HumanDuration(p.Away))
}

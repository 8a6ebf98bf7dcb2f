package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/gitstore"
)

// git hegel log and git hegel stats (docs/history.md).

func logFlags(fs *pflag.FlagSet) {
	fs.String("workflow", "", "only runs of this workflow")
	valueName(fs, "workflow", "NAME")
	completeValues(fs, "workflow", kindWorkflow)
	fs.String("status", "", "only runs with this status (completed, aborted, failed, rolled_back, or an open one: active, paused…)")
	fs.String("task", "", "only runs of this task")
	completeValues(fs, "task", kindAnyTask)
	fs.String("type", "", "only runs of this task type")
	fs.String("since", "", "only runs started at or after DATE (git's forms: 2.weeks.ago, yesterday, 2026-01-02)")
	fs.String("until", "", "only runs started at or before DATE")
	valueName(fs, "since", "DATE")
	valueName(fs, "until", "DATE")
	fs.String("grep", "", "only runs whose task, description or error contains TEXT")
	valueName(fs, "grep", "TEXT")
	intFlag(fs, "max-count", "n", 0, "show at most N runs")
	valueName(fs, "max-count", "N")
	jsonFlag(fs)
	fs.String("format", "", "jsonl: one JSON object a line, with the fields docs/json.md lists under log --format=jsonl")
	valueName(fs, "format", "jsonl")
	altFlags(fs, "json", "format")
	fs.String("node", "", "with a task: what the node's checks and run steps printed, per attempt")
	valueName(fs, "node", "NODE")
}

func statsFlags(fs *pflag.FlagSet) {
	fs.String("date", "", "the day to summarize (YYYY-MM-DD; default: today)")
	fs.String("since", "", "summarize from DATE until now (git's forms: 2.weeks.ago, 2026-01-02)")
	fs.String("by", "", "one summary per day, week or workflow")
	valueName(fs, "date", "DAY")
	valueName(fs, "since", "DATE")
	valueName(fs, "by", "day|week|workflow")
	altFlags(fs, "date", "since")
	jsonFlag(fs)
}

// dateFlag parses a --since/--until value.
func (c *cmdCtx) dateFlag(name string, endOfDay bool) (time.Time, error) {
	v := c.stringFlag(name)
	if v == "" {
		return time.Time{}, nil
	}
	t, err := gitstore.ParseDate(v, c.Now(), endOfDay)
	if err != nil {
		return time.Time{}, usagef(c.name, "--%s: %v", name, err)
	}
	return t, nil
}

func runLog(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 1); err != nil {
		return err
	}
	format := c.stringFlag("format")
	if format != "" && format != "jsonl" {
		return usagef("log", "unknown format '%s' (the only one is jsonl)", format)
	}
	if format != "" && c.boolFlag("json") {
		return usagef("log", "--json and --format=jsonl cannot be used together")
	}
	if len(args) == 1 {
		for _, f := range []string{"workflow", "status", "task", "type", "since", "until", "grep", "max-count", "format"} {
			if c.flags.Changed(f) {
				return usagef("log", "--%s does not apply to one task's operations ('git hegel log %s')", f, args[0])
			}
		}
		if c.flags.Changed("node") {
			return c.nodeLogs(args[0], c.stringFlag("node"))
		}
		return c.taskLog(args[0])
	}
	if c.flags.Changed("node") {
		return usagef("log", "--node needs a task: git hegel log <task> --node NODE")
	}
	f := engine.HistoryFilter{Workflow: c.stringFlag("workflow"), Task: c.stringFlag("task"),
		Type: c.stringFlag("type"), Grep: c.stringFlag("grep")}
	if f.Task != "" {
		if err := engine.CheckTaskName(f.Task); err != nil {
			return err
		}
	}
	if s := c.stringFlag("status"); s != "" {
		st, err := engine.CheckHistoryStatus(s)
		if err != nil {
			return err
		}
		f.Status = st
	}
	var err error
	if f.Since, err = c.dateFlag("since", false); err != nil {
		return err
	}
	if f.Until, err = c.dateFlag("until", true); err != nil {
		return err
	}
	if n, _ := c.flags.GetInt("max-count"); n < 0 {
		return usagef("log", "-n must not be negative")
	} else {
		f.Limit = n
	}
	e, r, err := c.engine()
	if err != nil {
		return err
	}
	h := r.History()
	e.History = h
	recs, err := e.Log(f)
	if err != nil {
		return err
	}
	if f.Limit == 0 && c.flags.Changed("max-count") {
		recs = nil // -n 0 shows none, as git log -n 0 does (0 is the engine's "no limit")
	}
	c.warnDamagedHistory(h)
	switch {
	case c.boolFlag("json"):
		out := logJSON{Schema: c.jsonSchema(), Executions: []executionJSON{}}
		desc, errText := c.descriptionsForReader(e), c.errorsForReader(e)
		for _, rec := range recs {
			j := executionOf(rec)
			j.Description = desc(j.Task, j.Description)
			j.Error = errText(j.Task, j.Error)
			j.User, j.Worktree = c.runnerForReader(e, j.User), c.runnerForReader(e, j.Worktree)
			c.labelsForReader(&j)
			out.Executions = append(out.Executions, j)
		}
		return writeJSON(c.Stdout, out)
	case format == "jsonl":
		bw := bufio.NewWriter(c.Stdout)
		for _, rec := range recs {
			b, err := json.Marshal(jsonlExecutionOf(rec))
			if err != nil {
				return err
			}
			bw.Write(append(b, '\n'))
		}
		return bw.Flush()
	}
	if e.HistoryOff {
		fmt.Fprintln(c.Stdout, historyOffLine+": runs that end are not recorded")
	}
	if len(recs) == 0 {
		fmt.Fprintln(c.Stdout, "No runs found")
		return nil
	}
	// The table is laid out without colour, and the ids coloured after:
	// escape sequences would count as width and push the header out of
	// line with the rows.
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTARTED\tWORKFLOW\tTASK\tSTATUS\tDURATION")
	for _, rec := range recs {
		id, dur := c.paint(c.Stdout, "id", rec.ShortID()), text.HumanDuration(time.Duration(rec.DurationMS)*time.Millisecond)
		if rec.Open {
			id = strings.Repeat("-", 8)
			dur += " so far"
		}
		// Records arrive with the history from other clones: what a
		// terminal would act on is removed from their text.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", id, rec.StartedAt.In(time.Local).Format("2006-01-02 15:04"),
			firstLineOf(rec.Workflow), firstLineOf(rec.Task), firstLineOf(rec.Status), dur)
	}
	tw.Flush()
	bw := bufio.NewWriter(c.Stdout)
	for i, line := range strings.SplitAfter(table.String(), "\n") {
		if i > 0 && i <= len(recs) && !recs[i-1].Open {
			id := recs[i-1].ShortID()
			line = c.paint(c.Stdout, "id", id) + strings.TrimPrefix(line, id)
		}
		bw.WriteString(line)
	}
	return bw.Flush()
}

// warnDamagedHistory says once that entries were skipped.
func (c *cmdCtx) warnDamagedHistory(h *gitstore.History) {
	if n := len(h.Damaged); n > 0 {
		c.warn(fmt.Sprintf("%s could not be read and %s left out (first: %s); see 'git hegel doctor'",
			text.Plural(n, "history entry", "history entries"), map[bool]string{true: "was", false: "were"}[n == 1], h.Damaged[0]))
	}
}

// taskLog is `git hegel log <task>`: every operation of the task's chain.
func (c *cmdCtx) taskLog(name string) error {
	if err := engine.CheckTaskName(name); err != nil {
		return err
	}
	r, err := c.openRepo()
	if err != nil {
		return err
	}
	ref, chain, err := r.TaskChain(name)
	if errors.Is(err, gitstore.ErrNotFound) {
		return &engine.TaskNotFoundError{Name: name}
	}
	if err != nil {
		return err
	}
	ops := engine.TaskOps(chain)
	if c.boolFlag("json") {
		out := taskLogJSON{Schema: c.jsonSchema(), Task: name, Ref: string(ref), Operations: []taskOpJSON{}}
		for i := len(ops) - 1; i >= 0; i-- {
			op := ops[i]
			out.Operations = append(out.Operations, taskOpJSON{Commit: op.Commit, Time: op.At.UTC(), Op: op.Op, From: op.From, To: op.To,
				Claim: op.Claim, Status: op.Status, Who: op.Who, Message: strings.TrimRight(op.Message, "\n")})
		}
		return writeJSON(c.Stdout, out)
	}
	bw := bufio.NewWriter(c.Stdout)
	fmt.Fprintf(bw, "Task %s (%s), newest first\n", name, ref)
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	for i := len(ops) - 1; i >= 0; i-- {
		op := ops[i]
		move := op.To
		if op.From != "" && op.From != op.To {
			move = op.From + " → " + op.To
		}
		if move == "" {
			move = "-"
		}
		claim := op.Claim
		if claim == "" {
			claim = "-"
		}
		// The operations are read from the task's commits, which a fetch
		// may have written: a terminal acts on none of their text.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.paint(c.Stdout, "id", op.Commit[:7]), op.At.In(time.Local).Format("2006-01-02 15:04"),
			firstLineOf(op.Op), firstLineOf(move), firstLineOf(claim), firstLineOf(op.Who))
	}
	tw.Flush()
	return bw.Flush()
}

func runStats(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 0); err != nil {
		return err
	}
	if c.flags.Changed("date") && c.flags.Changed("since") {
		return usagef("stats", "--date and --since cannot be used together")
	}
	by := c.stringFlag("by")
	switch by {
	case "", engine.ByDay, engine.ByWeek, engine.ByWorkflow:
	default:
		return usagef("stats", "--by takes day, week or workflow, not '%s'", by)
	}
	o := engine.StatsOptions{By: by, Loc: time.Local}
	switch {
	case c.flags.Changed("since"):
		since, err := c.dateFlag("since", false)
		if err != nil {
			return err
		}
		o.From, o.To = since, c.Now().Add(time.Nanosecond)
	default:
		day := c.stringFlag("date")
		if day == "" || day == "today" {
			day = c.Now().In(time.Local).Format(engine.HistoryDayLayout)
		} else if day == "yesterday" {
			day = c.Now().In(time.Local).AddDate(0, 0, -1).Format(engine.HistoryDayLayout)
		}
		from, to, err := engine.DayRange(day, time.Local)
		if err != nil {
			return usagef("stats", "--date: %v", err)
		}
		o.From, o.To = from, to
	}
	e, r, err := c.engine()
	if err != nil {
		return err
	}
	h := r.History()
	e.History = h
	sums, err := e.Stats(o)
	if err != nil {
		return err
	}
	c.warnDamagedHistory(h)
	switch schema := c.jsonSchema(); {
	case schema >= 2:
		out := statsJSON2{Schema: schema, From: o.From.UTC(), To: o.To.UTC(), By: by, Summaries: []summaryJSON2{}, HistoryOff: e.HistoryOff}
		for _, s := range sums {
			out.Summaries = append(out.Summaries, summaryOf2(s, by))
		}
		return writeJSON(c.Stdout, out)
	case schema == 1:
		out := statsJSON{Schema: schema, From: o.From.UTC(), To: o.To.UTC(), By: by, Summaries: []summaryJSON{}, HistoryOff: e.HistoryOff}
		for _, s := range sums {
			out.Summaries = append(out.Summaries, summaryOf(s, by))
		}
		return writeJSON(c.Stdout, out)
	}
	if e.HistoryOff {
		// Zeros would read as "nothing ran"; the truth is that nothing
		// was written down.
		if noRuns(sums) {
			fmt.Fprintln(c.Stdout, historyOffLine+": no runs are recorded")
			return nil
		}
		fmt.Fprintln(c.Stdout, historyOffLine+": runs that ended since it was turned off are not counted")
	}
	if len(sums) == 0 {
		fmt.Fprintln(c.Stdout, "No runs found")
		return nil
	}
	bw := bufio.NewWriter(c.Stdout)
	for i, s := range sums {
		if i > 0 {
			fmt.Fprintln(bw)
		}
		printSummary(bw, s, by)
	}
	return bw.Flush()
}

// printSummary prints one summary for people: the runs on a day, in a
// week, or of a workflow.
func printSummary(w *bufio.Writer, s engine.Summary, by string) {
	head := "Runs on"
	switch by {
	case engine.ByWeek:
		head = "Runs in"
	case engine.ByWorkflow:
		head = "Runs of"
	}
	// Workflow and node names come from history records, which other
	// clones write: what a terminal would act on is removed.
	fmt.Fprintf(w, "%s %s: %d\n", head, firstLineOf(s.Label), s.Total)
	fmt.Fprintf(w, "  completed %d, failed %d, aborted %d, rolled back %d; open %d\n", s.Completed, s.Failed, s.Aborted, s.RolledBack, s.Active)
	if s.Total == 0 { // Total counts the runs that ended (open ones apart)
		fmt.Fprintln(w, "Success rate: - (no run has ended)")
	} else {
		fmt.Fprintf(w, "Success rate: %s\n", text.Percent(s.SuccessRate))
	}
	fmt.Fprintf(w, "Time: %s in all, %s on average\n", text.HumanDuration(ms(s.TotalMS)), text.HumanDuration(ms(s.AverageMS)))
	fmt.Fprintf(w, "Most used workflow: %s\n", firstLineOf(s.MostUsed))
	if len(s.Workflows) > 0 {
		names := make([]string, 0, len(s.Workflows))
		for n := range s.Workflows {
			names = append(names, n)
		}
		sort.Slice(names, func(i, j int) bool {
			a, b := s.Workflows[names[i]], s.Workflows[names[j]]
			return a > b || (a == b && names[i] < names[j])
		})
		parts := make([]string, len(names))
		for i, n := range names {
			parts[i] = fmt.Sprintf("%s %d", firstLineOf(n), s.Workflows[n])
		}
		fmt.Fprintf(w, "By workflow: %s\n", strings.Join(parts, ", "))
	}
	if len(s.Nodes) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  NODE\tRUNS\tMEDIAN TIME\tATTEMPTS\tRETRIES\tFAILURE RATE")
	for _, n := range s.Nodes {
		fmt.Fprintf(tw, "  %s/%s\t%d\t%s\t%d\t%d\t%s\n", firstLineOf(n.Workflow), firstLineOf(n.Node), n.Runs, text.HumanDuration(ms(n.MedianMS)), n.Attempts, n.Retries, text.Percent(n.FailureRate))
	}
	tw.Flush()
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// attemptLogJSON is one attempt's log in `log <task> --node N --json`.
type attemptLogJSON struct {
	Node    string `json:"node"`
	Attempt int    `json:"attempt"`
	Size    int    `json:"size"`
	Log     string `json:"log"`
}

// nodeLogs prints what node's checks and run steps printed, attempt by
// attempt, as the task's ref keeps it.
func (c *cmdCtx) nodeLogs(task, node string) error {
	if err := engine.CheckTaskName(task); err != nil {
		return engine.BadName(err)
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	t, err := e.Lookup(task)
	if err != nil {
		return err
	}
	logs, err := e.NodeLogs(t, node)
	if err != nil {
		return err
	}
	if schema := c.jsonSchema(); schema > 0 {
		out := struct {
			Schema int              `json:"schema"`
			Task   string           `json:"task"`
			Logs   []attemptLogJSON `json:"logs"`
		}{Schema: schema, Task: t.State.Task, Logs: []attemptLogJSON{}}
		for _, l := range logs {
			out.Logs = append(out.Logs, attemptLogJSON{Node: l.Node, Attempt: l.Attempt, Size: len(l.Data), Log: string(l.Data)})
		}
		return writeJSON(c.Stdout, out)
	}
	if len(logs) == 0 {
		fmt.Fprintf(c.Stdout, "No logs of node %s in task %s: its checks and run steps have not run\n", node, t.State.Task)
		return nil
	}
	for i, l := range logs {
		if i > 0 {
			fmt.Fprintln(c.Stdout)
		}
		fmt.Fprintf(c.Stdout, "== %s, attempt %d (%s) ==\n", l.Node, l.Attempt, engine.Size(int64(len(l.Data))))
		c.Stdout.Write(l.Data)
		if len(l.Data) > 0 && l.Data[len(l.Data)-1] != '\n' {
			fmt.Fprintln(c.Stdout)
		}
	}
	return nil
}

// historyOffLine opens what stats and log say when hegel.history is false.
const historyOffLine = "History is off (git config hegel.history false)"

// noRuns reports whether the summaries count no run at all, ended or open.
func noRuns(sums []engine.Summary) bool {
	for _, s := range sums {
		if s.Total > 0 || s.Active > 0 {
			return false
		}
	}
	return true
}

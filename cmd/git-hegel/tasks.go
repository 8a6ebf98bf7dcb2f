package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/text"
)

// Many tasks: tasks, show, describe, delete, restore-task.

func runTasks(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 0); err != nil {
		return err
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	list, err := e.ListTasks(engine.ListOptions{All: c.boolFlag("all"), Archived: c.boolFlag("archived"), Mine: c.boolFlag("mine")})
	if err != nil {
		return err
	}
	if c.boolFlag("json") {
		out := tasksJSON{Schema: c.jsonSchema(), Tasks: []taskLineJSON{}}
		for _, t := range list {
			j := taskLineJSON{Task: t.Name, Archived: t.Archived, Mine: t.Mine, Current: t.Current}
			if t.Err != nil {
				j.Damaged = t.Err.Error()
			} else {
				st := c.forReader(e, t.State)
				j.Workflow, j.Mode, j.CurrentNode, j.Status = st.Workflow, st.Mode, st.CurrentNode, st.Status
				j.TaskType, j.Priority, j.Description, j.Worktree, j.UpdatedAt = st.TaskType, engine.TaskPriority(st), st.Description, st.Worktree, st.UpdatedAt
				j.OwnerEmail = st.OwnerEmail
			}
			out.Tasks = append(out.Tasks, j)
		}
		bw := bufio.NewWriter(c.Stdout)
		if err := writeJSON(bw, out); err != nil {
			return err
		}
		return bw.Flush()
	}
	if len(list) == 0 {
		hint := ""
		if c.boolFlag("mine") {
			fmt.Fprintln(c.Stdout, "No tasks held here ('git hegel tasks' lists them all; 'git hegel claim <task>' takes one)")
			return nil
		}
		if !c.boolFlag("archived") {
			hint = " (finished tasks are archived: 'git hegel tasks --archived')"
		}
		fmt.Fprintf(c.Stdout, "No tasks%s\n", hint)
		return nil
	}
	// One write for the whole table: a thousand lines cell by cell were a
	// write system call each.
	bw := bufio.NewWriter(c.Stdout)
	defer bw.Flush()
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  TASK\tWORKFLOW/NODE\tSTATUS\tTYPE\tPRIORITY\tOWNER\tUPDATED")
	for _, t := range list {
		mark := " "
		if t.Current {
			mark = "*"
		}
		if t.Err != nil {
			fmt.Fprintf(tw, "%s %s\t-\tdamaged\t-\t-\t-\t%s\n", mark, t.Name, firstLineOf(t.Err.Error()))
			continue
		}
		st := t.State
		status := st.Status
		if t.Archived {
			status += " (archived)"
		}
		fmt.Fprintf(tw, "%s %s\t%s/%s\t%s\t%s\t%s\t%s\t%s\n", mark, t.Name, st.Workflow, st.CurrentNode, status,
			firstLineOf(orDash(st.TaskType)), firstLineOf(engine.TaskPriority(st)), c.ownerLabel(e, st), engine.RelativeTime(st.UpdatedAt, c.Now()))
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ownerLabel names the worktree that owns a task.
func (c *cmdCtx) ownerLabel(e *engine.Engine, st *engine.State) string { return e.OwnerLabel(st) }

func runShow(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 1); err != nil {
		return err
	}
	if len(args) == 1 && c.flags.Changed("task") {
		return usagef(c.name, "name the task once: 'show <task>' or 'show --task <task>'")
	}
	e, r, err := c.engine()
	if err != nil {
		return err
	}
	name := c.stringFlag("task")
	if len(args) == 1 {
		name = args[0]
	}
	d, err := e.Show(name)
	if err != nil {
		return err
	}
	st := c.forReader(e, d.State)
	cps, cperr := c.snapshots(r).Checkpoints(st.Task)
	slices.Reverse(cps) // newest first
	skipped := map[string]string{}
	for _, s := range st.SkippedNodes {
		skipped[s.Node] = s.Reason
	}
	var problems []string
	if pe, ok := d.Problems.(*engine.StateError); ok {
		problems = pe.Problems
	}
	if schema := c.jsonSchema(); schema > 0 {
		out := showJSON{Schema: schema, Task: taskJSON(st, c.Now(), schema), Artifacts: []artifactJSON{},
			StepResults: st.StepResults, Problems: nonNil(problems), Warnings: nonNil(d.Warnings)}
		out.Task.Archived = d.Archived
		if v, err := e.ViewOf(d.Task); err == nil {
			out.Task.MaxAttempts = v.MaxAttempts
		}
		if out.StepResults == nil {
			out.StepResults = map[string]json.RawMessage{}
		}
		for _, a := range d.Artifacts {
			_, sk := skipped[a.Node]
			aj := artifactJSON{Node: a.Node, Path: a.Path, Present: a.Present, Size: a.Size, Skipped: sk || a.Skipped, Pending: a.Pending}
			if s := a.Submitted; s != nil {
				aj.Submitted = &submittedJSON{Blob: s.Blob, Size: s.Size, At: s.At}
			}
			out.Artifacts = append(out.Artifacts, aj)
		}
		// Checkpoints that cannot be read are not "none": the error says
		// why, and schema 2 gives null instead of an empty list.
		if cperr == nil || schema < 2 {
			out.Checkpoints = []checkpointJSON{}
		}
		if cperr != nil {
			out.CheckpointsError = firstLineOf(cperr.Error())
		}
		for _, cp := range cps {
			out.Checkpoints = append(out.Checkpoints, c.checkpointJSON(cp))
		}
		if m, err := e.Metadata(d.Task); err != nil {
			out.MetadataError = firstLineOf(err.Error())
		} else {
			out.Metadata = m
		}
		if err := writeJSON(c.Stdout, out); err != nil {
			return err
		}
		c.markSeen(e, st.Task, d.ShownBlobs())
		return nil
	}
	w := c.Stdout
	// Every value may come from a fetched task: what a terminal would act
	// on is removed (text.Clean), line breaks stay.
	line := func(k, v string) { fmt.Fprintf(w, "%-13s %s\n", k+":", text.Clean(v)) }
	line("Task", st.Task)
	if st.Description != "" {
		line("Description", strings.ReplaceAll(st.Description, "\n", "\n              "))
	}
	line("Workflow", fmt.Sprintf("%s (mode %s)", st.Workflow, st.Mode))
	if st.MetaMode != "" {
		line("Meta-mode", metaModeName(st.MetaMode))
	}
	line("Type", orDash(st.TaskType))
	line("Priority", engine.TaskPriority(st))
	status := st.Status
	if d.Archived {
		status += ", archived (refs/hegel/archive/" + st.Task + ")"
	}
	line("Status", status)
	if st.EndedBy != "" {
		// Read from the task's ref, which a fetch may have written.
		line("Ended by", text.Printable(endedByText(st.EndedBy), 200))
	}
	node := st.CurrentNode
	if label := d.Workflow.Label(node); label != node {
		node += " (" + label + ")"
	}
	line("Current node", node)
	line("History", historyLine(st.History))
	if v, err := e.ViewOf(d.Task); err == nil && !d.Workflow.IsTerminal(st.CurrentNode) {
		line("Attempt", fmt.Sprintf("%d of %d", max(st.Attempt, 1), v.MaxAttempts))
	}
	if st.LastFailure != "" {
		line("Last failure", firstLineOf(st.LastFailure))
	}
	if st.Error != nil {
		rec := "recoverable"
		if !st.Error.Recoverable {
			rec = "not recoverable"
		}
		line("Error", fmt.Sprintf("at %s: %s; %s, %s", st.Error.Node, firstLineOf(st.Error.Message), rec, c.stamp(st.Error.Timestamp)))
	}
	if d.Gate != nil {
		line("Waiting for", fmt.Sprintf("approval to go from %s to %s", d.Gate.Node, d.Gate.To))
	}
	if st.PauseReason != "" {
		line("Paused", st.PauseReason)
	}
	line("Owner", c.ownerLabel(e, st)+ownerPath(e, st))
	if st.OwnerEmail != "" {
		label := "Owned by"
		if st.Worktree == "" && st.WorktreeID == "" {
			label = "Last held by" // parked: nobody holds it now
		}
		line(label, text.Printable(st.OwnerEmail, 200)+" (as the task says)")
	}
	line("Started", c.stamp(st.StartedAt))
	line("Updated", c.stamp(st.UpdatedAt))
	if st.EndedAt != nil {
		line("Ended", c.stamp(*st.EndedAt))
	}
	if m, err := e.Metadata(d.Task); err == nil {
		printMetadata(line, m)
	}
	if st.PausedAt != nil {
		line("Paused at", c.stamp(*st.PausedAt))
	}
	if st.ResumedAt != nil {
		line("Resumed at", c.stamp(*st.ResumedAt))
	}
	if len(st.CompletedNodes) > 0 {
		line("Completed", strings.Join(st.CompletedNodes, ", "))
	}
	for _, s := range st.SkippedNodes {
		line("Skipped", fmt.Sprintf("%s (%s)", s.Node, s.Reason))
	}
	if len(st.FailedNodes) > 0 {
		line("Failed", strings.Join(st.FailedNodes, ", "))
	}
	for _, n := range d.Workflow.Order {
		if k := st.Retries[n]; k > 0 {
			line("Retries", fmt.Sprintf("%s: %d", n, k))
		}
	}
	for _, a := range st.Approvals {
		verb := "approved"
		if a.Rejected {
			verb = "rejected"
		}
		s := fmt.Sprintf("%s %s by %s, %s", a.Node, verb, a.By, c.stamp(a.At))
		if a.Comment != "" {
			s += ": " + firstLineOf(a.Comment)
		}
		line("Approval", s)
	}
	for _, q := range st.Questions {
		line("Question", fmt.Sprintf("[%s] %s", q.Node, firstLineOf(q.Question)))
		if q.AnsweredAt != nil {
			line("Answer", fmt.Sprintf("%s, %s", firstLineOf(q.Answer), c.stamp(*q.AnsweredAt)))
		} else {
			line("Answer", "(not answered yet)")
		}
	}
	for _, ev := range st.RollbackHistory {
		s := fmt.Sprintf("%s -> %s, %s", ev.From, ev.To, c.stamp(ev.Timestamp))
		if ev.Reason != "" {
			s += ": " + firstLineOf(ev.Reason)
		}
		line("Rollback", s)
	}
	rounds := engine.Rounds(st, nil)
	for _, node := range sortedRoundNodes(rounds) {
		for _, r := range rounds[node] {
			if r.Outcome != engine.RoundSentBack {
				continue
			}
			s := fmt.Sprintf("%s round %d of %d sent back to %s, %s", node, r.Number, len(rounds[node]), r.To, c.stamp(*r.EndedAt))
			if r.Reason != "" {
				s += ": " + firstLineOf(r.Reason)
			}
			line("Round", s)
		}
	}
	for _, m := range st.NodeMoves {
		s := fmt.Sprintf("%s -> %s by hand, %s", m.From, m.To, c.stamp(m.At))
		if m.By != "" {
			s += " by " + m.By
		}
		if m.Reason != "" {
			s += ": " + firstLineOf(m.Reason)
		}
		line("Goto", s)
	}
	for _, l := range st.FilesLocked {
		if st.Active() {
			line("Locked", fmt.Sprintf("%s, %s", c.quotePath(l.Path), c.stamp(l.At)))
		}
	}
	for _, o := range st.Overrides {
		line("Forced", fmt.Sprintf("%s at %s, %s: %s", o.What, o.Node, c.stamp(o.At), firstLineOf(o.Reason)))
	}
	// The small tables below keep their columns at least as wide as
	// before and widen them for longer names (tabwriter), so a long node
	// or path never pushes one row out of line.
	if len(d.Artifacts) > 0 {
		fmt.Fprintln(w, "Artifacts:")
		where := "in this worktree"
		if d.Archived {
			where = "archived copy"
		}
		tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
		for _, a := range d.Artifacts {
			state := "missing"
			switch {
			case a.Submitted != nil:
				state = fmt.Sprintf("%s, submitted %s (blob %s)", text.Plural(int(a.Submitted.Size), "byte", "bytes"), c.stamp(a.Submitted.At), engine.ShortID(a.Submitted.Blob))
			case skipped[a.Node] != "" || a.Skipped:
				state = "skipped"
				if a.Present {
					state = fmt.Sprintf("skipped (%s present, %s)", text.Plural(int(a.Size), "byte", "bytes"), where)
				}
			case a.Present:
				state = fmt.Sprintf("%s, %s", text.Plural(int(a.Size), "byte", "bytes"), where)
			case a.Pending:
				state = "not written yet"
			}
			fmt.Fprintf(tw, "  %-12s\t%-24s\t%s\n", a.Node, a.Path, state)
		}
		tw.Flush()
	}
	for _, warn := range d.Warnings {
		fmt.Fprintf(w, "Warning:      %s\n", warn)
	}
	if len(st.StepResults) > 0 {
		fmt.Fprintf(w, "Results:      ('git hegel result NODE --task %s' prints one)\n", st.Task)
		tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
		for _, n := range engine.ResultNodes(st, d.Workflow) {
			fmt.Fprintf(tw, "  %-12s\t%s\n", n, c.resultLine(st, n))
		}
		tw.Flush()
	}
	if st.Cancelled {
		line("Cancelled", "its last 'git hegel run' was cancelled")
	}
	switch {
	case cperr != nil:
		fmt.Fprintf(w, "Checkpoints:  cannot be read: %s\n", firstLineOf(cperr.Error()))
	case len(cps) == 0:
		fmt.Fprintln(w, "Checkpoints:  none")
	default:
		fmt.Fprintln(w, "Checkpoints:")
		tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
		for _, cp := range cps {
			fmt.Fprintf(tw, "  %s \t%-12s\t%-6s\t%s\n", cp.ID, cp.Node, cp.Kind, c.age(cp.CreatedAt))
		}
		tw.Flush()
	}
	for _, p := range problems {
		line("Problem", p)
	}
	// The artifacts listed (with their blob ids) count as shown here:
	// approve covers only content this clone has shown or written.
	c.markSeen(e, st.Task, d.ShownBlobs())
	return nil
}

func ownerPath(e *engine.Engine, st *engine.State) string {
	if e.Owns(st) && st.Worktree != "" {
		return " (" + st.Worktree + ")"
	}
	return ""
}

// stamp prints a time as UTC, with how long ago it was.
func (c *cmdCtx) stamp(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04:05 UTC") + " (" + engine.RelativeTime(t, c.Now()) + ")"
}

func runDescribe(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 1, 2); err != nil {
		return err
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	call, text := c.taskOptions(), args[0]
	if len(args) == 2 {
		if c.flags.Changed("task") {
			return usagef(c.name, "name the task once: <task> or --task")
		}
		call.Task, text = args[0], args[1]
	}
	st, err := e.Describe(text, call)
	if err != nil {
		return err
	}
	if st.Description == "" {
		fmt.Fprintf(c.Stdout, "Cleared the description of task %s\n", st.Task)
		return nil
	}
	fmt.Fprintf(c.Stdout, "Described task %s: %s\n", st.Task, firstLineOf(st.Description))
	return nil
}

func runDelete(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 1, 1); err != nil {
		return err
	}
	e, r, err := c.engine()
	if err != nil {
		return err
	}
	name := args[0]
	t, err := e.Lookup(name)
	if err != nil {
		return err
	}
	st := t.State
	if st.Status == engine.StatusStashed {
		return fmt.Errorf("Task '%s' is stashed; dropping its stash ends it ('git hegel stash list' shows it, 'git hegel stash drop' drops it), or 'git hegel stash pop' takes it up", name)
	}
	if !st.Finished() {
		return fmt.Errorf("Task '%s' is %s; abort it first with 'git hegel abort --task %s'", name, st.Status, name)
	}
	cps, _ := c.snapshots(r).Checkpoints(name)
	if !c.boolFlag("yes") {
		what := "its history"
		if len(cps) > 0 {
			what += " and " + text.Plural(len(cps), "checkpoint", "checkpoints")
		}
		ok, err := c.confirm(fmt.Sprintf("Delete task %s (%s/%s, %s) with %s? 'git hegel restore-task %s' can bring it back for %d days. (y/N): ",
			name, st.Workflow, st.CurrentNode, st.Status, what, name, int(engine.DeletedTaskWindow/(24*time.Hour))), "delete")
		if err != nil {
			return err
		}
		if !ok {
			fmt.Fprintln(c.Stdout, "Nothing deleted")
			return nil
		}
	}
	d, err := e.Delete(name)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.Stdout, "Deleted task %s (%s %s). Restore it with 'git hegel restore-task %s'\n", d.Task, d.Workflow, d.Status, d.Task)
	return nil
}

func runRestoreTask(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 1); err != nil {
		return err
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	if len(args) == 0 {
		list, err := e.DeletedTasks()
		if err != nil {
			return err
		}
		if c.boolFlag("json") {
			if list == nil {
				list = []*engine.DeletedTask{}
			}
			return writeJSON(c.Stdout, deletedJSON{Schema: c.jsonSchema(), Deleted: list})
		}
		if len(list) == 0 {
			fmt.Fprintf(c.Stdout, "No deleted tasks in the last %d days\n", int(engine.DeletedTaskWindow/(24*time.Hour)))
			return nil
		}
		for _, d := range list {
			fmt.Fprintf(c.Stdout, "%s: %s %s, deleted %s\n", d.Task, d.Workflow, d.Status, engine.RelativeTime(d.DeletedAt, c.Now()))
		}
		return nil
	}
	if c.boolFlag("json") {
		return usagef(c.name, "--json applies to the list (no task name)")
	}
	d, err := e.RestoreTask(args[0])
	if err != nil {
		return err
	}
	where := "refs/hegel/tasks/" + d.Task
	if d.Archived {
		where = "refs/hegel/archive/" + d.Task
	}
	msg := fmt.Sprintf("Restored task %s (%s %s) at %s", d.Task, d.Workflow, d.Status, where)
	if d.Checkpoints != "" {
		msg += ", with its checkpoints"
	}
	fmt.Fprintln(c.Stdout, msg)
	return nil
}

// resultLine describes a stored step result for show: what ran, how much
// it printed, when, the files it named.
func (c *cmdCtx) resultLine(st *engine.State, node string) string {
	m, _ := engine.StepResultOf(st, node)
	if m.Handler == "" {
		var s string
		if json.Unmarshal(st.StepResults[node], &s) == nil {
			return firstLineOf(s)
		}
		return firstLineOf(string(st.StepResults[node]))
	}
	s := fmt.Sprintf("%s, %s", m.Handler, engine.Size(m.Bytes))
	if m.Truncated {
		s += " (cut at hegel.maxResultSize)"
	}
	s += ", " + c.stamp(m.At)
	if m.Error != "" {
		s += "; failed: " + m.Error
	}
	if len(m.Files) > 0 {
		s += "; files: " + strings.Join(m.Files, ", ")
	}
	return s
}

// sortedRoundNodes lists the nodes entered more than once, by name.
func sortedRoundNodes(r map[string][]engine.Round) []string {
	var out []string
	for n, rs := range r {
		if len(rs) > 1 {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// printMetadata prints what the run used: the agents (with their
// models), the MCP servers, and the estimate. Names come from hook
// payloads, possibly another clone's: one that a terminal would read as
// more than text is quoted.
func printMetadata(line func(k, v string), m *engine.RunMetadata) {
	for _, a := range m.Agents {
		v := printable(a.Name)
		if len(a.Models) > 0 {
			ms := make([]string, len(a.Models))
			for i, x := range a.Models {
				ms[i] = printable(x)
			}
			v += " (" + strings.Join(ms, ", ") + ")"
		}
		line("Agent", v)
	}
	if len(m.MCPServers) > 0 {
		ss := make([]string, len(m.MCPServers))
		for i, x := range m.MCPServers {
			ss[i] = printable(x)
		}
		line("MCP servers", strings.Join(ss, ", "))
	}
	if m.EstimatedDurationMS != nil {
		line("Estimate", text.HumanDuration(time.Duration(*m.EstimatedDurationMS)*time.Millisecond)+" (median of the last completed runs of the workflow)")
	}
}

// printable is s, or s quoted when it holds a character that is not
// printable text (a terminal escape, a newline).
func printable(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return text.Quote(s)
		}
	}
	return s
}

// endedByText says in words what ended a run no command on the task
// ended (State.EndedBy).
func endedByText(by string) string {
	switch op, id, _ := strings.Cut(by, " "); {
	case by == "doctor":
		return "git hegel doctor --fix (no stash held it)"
	case op == "stash" && strings.HasPrefix(id, "drop "):
		return "dropping stash " + strings.TrimPrefix(id, "drop ") + " ('git hegel stash restore' brings it back)"
	case op == "stash" && strings.HasPrefix(id, "clear "):
		return "clearing stash " + strings.TrimPrefix(id, "clear ") + " ('git hegel stash restore' brings it back)"
	}
	return by
}

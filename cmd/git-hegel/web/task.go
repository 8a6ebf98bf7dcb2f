package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

// The task page: everything `git hegel show` prints, the path as a
// timeline, checkpoints with their files, results, artifacts, the ref's
// commit log, and the forms for the decisions a gate or question waits on.

// maxLogShown is how many commits of a task's ref the page lists.
const maxLogShown = 1000

type taskData struct {
	pageData
	Name, Status, Node, NodeLabel, Owner, Priority, Type, Description string
	Workflow, Mode                                                    string
	Archived                                                          bool
	Started, Updated, Ended, InPhase                                  string
	Attempt                                                           string
	LastFailure, Error, PauseReason                                   string
	History                                                           []string
	Gate                                                              *engine.GateView
	GateBlobs                                                         []string
	GateSince                                                         string // when the task reached the gate shown
	GateWho                                                           string
	Question                                                          *engine.Question
	QuestionIndex                                                     int
	QuestionAsked                                                     string
	RejectTargets                                                     []string
	Timeline                                                          []visitRow
	Truncated                                                         bool
	Unplaced                                                          *visitRow
	Checkpoints                                                       []checkpointRow
	CheckpointErr                                                     string
	Actions                                                           []actionRow
	ActionErr                                                         string
	CanUndo                                                           bool
	UndoElsewhere                                                     bool
	RedoUndo                                                          string // the undo a redo takes back ("": none)
	Results                                                           []resultRow
	Artifacts                                                         []artifactRow
	Log                                                               []logRow
	LogMore                                                           bool
	LogErr                                                            string
	Problems                                                          []string
	Graph                                                             *Graph
}

type visitRow struct {
	Node, Entered, Spent string
	Current, Skip        bool
	SkipReason           string
	Attempts             int
	Events               []eventRow
}

type eventRow struct{ Kind, At, Text string }

type checkpointRow struct {
	ID, Node, Kind, Age, When, Message, Branch, Head string
	Count                                            int
	Files                                            []string
	More                                             int
}

type resultRow struct{ Node, JSON string }

type artifactRow struct {
	Node, Path, State, Href string
	Present                 bool
}

type logRow struct{ Commit, Short, When, Author, Subject string }

func (s *Server) loadTask(req *request) (*engine.TaskDetail, error) {
	name := req.PathValue("name")
	if err := engine.CheckTaskName(name); err != nil {
		return nil, err
	}
	return req.repo.Engine.Show(name)
}

func (s *Server) task(req *request) (string, any, error) {
	d, err := s.loadTask(req)
	if err != nil {
		return "", nil, err
	}
	e := req.repo.Engine
	st, wf, now := d.State, d.Workflow, req.now
	td := taskData{pageData: s.base(req, "Task "+st.Task), Name: st.Task, Status: st.Status, Node: st.CurrentNode, NodeLabel: wf.Label(st.CurrentNode),
		Owner: e.OwnerLabel(st), Priority: engine.TaskPriority(st), Type: st.TaskType, Description: st.Description, Workflow: st.Workflow, Mode: st.Mode,
		Archived: d.Archived, Started: stamp(st.StartedAt, now), Updated: stamp(st.UpdatedAt, now),
		InPhase: text.HumanDuration(st.TimeInPhase(now)), LastFailure: st.LastFailure, PauseReason: st.PauseReason,
		History: st.History, Gate: d.Gate}
	td.Nav = "board"
	td.Flash = s.takeFlash(req)
	if st.EndedAt != nil {
		td.Ended = stamp(*st.EndedAt, now)
	}
	if !wf.IsTerminal(st.CurrentNode) {
		if v, err := e.ViewOf(d.Task); err == nil {
			td.Attempt = fmt.Sprintf("%d of %d", max(st.Attempt, 1), v.MaxAttempts)
		}
	}
	if st.Error != nil {
		td.Error = fmt.Sprintf("at %s: %s (%s)", st.Error.Node, st.Error.Message, stamp(st.Error.Timestamp, now))
	}
	if d.Gate != nil {
		td.GateWho = "anyone (the decision is recorded under your git config user.name)"
		if len(d.Gate.Approvers) > 0 {
			td.GateWho = strings.Join(d.Gate.Approvers, " or ") + " (by git config user.name)"
		}
		// Reject sends the task back: by default to the node before.
		for i := len(st.History) - 2; i >= 0; i-- {
			if n := st.History[i]; !slices.Contains(td.RejectTargets, n) && n != st.CurrentNode {
				td.RejectTargets = append(td.RejectTargets, n)
			}
		}
	}
	if st.Status == engine.StatusAwaitingAnswer {
		for i := range st.Questions {
			if st.Questions[i].AnsweredAt == nil {
				td.Question = &st.Questions[i]
				td.QuestionIndex, td.QuestionAsked = i, st.Questions[i].AskedAt.Format(time.RFC3339Nano)
			}
		}
	}
	if pe, ok := d.Problems.(*engine.StateError); ok {
		td.Problems = pe.Problems
	} else if d.Problems != nil {
		td.Problems = []string{d.Problems.Error()}
	}
	ops, more, err := req.repo.Git.TaskLog(st.Task, d.Archived, maxLogShown)
	if err != nil {
		td.LogErr = err.Error()
	}
	td.LogMore = more
	for _, op := range ops {
		td.Log = append(td.Log, logRow{Commit: op.Commit, Short: op.Commit[:min(7, len(op.Commit))], When: stamp(op.Time, now), Author: op.Author, Subject: op.Subject})
	}
	tl := engine.BuildTimeline(st, ops, now)
	td.Truncated = tl.Truncated
	for _, v := range tl.Visits {
		td.Timeline = append(td.Timeline, visitRowOf(v, now))
	}
	if u := visitRowOf(tl.Unplaced, now); len(u.Events) > 0 {
		td.Unplaced = &u
	}
	td.Checkpoints, td.CheckpointErr = s.checkpoints(req, st.Task, now)
	if !td.Archived {
		td.Actions, td.ActionErr = s.actions(req, st.Task, now)
		// An undo writes the owning worktree's files: elsewhere it is
		// refused, so the forms are not offered.
		td.CanUndo = req.repo.Undo != nil && st.Active() && e.Owns(st)
		td.UndoElsewhere = req.repo.Undo != nil && st.Active() && !td.CanUndo && len(td.Actions) > 0
		if td.CanUndo {
			td.RedoUndo = s.redoable(req, st.Task)
		}
	}
	for _, n := range resultOrder(st.StepResults, wf.Order) {
		td.Results = append(td.Results, resultRow{Node: n, JSON: prettyJSON(st.StepResults[n])})
	}
	skipped := map[string]bool{}
	for _, sk := range st.SkippedNodes {
		skipped[sk.Node] = true
	}
	for _, a := range d.Artifacts {
		row := artifactRow{Node: a.Node, Path: a.Path, Present: a.Present || a.Submitted != nil}
		switch {
		case a.Submitted != nil:
			row.State = text.Plural(int(a.Submitted.Size), "byte", "bytes") + ", submitted " + a.Submitted.At.Format("2006-01-02 15:04") + " (blob " + engine.ShortID(a.Submitted.Blob) + ")"
		case a.Present && d.Archived:
			row.State = text.Plural(int(a.Size), "byte", "bytes") + ", archived copy"
		case a.Present:
			row.State = text.Plural(int(a.Size), "byte", "bytes") + ", in the worktree"
		case skipped[a.Node] || a.Skipped:
			row.State = "skipped"
		default:
			row.State = "missing"
		}
		if row.Present {
			row.Href = "/task/" + url.PathEscape(st.Task) + "/artifact/" + escapePath(a.Path) + "?node=" + url.QueryEscape(a.Node)
		}
		td.Artifacts = append(td.Artifacts, row)
	}
	td.Graph = LayoutWorkflow(wf, marksOf(st, wf))
	// The approve form carries the blob ids of the gate's artifacts this
	// page lists, so an approval sent from it covers only those; the
	// artifacts listed count as shown on this clone (approve on the
	// command line checks that).
	td.GateBlobs = d.GateBlobs()
	td.GateSince = st.PhaseStartTime.Format(time.RFC3339Nano)
	e.MarkSeen(st.Task, d.ShownBlobs())
	return "task.html", td, nil
}

// visitRowOf turns a visit into a timeline row, its events in time order.
func visitRowOf(v engine.Visit, now time.Time) visitRow {
	r := visitRow{Node: v.Node, Current: v.Current, Attempts: v.Attempts}
	if !v.Entered.IsZero() {
		r.Entered = clock(v.Entered, now)
		r.Spent = text.HumanDuration(v.Spent)
	}
	if v.Skip != nil {
		r.Skip, r.SkipReason = true, v.Skip.Reason
		return r
	}
	type ev struct {
		at time.Time
		eventRow
	}
	var evs []ev
	add := func(at time.Time, kind, text string) {
		evs = append(evs, ev{at, eventRow{Kind: kind, At: clock(at, now), Text: text}})
	}
	for _, f := range v.Failures {
		what := fmt.Sprintf("attempt %d of %d failed: %s", f.Attempt, f.Max, f.Reason)
		if f.Final {
			what += " (the task failed)"
		}
		add(f.At, "failure", what)
	}
	for _, q := range v.Questions {
		add(q.AskedAt, "question", "asked: "+q.Question)
		if q.AnsweredAt != nil {
			add(*q.AnsweredAt, "answer", "answered: "+q.Answer)
		}
	}
	for _, a := range v.Approvals {
		verb := "approved by "
		if a.Rejected {
			verb = "rejected by "
		}
		text := verb + a.By
		if a.Comment != "" {
			text += ": " + a.Comment
		}
		kind := "approval"
		if a.Rejected {
			kind = "rejection"
		}
		add(a.At, kind, text)
	}
	for _, rb := range v.Rollbacks {
		text := "back to " + rb.To
		if rb.Reason != "" {
			text += ": " + rb.Reason
		}
		add(rb.Timestamp, "rollback", text)
	}
	for _, o := range v.Overrides {
		text := "forced " + o.What
		if o.Reason != "" {
			text += ": " + o.Reason
		}
		add(o.At, "override", text)
	}
	slices.SortStableFunc(evs, func(a, b ev) int { return a.at.Compare(b.at) })
	for _, e := range evs {
		r.Events = append(r.Events, e.eventRow)
	}
	return r
}

func (s *Server) checkpoints(req *request, task string, now time.Time) ([]checkpointRow, string) {
	if req.repo.Checkpoints == nil {
		return nil, ""
	}
	cps, err := req.repo.Checkpoints(task)
	if err != nil {
		return nil, err.Error()
	}
	var out []checkpointRow
	for i := len(cps) - 1; i >= 0; i-- { // newest first
		out = append(out, checkpointRowOf(cps[i], now))
	}
	return out, ""
}

func checkpointRowOf(cp *engine.Checkpoint, now time.Time) checkpointRow {
	row := checkpointRow{ID: cp.ID, Node: cp.Node, Kind: cp.Kind, Age: engine.RelativeTime(cp.CreatedAt, now), When: stamp(cp.CreatedAt, now),
		Message: cp.Message, Branch: cp.Branch, Count: cp.FilesChangedCount, Files: cp.FilesChanged}
	if cp.Head != "" {
		row.Head = cp.Head[:min(7, len(cp.Head))]
	}
	if cp.Kind == engine.CheckpointSafety && cp.RollbackTo != "" && row.Message == "" {
		row.Message = "before rolling back to " + cp.RollbackTo
	}
	row.More = cp.FilesChangedCount - len(cp.FilesChanged)
	return row
}

// marksOf is what the graph highlights for a task: where it is, where it
// went, what it skipped.
func marksOf(st *engine.State, wf *workflow.Definition) *GraphMarks {
	m := &GraphMarks{Current: st.CurrentNode, Visited: map[string]bool{}, Skipped: map[string]bool{}, TypeSkip: map[string]bool{}, Taken: map[[2]string]int{}}
	path := st.History
	if len(st.PhaseLog) > 0 {
		path = nil
		for _, p := range st.PhaseLog {
			path = append(path, p.Node)
		}
	}
	for i, n := range path {
		m.Visited[n] = true
		if i > 0 {
			m.Taken[[2]string{path[i-1], n}]++
		}
	}
	for _, n := range st.History {
		m.Visited[n] = true
	}
	for _, sk := range st.SkippedNodes {
		m.Skipped[sk.Node] = true
	}
	for _, n := range wf.Order {
		if wf.SkippedFor(n, st.TaskType) {
			m.TypeSkip[n] = true
		}
	}
	return m
}

// resultOrder lists the nodes with results: the workflow's order first.
func resultOrder(results map[string]json.RawMessage, order []string) []string {
	var out []string
	for _, n := range order {
		if _, ok := results[n]; ok {
			out = append(out, n)
		}
	}
	var rest []string
	for n := range results {
		if !slices.Contains(order, n) {
			rest = append(rest, n)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

func prettyJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// artifactData is an artifact's page.
type artifactData struct {
	pageData
	Task, Path, Where string
	Markdown          bool
	HTML              any // template.HTML for Markdown
	Text              string
}

func (s *Server) artifact(req *request) (string, any, error) {
	d, err := s.loadTask(req)
	if err != nil {
		return "", nil, err
	}
	p := req.PathValue("path")
	a, err := req.repo.Engine.Artifact(d.Task, p, req.URL.Query().Get("node"))
	if errors.Is(err, engine.ErrNotFound) {
		return "", nil, notFound("Task %s has no artifact %s", d.State.Task, p)
	}
	if err != nil {
		return "", nil, err
	}
	req.repo.Engine.MarkSeen(d.State.Task, []string{a.Blob})
	data := a.Data
	ad := artifactData{pageData: s.base(req, p+" — "+d.State.Task), Task: d.State.Task, Path: a.Path, Where: "in this worktree (node " + a.Node + " has not submitted it)"}
	ad.Nav = "board"
	switch a.From {
	case "submitted":
		ad.Where = "as node " + a.Node + " submitted it (refs/hegel/tasks/" + d.State.Task + ", blob " + engine.ShortID(a.Blob) + ")"
	case "archive":
		ad.Where = "archived copy (refs/hegel/archive/" + d.State.Task + ")"
	}
	if strings.EqualFold(path.Ext(p), ".md") || strings.EqualFold(path.Ext(p), ".markdown") {
		ad.Markdown = true
		ad.HTML = trustedHTML(RenderMarkdown(string(data)))
	} else {
		ad.Text = string(bytes.ToValidUTF8(data, []byte("\uFFFD")))
	}
	return "artifact.html", ad, nil
}

// taskWorkflow is the graph of the definition a task runs, its position
// highlighted.
func (s *Server) taskWorkflow(req *request) (string, any, error) {
	d, err := s.loadTask(req)
	if err != nil {
		return "", nil, err
	}
	wd := workflowData{pageData: s.base(req, "Workflow "+d.Workflow.Name+" — task "+d.State.Task), Workflow: d.Workflow, Task: d.State.Task,
		Graph: LayoutWorkflow(d.Workflow, marksOf(d.State, d.Workflow)), Source: "as stored with task " + d.State.Task}
	wd.Nav = "workflows"
	wd.Nodes = nodeRows(d.Workflow, req.repo.Engine.MaxAttempts)
	return "workflow.html", wd, nil
}

// stamp prints a time as UTC with how long ago it was.
func stamp(t time.Time, now time.Time) string {
	return t.UTC().Format("2006-01-02 15:04:05 UTC") + " (" + engine.RelativeTime(t, now) + ")"
}

// clock prints a time short: the time of day today, the date otherwise.
func clock(t time.Time, now time.Time) string {
	t = t.UTC()
	if t.Format("2006-01-02") == now.UTC().Format("2006-01-02") {
		return t.Format("15:04:05")
	}
	return t.Format("2006-01-02 15:04")
}

func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// takeFlash returns the message an action left for the page it
// redirected to, and clears it.
func (s *Server) takeFlash(req *request) string {
	c, err := req.Cookie(s.cookieName("flash"))
	if err != nil {
		return ""
	}
	msg, err := url.QueryUnescape(c.Value)
	if err != nil {
		return ""
	}
	req.clearFlash = &http.Cookie{Name: s.cookieName("flash"), Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode}
	return msg
}

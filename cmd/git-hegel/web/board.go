package web

import (
	"slices"
	"strings"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/text"
)

// The board: every task as a card, in columns by status.

// column is one status column.
type column struct {
	Key, Title string
	Cards      []card
	Hidden     int // cards left out (finished tasks beyond the first few)
}

// card is one task on the board.
type card struct {
	Name, Workflow, Node, Type, Priority, Owner, InPhase, Status, Updated string
	Description                                                           string
	Archived, Current                                                     bool
	Waiting                                                               string // what the task waits for
}

type boardData struct {
	pageData
	Columns              []column
	Damaged              []damaged
	Workflow, Type, Q    string
	Workflows, Types     []string
	Total, Shown         int
	AllFinished          bool
	FinishedLimit        int
	FilterActive         bool
	QueryWithoutFinished string
}

type damaged struct{ Name, Error string }

// finishedShown is how many finished tasks the board shows before "all".
const finishedShown = 60

// columnOf is the column a task's status puts it in.
func columnOf(st *engine.State) string {
	switch st.Status {
	case engine.StatusInitializing:
		return engine.StatusActive // setting up, about to run: with the running ones
	case engine.StatusActive, engine.StatusAwaitingApproval, engine.StatusAwaitingAnswer, engine.StatusPaused, engine.StatusFailed, engine.StatusStashed:
		return st.Status
	}
	return "finished"
}

var columnTitles = []struct{ key, title string }{
	{engine.StatusActive, "Active"},
	{engine.StatusAwaitingApproval, "Awaiting approval"},
	{engine.StatusAwaitingAnswer, "Awaiting answer"},
	{engine.StatusPaused, "Paused"},
	{engine.StatusFailed, "Failed"},
	{engine.StatusStashed, "Stashed"},
	{"finished", "Completed / archived"},
}

func (s *Server) board(req *request) (string, any, error) {
	e := req.repo.Engine
	list, err := e.ListTasks(engine.ListOptions{All: true, Archived: true})
	if err != nil {
		return "", nil, err
	}
	q := req.URL.Query()
	d := boardData{pageData: s.base(req, "Board"), Workflow: q.Get("workflow"), Type: q.Get("type"), Q: strings.TrimSpace(q.Get("q")),
		AllFinished: q.Get("finished") == "all", FinishedLimit: finishedShown}
	d.Nav = "board"
	d.FilterActive = d.Workflow != "" || d.Type != "" || d.Q != ""
	nq := q
	nq.Set("finished", "all")
	d.QueryWithoutFinished = nq.Encode()
	cols := map[string]*column{}
	for _, c := range columnTitles {
		cols[c.key] = &column{Key: c.key, Title: c.title}
	}
	needle := strings.ToLower(d.Q)
	wfs, types := map[string]bool{}, map[string]bool{}
	for _, t := range list {
		d.Total++
		if t.Err != nil {
			if needle == "" || strings.Contains(strings.ToLower(t.Name), needle) {
				d.Damaged = append(d.Damaged, damaged{t.Name, t.Err.Error()})
			}
			continue
		}
		st := t.State
		wfs[st.Workflow] = true
		if st.TaskType != "" {
			types[st.TaskType] = true
		}
		if d.Workflow != "" && st.Workflow != d.Workflow || d.Type != "" && st.TaskType != d.Type {
			continue
		}
		if needle != "" && !matches(needle, t.Name, st.Description, st.Workflow, st.CurrentNode, st.TaskType, st.Status) {
			continue
		}
		col := cols[columnOf(st)]
		if col.Key == "finished" && !d.AllFinished && len(col.Cards) >= finishedShown {
			col.Hidden++
			continue
		}
		d.Shown++
		col.Cards = append(col.Cards, s.cardOf(e, t, req))
	}
	for _, c := range columnTitles {
		col := cols[c.key]
		if c.key == engine.StatusStashed && len(col.Cards) == 0 {
			continue // a column only when something is stashed
		}
		d.Columns = append(d.Columns, *col)
	}
	d.Workflows, d.Types = sortedSet(wfs), sortedSet(types)
	return "board.html", d, nil
}

func (s *Server) cardOf(e *engine.Engine, t engine.TaskInfo, req *request) card {
	st := t.State
	c := card{Name: t.Name, Workflow: st.Workflow, Node: st.CurrentNode, Type: st.TaskType, Priority: engine.TaskPriority(st),
		Owner: e.OwnerLabel(st), InPhase: text.HumanDuration(st.TimeInPhase(req.now)), Status: st.Status,
		Updated: engine.RelativeTime(st.UpdatedAt, req.now), Description: firstLine(st.Description),
		Archived: t.Archived, Current: t.Current}
	switch st.Status {
	case engine.StatusAwaitingApproval:
		c.Waiting = "approval at " + st.CurrentNode
		if st.PendingClaim != "" {
			c.Waiting += " (" + st.PendingClaim + ")"
		}
	case engine.StatusAwaitingAnswer:
		for _, q := range st.Questions {
			if q.AnsweredAt == nil {
				c.Waiting = "answer: " + firstLine(q.Question)
			}
		}
	case engine.StatusFailed:
		if st.Error != nil {
			c.Waiting = "failed: " + firstLine(st.Error.Message)
		}
	case engine.StatusPaused:
		c.Waiting = firstLine(st.PauseReason)
	}
	return c
}

func matches(needle string, fields ...string) bool {
	for _, f := range fields {
		if strings.Contains(strings.ToLower(f), needle) {
			return true
		}
	}
	return false
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

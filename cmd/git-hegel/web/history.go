package web

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/gitstore"
)

// The history page: `git hegel log` with the same filters, as a table.

// defaultHistoryShown and maxHistoryShown bound the rows (git hegel log's
// -n): a long history is read day by day from the newest until enough
// runs are found.
const (
	defaultHistoryShown = 200
	maxHistoryShown     = 5000
)

type historyData struct {
	pageData
	Workflow, Status, Task, Type, Since, Until, Q, N string
	Workflows                                        []string
	Statuses                                         []string
	Error                                            string
	Rows                                             []historyRow
	Limit                                            int
	More                                             string // the query showing more rows, when the limit was reached
	Damaged                                          string
}

type historyRow struct {
	ID, Started, Workflow, Task, Type, Status, Duration, Error, User string
	Open                                                             bool
}

// historyStatuses are the statuses the filter offers: the finished ones
// history entries have, then the open ones.
var historyStatuses = []string{engine.StatusCompleted, engine.StatusFailed, engine.StatusAborted, engine.StatusRolledBack,
	engine.StatusInitializing, engine.StatusActive, engine.StatusAwaitingApproval, engine.StatusAwaitingAnswer, engine.StatusPaused}

func (s *Server) history(req *request) (string, any, error) {
	q := req.URL.Query()
	d := historyData{pageData: s.base(req, "History"), Workflow: q.Get("workflow"), Status: q.Get("status"), Task: strings.TrimSpace(q.Get("task")),
		Type: q.Get("type"), Since: strings.TrimSpace(q.Get("since")), Until: strings.TrimSpace(q.Get("until")), Q: q.Get("q"), N: q.Get("n"),
		Statuses: historyStatuses}
	d.Nav = "history"
	e := req.repo.Engine
	if reg, err := e.Workflows(); err == nil {
		for _, wf := range reg.List() {
			d.Workflows = append(d.Workflows, wf.Name)
		}
	}
	f, err := historyFilter(d, req.now)
	if err != nil {
		d.Error = err.Error()
		return "history.html", d, &renderedError{code: 400}
	}
	d.Limit = f.Limit
	recs, err := e.Log(f)
	if err != nil {
		return "", nil, err
	}
	if h, ok := e.History.(*gitstore.History); ok && len(h.Damaged) > 0 {
		d.Damaged = fmt.Sprintf("%s could not be read and %s left out (first: %s); 'git hegel doctor' says more",
			text.Plural(len(h.Damaged), "history entry", "history entries"), map[bool]string{true: "was", false: "were"}[len(h.Damaged) == 1], h.Damaged[0])
	}
	for _, rec := range recs {
		row := historyRow{ID: rec.ShortID(), Started: clock(rec.StartedAt, req.now), Workflow: rec.Workflow, Task: rec.Task, Type: rec.TaskType,
			Status: rec.Status, Duration: text.HumanDuration(time.Duration(rec.DurationMS) * time.Millisecond), Error: firstLine(rec.Error),
			User: rec.User, Open: rec.Open}
		if rec.Open {
			row.ID = "open"
			row.Duration += " so far"
		}
		d.Rows = append(d.Rows, row)
	}
	if len(recs) == f.Limit && f.Limit < maxHistoryShown {
		more := req.URL.Query()
		more.Set("n", strconv.Itoa(min(f.Limit*5, maxHistoryShown)))
		d.More = more.Encode()
	}
	return "history.html", d, nil
}

// historyFilter reads the form as `git hegel log` reads its flags.
func historyFilter(d historyData, now time.Time) (engine.HistoryFilter, error) {
	f := engine.HistoryFilter{Workflow: d.Workflow, Task: d.Task, Type: d.Type, Grep: d.Q, Limit: defaultHistoryShown}
	if f.Task != "" {
		if err := engine.CheckTaskName(f.Task); err != nil {
			return f, err
		}
	}
	if d.Status != "" {
		st, err := engine.CheckHistoryStatus(d.Status)
		if err != nil {
			return f, err
		}
		f.Status = st
	}
	var err error
	if d.Since != "" {
		if f.Since, err = gitstore.ParseDate(d.Since, now, false); err != nil {
			return f, fmt.Errorf("since: %v", err)
		}
	}
	if d.Until != "" {
		if f.Until, err = gitstore.ParseDate(d.Until, now, true); err != nil {
			return f, fmt.Errorf("until: %v", err)
		}
	}
	if d.N != "" {
		n, err := strconv.Atoi(d.N)
		if err != nil || n < 1 || n > maxHistoryShown {
			return f, fmt.Errorf("show: a number from 1 to %d, not '%s'", maxHistoryShown, d.N)
		}
		f.Limit = n
	}
	return f, nil
}

package engine

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/git-hegel/git-hegel/engine/text"
)

// HistoryFilter selects runs for `git hegel log`. Empty fields select
// everything; times bound the run's start (Since inclusive, Until
// inclusive).
type HistoryFilter struct {
	Workflow, Status, Task, Type string
	Grep                         string // a substring of the task, its description or its error
	Since, Until                 time.Time
	Limit                        int // 0: no limit
}

// LogRecord is one line of `git hegel log`: a history entry, or a task
// still open (Open), read from its task ref, which has no entry yet.
type LogRecord struct {
	*HistoryEntry
	Open bool
}

// upperStatuses maps the upper-case status names of the executions.jsonl
// format (log --format=jsonl) to ours, for --status.
var upperStatuses = map[string]string{
	"COMPLETED": StatusCompleted, "ERROR": StatusFailed, "ROLLBACK": StatusRolledBack,
	"INITIALIZING": StatusInitializing, "EXECUTING": StatusActive, "PAUSED": StatusPaused, "ABORTED": StatusAborted,
}

// openStatuses are the statuses an open task may have.
var openStatuses = []string{StatusInitializing, StatusActive, StatusAwaitingApproval, StatusAwaitingAnswer, StatusPaused, StatusFailed}

// CheckHistoryStatus returns the status --status names (ours, or the
// executions.jsonl format's upper-case ones), or a usage error.
func CheckHistoryStatus(s string) (string, error) {
	if v, ok := upperStatuses[s]; ok {
		return v, nil
	}
	if slices.Contains(historyStatuses, s) || slices.Contains(openStatuses, s) {
		return s, nil
	}
	all := slices.Clone(historyStatuses)
	for _, o := range openStatuses {
		if !slices.Contains(all, o) {
			all = append(all, o)
		}
	}
	return "", badNamef("Unknown status '%s' (use %s)", s, text.JoinQuoted(all))
}

func (f *HistoryFilter) match(h *HistoryEntry) bool {
	switch {
	case f.Workflow != "" && h.Workflow != f.Workflow,
		f.Status != "" && h.Status != f.Status,
		f.Task != "" && h.Task != f.Task,
		f.Type != "" && h.TaskType != f.Type,
		!f.Since.IsZero() && h.StartedAt.Before(f.Since),
		!f.Until.IsZero() && h.StartedAt.After(f.Until):
		return false
	}
	if f.Grep != "" && !strings.Contains(h.Task, f.Grep) && !strings.Contains(h.Description, f.Grep) && !strings.Contains(h.Error, f.Grep) {
		return false
	}
	return true
}

// Log returns the runs f selects, newest start first: history entries,
// and the open tasks from their task refs. It reads the history day by
// day from the newest and stops once it has f.Limit entries.
func (e *Engine) Log(f HistoryFilter) ([]LogRecord, error) {
	if e.History == nil {
		return nil, fmt.Errorf("this repository keeps no history")
	}
	var to time.Time
	if !f.Until.IsZero() {
		to = f.Until.Add(time.Nanosecond)
	}
	open, err := e.openRuns(f.Since, to)
	if err != nil {
		return nil, err
	}
	var out []LogRecord
	now := e.now()
	for _, st := range open {
		h := NewHistoryEntry(st, nil, now, nil, "")
		h.ID, h.EndedAt, h.Status = "", time.Time{}, st.Status
		if f.match(h) {
			out = append(out, LogRecord{HistoryEntry: h, Open: true})
		}
	}
	days, err := historyDaysIn(e.History, f.Since, to)
	if err != nil {
		return nil, err
	}
	found := 0
	for i := len(days) - 1; i >= 0 && (f.Limit <= 0 || found < f.Limit); i-- {
		entries, err := e.History.HistoryDay(days[i])
		if err != nil {
			return nil, err
		}
		for _, h := range entries {
			if f.match(h) {
				out = append(out, LogRecord{HistoryEntry: h})
				found++
			}
		}
	}
	slices.SortStableFunc(out, func(a, b LogRecord) int {
		return cmp.Or(b.StartedAt.Compare(a.StartedAt), cmp.Compare(b.ID, a.ID), cmp.Compare(a.Task, b.Task))
	})
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

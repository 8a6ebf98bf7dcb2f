package engine

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"time"
)

// Digest is what the statistics read of one run. gc keeps the digests of
// the entries it removes, so the statistics of a day never change when
// its entries go.
type Digest struct {
	ID         string             `json:"id"`
	Workflow   string             `json:"workflow"`
	Status     string             `json:"status"`
	StartedAt  time.Time          `json:"started_at"`
	DurationMS int64              `json:"duration_ms"`
	Nodes      map[string]NodeRun `json:"nodes,omitempty"`
}

// Digest returns the entry's digest.
func (h *HistoryEntry) Digest() Digest {
	return Digest{ID: h.ID, Workflow: h.Workflow, Status: h.Status, StartedAt: h.StartedAt, DurationMS: h.DurationMS, Nodes: h.Nodes}
}

// Grouping of `git hegel stats --by`.
const (
	ByDay      = "day"
	ByWeek     = "week"
	ByWorkflow = "workflow"
)

// StatsOptions choose the runs a summary covers: those that started in
// [From, To), in groups By (one summary when empty). Days and weeks are
// those of Loc.
type StatsOptions struct {
	From, To time.Time
	By       string
	Loc      *time.Location
}

// Summary describes a set of runs (a day's, a week's, a workflow's): how
// many ended how, how long they took, with per-node figures.
type Summary struct {
	// Label names the group: a day (2006-01-02), an ISO week (2026-W01),
	// a workflow, or, ungrouped, the period.
	Label       string
	From, To    time.Time
	Total       int // runs that ended: completed + failed + aborted + rolled back
	Completed   int
	Failed      int
	Aborted     int
	RolledBack  int
	Active      int // open tasks that started in the period (not in Total)
	TotalMS     int64
	AverageMS   int64 // TotalMS / Total, rounded down
	Workflows   map[string]int
	MostUsed    string // "none" when there were no runs
	SuccessRate float64
	Nodes       []NodeStats
}

// NodeStats are one node's figures over a set of runs.
type NodeStats struct {
	Workflow, Node string
	Runs           int   // runs that visited it
	MedianMS       int64 // median of the time each run spent there
	Attempts       int
	Retries        int     // failed attempts
	FailureRate    float64 // Retries / Attempts
}

// Summarize computes the summary of runs (and of the active count open).
func Summarize(label string, from, to time.Time, runs []Digest, open int) Summary {
	s := Summary{Label: label, From: from, To: to, Total: len(runs), Active: open, Workflows: map[string]int{}, MostUsed: "none"}
	type acc struct {
		times             []int64
		attempts, retries int
	}
	nodes := map[[2]string]*acc{}
	for _, r := range runs {
		switch r.Status {
		case StatusCompleted:
			s.Completed++
		case StatusFailed:
			s.Failed++
		case StatusAborted:
			s.Aborted++
		case StatusRolledBack:
			s.RolledBack++
		}
		s.TotalMS += r.DurationMS
		s.Workflows[r.Workflow]++
		for name, n := range r.Nodes {
			k := [2]string{r.Workflow, name}
			a := nodes[k]
			if a == nil {
				a = &acc{}
				nodes[k] = a
			}
			a.times = append(a.times, n.TimeMS)
			a.attempts += n.Attempts
			a.retries += n.Retries
		}
	}
	if s.Total > 0 {
		s.AverageMS = s.TotalMS / int64(s.Total)
		s.SuccessRate = float64(s.Completed) / float64(s.Total)
		best := 0
		for w, n := range s.Workflows {
			if n > best || (n == best && w < s.MostUsed) {
				s.MostUsed, best = w, n
			}
		}
	}
	for k, a := range nodes {
		ns := NodeStats{Workflow: k[0], Node: k[1], Runs: len(a.times), MedianMS: median(a.times), Attempts: a.attempts, Retries: a.retries}
		if a.attempts > 0 {
			ns.FailureRate = float64(a.retries) / float64(a.attempts)
		}
		s.Nodes = append(s.Nodes, ns)
	}
	slices.SortFunc(s.Nodes, func(a, b NodeStats) int {
		return cmp.Or(cmp.Compare(a.Workflow, b.Workflow), cmp.Compare(a.Node, b.Node))
	})
	return s
}

// median of the values (the mean of the middle two, rounded down, for an
// even count).
func median(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// Stats summarizes the runs that started in [o.From, o.To) with their
// per-node figures: one summary, or one per group.
func (e *Engine) Stats(o StatsOptions) ([]Summary, error) {
	if e.History == nil {
		return nil, fmt.Errorf("this repository keeps no history")
	}
	loc := o.Loc
	if loc == nil {
		loc = time.Local
	}
	days, err := historyDaysIn(e.History, o.From, o.To)
	if err != nil {
		return nil, err
	}
	var runs []Digest
	for _, d := range days {
		ds, err := e.History.HistoryDigests(d)
		if err != nil {
			return nil, err
		}
		for _, r := range ds {
			if !r.StartedAt.Before(o.From) && r.StartedAt.Before(o.To) {
				runs = append(runs, r)
			}
		}
	}
	open, err := e.openRuns(o.From, o.To)
	if err != nil {
		return nil, err
	}
	if o.By == "" {
		return []Summary{Summarize(periodLabel(o.From, o.To, loc), o.From, o.To, runs, len(open))}, nil
	}
	type group struct {
		from, to time.Time
		runs     []Digest
		open     int
	}
	groups := map[string]*group{}
	key := func(t time.Time, wf string) (string, time.Time, time.Time) {
		t = t.In(loc)
		switch o.By {
		case ByWorkflow:
			return wf, o.From, o.To
		case ByWeek:
			y, w := t.ISOWeek()
			start := dayStart(t, loc).AddDate(0, 0, -((int(t.Weekday()) + 6) % 7))
			return fmt.Sprintf("%04d-W%02d", y, w), start, start.AddDate(0, 0, 7)
		}
		start := dayStart(t, loc)
		return start.Format(HistoryDayLayout), start, start.AddDate(0, 0, 1)
	}
	get := func(t time.Time, wf string) *group {
		k, from, to := key(t, wf)
		g := groups[k]
		if g == nil {
			g = &group{from: from, to: to}
			groups[k] = g
		}
		return g
	}
	for _, r := range runs {
		g := get(r.StartedAt, r.Workflow)
		g.runs = append(g.runs, r)
	}
	for _, st := range open {
		get(st.StartedAt, st.Workflow).open++
	}
	labels := make([]string, 0, len(groups))
	for k := range groups {
		labels = append(labels, k)
	}
	sort.Strings(labels)
	out := make([]Summary, 0, len(labels))
	for _, k := range labels {
		g := groups[k]
		out = append(out, Summarize(k, g.from, g.to, g.runs, g.open))
	}
	return out, nil
}

// periodLabel names [from, to): one day, or the first and last day.
func periodLabel(from, to time.Time, loc *time.Location) string {
	first := from.In(loc).Format(HistoryDayLayout)
	last := to.Add(-time.Nanosecond).In(loc).Format(HistoryDayLayout)
	if first == last {
		return first
	}
	return first + ".." + last
}

// dayStart is midnight of t's day in loc.
func dayStart(t time.Time, loc *time.Location) time.Time {
	t = t.In(loc)
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
}

// DayRange is [midnight, next midnight) of day (2006-01-02) in loc.
func DayRange(day string, loc *time.Location) (time.Time, time.Time, error) {
	t, err := time.ParseInLocation(HistoryDayLayout, day, loc)
	if err != nil {
		return time.Time{}, time.Time{}, badNamef("Not a day: '%s' (use YYYY-MM-DD)", day)
	}
	return t, t.AddDate(0, 0, 1), nil
}

// historyDaysIn lists the stored UTC days that may hold runs started in
// [from, to) (zero times leave that side open), oldest first.
func historyDaysIn(h HistoryStore, from, to time.Time) ([]string, error) {
	all, err := h.HistoryDays()
	if err != nil {
		return nil, err
	}
	lo, hi := "", "9999-12-31"
	if !from.IsZero() {
		lo = from.UTC().Format(HistoryDayLayout)
	}
	if !to.IsZero() {
		hi = to.Add(-time.Nanosecond).UTC().Format(HistoryDayLayout)
	}
	var out []string
	for _, d := range all {
		if d >= lo && d <= hi {
			out = append(out, d)
		}
	}
	return out, nil
}

// openRuns returns the open tasks (not stashed) that started in
// [from, to), read from their task refs: they have no history entry yet.
// A task that cannot be read is left out.
func (e *Engine) openRuns(from, to time.Time) ([]*State, error) {
	var listed []ListedTask
	var err error
	if e.Archive != nil {
		listed, err = e.Archive.ListStates(false)
	} else {
		listed, err = e.listLive()
	}
	if err != nil {
		return nil, err
	}
	var out []*State
	for _, l := range listed {
		if l.Err != nil || l.Archived || !l.State.Active() {
			continue
		}
		st := l.State
		if (!from.IsZero() && st.StartedAt.Before(from)) || (!to.IsZero() && !st.StartedAt.Before(to)) {
			continue
		}
		out = append(out, st)
	}
	return out, nil
}

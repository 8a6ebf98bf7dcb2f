package engine

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// fakeHistory is an in-memory HistoryStore: entries by day, and digests
// kept for removed ones.
type fakeHistory struct {
	entries map[string]*HistoryEntry
	digests map[string][]Digest // day -> digests of removed entries
	fail    error
}

func newFakeHistory() *fakeHistory {
	return &fakeHistory{entries: map[string]*HistoryEntry{}, digests: map[string][]Digest{}}
}

func (f *fakeHistory) AddHistory(e *HistoryEntry) error {
	if f.fail != nil {
		return f.fail
	}
	if _, ok := f.entries[e.ID]; !ok {
		c := *e
		f.entries[e.ID] = &c
	}
	return nil
}

func (f *fakeHistory) HistoryDays() ([]string, error) {
	seen := map[string]bool{}
	for id := range f.entries {
		seen[HistoryIDDay(id)] = true
	}
	for d := range f.digests {
		seen[d] = true
	}
	var out []string
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out, nil
}

func (f *fakeHistory) HistoryDay(day string) ([]*HistoryEntry, error) {
	var out []*HistoryEntry
	for id, e := range f.entries {
		if HistoryIDDay(id) == day {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b *HistoryEntry) int { return compareStrings(a.ID, b.ID) })
	return out, nil
}

func (f *fakeHistory) HistoryDigests(day string) ([]Digest, error) {
	es, _ := f.HistoryDay(day)
	out := slices.Clone(f.digests[day])
	for _, e := range es {
		out = append(out, e.Digest())
	}
	return out, nil
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func newHistoryEngine(t *testing.T) (*testEnv, *fakeHistory) {
	te := newTestEngine(t, nil)
	h := newFakeHistory()
	te.History = h
	te.Git = func() *GitInfo { return &GitInfo{Branch: "main", Head: "c0ffee"} }
	return te, h
}

func (te *testEnv) step(t *testing.T, d time.Duration, fn func() error) {
	t.Helper()
	te.now = te.now.Add(d)
	if err := fn(); err != nil {
		t.Fatal(err)
	}
}

func onlyEntry(t *testing.T, h *fakeHistory) *HistoryEntry {
	t.Helper()
	if len(h.entries) != 1 {
		t.Fatalf("%d history entries, want 1", len(h.entries))
	}
	for _, e := range h.entries {
		return e
	}
	return nil
}

func TestHistoryEntryOfACompletedRun(t *testing.T) {
	te, h := newHistoryEngine(t)
	if _, err := te.StartTask(StartOptions{Workflow: "minimal", Task: "t", Description: "fix the cart"}); err != nil {
		t.Fatal(err)
	}
	te.step(t, 10*time.Minute, func() error { _, err := te.Fail(TaskOptions{}, "flaky"); return err })
	te.step(t, 5*time.Minute, func() error { _, err := te.Next(""); return err }) // spec -> plan
	te.Git = func() *GitInfo { return &GitInfo{Branch: "topic", Head: "beef"} }
	te.step(t, 30*time.Minute, func() error { _, err := te.Next(""); return err }) // plan -> done
	e := onlyEntry(t, h)
	want := &HistoryEntry{
		ID:   HistoryID(&State{Task: "t", WorkflowID: t0.Format(time.RFC3339), StartedAt: t0}, t0.Add(45*time.Minute)),
		Task: "t", Workflow: "minimal", Mode: "minimal", Description: "fix the cart", Status: StatusCompleted,
		StartedAt: t0, EndedAt: t0.Add(45 * time.Minute), DurationMS: 45 * 60 * 1000,
		Completed: []string{"spec", "plan"}, Failed: []string{}, Skipped: []string{},
		Attempts: 3, Worktree: "/work/tree", User: "Ann",
		Start: GitPoint{Branch: "main", Head: "c0ffee"}, End: GitPoint{Branch: "topic", Head: "beef"},
		Nodes: map[string]NodeRun{
			"spec": {TimeMS: 15 * 60 * 1000, Visits: 1, Attempts: 2, Retries: 1},
			"plan": {TimeMS: 30 * 60 * 1000, Visits: 1, Attempts: 1},
		},
		Metadata: &RunMetadata{Agents: []AgentSeen{}, MCPServers: []string{}, Tools: []string{}, TotalNodes: 2},
	}
	if !reflect.DeepEqual(e, want) {
		t.Errorf("entry =\n%+v\nwant\n%+v", e, want)
	}
	if e.ID[:17] != "20260102T030405Z-" || !ValidHistoryID(e.ID) || HistoryIDDay(e.ID) != "2026-01-02" {
		t.Errorf("id %q", e.ID)
	}
}

func TestHistoryEntryOfAFailedRunGivenUp(t *testing.T) {
	te, h := newHistoryEngine(t)
	if _, err := te.Start("minimal", "", "t"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < workflow.DefaultMaxAttempts; i++ {
		te.step(t, time.Minute, func() error { _, err := te.Fail(TaskOptions{}, "tests fail"); return err })
	}
	if len(h.entries) != 0 {
		t.Fatal("a failed task is still open: no entry yet")
	}
	te.step(t, time.Minute, func() error { _, err := te.Abort(TaskOptions{}); return err })
	e := onlyEntry(t, h)
	if e.Status != StatusFailed || e.Error != "tests fail" || !reflect.DeepEqual(e.Failed, []string{"spec"}) {
		t.Errorf("entry: status %s error %q failed %v", e.Status, e.Error, e.Failed)
	}
	if n := e.Nodes["spec"]; n.Attempts != 3 || n.Retries != 3 || !n.Failed || n.TimeMS != 4*60*1000 {
		t.Errorf("spec: %+v", n)
	}
}

func TestHistoryEntryOfAbortAndRollbackAll(t *testing.T) {
	te, h := newHistoryEngine(t)
	if _, err := te.Start("minimal", "", "a"); err != nil {
		t.Fatal(err)
	}
	te.step(t, time.Minute, func() error { _, err := te.Abort(TaskOptions{}); return err })
	if e := onlyEntry(t, h); e.Status != StatusAborted || e.Error != "" {
		t.Errorf("abort: %+v", e)
	}
	h.entries = map[string]*HistoryEntry{}
	if _, err := te.Start("minimal", "", "r"); err != nil {
		t.Fatal(err)
	}
	te.step(t, time.Minute, func() error { _, err := te.Next(""); return err })
	te.step(t, time.Minute, func() error {
		p, err := te.PlanRollback(RollbackOptions{All: true, Reason: "wrong"})
		if err == nil {
			_, err = te.Rollback(p)
		}
		return err
	})
	e := onlyEntry(t, h)
	if e.Status != StatusRolledBack || e.Task != "r" || e.Rollbacks != 1 {
		t.Errorf("rollback --all: %+v", e)
	}
}

func TestHistoryWriteFailureOnlyWarns(t *testing.T) {
	te, h := newHistoryEngine(t)
	h.fail = errors.New("disk full")
	if _, err := te.Start("minimal", "", "t"); err != nil {
		t.Fatal(err)
	}
	if _, err := te.Abort(TaskOptions{}); err != nil {
		t.Fatalf("abort failed with the history: %v", err)
	}
	if len(te.warnings) != 1 || te.warnings[0] != "task t finished, but its history entry was not written: disk full" {
		t.Errorf("warnings: %q", te.warnings)
	}
}

// digest builds a run for the statistics.
func digest(id, wf, status string, start time.Time, d time.Duration, nodes map[string]NodeRun) Digest {
	return Digest{ID: id, Workflow: wf, Status: status, StartedAt: start, DurationMS: d.Milliseconds(), Nodes: nodes}
}

func TestSummarizeSeedFields(t *testing.T) {
	day := time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)
	runs := []Digest{
		digest("1", "feature", StatusCompleted, day.Add(time.Hour), 75*time.Minute, map[string]NodeRun{
			"spec": {TimeMS: 600000, Attempts: 1}, "code": {TimeMS: 3000000, Attempts: 2, Retries: 1}}),
		digest("2", "bugfix", StatusCompleted, day.Add(2*time.Hour), 20*time.Minute, map[string]NodeRun{
			"fix": {TimeMS: 1200000, Attempts: 1}}),
		digest("3", "feature", StatusFailed, day.Add(3*time.Hour), 30*time.Minute, map[string]NodeRun{
			"spec": {TimeMS: 300000, Attempts: 1}, "code": {TimeMS: 1500000, Attempts: 3, Retries: 3, Failed: true}}),
		digest("4", "feature", StatusAborted, day.Add(4*time.Hour), 5*time.Minute, map[string]NodeRun{
			"spec": {TimeMS: 300000, Attempts: 1}}),
	}
	s := Summarize("2026-03-04", day, day.AddDate(0, 0, 1), runs, 2)
	if s.Total != 4 || s.Completed != 2 || s.Failed != 1 || s.Aborted != 1 || s.Active != 2 {
		t.Errorf("counts %+v", s)
	}
	if s.TotalMS != 130*60000 || s.AverageMS != 130*60000/4 || s.SuccessRate != 0.5 || s.MostUsed != "feature" {
		t.Errorf("durations %d %d rate %v most %s", s.TotalMS, s.AverageMS, s.SuccessRate, s.MostUsed)
	}
	if !reflect.DeepEqual(s.Workflows, map[string]int{"feature": 3, "bugfix": 1}) {
		t.Errorf("breakdown %v", s.Workflows)
	}
	want := []NodeStats{
		{Workflow: "bugfix", Node: "fix", Runs: 1, MedianMS: 1200000, Attempts: 1},
		{Workflow: "feature", Node: "code", Runs: 2, MedianMS: 2250000, Attempts: 5, Retries: 4, FailureRate: 0.8},
		{Workflow: "feature", Node: "spec", Runs: 3, MedianMS: 300000, Attempts: 3},
	}
	if !reflect.DeepEqual(s.Nodes, want) {
		t.Errorf("nodes\n%+v\nwant\n%+v", s.Nodes, want)
	}
	empty := Summarize("x", day, day, nil, 0)
	if empty.MostUsed != "none" || empty.SuccessRate != 0 || empty.AverageMS != 0 {
		t.Errorf("empty %+v", empty)
	}
}

func TestStatsByDayWeekWorkflow(t *testing.T) {
	te, h := newHistoryEngine(t)
	mon := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC) // a Monday, ISO week 10
	for i, r := range []struct {
		start time.Time
		wf    string
	}{{mon, "a"}, {mon.Add(time.Hour), "b"}, {mon.AddDate(0, 0, 1), "a"}, {mon.AddDate(0, 0, 7), "a"}} {
		st := &State{Task: "t" + string(rune('0'+i)), WorkflowID: "w", StartedAt: r.start, Status: StatusCompleted, Workflow: r.wf}
		end := r.start.Add(time.Duration(i+1) * time.Minute)
		st.EndedAt = &end
		if err := h.AddHistory(NewHistoryEntry(st, nil, end, nil, "")); err != nil {
			t.Fatal(err)
		}
	}
	from, to := mon.AddDate(0, 0, -1), mon.AddDate(0, 0, 14)
	sum := func(by string) map[string]int {
		out, err := te.Stats(StatsOptions{From: from, To: to, By: by, Loc: time.UTC})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]int{}
		for _, s := range out {
			m[s.Label] = s.Total
		}
		return m
	}
	if got := sum(ByDay); !reflect.DeepEqual(got, map[string]int{"2026-03-02": 2, "2026-03-03": 1, "2026-03-09": 1}) {
		t.Errorf("by day %v", got)
	}
	if got := sum(ByWeek); !reflect.DeepEqual(got, map[string]int{"2026-W10": 3, "2026-W11": 1}) {
		t.Errorf("by week %v", got)
	}
	if got := sum(ByWorkflow); !reflect.DeepEqual(got, map[string]int{"a": 3, "b": 1}) {
		t.Errorf("by workflow %v", got)
	}
	if got := sum(""); !reflect.DeepEqual(got, map[string]int{"2026-03-01..2026-03-16": 4}) {
		t.Errorf("whole %v", got)
	}
	// A day in another zone takes the runs that started in its hours.
	east := time.FixedZone("UTC+12", 12*3600)
	df, dt, _ := DayRange("2026-03-03", east)
	out, err := te.Stats(StatsOptions{From: df, To: dt, Loc: east})
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Total != 1 || out[0].Label != "2026-03-03" {
		t.Errorf("UTC+12 day: %+v", out[0])
	}
}

func TestLogFiltersAndOpenTasks(t *testing.T) {
	te, _ := newHistoryEngine(t)
	run := func(task, wf, typ, desc string, fail bool) {
		if _, err := te.StartTask(StartOptions{Workflow: wf, Task: task, Type: typ, Description: desc}); err != nil {
			t.Fatal(err)
		}
		te.now = te.now.Add(time.Minute)
		if fail {
			for i := 0; i < workflow.DefaultMaxAttempts; i++ {
				if _, err := te.Fail(TaskOptions{}, "boom"); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := te.Abort(TaskOptions{}); err != nil {
			t.Fatal(err)
		}
		te.now = te.now.Add(time.Hour)
	}
	run("a", "minimal", "", "add wishlist", false)
	run("b", "discovery", "", "cart total", true)
	run("c", "pipeline", "docs", "write docs", false)
	if _, err := te.Start("minimal", "", "open"); err != nil {
		t.Fatal(err)
	}
	names := func(f HistoryFilter) []string {
		recs, err := te.Log(f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range recs {
			n := r.Task
			if r.Open {
				n += "*"
			}
			out = append(out, n)
		}
		return out
	}
	for _, c := range []struct {
		f    HistoryFilter
		want []string
	}{
		{HistoryFilter{}, []string{"open*", "c", "b", "a"}},
		{HistoryFilter{Limit: 2}, []string{"open*", "c"}},
		{HistoryFilter{Workflow: "minimal"}, []string{"open*", "a"}},
		{HistoryFilter{Status: StatusFailed}, []string{"b"}},
		{HistoryFilter{Status: StatusActive}, []string{"open*"}},
		{HistoryFilter{Task: "b"}, []string{"b"}},
		{HistoryFilter{Type: "docs"}, []string{"c"}},
		{HistoryFilter{Grep: "cart"}, []string{"b"}},
		{HistoryFilter{Grep: "boom"}, []string{"b"}},
		{HistoryFilter{Since: t0.Add(time.Hour)}, []string{"open*", "c", "b"}},
		{HistoryFilter{Until: t0.Add(2 * time.Hour)}, []string{"b", "a"}},
		{HistoryFilter{Since: t0.Add(time.Hour), Until: t0.Add(2 * time.Hour), Status: StatusFailed}, []string{"b"}},
		{HistoryFilter{Workflow: "minimal", Status: StatusCompleted}, nil},
	} {
		if got := names(c.f); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v: %v, want %v", c.f, got, c.want)
		}
	}
	if s, err := CheckHistoryStatus("ERROR"); err != nil || s != StatusFailed {
		t.Errorf("ERROR -> %q %v", s, err)
	}
	if _, err := CheckHistoryStatus("bogus"); !errors.Is(err, ErrBadName) {
		t.Errorf("bogus: %v", err)
	}
}

// TestMostUsedTieBreaksByName: workflows run equally often give the
// first name, whatever order the map is walked in, so the command line
// and the dashboard name the same one.
func TestMostUsedTieBreaksByName(t *testing.T) {
	day := time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)
	var runs []Digest
	for i, wf := range []string{"research", "pipeline", "minimal", "zeta", "minimal", "research", "pipeline"} {
		runs = append(runs, digest(fmt.Sprint(i), wf, StatusCompleted, day.Add(time.Duration(i)*time.Minute), time.Minute, nil))
	}
	for i := 0; i < 50; i++ {
		if s := Summarize("d", day, day.AddDate(0, 0, 1), runs, 0); s.MostUsed != "minimal" {
			t.Fatalf("most used %q, want minimal (tied with pipeline and research)", s.MostUsed)
		}
	}
}

// TestRollbackHistoryHoldsMovesBack: dev -> qa -> dev -> qa records one
// event, the move back; going forward again is not a rollback.
func TestRollbackHistoryHoldsMovesBack(t *testing.T) {
	for _, tc := range []struct {
		history  []string
		from, to string
		back     bool
	}{
		{[]string{"dev", "qa"}, "qa", "dev", true},
		{[]string{"dev", "qa", "dev"}, "dev", "qa", false},
		{[]string{"dev"}, "dev", "qa", false},
		{[]string{"spec", "dev", "qa", "dev"}, "dev", "spec", true},
	} {
		if got := movesBack(tc.history, tc.from, tc.to); got != tc.back {
			t.Errorf("%v %s -> %s: back %v, want %v", tc.history, tc.from, tc.to, got, tc.back)
		}
	}
}

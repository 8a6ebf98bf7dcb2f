package gitstore

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/engine"
)

// historyEntry builds a finished run that started at start.
func historyEntry(task string, start time.Time, d time.Duration, status string) *engine.HistoryEntry {
	st := &engine.State{Task: task, Workflow: "minimal", WorkflowID: start.Format(time.RFC3339), StartedAt: start, Status: status}
	end := start.Add(d)
	st.EndedAt = &end
	st.PhaseLog = []engine.PhaseVisit{{Node: "spec", Start: start}}
	return engine.NewHistoryEntry(st, nil, end, &engine.GitInfo{Branch: "main", Head: strings.Repeat("a", 40)}, "Ann")
}

func TestHistoryStoreContract(t *testing.T) {
	for name, newRepo := range storeBackends {
		t.Run(name, func(t *testing.T) {
			r := newRepo(t)
			h := r.History()
			if days, err := h.HistoryDays(); err != nil || len(days) != 0 {
				t.Fatalf("empty history: %v %v", days, err)
			}
			day1 := time.Date(2026, 1, 2, 23, 0, 0, 0, time.UTC)
			a := historyEntry("a", day1, time.Hour, engine.StatusCompleted)
			b := historyEntry("b", day1.Add(2*time.Hour), time.Minute, engine.StatusAborted) // the next UTC day
			c := historyEntry("c", day1.Add(-time.Hour), time.Minute, engine.StatusFailed)
			for _, e := range []*engine.HistoryEntry{a, b, c, a} {
				if err := r.History().AddHistory(e); err != nil {
					t.Fatal(err)
				}
			}
			h = r.History()
			days, err := h.HistoryDays()
			if err != nil || !reflect.DeepEqual(days, []string{"2026-01-02", "2026-01-03"}) {
				t.Fatalf("days %v %v", days, err)
			}
			got, err := h.HistoryDay("2026-01-02")
			if err != nil || len(got) != 2 || got[0].Task != "c" || got[1].Task != "a" {
				t.Fatalf("day 1: %v %v", got, err)
			}
			if !reflect.DeepEqual(got[1], a) {
				t.Errorf("read back\n%+v\nwant\n%+v", got[1], a)
			}
			d, err := h.HistoryDigests("2026-01-03")
			if err != nil || len(d) != 1 || d[0].ID != b.ID || d[0].DurationMS != 60000 {
				t.Errorf("digests: %v %v", d, err)
			}
			// One commit per entry, none for the duplicate.
			if n := strings.Count(runGitLog(t, r), "\n"); n != 3 {
				t.Errorf("%d commits", n)
			}
		})
	}
}

// runGitLog lists the history's commit subjects (through the store, so
// it works on memory repositories too).
func runGitLog(t *testing.T, r *Repo) string {
	t.Helper()
	tip, err := r.ReadRef(string(HistoryRef))
	if err != nil {
		t.Fatal(err)
	}
	g := newGraph(r.storage)
	var b strings.Builder
	for !tip.IsZero() {
		n, err := g.node(tip)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(&b, tip)
		if len(n.parents) == 0 {
			break
		}
		tip = n.parents[0]
	}
	return b.String()
}

func TestHistoryOnDiskIsPlainGit(t *testing.T) {
	r := newDiskRepo(t)
	e := historyEntry("t", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), time.Minute, engine.StatusCompleted)
	if err := r.History().AddHistory(e); err != nil {
		t.Fatal(err)
	}
	out := runGit(t, r.WorkTree, "ls-tree", "-r", "--name-only", "refs/hegel/history")
	want := "entries/2026/01/02/" + e.ID + ".json\nversion\n"
	if out != want {
		t.Errorf("tree:\n%s\nwant\n%s", out, want)
	}
	runGit(t, r.WorkTree, "fsck", "--strict")
}

func TestParseDateAsGitDoes(t *testing.T) {
	needGit(t)
	now := time.Unix(1700000000, 0)
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"2.weeks.ago", 1698790400}, {"1.week.ago", 1699395200}, {"3 days ago", 1699740800},
		{"yesterday", 1699913600}, {"2026-11-01T10:00:00Z", 1793527200}, {"now", 1700000000},
	} {
		got, err := ParseDate(c.in, now, false)
		if err != nil || got.Unix() != c.want {
			t.Errorf("%s: %v %v, want %d", c.in, got.Unix(), err, c.want)
		}
	}
	day, _ := ParseDate("2026-11-01", now, false)
	end, _ := ParseDate("2026-11-01", now, true)
	if !day.Equal(time.Date(2026, 11, 1, 0, 0, 0, 0, time.Local)) || !end.Equal(day.AddDate(0, 0, 1).Add(-time.Nanosecond)) {
		t.Errorf("a day: %v %v", day, end)
	}
	for _, bad := range []string{"garbage", "never", ""} {
		if _, err := ParseDate(bad, now, false); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

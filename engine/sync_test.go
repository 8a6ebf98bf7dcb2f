package engine

import (
	"reflect"
	"strings"
	"testing"
)

func TestMerge3(t *testing.T) {
	m := func(kv ...string) map[string]string {
		out := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	cases := []struct {
		name              string
		base, ours, their map[string]string
		want              map[string]string
		counts            MergeCounts
	}{
		{"no base: union", nil, m("a", "1"), m("b", "2"), m("a", "1", "b", "2"), MergeCounts{Added: 1}},
		{"both added the same", m(), m("a", "1"), m("a", "1"), m("a", "1"), MergeCounts{}},
		{"they dropped", m("a", "1", "b", "2"), m("a", "1", "b", "2"), m("a", "1"), m("a", "1"), MergeCounts{Dropped: 1}},
		{"we dropped", m("a", "1", "b", "2"), m("a", "1"), m("a", "1", "b", "2"), m("a", "1"), MergeCounts{}},
		{"both dropped", m("a", "1"), m(), m(), m(), MergeCounts{}},
		{"they dropped what we changed", m("a", "1"), m("a", "2"), m(), m("a", "2"), MergeCounts{}},
		{"we dropped what they changed", m("a", "1"), m(), m("a", "3"), m("a", "3"), MergeCounts{Added: 1}},
		{"they changed", m("a", "1"), m("a", "1"), m("a", "3"), m("a", "3"), MergeCounts{}},
		{"both changed", m("a", "1"), m("a", "2"), m("a", "3"), m("a", "2"), MergeCounts{Conflicts: 1}},
		{"both added differently", m(), m("a", "2"), m("a", "3"), m("a", "2"), MergeCounts{Conflicts: 1}},
	}
	for _, c := range cases {
		got, n := Merge3(c.base, c.ours, c.their)
		if !reflect.DeepEqual(got, c.want) || n != c.counts {
			t.Errorf("%s: got %v %+v, want %v %+v", c.name, got, n, c.want, c.counts)
		}
	}
}

func TestFetchSummary(t *testing.T) {
	r := &SyncReport{Remote: "origin", Stashes: MergeCounts{Added: 2, Dropped: 1},
		Tasks: []TaskSync{{Task: "auth-fix", Change: TaskFastForwarded}}}
	if got, want := r.FetchSummary(), "2 stashes added, 1 dropped, task auth-fix fast-forwarded"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	r = &SyncReport{Stashes: MergeCounts{Added: 1}}
	if got := r.FetchSummary(); got != "1 stash added" {
		t.Errorf("%q", got)
	}
	if got := (&SyncReport{}).FetchSummary(); got != "" {
		t.Errorf("%q", got)
	}
}

func TestFetchSummaryCountsManyTasks(t *testing.T) {
	r := &SyncReport{}
	for _, n := range []string{"d", "c", "b", "a"} {
		r.Tasks = append(r.Tasks, TaskSync{Task: n, Change: TaskAdded})
	}
	r.Tasks = append(r.Tasks, TaskSync{Task: "z", Change: TaskFastForwarded})
	if got, want := r.FetchSummary(), "4 tasks added, task z fast-forwarded"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// Two tasks with one name: the note says who started each and when, from
// the conflicting fields, and leaves out what both sides share.
func TestUnrelatedNote(t *testing.T) {
	ts := TaskSync{Task: "login", Change: TaskConflicted, Unrelated: true, Conflicts: []FieldConflict{
		{Field: "owner_email", Ours: `"bob@example.com"`, Theirs: `"ann@example.com"`},
		{Field: "started_at", Ours: `"2026-11-29T13:22:24.892266814Z"`, Theirs: `"2026-11-29T14:05:00Z"`},
	}}
	r := &SyncReport{Remote: "origin", Tasks: []TaskSync{ts}}
	notes := r.ConflictNotes()
	want := "Task login here and task login at origin share no history: each clone started its own task of that name (here by bob@example.com on 2026-11-29 13:22 UTC, at origin by ann@example.com on 2026-11-29 14:05 UTC); nothing changed here. Keep this clone's with 'git hegel sync --ours login', or take origin's with 'git hegel sync --theirs login': the other one's state is replaced"
	if len(notes) != 1 || notes[0] != want {
		t.Fatalf("notes %q", notes)
	}
	ts.Conflicts = ts.Conflicts[1:] // one person, two clones
	r.Tasks = []TaskSync{ts}
	if n := r.ConflictNotes()[0]; !strings.Contains(n, "of that name (here on 2026-11-29 13:22 UTC, at origin on 2026-11-29 14:05 UTC); nothing") {
		t.Fatalf("one person: %q", n)
	}
	ts.Change, ts.Resolved = TaskMerged, SideTheirs
	r.Tasks = []TaskSync{ts}
	if n := r.MergeNotes(); len(n) != 1 || n[0] != "Kept origin's task login whole: the two shared no history; the other one stays in the task's history (git log refs/hegel/tasks/login)" {
		t.Fatalf("merge notes %q", n)
	}
}

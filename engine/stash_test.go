package engine

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// In-memory stores for the stash tests. Names carry a stash prefix so they
// cannot collide with other test files of the package.

type stashMemTasks struct {
	tasks map[string]*Task
	n     int
	// beforeSave, if set, runs before each save and may fail it.
	beforeSave func(t *Task, msg string) error
}

func (m *stashMemTasks) LoadTask(name string) (*Task, error) {
	t, ok := m.tasks[name]
	if !ok {
		return nil, fmt.Errorf("task %s: %w", name, ErrNotFound)
	}
	return &Task{State: t.State.Clone(), Definition: t.Definition, Rev: t.Rev}, nil
}

func (m *stashMemTasks) SaveTask(t *Task, msg string) (string, error) {
	if m.beforeSave != nil {
		if err := m.beforeSave(t, msg); err != nil {
			return "", err
		}
	}
	cur, ok := m.tasks[t.State.Task]
	if (ok && cur.Rev != t.Rev) || (!ok && t.Rev != "") {
		return "", fmt.Errorf("task %s: %w", t.State.Task, ErrConflict)
	}
	m.n++
	rev := fmt.Sprintf("rev%d", m.n)
	m.tasks[t.State.Task] = &Task{State: t.State.Clone(), Definition: t.Definition, Rev: rev}
	return rev, nil
}

func (m *stashMemTasks) ListTasks() ([]string, error) {
	var names []string
	for n := range m.tasks {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

type stashMemSession struct{ s *Session }

func (m *stashMemSession) LoadSession() (*Session, error) {
	if m.s == nil {
		return nil, ErrNotFound
	}
	c := *m.s
	return &c, nil
}

func (m *stashMemSession) UpdateSession(fn func(*Session) error) (*Session, error) {
	s := Session{SessionID: "test"}
	if m.s != nil {
		s = *m.s
	}
	if err := fn(&s); err != nil {
		return nil, err
	}
	m.s = &s
	c := s
	return &c, nil
}

type stashMemStore struct {
	live    map[string]*Stash
	dropped []*DroppedStash
	log     []string
	now     func() time.Time
}

func newStashMemStore(now func() time.Time) *stashMemStore {
	return &stashMemStore{live: map[string]*Stash{}, now: now}
}

func (m *stashMemStore) StashIDs() ([]string, error) {
	ids := make([]string, 0, len(m.live))
	for id := range m.live {
		ids = append(ids, id)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(ids)))
	return ids, nil
}

func (m *stashMemStore) LoadStash(id string) (*Stash, error) {
	s, ok := m.live[id]
	if !ok {
		return nil, fmt.Errorf("stash %s: %w", id, ErrNotFound)
	}
	c := *s
	if s.State != nil {
		c.State = s.State.Clone()
	}
	return &c, nil
}

func (m *stashMemStore) ListStashes() ([]*Stash, error) {
	ids, _ := m.StashIDs()
	out := make([]*Stash, len(ids))
	for i, id := range ids {
		out[i], _ = m.LoadStash(id)
	}
	return out, nil
}

func (m *stashMemStore) PushStash(s *Stash, detail string) error {
	ids, _ := m.StashIDs()
	after := ""
	if len(ids) > 0 {
		after = ids[0]
	}
	s.ID = NextStashID(s.Timestamp, after)
	s.Rev = "blob-" + s.ID
	c := *s
	c.State = s.State.Clone()
	m.live[s.ID] = &c
	m.log = append(m.log, "stash push: "+detail)
	return nil
}

func (m *stashMemStore) RemoveStash(id string, op StashOp, detail string) error {
	s, ok := m.live[id]
	if !ok {
		return fmt.Errorf("stash %s: %w", id, ErrNotFound)
	}
	delete(m.live, id)
	if op == StashOpDrop {
		m.dropped = append([]*DroppedStash{{Stash: s, DroppedAt: m.now(), Op: op}}, m.dropped...)
	}
	m.log = append(m.log, fmt.Sprintf("stash %s: %s", op, detail))
	return nil
}

func (m *stashMemStore) ClearStashes(ids []string) (int, error) {
	n := 0
	for _, id := range ids {
		if s, ok := m.live[id]; ok {
			delete(m.live, id)
			m.dropped = append([]*DroppedStash{{Stash: s, DroppedAt: m.now(), Op: StashOpClear}}, m.dropped...)
			n++
		}
	}
	m.log = append(m.log, fmt.Sprintf("stash clear: %d", n))
	return n, nil
}

func (m *stashMemStore) DroppedStashes(since time.Time) ([]*DroppedStash, error) {
	var out []*DroppedStash
	for _, d := range m.dropped {
		if _, live := m.live[d.ID]; !live && !d.DroppedAt.Before(since) {
			out = append(out, d)
		}
	}
	return out, nil
}

func (m *stashMemStore) RestoreStash(d *DroppedStash, detail string) error {
	if _, ok := m.live[d.ID]; ok {
		return ErrExists
	}
	m.live[d.ID] = d.Stash
	m.log = append(m.log, "stash restore: "+detail)
	return nil
}

// stashEnv is an engine for worktree wt over shared stores, with a clock
// the test moves.
type stashEnv struct {
	tasks   *stashMemTasks
	stashes *stashMemStore
	clock   time.Time
}

func newStashEnv() *stashEnv {
	env := &stashEnv{
		tasks: &stashMemTasks{tasks: map[string]*Task{}},
		clock: time.Date(2025, 11, 7, 12, 34, 56, 789, time.UTC),
	}
	env.stashes = newStashMemStore(func() time.Time { return env.clock })
	return env
}

func (env *stashEnv) engine(wt string) *Engine {
	n := 0
	return &Engine{
		Tasks:     env.tasks,
		Session:   &stashMemSession{},
		Stashes:   env.stashes,
		Workflows: func() (*workflow.Registry, error) { return workflow.NewRegistry(nil) },
		Worktree:  wt,
		Now:       func() time.Time { return env.clock },
		NewSuffix: func() string { n++; return fmt.Sprintf("s%d", n) },
	}
}

func (env *stashEnv) tick(d time.Duration) { env.clock = env.clock.Add(d) }

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErr(t *testing.T, err error, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %q", msg)
	}
	if err.Error() != msg {
		t.Fatalf("error %q, want %q", err, msg)
	}
}

func TestStashRoundTrip(t *testing.T) {
	env := newStashEnv()
	e := env.engine("/wt/a")
	_, err := e.Start("discovery", "", "")
	mustOK(t, err)
	env.tick(time.Minute)
	_, err = e.Next("")
	mustOK(t, err)
	env.tick(time.Minute)
	before, err := e.Current("")
	mustOK(t, err)

	ent, err := e.StashPush("fixing auth bug")
	mustOK(t, err)
	if ent.Ref() != "stash@{0}" || ent.Label() != `discovery/plan "fixing auth bug"` {
		t.Fatalf("pushed %s: %s", ent.Ref(), ent.Label())
	}
	if _, err := e.Current(""); !errors.Is(err, ErrNoWorkflow) {
		t.Fatalf("after stash, Current = %v, want ErrNoWorkflow", err)
	}
	stashed, _ := env.tasks.LoadTask(before.State.Task)
	if stashed.State.Status != StatusStashed {
		t.Fatalf("task status %q, want %q", stashed.State.Status, StatusStashed)
	}

	// Pop in another worktree, later.
	env.tick(3 * time.Hour)
	e2 := env.engine("/wt/b")
	got, v, err := e2.StashPop("", false, false)
	mustOK(t, err)
	if got.Ref() != "stash@{0}" || v.Node != "plan" || v.Mode != "discovery" || v.Prompt == "" {
		t.Fatalf("pop: %s, view %+v", got.Ref(), v)
	}
	after, err := e2.Current("")
	mustOK(t, err)
	want := before.State.Clone()
	want.Worktree = "/wt/b"
	want.UpdatedAt = env.clock
	// Away from the push until the pop, for its metrics (away.go).
	want.AwayLog = []AwayEvent{{At: got.Timestamp.UTC(), Event: AwayStashed}, {At: env.clock.UTC(), Event: AwayBack}}
	if !reflect.DeepEqual(after.State, want) {
		t.Fatalf("restored state differs:\n got %+v\nwant %+v", after.State, want)
	}
	if string(after.Definition) != string(before.Definition) {
		t.Fatal("restored definition differs")
	}
	if ids, _ := env.stashes.StashIDs(); len(ids) != 0 {
		t.Fatalf("pop left %d entries", len(ids))
	}
	wantLog := []string{`stash push: discovery/plan "fixing auth bug"`, `stash pop: discovery/plan "fixing auth bug"`}
	if !reflect.DeepEqual(env.stashes.log, wantLog) {
		t.Fatalf("log %q, want %q", env.stashes.log, wantLog)
	}
}

func TestStashMessages(t *testing.T) {
	env := newStashEnv()
	e := env.engine("/wt")

	_, err := e.StashPush("")
	wantErr(t, err, "No active workflow to stash")
	_, _, err = e.StashPop("", false, false)
	wantErr(t, err, "No stashes to restore")
	_, err = e.StashFind("", "drop")
	wantErr(t, err, "No stashes to drop")

	_, err = e.Start("discovery", "", "")
	mustOK(t, err)
	ent, err := e.StashPush("")
	mustOK(t, err)
	if ent.Label() != "discovery/spec" {
		t.Fatalf("label %q", ent.Label())
	}
	_, err = e.Start("execution", "", "")
	mustOK(t, err)
	_, err = e.StashPush("two")
	mustOK(t, err)

	// A task active here is parked, as start and switch park it: it stays
	// open, owned by no worktree.
	v, err := e.Start("discovery", "", "")
	mustOK(t, err)
	_, pv, err := e.StashPop("", false, false)
	mustOK(t, err)
	if pv.Parked == nil || pv.Parked.Task != v.Task {
		t.Fatalf("pop parked %+v, want task %s", pv.Parked, v.Task)
	}
	parked, err := e.Tasks.LoadTask(v.Task)
	mustOK(t, err)
	if !parked.State.Active() || parked.State.WorktreeID != "" {
		t.Errorf("the parked task: %s, owned by %q", parked.State.Status, parked.State.WorktreeID)
	}
	_, err = e.StashPush("two")
	mustOK(t, err)

	_, _, err = e.StashPop("5", false, false)
	wantErr(t, err, "Stash index 5 not found. Available stashes: 0-1")
	_, _, err = e.StashPop("stash@{2}", false, false)
	wantErr(t, err, "Stash index 2 not found. Available stashes: 0-1")
	_, _, err = e.StashPop("bogus", false, false)
	wantErr(t, err, "Invalid stash reference 'bogus': use N, stash@{N} or a stash id (see 'git hegel stash list')")
	_, _, err = e.StashPop("20990101T000000.000000000Z-00000000", false, false)
	wantErr(t, err, "No stash with id '20990101T000000.000000000Z-00000000' (see 'git hegel stash list', or 'git hegel stash list --dropped' for dropped ones)")

	// An aborted workflow does not block; stash@{1} is the first one.
	got, v, err := e.StashPop("stash@{1}", false, false)
	mustOK(t, err)
	if got.Label() != "discovery/spec" || v.Node != "spec" {
		t.Fatalf("popped %s at %s", got.Label(), v.Node)
	}
	list, _ := e.StashList()
	if len(list) != 1 || list[0].Label() != `execution/spec "two"` || list[0].Index != 0 {
		t.Fatalf("after pop: %+v", list)
	}
}

func TestStashAtTerminalNode(t *testing.T) {
	env := newStashEnv()
	e := env.engine("/wt")
	_, err := e.Start("minimal", "", "")
	mustOK(t, err)
	for {
		v, err := e.Next("")
		mustOK(t, err)
		if v.Node == workflow.NodeDone {
			break
		}
	}
	ent, err := e.StashPush("finished")
	mustOK(t, err)
	if ent.State.Status != StatusCompleted {
		t.Fatalf("stashed status %q", ent.State.Status)
	}
	_, v, err := e.StashPop("0", false, false)
	mustOK(t, err)
	if v.Node != workflow.NodeDone {
		t.Fatalf("restored at %s", v.Node)
	}
	cur, err := e.Current("")
	mustOK(t, err)
	if cur.State.Status != StatusCompleted {
		t.Fatalf("restored status %q", cur.State.Status)
	}
}

func TestStashApplyKeepsEntry(t *testing.T) {
	env := newStashEnv()
	e := env.engine("/wt")
	_, err := e.Start("discovery", "", "t1")
	mustOK(t, err)
	_, err = e.StashPush("keep me")
	mustOK(t, err)
	_, _, err = e.StashPop("", true, false)
	mustOK(t, err)
	if ids, _ := env.stashes.StashIDs(); len(ids) != 1 {
		t.Fatalf("apply removed the entry: %d left", len(ids))
	}
	// The task is active again: another worktree cannot apply it too.
	other := env.engine("/wt2")
	_, _, err = other.StashPop("", true, false)
	wantErr(t, err, "Cannot restore stash@{0}: its task 't1' is active again in /wt; finish or abort it there first")
}

func TestStashDropClearRestore(t *testing.T) {
	env := newStashEnv()
	e := env.engine("/wt")
	for _, m := range []string{"a", "b", "c"} {
		_, err := e.Start("discovery", "", "")
		mustOK(t, err)
		_, err = e.StashPush(m)
		mustOK(t, err)
		env.tick(time.Second)
	}
	ent, err := e.StashFind("1", "drop")
	mustOK(t, err)
	_, err = e.StashDrop(ent)
	mustOK(t, err)
	list, _ := e.StashList()
	if len(list) != 2 || list[0].Message != "c" || list[1].Message != "a" || list[1].Index != 1 {
		t.Fatalf("after drop: %v", labels(list))
	}
	// Dropping the same id again reports the race instead of dropping
	// whatever is at that index now.
	_, err = e.StashDrop(ent)
	wantErr(t, err, fmt.Sprintf("stash@{1} (%s) was removed by another process meanwhile; nothing dropped", ent.ID))

	d, err := e.StashDropped()
	mustOK(t, err)
	if len(d) != 1 || d[0].ID != ent.ID {
		t.Fatalf("dropped: %+v", d)
	}
	back, _, err := e.StashRestore(ent.ID)
	mustOK(t, err)
	if back.Index != 1 || back.Message != "b" {
		t.Fatalf("restored as %s %q", back.Ref(), back.Message)
	}
	_, _, err = e.StashRestore(ent.ID)
	wantErr(t, err, "Stash "+ent.ID+" is not dropped: it is stash@{1}")

	// By id.
	byID, err := e.StashFind(list[1].ID, "show")
	mustOK(t, err)
	if byID.Index != 2 || byID.Message != "a" {
		t.Fatalf("by id: %s %q", byID.Ref(), byID.Message)
	}

	listed, removed, _, err := e.StashClear(func(n int, _ []string) (bool, error) { return false, nil })
	mustOK(t, err)
	if listed != 3 || removed != 0 {
		t.Fatalf("declined clear: %d %d", listed, removed)
	}
	listed, removed, _, err = e.StashClear(func(n int, _ []string) (bool, error) { return n == 3, nil })
	mustOK(t, err)
	if listed != 3 || removed != 3 {
		t.Fatalf("clear: %d %d", listed, removed)
	}
	listed, _, _, err = e.StashClear(func(int, []string) (bool, error) { t.Fatal("asked with nothing to clear"); return false, nil })
	if err != nil || listed != 0 {
		t.Fatalf("empty clear: %d %v", listed, err)
	}

	// The window: 31 days later nothing is offered any more.
	env.tick(31 * 24 * time.Hour)
	_, _, err = e.StashRestore(ent.ID)
	wantErr(t, err, "No dropped stash '"+ent.ID+"' in the last 30 days (see 'git hegel stash list --dropped')")
}

func TestStashDamagedEntry(t *testing.T) {
	env := newStashEnv()
	e := env.engine("/wt")
	_, err := e.Start("discovery", "", "")
	mustOK(t, err)
	_, err = e.StashPush("fine")
	mustOK(t, err)
	bad := &Stash{ID: NextStashID(env.clock, "20990101T000000.000000000Z-00000000"), Damaged: "invalid JSON: unexpected end of JSON input"}
	env.stashes.live[bad.ID] = bad

	list, err := e.StashList()
	mustOK(t, err)
	if len(list) != 2 || list[0].Damaged == "" || list[0].Label() != "damaged entry "+bad.ID {
		t.Fatalf("list: %v", labels(list))
	}
	_, _, err = e.StashPop("", false, false)
	wantErr(t, err, "Cannot restore stash@{0}: damaged entry "+bad.ID+": invalid JSON: unexpected end of JSON input")
	if len(env.stashes.live) != 2 {
		t.Fatal("failed pop changed the stash list")
	}
	if _, err := e.Current(""); !errors.Is(err, ErrNoWorkflow) {
		t.Fatalf("failed pop changed the session: %v", err)
	}
	// The other entry still pops, and the damaged one can be dropped.
	_, _, err = e.StashPop("1", false, false)
	mustOK(t, err)
	ent, err := e.StashFind("", "drop")
	mustOK(t, err)
	_, err = e.StashDrop(ent)
	mustOK(t, err)
}

// A task that moves while it is being stashed must not leave a stale entry.
func TestStashPushWithdrawsStaleEntry(t *testing.T) {
	env := newStashEnv()
	e := env.engine("/wt")
	_, err := e.Start("discovery", "", "t1")
	mustOK(t, err)
	raced := false
	env.tasks.beforeSave = func(tk *Task, msg string) error {
		if raced || !strings.HasPrefix(msg, "stash push") {
			return nil
		}
		raced = true
		// Another process runs `next` on the task first.
		cur := env.tasks.tasks["t1"]
		st := cur.State.Clone()
		st.CurrentNode, st.History = "plan", append(st.History, "plan")
		env.tasks.n++
		env.tasks.tasks["t1"] = &Task{State: st, Definition: cur.Definition, Rev: fmt.Sprintf("rev%d", env.tasks.n)}
		return nil
	}
	ent, err := e.StashPush("m")
	mustOK(t, err)
	if ent.State.CurrentNode != "plan" {
		t.Fatalf("stashed at %s, want the newer state (plan)", ent.State.CurrentNode)
	}
	ids, _ := env.stashes.StashIDs()
	if len(ids) != 1 || ids[0] != ent.ID {
		t.Fatalf("entries %v, want only %s", ids, ent.ID)
	}
	if got := env.stashes.log[1]; got != `stash withdraw: discovery/spec "m" (the task changed meanwhile)` {
		t.Fatalf("withdraw logged as %q", got)
	}
}

func TestStashPushAlreadyStashed(t *testing.T) {
	env := newStashEnv()
	e := env.engine("/wt")
	_, err := e.Start("discovery", "", "t1")
	mustOK(t, err)
	// A crash after the task was marked but before the session was
	// cleared: the session still names a stashed task.
	cur := env.tasks.tasks["t1"]
	cur.State.Status = StatusStashed
	_, err = e.StashPush("")
	wantErr(t, err, "No active workflow to stash")
	if s, _ := e.Session.LoadSession(); s.ActiveTask != "" {
		t.Fatalf("session still names %q", s.ActiveTask)
	}
}

func labels(list []*StashEntry) []string {
	var out []string
	for _, e := range list {
		out = append(out, e.Ref()+" "+e.Label())
	}
	return out
}

func TestNextStashID(t *testing.T) {
	at := time.Date(2025, 11, 7, 12, 34, 56, 789000000, time.FixedZone("X", 3600))
	id := NextStashID(at, "")
	if !ValidStashID(id) || !strings.HasPrefix(id, "20251107T113456.789000000Z-") {
		t.Fatalf("id %q", id)
	}
	if got, ok := StashIDTime(id); !ok || !got.Equal(at) {
		t.Fatalf("StashIDTime(%q) = %v, %v", id, got, ok)
	}
	// A clock that stands still or steps back still orders ids.
	prev := id
	for i := 0; i < 100; i++ {
		next := NextStashID(at.Add(-time.Duration(i)*time.Second), prev)
		if next <= prev || !ValidStashID(next) {
			t.Fatalf("%q does not sort after %q", next, prev)
		}
		prev = next
	}
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		id := NextStashID(at, "")
		if seen[id] {
			t.Fatalf("duplicate id %s", id)
		}
		seen[id] = true
	}
	for _, bad := range []string{"", "x", "20251107T113456.789Z-00000000", "20251107T113456.789000000Z-0000000G", "20251107T113456.789000000Z-00000000.json"} {
		if ValidStashID(bad) {
			t.Errorf("ValidStashID(%q) = true", bad)
		}
	}
}

func TestParseStashSelector(t *testing.T) {
	id := "20251107T113456.789000000Z-0a1b2c3d"
	for _, tc := range []struct {
		in    string
		index int
		id    string
		err   bool
	}{
		{"", 0, "", false},
		{"0", 0, "", false},
		{"12", 12, "", false},
		{"stash@{3}", 3, "", false},
		{id, -1, id, false},
		{"-1", 0, "", true},
		{"stash@{}", 0, "", true},
		{"stash@{x}", 0, "", true},
		{"stash@{1", 0, "", true},
		{"99999999999999999999999", 0, "", true},
		{"abc", 0, "", true},
	} {
		got, err := ParseStashSelector(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("%q: err %v", tc.in, err)
			continue
		}
		if err == nil && (got.Index != tc.index || got.ID != tc.id) {
			t.Errorf("%q: got %+v", tc.in, got)
		}
	}
}

func TestRelativeTime(t *testing.T) {
	now := time.Date(2025, 11, 7, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		ago  time.Duration
		want string
	}{
		{-time.Hour, "just now"},
		{0, "just now"},
		{59 * time.Second, "just now"},
		{time.Minute, "1 minute ago"},
		{119 * time.Second, "1 minute ago"},
		{45 * time.Minute, "45 minutes ago"},
		{time.Hour, "1 hour ago"},
		{2 * time.Hour, "2 hours ago"},
		{23*time.Hour + 59*time.Minute, "23 hours ago"},
		{24 * time.Hour, "yesterday"},
		{47 * time.Hour, "yesterday"},
		{48 * time.Hour, "2 days ago"},
		{3 * 24 * time.Hour, "3 days ago"},
		{13 * 24 * time.Hour, "13 days ago"},
		{14 * 24 * time.Hour, "2 weeks ago"},
		{59 * 24 * time.Hour, "8 weeks ago"},
		{60 * 24 * time.Hour, "2 months ago"},
		{364 * 24 * time.Hour, "12 months ago"},
		{365 * 24 * time.Hour, "1 year ago"},
		{3 * 365 * 24 * time.Hour, "3 years ago"},
	} {
		if got := RelativeTime(now.Add(-tc.ago), now); got != tc.want {
			t.Errorf("%v ago: %q, want %q", tc.ago, got, tc.want)
		}
	}
}

// TestStashCarriesGatesAndFailures: a task waiting at an approval gate,
// with a failed attempt, a question and a skipped stage, comes back from
// the stash exactly as it was, and the gate still decides.
func TestStashCarriesGatesAndFailures(t *testing.T) {
	env := newStashEnv()
	e := env.engine("/wt/a")
	e.User = func() string { return "Ann" }
	_, err := e.StartTask(StartOptions{Workflow: "pipeline", Task: "login", Type: "bug_fix", Priority: "high", Description: "Users cannot log in"})
	mustOK(t, err)
	_, err = e.Fail(TaskOptions{}, "spec unclear")
	mustOK(t, err)
	_, err = e.Ask(TaskOptions{}, "Which login?")
	mustOK(t, err)
	_, _, err = e.Answer(TaskOptions{}, "SSO")
	mustOK(t, err)
	v, err := e.Next("")
	mustOK(t, err)
	if v.Gate == nil {
		t.Fatalf("pm has an approval gate: %+v", v)
	}
	before, err := e.Current("")
	mustOK(t, err)
	if before.State.Status != StatusAwaitingApproval || before.State.Retries["pm"] != 1 || len(before.State.Questions) != 1 {
		t.Fatalf("before the stash: %+v", before.State)
	}
	_, err = e.StashPush("")
	mustOK(t, err)

	e2 := env.engine("/wt/b")
	e2.User = func() string { return "Bob" }
	_, _, err = e2.StashPop("", false, false)
	mustOK(t, err)
	after, err := e2.Current("")
	mustOK(t, err)
	want := before.State.Clone()
	want.Worktree = "/wt/b"
	want.UpdatedAt = env.clock
	want.AwayLog = []AwayEvent{{At: env.clock.UTC(), Event: AwayStashed}, {At: env.clock.UTC(), Event: AwayBack}}
	if !reflect.DeepEqual(after.State, want) {
		t.Fatalf("restored state differs:\n got %+v\nwant %+v", after.State, want)
	}
	v, err = e2.Approve(ApproveOptions{Comment: "ok"})
	mustOK(t, err)
	// bug_fix skips design: the approval goes on to preflight.
	if v.Node != "preflight" {
		t.Fatalf("approve after pop: at %s", v.Node)
	}
	cur, err := e2.Current("")
	mustOK(t, err)
	st := cur.State
	if len(st.Approvals) != 1 || st.Approvals[0].By != "Bob" || len(st.SkippedNodes) != 1 || st.SkippedNodes[0].Node != "design" {
		t.Errorf("after approve: %+v", st)
	}
}

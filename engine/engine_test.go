package engine

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

type testEnv struct {
	*Engine
	tasks    *fakeTaskStore
	sess     *fakeSessionStore
	files    fakeFiles
	snaps    *fakeSnapshots
	warnings []string
	now      time.Time
}

func newTestEngine(t *testing.T, user map[string][]byte) *testEnv {
	t.Helper()
	te := &testEnv{tasks: newFakeTaskStore(), sess: &fakeSessionStore{}, files: fakeFiles{anyTaskFile: "work\n"}, now: t0}
	te.Engine = &Engine{
		Tasks:     te.tasks,
		Archive:   te.tasks,
		Session:   te.sess,
		Workflows: func() (*workflow.Registry, error) { return workflow.NewRegistry(user) },
		Worktree:  "/work/tree",
		Now:       func() time.Time { return te.now },
		NewSuffix: func() string { return "abc123" },
		Files:     te.files,
		User:      func() string { return "Ann" },
		Warn:      func(msg string) { te.warnings = append(te.warnings, msg) },
	}
	te.snaps = newFakeSnapshots(func() time.Time { return te.now })
	te.Snapshots = te.snaps
	return te
}

func (te *testEnv) state(t *testing.T) *State {
	return te.stateOf(t, "")
}

// stateOf is the state of task name ("": the active task), as --task
// would pick it.
func (te *testEnv) stateOf(t *testing.T, name string) *State {
	t.Helper()
	cur, err := te.Current(name)
	if err != nil {
		t.Fatalf("Current: %v", err)
	}
	return cur.State
}

func TestStartAndWalkDiscovery(t *testing.T) {
	te := newTestEngine(t, nil)
	v, err := te.Start("discovery", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if v.Mode != "discovery" || v.Node != "spec" || v.Prompt == "" {
		t.Fatalf("start view = %+v", v)
	}
	if v.Task != "discovery-20260102-030405-abc123" {
		t.Errorf("generated task name = %q", v.Task)
	}
	want := []string{"plan", "code", "learnings", "readme", "done"}
	for _, node := range want {
		te.now = te.now.Add(time.Minute)
		v, err := te.Next("")
		if err != nil {
			t.Fatalf("next to %s: %v", node, err)
		}
		if v.Node != node {
			t.Fatalf("next went to %s, want %s", v.Node, node)
		}
	}
	st := te.state(t)
	if st.Status != StatusCompleted || st.EndedAt == nil || !st.EndedAt.Equal(te.now) {
		t.Errorf("after done: status %s ended %v", st.Status, st.EndedAt)
	}
	if got := strings.Join(st.History, ","); got != "spec,plan,code,learnings,readme,done" {
		t.Errorf("history = %s", got)
	}
	if _, err := te.Next(""); err == nil || !strings.Contains(err.Error(), "completed") {
		t.Errorf("next at done: %v", err)
	}
	if got := te.sess.s.Totals; got.Transitions != 5 || got.WorkflowsStarted != 1 || got.WorkflowsCompleted != 1 {
		t.Errorf("totals = %+v", got)
	}
	if te.tasks.log[0] != "start: discovery at spec" || te.tasks.log[1] != "next: spec -> plan (spec_complete)" {
		t.Errorf("commit messages = %q", te.tasks.log)
	}
}

func TestStartErrors(t *testing.T) {
	te := newTestEngine(t, nil)
	if _, err := te.Start("nope", "", ""); err == nil || !strings.Contains(err.Error(), "Unknown workflow 'nope'") {
		t.Errorf("unknown workflow: %v", err)
	}
	if _, err := te.Start("discovery", "nowhere", ""); err == nil || !strings.Contains(err.Error(), "has no node 'nowhere'") {
		t.Errorf("unknown node: %v", err)
	}
	if _, err := te.Start("discovery", "", "bad/name"); err == nil || !strings.Contains(err.Error(), "Invalid task name") {
		t.Errorf("bad task name: %v", err)
	}
	if _, err := te.Start("discovery", "plan", "t1"); err != nil {
		t.Fatal(err)
	}
	if got := te.state(t); got.CurrentNode != "plan" || got.Task != "t1" {
		t.Errorf("start at plan: %+v", got)
	}
	// Starting another parks the active task: it stays open, owned by
	// no worktree.
	v, err := te.Start("minimal", "", "t2")
	if err != nil || v.Parked == nil || v.Parked.Task != "t1" {
		t.Fatalf("start while active: %+v %v", v, err)
	}
	if got := te.state(t); got.Task != "t2" {
		t.Errorf("current after start: %s", got.Task)
	}
	t1, _ := te.tasks.LoadTask("t1")
	if !t1.State.Active() || t1.State.Worktree != "" || t1.State.WorktreeID != "" {
		t.Errorf("t1 not parked: %+v", t1.State)
	}
	// A task open elsewhere cannot be started again under its name.
	if _, err := te.Start("minimal", "", "t1"); err == nil || !strings.Contains(err.Error(), "already active") {
		t.Errorf("start over an open task: %v", err)
	}
}

func TestNextNoMatchStays(t *testing.T) {
	te := newTestEngine(t, nil)
	if _, err := te.Start("research", "", "r"); err != nil {
		t.Fatal(err)
	}
	if _, err := te.Next(""); err != nil { // plan -> study
		t.Fatal(err)
	}
	before := len(te.tasks.log)
	_, err := te.Next("bogus")
	var nm *ErrNoMatch
	if !errors.As(err, &nm) || nm.Node != "study" || !reflect.DeepEqual(nm.Valid, []string{"continue_study", "study_complete"}) {
		t.Fatalf("no match: %v", err)
	}
	if len(te.tasks.log) != before {
		t.Errorf("a failed next wrote a commit")
	}
	for i := 0; i < 3; i++ {
		if v, err := te.Next("continue_study"); err != nil || v.Node != "study" {
			t.Fatalf("loop: %v %v", v, err)
		}
	}
	if v, err := te.Next(""); err != nil || v.Node != "assess" {
		t.Fatalf("leave loop: %v %v", v, err)
	}
}

func TestNoWorkflow(t *testing.T) {
	te := newTestEngine(t, nil)
	for name, op := range map[string]func() error{
		"next":    func() error { _, err := te.Next(""); return err },
		"prev":    func() error { _, err := te.Prev(TaskOptions{}); return err },
		"repeat":  func() error { _, err := te.Repeat(""); return err },
		"restart": func() error { _, err := te.Restart(TaskOptions{}); return err },
		"abort":   func() error { _, err := te.Abort(TaskOptions{}); return err },
		"status":  func() error { _, err := te.Status(""); return err },
	} {
		if err := op(); !errors.Is(err, ErrNoWorkflow) {
			t.Errorf("%s without a workflow: %v", name, err)
		}
	}
	if st, err := te.Reset(TaskOptions{}); st != nil || err != nil {
		t.Errorf("reset without a workflow: %v %v", st, err)
	}
}

func TestPrevRestartRepeat(t *testing.T) {
	te := newTestEngine(t, nil)
	te.Start("minimal", "", "m")
	if _, err := te.Prev(TaskOptions{}); err == nil || !strings.Contains(err.Error(), "Already at the first node 'spec'") {
		t.Errorf("prev at start: %v", err)
	}
	te.Next("")
	te.Next("") // done
	v, err := te.Prev(TaskOptions{})
	if err != nil || v.Node != "plan" {
		t.Fatalf("prev from done: %v %v", v, err)
	}
	if st := te.state(t); st.Status != StatusActive || st.EndedAt != nil {
		t.Errorf("prev from done did not reopen: %+v", st)
	}
	n := len(te.tasks.log)
	if v, err := te.Repeat(""); err != nil || v.Node != "plan" || len(te.tasks.log) != n {
		t.Errorf("repeat: %v %v, wrote %d commits", v, err, len(te.tasks.log)-n)
	}
	v, err = te.Restart(TaskOptions{})
	if err != nil || v.Node != "spec" || len(te.state(t).History) != 1 {
		t.Errorf("restart: %v %v", v, err)
	}
}

func TestAbortAndReset(t *testing.T) {
	te := newTestEngine(t, nil)
	te.Start("discovery", "", "d")
	te.Next("")
	st, err := te.Abort(TaskOptions{})
	if err != nil || st.CurrentNode != "plan" {
		t.Fatalf("abort: %v %v", st, err)
	}
	cur := te.state(t)
	if cur.Status != StatusAborted || cur.CurrentNode != workflow.NodeAborted {
		t.Errorf("after abort: %+v", cur)
	}
	if _, err := te.Abort(TaskOptions{}); err == nil {
		t.Error("second abort succeeded")
	}
	if _, err := te.Prev(TaskOptions{}); err == nil {
		t.Error("prev after abort succeeded")
	}
	// An aborted workflow does not block a new one.
	if _, err := te.Start("minimal", "", "m"); err != nil {
		t.Fatalf("start after abort: %v", err)
	}
	st, err = te.Reset(TaskOptions{})
	if err != nil || st == nil || st.Task != "m" {
		t.Fatalf("reset: %v %v", st, err)
	}
	if _, err := te.Status(""); !errors.Is(err, ErrNoWorkflow) {
		t.Errorf("status after reset: %v", err)
	}
	if m, _ := te.tasks.LoadArchived("m"); m.State.Status != StatusAborted {
		t.Errorf("reset left task %s", m.State.Status)
	}
}

func TestSessionRebuiltFromRefs(t *testing.T) {
	te := newTestEngine(t, nil)
	te.Start("discovery", "", "mine")
	te.Next("")
	// Another worktree's active task must not be adopted.
	other := newTestEngine(t, nil)
	other.Engine.Tasks, other.Engine.Archive, other.tasks = te.tasks, te.tasks, te.tasks
	other.Worktree = "/other/tree"
	other.now = t0.Add(time.Hour)
	if _, err := other.Start("minimal", "", "theirs"); err != nil {
		t.Fatal(err)
	}
	for _, damage := range []func(){
		func() { te.sess.s = nil },
		func() { te.sess.corrupt = true },
		func() { te.sess.s.ActiveTask = "deleted-task" },
	} {
		damage()
		st := te.state(t)
		if st.Task != "mine" || st.CurrentNode != "plan" {
			t.Fatalf("rebuilt %s at %s, want mine at plan", st.Task, st.CurrentNode)
		}
		if te.sess.s == nil || te.sess.s.ActiveTask != "mine" {
			t.Fatalf("session not rewritten: %+v", te.sess.s)
		}
	}
}

// TestConcurrentNextLosesNothing races many goroutines on one task: every
// update lands exactly once, in some serial order.
func TestConcurrentNextLosesNothing(t *testing.T) {
	loop := []byte("start_node: a\nnodes:\n  a:\n    summary: loop\n    prompt: again\n    transitions:\n      - when: again\n        to: a\n      - when: a_complete\n        to: done\n")
	te := newTestEngine(t, map[string][]byte{".hegel/workflows/loop.yaml": loop})
	if _, err := te.Start("loop", "", "l"); err != nil {
		t.Fatal(err)
	}
	const workers, rounds = 8, 25
	var wg sync.WaitGroup
	var mu sync.Mutex
	errs := 0
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				if _, err := te.Next("again"); err != nil {
					mu.Lock()
					errs++
					mu.Unlock()
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if got := len(te.state(t).History); got != 1+workers*rounds {
		t.Errorf("history has %d entries, want %d (errors: %d)", got, 1+workers*rounds, errs)
	}
}

func TestConflictRetryReappliesOnNewState(t *testing.T) {
	te := newTestEngine(t, nil)
	te.Start("discovery", "", "d")
	// Simulate another process advancing the task between our load and
	// our save, once.
	raced := false
	te.tasks.beforeSave = func() {
		if raced {
			return
		}
		raced = true
		te.tasks.beforeSave = nil
		other := &Engine{Tasks: te.tasks, Session: te.sess, Worktree: te.Worktree, Now: te.Now,
			Workflows: te.Workflows}
		if _, err := other.Next(""); err != nil {
			t.Errorf("racing next: %v", err)
		}
	}
	v, err := te.Next("")
	if err != nil {
		t.Fatal(err)
	}
	if v.Node != "code" {
		t.Errorf("after racing nexts at %s, want code (both applied)", v.Node)
	}
}

func TestSwitchTakesOverAnotherClonesTask(t *testing.T) {
	laptop := newTestEngine(t, nil)
	laptop.WorktreeID = "aaaa:main"
	if _, err := laptop.Start("minimal", "", "handed"); err != nil {
		t.Fatal(err)
	}
	// The desktop shares the refs (as after a fetch) but is another clone.
	desktop := newTestEngine(t, nil)
	desktop.Engine.Tasks, desktop.Engine.Archive, desktop.tasks = laptop.tasks, laptop.tasks, laptop.tasks
	desktop.WorktreeID = "bbbb:main"
	if _, err := desktop.Status(""); !errors.Is(err, ErrNoWorkflow) {
		t.Fatalf("another clone's task adopted without switch: %v", err)
	}
	if _, err := desktop.Switch("nope"); err == nil || !strings.Contains(err.Error(), "No task named 'nope'") {
		t.Errorf("switch to a missing task: %v", err)
	}
	v, err := desktop.Switch("handed")
	if err != nil || v.Node != "spec" {
		t.Fatalf("switch: %v %v", v, err)
	}
	if _, err := desktop.Next(""); err != nil {
		t.Fatal(err)
	}
	// The laptop's session still names the task, but it is no longer its.
	if _, err := laptop.Status(""); !errors.Is(err, ErrNoWorkflow) {
		t.Errorf("old owner still treats the task as active: %v", err)
	}
	// A sibling worktree of the same clone may not take it.
	sibling := newTestEngine(t, nil)
	sibling.Engine.Tasks, sibling.Engine.Archive, sibling.tasks = laptop.tasks, laptop.tasks, laptop.tasks
	sibling.WorktreeID = "bbbb:worktrees/wt2"
	if _, err := sibling.Switch("handed"); err == nil || !strings.Contains(err.Error(), "active in another worktree") {
		t.Errorf("sibling worktree took the task: %v", err)
	}
	// Switching to the task you already have changes nothing.
	n := len(laptop.tasks.log)
	if _, err := desktop.Switch("handed"); err != nil || len(laptop.tasks.log) != n {
		t.Errorf("switch to own task: %v, %d commits", err, len(laptop.tasks.log)-n)
	}
}

// TestRebuildScansOnce: with no session file and only other clones' tasks
// (a fresh clone after a fetch), the first command records that none is
// ours, so later ones do not load every task again.
func TestRebuildScansOnce(t *testing.T) {
	other := newTestEngine(t, nil)
	other.WorktreeID = "aaaa:main"
	if _, err := other.Start("minimal", "", "theirs"); err != nil {
		t.Fatal(err)
	}
	fresh := newTestEngine(t, nil)
	fresh.Engine.Tasks, fresh.Engine.Archive, fresh.tasks = other.tasks, other.tasks, other.tasks
	fresh.WorktreeID = "bbbb:main"
	if _, err := fresh.Status(""); !errors.Is(err, ErrNoWorkflow) {
		t.Fatalf("status: %v", err)
	}
	if fresh.sess.s == nil || fresh.sess.s.ActiveTask != "" {
		t.Fatalf("session after the scan: %+v", fresh.sess.s)
	}
	// A repository without any task stays untouched.
	empty := newTestEngine(t, nil)
	if _, err := empty.Status(""); !errors.Is(err, ErrNoWorkflow) || empty.sess.s != nil {
		t.Errorf("empty repository: %v, session %+v", err, empty.sess.s)
	}
}

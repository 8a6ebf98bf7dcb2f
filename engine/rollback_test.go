package engine

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func (te *testEnv) walk(t *testing.T, workflow string, nexts int) {
	t.Helper()
	if _, err := te.Start(workflow, "", "t"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < nexts; i++ {
		if _, err := te.Next(""); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRollbackCutsHistoryAndRecordsEvent(t *testing.T) {
	te := newTestEngine(t, nil)
	te.walk(t, "discovery", 3)
	st := te.state(t)
	target := st.History[1]
	req := &RollbackRequest{Task: "t", Node: target, Reason: "tests fail"}
	if _, err := te.CheckRollback(TaskOptions{}, req); err != nil {
		t.Fatal(err)
	}
	if got := te.state(t); !reflect.DeepEqual(got.History, st.History) {
		t.Fatal("CheckRollback changed the state")
	}
	te.now = te.now.Add(time.Minute)
	v, err := te.ApplyRollback(TaskOptions{}, req)
	if err != nil {
		t.Fatal(err)
	}
	got := te.state(t)
	if v.Node != target || got.CurrentNode != target || !reflect.DeepEqual(got.History, st.History[:2]) {
		t.Errorf("after rollback: node %s, history %v", got.CurrentNode, got.History)
	}
	want := RollbackEvent{Timestamp: te.now, From: st.CurrentNode, To: target, Reason: "tests fail"}
	if len(got.RollbackHistory) != 1 || got.RollbackHistory[0] != want {
		t.Errorf("events %+v, want %+v", got.RollbackHistory, want)
	}
	if !strings.HasPrefix(te.tasks.log[len(te.tasks.log)-1], "rollback: ") {
		t.Errorf("commit message %q", te.tasks.log[len(te.tasks.log)-1])
	}
	// The same request again (a replay after a crash) is recorded once.
	if _, err := te.ApplyRollback(TaskOptions{}, req); err != nil {
		t.Fatal(err)
	}
	if n := len(te.state(t).RollbackHistory); n != 1 {
		t.Errorf("%d events after a replay, want 1", n)
	}
}

func TestRollbackLoopGuard(t *testing.T) {
	te := newTestEngine(t, nil)
	te.walk(t, "minimal", 1)
	for i := 0; i < LoopGuardLimit; i++ {
		te.now = te.now.Add(5 * time.Minute)
		if _, err := te.ApplyRollback(TaskOptions{}, &RollbackRequest{Task: "t", Node: "spec"}); err != nil {
			t.Fatalf("rollback %d: %v", i+1, err)
		}
		if _, err := te.Next(""); err != nil {
			t.Fatal(err)
		}
	}
	te.now = te.now.Add(5 * time.Minute)
	req := &RollbackRequest{Task: "t", Node: "spec"}
	_, err := te.CheckRollback(TaskOptions{}, req)
	if !errors.Is(err, ErrRollbackLoop) || !strings.Contains(err.Error(), "git hegel rollback spec --force") {
		t.Fatalf("4th rollback within the hour: %v", err)
	}
	if _, err := te.ApplyRollback(TaskOptions{}, req); !errors.Is(err, ErrRollbackLoop) {
		t.Fatalf("ApplyRollback ignores the guard: %v", err)
	}
	// Another node is not affected; --force passes; an hour later it is over.
	if _, err := te.CheckRollback(TaskOptions{}, &RollbackRequest{Task: "t", Node: "plan"}); err != nil {
		t.Errorf("rollback to another node: %v", err)
	}
	if _, err := te.CheckRollback(TaskOptions{}, &RollbackRequest{Task: "t", Node: "spec", Force: true}); err != nil {
		t.Errorf("--force: %v", err)
	}
	if _, err := te.CheckRollback(TaskOptions{}, &RollbackRequest{Task: "t", Node: "spec", Undo: true, History: []string{"spec"}}); err != nil {
		t.Errorf("undo is not guarded: %v", err)
	}
	te.now = te.now.Add(time.Hour)
	if _, err := te.CheckRollback(TaskOptions{}, &RollbackRequest{Task: "t", Node: "spec"}); err != nil {
		t.Errorf("an hour later: %v", err)
	}
}

func TestRollbackHistoryIsBounded(t *testing.T) {
	te := newTestEngine(t, nil)
	te.walk(t, "minimal", 1)
	for i := 0; i < MaxRollbackEvents+7; i++ {
		te.now = te.now.Add(time.Minute)
		if _, err := te.ApplyRollback(TaskOptions{}, &RollbackRequest{Task: "t", Node: "spec", Force: true, Reason: string(rune('a' + i%26))}); err != nil {
			t.Fatal(err)
		}
		if _, err := te.Next(""); err != nil {
			t.Fatal(err)
		}
	}
	ev := te.state(t).RollbackHistory
	if len(ev) != MaxRollbackEvents || !ev[len(ev)-1].Timestamp.Equal(te.now) {
		t.Errorf("%d events kept, want the last %d", len(ev), MaxRollbackEvents)
	}
}

func TestRollbackUndoRestoresHistoryAndTerminalNodes(t *testing.T) {
	te := newTestEngine(t, nil)
	te.walk(t, "minimal", 2) // spec -> plan -> done
	done := te.state(t)
	if done.Status != StatusCompleted {
		t.Fatalf("status %s", done.Status)
	}
	if _, err := te.CheckRollback(TaskOptions{}, &RollbackRequest{Task: "t", Node: "done"}); err == nil {
		t.Error("rolled back to a terminal node without undo")
	}
	te.now = te.now.Add(time.Minute)
	if _, err := te.ApplyRollback(TaskOptions{}, &RollbackRequest{Task: "t", Node: "plan"}); err != nil {
		t.Fatal(err)
	}
	if st := te.state(t); st.Status != StatusPaused || st.EndedAt != nil || st.PausedAt == nil {
		t.Errorf("a rollback from done reopens the task, paused: %s", st.Status)
	}
	te.now = te.now.Add(time.Minute)
	if _, err := te.ApplyRollback(TaskOptions{}, &RollbackRequest{Task: "t", Node: "done", History: done.History, Undo: true, Reason: "undo"}); err != nil {
		t.Fatal(err)
	}
	st := te.state(t)
	if st.Status != StatusCompleted || !reflect.DeepEqual(st.History, done.History) {
		t.Errorf("undo: status %s history %v", st.Status, st.History)
	}
}

func TestRollbackErrors(t *testing.T) {
	te := newTestEngine(t, nil)
	if _, err := te.CheckRollback(TaskOptions{}, &RollbackRequest{Task: "t", Node: "spec"}); !errors.Is(err, ErrNoWorkflow) {
		t.Errorf("no workflow: %v", err)
	}
	te.walk(t, "minimal", 0)
	for _, req := range []*RollbackRequest{
		{Task: "other", Node: "spec"},
		{Task: "t", Node: "nosuch"},
		{Task: "t", Node: "plan"}, // never visited, no history given
		{Task: "t", Node: "plan", History: []string{"spec", "bogus", "plan"}},
	} {
		if _, err := te.CheckRollback(TaskOptions{}, req); err == nil {
			t.Errorf("%+v accepted", req)
		}
	}
	if _, err := te.CheckRollback(TaskOptions{}, &RollbackRequest{Task: "t", Node: "plan", History: []string{"spec", "plan"}}); err != nil {
		t.Errorf("a node known from the checkpoint's history: %v", err)
	}
}

func TestCheckpointHook(t *testing.T) {
	te := newTestEngine(t, nil)
	var entered []string
	var warned []string
	fail := false
	te.Snapshots = hookSnapshots{te.snaps, func(st *State) error {
		entered = append(entered, st.CurrentNode)
		if fail {
			return errors.New("disk full")
		}
		return nil
	}}
	te.Warn = func(s string) { warned = append(warned, s) }
	te.walk(t, "discovery", 2)
	if _, err := te.Prev(TaskOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := te.Restart(TaskOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := te.Repeat(""); err != nil {
		t.Fatal(err)
	}
	st := te.state(t)
	start := st.History[0]
	if len(entered) != 5 || entered[0] != start || entered[3] != entered[1] || entered[4] != start {
		t.Errorf("hook ran at %v; want start, next, next, prev (back to the second node), restart (the start node), and not repeat", entered)
	}
	fail = true
	v, err := te.Next("")
	if err != nil || v == nil {
		t.Fatalf("a failed checkpoint fails the transition: %v", err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "disk full") || !strings.Contains(warned[0], v.Node) {
		t.Errorf("warnings %q", warned)
	}
	// Terminal nodes get no checkpoint.
	fail = false
	n := len(entered)
	if _, err := te.Abort(TaskOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(entered) != n {
		t.Error("a checkpoint was taken at the aborted node")
	}
}

// hookSnapshots calls hook instead of taking a checkpoint.
type hookSnapshots struct {
	*fakeSnapshots
	hook func(*State) error
}

func (h hookSnapshots) TakeCheckpoint(st *State, kind, message string) (*Checkpoint, bool, error) {
	if err := h.hook(st); err != nil {
		return nil, false, err
	}
	return h.fakeSnapshots.TakeCheckpoint(st, kind, message)
}

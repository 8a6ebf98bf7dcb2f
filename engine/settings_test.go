package engine

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func TestCheckpointInterval(t *testing.T) {
	for _, tc := range []struct {
		interval int
		want     []string // nodes whose entry took a checkpoint
	}{
		{0, []string{"spec", "plan", "code", "learnings", "readme"}},
		{1, []string{"spec", "plan", "code", "learnings", "readme"}},
		{2, []string{"spec", "code", "readme"}},
		{3, []string{"spec", "learnings"}},
		{10, []string{"spec"}},
	} {
		te := newTestEngine(t, nil)
		te.CheckpointInterval = tc.interval
		if _, err := te.Start("discovery", "", "t"); err != nil {
			t.Fatal(err)
		}
		for range 5 {
			te.now = te.now.Add(time.Minute)
			if _, err := te.Next(""); err != nil {
				t.Fatal(err)
			}
		}
		got := checkpointNodes(t, te, "t")
		if !slices.Equal(got, tc.want) {
			t.Errorf("interval %d: checkpoints at %v, want %v", tc.interval, got, tc.want)
		}
	}
}

func TestHistoryOffWritesNoEntry(t *testing.T) {
	for _, off := range []bool{false, true} {
		te := newTestEngine(t, nil)
		h := newFakeHistory()
		te.History = h
		te.HistoryOff = off
		if _, err := te.Start("minimal", "", "t"); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := te.Next(""); err != nil {
				t.Fatal(err)
			}
		}
		if want := map[bool]int{false: 1, true: 0}[off]; len(h.entries) != want {
			t.Errorf("history off=%v: %d entries, want %d", off, len(h.entries), want)
		}
	}
}

func TestGoto(t *testing.T) {
	te := newTestEngine(t, nil)
	te.CheckpointInterval = 50
	if _, err := te.Start("discovery", "", "t"); err != nil {
		t.Fatal(err)
	}
	v, err := te.Goto(GotoOptions{Node: "readme", Reason: "why"})
	if err != nil || v.Node != "readme" {
		t.Fatalf("goto: %v %v", v, err)
	}
	st := te.state(t)
	if len(st.NodeMoves) != 1 || st.NodeMoves[0] != (NodeMove{From: "spec", To: "readme", By: "Ann", Reason: "why", At: te.now}) {
		t.Errorf("moves = %+v", st.NodeMoves)
	}
	if len(st.CompletedNodes) != 0 || !slices.Equal(st.History, []string{"spec", "readme"}) {
		t.Errorf("completed %v history %v", st.CompletedNodes, st.History)
	}
	if cps := checkpointNodes(t, te, "t"); !slices.Equal(cps, []string{"spec", "readme"}) {
		t.Errorf("checkpoints at %v", cps)
	}
	n := len(te.tasks.log)
	if _, err := te.Goto(GotoOptions{Node: "nope"}); err == nil || !errors.Is(err, ErrBadName) {
		t.Errorf("unknown node: %v", err)
	}
	if _, err := te.Goto(GotoOptions{Node: "done"}); err == nil {
		t.Error("goto done succeeded")
	}
	if len(te.tasks.log) != n {
		t.Errorf("refused gotos wrote %d commits", len(te.tasks.log)-n)
	}
}

// checkpointNodes lists the nodes of task's checkpoints, oldest first.
func checkpointNodes(t *testing.T, te *testEnv, task string) []string {
	t.Helper()
	cps, err := te.Snapshots.Checkpoints(task)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, cp := range cps {
		out = append(out, cp.Node)
	}
	return out
}

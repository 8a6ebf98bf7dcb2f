package engine

import (
	"testing"
	"time"
)

func TestRounds(t *testing.T) {
	te := newTestEngine(t, nil)
	if _, err := te.Start("minimal", "", "t"); err != nil {
		t.Fatal(err)
	}
	t1 := te.now.Add(time.Minute)
	te.now = t1
	if _, err := te.Next(""); err != nil {
		t.Fatal(err)
	}
	t2 := te.now.Add(time.Minute)
	te.now = t2
	if _, err := te.Prev(TaskOptions{}); err != nil {
		t.Fatal(err)
	}
	st := te.state(t)
	r := Rounds(st, nil)
	if len(r["spec"]) != 2 || len(r["plan"]) != 1 {
		t.Fatalf("rounds = %+v", r)
	}
	s1, p1, s2 := r["spec"][0], r["plan"][0], r["spec"][1]
	if s1.Number != 1 || !s1.EnteredAt.Equal(t0) || s1.EndedAt == nil || !s1.EndedAt.Equal(t1) || s1.Outcome != RoundMovedOn || s1.To != "plan" {
		t.Errorf("spec round 1 = %+v", s1)
	}
	if p1.Outcome != RoundSentBack || p1.To != "spec" || !p1.EndedAt.Equal(t2) {
		t.Errorf("plan round = %+v", p1)
	}
	if s2.Number != 2 || s2.EndedAt != nil || s2.Outcome != "" {
		t.Errorf("open round = %+v", s2)
	}
	te.now = t2.Add(time.Minute)
	if _, err := te.Abort(TaskOptions{}); err != nil {
		t.Fatal(err)
	}
	r = Rounds(te.stateOf(t, "t"), nil)
	if last := r["spec"][1]; last.Outcome != StatusAborted || last.EndedAt == nil {
		t.Errorf("round at the end = %+v (rounds %+v)", last, r)
	}
	if _, ok := r["aborted"]; ok {
		t.Error("the end node has rounds")
	}
	if c := NodesComplete(te.stateOf(t, "t")); len(c) != 1 || c["spec"] {
		t.Errorf("complete = %v", c)
	}
}

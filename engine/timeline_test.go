package engine

import (
	"testing"
	"time"
)

// TestBuildTimeline: visits come from the phase log with the time spent
// in each; failures (read back from the commits), approvals, questions,
// rollbacks and overrides land on the visit they happened in, and a
// skipped node sits between the visits it was passed over between.
func TestBuildTimeline(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	answered := at(12)
	st := &State{
		Task: "t", CurrentNode: "review", Status: StatusAwaitingApproval, Attempt: 1,
		History: []string{"spec", "code", "review"},
		PhaseLog: []PhaseVisit{
			{Node: "spec", Start: at(0)}, {Node: "code", Start: at(10)}, {Node: "review", Start: at(30)},
			{Node: "code", Start: at(40)}, {Node: "review", Start: at(50)},
		},
		SkippedNodes:    []SkippedNode{{Node: "design", Reason: "skipped for task type bug_fix", At: at(10)}},
		Approvals:       []Approval{{Node: "review", By: "Ann", At: at(40), Comment: "no tests", Rejected: true}},
		RollbackHistory: []RollbackEvent{{Timestamp: at(40), From: "review", To: "code", Reason: "no tests"}},
		Questions:       []Question{{Node: "code", Question: "which db?", Answer: "sqlite", AskedAt: at(11), AnsweredAt: &answered}},
		Overrides:       []Override{{Node: "code", What: "artifact", At: at(49)}},
	}
	ops := []Operation{
		{Subject: "fail: code attempt 1 of 3 (tests red)", Time: at(20)},
		{Subject: "fail: code attempt 2 of 3 (still red)", Time: at(25)},
		{Subject: "fail: code attempt 1 of 3 (flaky)", Time: at(45)},
		{Subject: "next: code -> review (code_complete)", Time: at(30)},
	}
	tl := BuildTimeline(st, ops, at(55))
	var got []string
	for _, v := range tl.Visits {
		s := v.Node
		if v.Skip != nil {
			s = "skip:" + v.Node
		}
		got = append(got, s)
	}
	want := []string{"spec", "skip:design", "code", "review", "code", "review"}
	if len(got) != len(want) {
		t.Fatalf("visits %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("visits %v, want %v", got, want)
		}
	}
	v := tl.Visits
	if v[0].Spent != 10*time.Minute || v[5].Spent != 5*time.Minute || !v[5].Current || v[3].Current {
		t.Errorf("spent/current: %v %v %v", v[0].Spent, v[5].Spent, v[5].Current)
	}
	if len(v[2].Failures) != 2 || v[2].Attempts != 3 || v[2].Failures[1].Reason != "still red" || len(v[2].Questions) != 1 {
		t.Errorf("first code visit: %+v", v[2])
	}
	if len(v[4].Failures) != 1 || v[4].Attempts != 2 || len(v[4].Overrides) != 1 {
		t.Errorf("second code visit: %+v", v[4])
	}
	if len(v[3].Approvals) != 1 || len(v[3].Rollbacks) != 1 || v[3].Rollbacks[0].Reason != "no tests" {
		t.Errorf("first review visit: %+v", v[3])
	}
	if len(v[5].Approvals) != 0 {
		t.Errorf("the rejection landed on the second review visit")
	}
}

// TestBuildTimelineWithoutPhaseLog: a state written before the phase log
// existed still shows its path, untimed but the current node.
func TestBuildTimelineWithoutPhaseLog(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	st := &State{Task: "t", CurrentNode: "plan", Status: StatusActive, History: []string{"spec", "plan"}, PhaseStartTime: t0}
	tl := BuildTimeline(st, nil, t0.Add(time.Hour))
	if len(tl.Visits) != 2 || !tl.Visits[0].Entered.IsZero() || tl.Visits[1].Spent != time.Hour || !tl.Visits[1].Current {
		t.Errorf("untimed timeline: %+v", tl.Visits)
	}
}

func TestParseFailure(t *testing.T) {
	node, f, ok := ParseFailure(Operation{Subject: "fail: dev attempt 3 of 3; task failed (cookie (still) not set)"})
	if !ok || node != "dev" || f.Attempt != 3 || f.Max != 3 || !f.Final || f.Reason != "cookie (still) not set" {
		t.Errorf("parse: %q %+v %v", node, f, ok)
	}
	if _, _, ok := ParseFailure(Operation{Subject: "next: a -> b (a_complete)"}); ok {
		t.Error("a next parsed as a failure")
	}
}

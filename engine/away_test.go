package engine

import (
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/engine/agent"
)

// TestMetricsLeaveTimeAwayOut: the time a task was stashed or parked is
// not its phase's, and neither are the commits made meanwhile (by the
// task that had the worktree).
func TestMetricsLeaveTimeAwayOut(t *testing.T) {
	m := func(d int) time.Time { return t0.Add(time.Duration(d) * time.Minute) }
	st := &State{Task: "a", Workflow: "w", Status: StatusActive, CurrentNode: "build",
		PhaseLog: []PhaseVisit{{"spec", m(0), ""}, {"build", m(30), ""}}}
	st.leave(m(10), AwayStashed)
	st.leave(m(12), AwayParked) // already away: not a second departure
	st.comeBack(m(25))
	st.comeBack(m(26)) // already back
	st.leave(m(40), AwayParked)
	if len(st.AwayLog) != 3 {
		t.Fatalf("away log %+v", st.AwayLog)
	}
	got := agent.ComputeMetrics(MetricsRun(st, m(60)), nil, []time.Time{m(5), m(15), m(35), m(45)})
	spec, build := got.Phases[0], got.Phases[1]
	if spec.Duration() != 15*time.Minute || spec.Away != 15*time.Minute || spec.Commits != 1 {
		t.Errorf("spec: %s, away %s, %d commits", spec.Duration(), spec.Away, spec.Commits)
	}
	if build.Duration() != 10*time.Minute || build.Away != 20*time.Minute || build.Commits != 1 {
		t.Errorf("build: %s, away %s, %d commits", build.Duration(), build.Away, build.Commits)
	}
	if got.Total.Duration() != 25*time.Minute || got.Total.Commits != 2 {
		t.Errorf("total: %s, %d commits", got.Total.Duration(), got.Total.Commits)
	}
	// A stashed task's state has been away since its last update.
	stashed := &State{Status: StatusStashed, UpdatedAt: m(50), CurrentNode: "spec"}
	if iv := stashed.AwayIntervals(m(60)); len(iv) != 1 || !iv[0].From.Equal(m(50)) || !iv[0].To.Equal(m(60)) {
		t.Errorf("stashed: %+v", iv)
	}
}

// TestMergeAwayLog: two clones' away logs merge as a union in time
// order: a departure on one side and a return on the other both stand.
func TestMergeAwayLog(t *testing.T) {
	base := &State{Task: "t", Workflow: "w", Mode: "w", Status: StatusActive, CurrentNode: "a", History: []string{"a"}, RollbackHistory: []RollbackEvent{}}
	base.leave(at(1), AwayParked)
	ours, theirs := base.Clone(), base.Clone()
	ours.comeBack(at(3))
	theirs.Description = "edited"
	m, err := MergeStates(base, ours, theirs, SideNone)
	if err != nil || m.State == nil {
		t.Fatalf("merge: %v %+v", err, m.Conflicts)
	}
	if got := m.State.AwayLog; len(got) != 2 || got[1].Event != AwayBack || m.State.Description != "edited" {
		t.Fatalf("merged away log %+v", got)
	}
	ours2 := m.State.Clone()
	ours2.leave(at(5), AwayStashed)
	theirs2 := m.State.Clone()
	theirs2.logAway(at(4), AwayParked)
	m2, err := MergeStates(m.State, ours2, theirs2, SideNone)
	if err != nil || m2.State == nil {
		t.Fatalf("merge: %v %+v", err, m2.Conflicts)
	}
	if got := m2.State.AwayLog; len(got) != 4 || !got[2].At.Equal(at(4)) || !got[3].At.Equal(at(5)) {
		t.Fatalf("merged away log not in time order: %+v", got)
	}
}

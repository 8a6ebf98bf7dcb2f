package engine

import (
	"time"

	"github.com/git-hegel/git-hegel/engine/agent"
)

// MetricsRun is what agent.ComputeMetrics and agent.PathGraph read of
// st's run: its phase log (for a task from before the phase log, one
// phase: the current one), when it ended (now for a run still going) and
// its overrides.
func MetricsRun(st *State, now time.Time) agent.Run {
	r := agent.Run{Task: st.Task, Workflow: st.Workflow, Status: st.Status, End: now, Open: st.Active()}
	if st.EndedAt != nil {
		r.End = *st.EndedAt
	}
	for _, v := range st.PhaseLog {
		r.Phases = append(r.Phases, agent.Phase{Node: v.Node, Start: v.Start})
	}
	if len(r.Phases) == 0 {
		r.Phases = []agent.Phase{{Node: st.CurrentNode, Start: st.PhaseStartTime}}
	}
	for _, a := range st.AwayIntervals(r.End) {
		r.Away = append(r.Away, agent.Interval{From: a.From, To: a.To})
	}
	for _, o := range st.Overrides {
		r.Bypasses = append(r.Bypasses, agent.Bypass{Node: o.Node, What: o.What, At: o.At})
	}
	return r
}

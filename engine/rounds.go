package engine

import (
	"time"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// Round is one entry into a node and how it ended. Every re-entry starts
// a new round, so a QA node that sends the work back to development and is
// entered again has one round per pass.
type Round struct {
	Number    int        `json:"number"`
	EnteredAt time.Time  `json:"entered_at"`
	EndedAt   *time.Time `json:"ended_at,omitempty"` // absent while the round runs
	// Outcome is how it ended: RoundMovedOn (along a transition forward),
	// RoundSentBack (to a node first entered before this one: a failed
	// QA, a rejection, prev), RoundMovedByHand (goto), or the task's end status
	// (completed, aborted, rolled_back); "" while it runs.
	Outcome string `json:"outcome,omitempty"`
	To      string `json:"to,omitempty"`     // the node entered next
	Reason  string `json:"reason,omitempty"` // why it was sent back or moved
}

// Round outcomes besides the task's end statuses.
const (
	RoundMovedOn     = "moved_on"
	RoundSentBack    = "sent_back"
	RoundMovedByHand = "moved_by_hand"
)

// Rounds derives every node's rounds from the phase log (the entries,
// with their times), the rollback history (what was sent back, and why)
// and the moves by hand. It writes nothing: every path into a node logs
// its entry, so the rounds cannot miss one. Terminal nodes have none. A
// phase log cut to its bound loses the oldest rounds with it.
func Rounds(st *State, wf *workflow.Definition) map[string][]Round {
	log := st.PhaseLog
	out := map[string][]Round{}
	// A node's first entry orders it: going to a node first entered
	// earlier is going back, whatever the transition is called.
	first := map[string]int{}
	for i, v := range log {
		if _, ok := first[v.Node]; !ok {
			first[v.Node] = i
		}
	}
	for i, v := range log {
		if v.Node == workflow.NodeDone || v.Node == workflow.NodeAborted || (wf != nil && wf.IsTerminal(v.Node)) {
			continue
		}
		r := Round{Number: len(out[v.Node]) + 1, EnteredAt: v.Start}
		switch {
		case i+1 < len(log):
			next := log[i+1]
			end := next.Start
			r.EndedAt, r.To, r.Outcome = &end, next.Node, RoundMovedOn
			if next.Node == workflow.NodeDone {
				r.Outcome = StatusCompleted
			} else if next.Node == workflow.NodeAborted {
				r.Outcome = StatusAborted
			} else if m, ok := roundMove(st, v, next); ok {
				r.Outcome, r.Reason = RoundMovedByHand, m.Reason
			} else if first[next.Node] < first[v.Node] {
				// Back to a node first entered before this one: the
				// work was sent back (a failed QA, a rejection, prev).
				r.Outcome = RoundSentBack
				if ev, ok := roundEvent(st, v, next); ok {
					r.Reason = ev.Reason
				}
			}
		case st.Finished() && st.EndedAt != nil:
			end := *st.EndedAt
			r.EndedAt, r.Outcome = &end, st.Status
		}
		out[v.Node] = append(out[v.Node], r)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// roundEvent finds the rollback event that ended visit v by sending the
// task to next.
func roundEvent(st *State, v, next PhaseVisit) (RollbackEvent, bool) {
	for _, ev := range st.RollbackHistory {
		if ev.From == v.Node && ev.To == next.Node && !ev.Timestamp.Before(v.Start) && !ev.Timestamp.After(next.Start) {
			return ev, true
		}
	}
	return RollbackEvent{}, false
}

// roundMove finds the move by hand that ended visit v.
func roundMove(st *State, v, next PhaseVisit) (NodeMove, bool) {
	for _, m := range st.NodeMoves {
		if m.From == v.Node && m.To == next.Node && !m.At.Before(v.Start) && !m.At.After(next.Start) {
			return m, true
		}
	}
	return NodeMove{}, false
}

// NodesComplete says, for every node the task entered or completed,
// whether it is completed (in completed_nodes): `--json` shows each as
// `<node>_complete`.
func NodesComplete(st *State) map[string]bool {
	out := map[string]bool{}
	for _, n := range st.History {
		if n != workflow.NodeDone && n != workflow.NodeAborted {
			out[n] = false
		}
	}
	for _, n := range st.CompletedNodes {
		out[n] = true
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

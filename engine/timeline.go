package engine

import (
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"
)

// The path a task took through its workflow, visit by visit, with what
// happened in each: what `git hegel web` shows on a task's page.

// Operation is one commit on a task's ref: one command's change to it.
type Operation struct {
	Commit  string
	Time    time.Time // committer time (whole seconds)
	Author  string    // author name
	Subject string    // the message's first line: "next: spec -> plan (spec_complete)"
	Merge   bool      // more than one parent (a sync merge)
}

// Failure is one failed attempt (`git hegel fail`), read back from its
// commit.
type Failure struct {
	At      time.Time
	Attempt int
	Max     int
	Reason  string
	Final   bool // the attempt that failed the task
}

// Visit is one stay in a node, or (Skip set) a node passed over.
type Visit struct {
	Node    string
	Entered time.Time // zero when the state predates the phase log
	// Spent is the time until the next visit, or until now (the end of
	// the run) for the current one.
	Spent    time.Duration
	Current  bool
	Attempts int
	Failures []Failure
	// Rollbacks are the moves back that left this visit (rejections,
	// rollbacks, transitions to a visited node), with their reasons.
	Rollbacks []RollbackEvent
	Approvals []Approval
	Questions []Question
	Overrides []Override
	// Skip is set on an entry for a node that was skipped, not run.
	Skip *SkippedNode
}

// Timeline is a task's path, oldest first.
type Timeline struct {
	Visits []Visit
	// Truncated is set when the phase log dropped the oldest visits
	// (it keeps MaxPhaseLog); Unplaced holds what belonged to them.
	Truncated bool
	Unplaced  Visit
}

var failSubject = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^fail: (\S+) attempt (\d+) of (\d+)(; task failed)? \((.*)\)$`)
})

// ParseFailure reads a failure back from the subject Fail writes
// ("fail: <node> attempt <n> of <max> (<reason>)"), so old tasks, whose
// states keep only a count per node, show every failure with its reason.
func ParseFailure(op Operation) (node string, f Failure, ok bool) {
	m := failSubject().FindStringSubmatch(op.Subject)
	if m == nil {
		return "", Failure{}, false
	}
	n, _ := strconv.Atoi(m[2])
	mx, _ := strconv.Atoi(m[3])
	return m[1], Failure{At: op.Time, Attempt: n, Max: mx, Reason: m[5], Final: m[4] != ""}, true
}

// BuildTimeline lays out st's path: one visit per phase log entry (the
// history, untimed, for a state written before the log existed), each
// with the approvals, questions, rollbacks, overrides and failures that
// happened there, and entries for the nodes skipped on the way. ops are
// the task ref's commits (any order); now ends the current visit of an
// open task.
func BuildTimeline(st *State, ops []Operation, now time.Time) *Timeline {
	tl := &Timeline{}
	if len(st.PhaseLog) > 0 {
		for _, p := range st.PhaseLog {
			tl.Visits = append(tl.Visits, Visit{Node: p.Node, Entered: p.Start})
		}
		tl.Truncated = len(st.PhaseLog) >= MaxPhaseLog
	} else {
		for i, n := range st.History {
			v := Visit{Node: n}
			if i == len(st.History)-1 {
				v.Entered = st.PhaseStartTime
			}
			tl.Visits = append(tl.Visits, v)
		}
	}
	end := now
	if st.EndedAt != nil {
		end = *st.EndedAt
	}
	for i := range tl.Visits {
		v := &tl.Visits[i]
		if i+1 < len(tl.Visits) {
			if next := tl.Visits[i+1].Entered; !v.Entered.IsZero() && !next.IsZero() {
				v.Spent = max(next.Sub(v.Entered), 0)
			}
		} else {
			v.Current = st.CurrentNode == v.Node
			if !v.Entered.IsZero() {
				v.Spent = max(end.Sub(v.Entered), 0)
			}
		}
	}
	// place returns the visit of node that was under way at t: the last
	// one entered at or before t (commit times are whole seconds).
	place := func(node string, t time.Time, coarse bool) *Visit {
		for i := len(tl.Visits) - 1; i >= 0; i-- {
			v := &tl.Visits[i]
			start := v.Entered
			if coarse {
				start = start.Truncate(time.Second)
			}
			if v.Node == node && !start.After(t) {
				return v
			}
		}
		// An untimed history (no phase log): the last visit of the node.
		for i := len(tl.Visits) - 1; i >= 0; i-- {
			if tl.Visits[i].Node == node && tl.Visits[i].Entered.IsZero() {
				return &tl.Visits[i]
			}
		}
		return &tl.Unplaced
	}
	for _, a := range st.Approvals {
		v := place(a.Node, a.At, false)
		v.Approvals = append(v.Approvals, a)
	}
	for _, q := range st.Questions {
		v := place(q.Node, q.AskedAt, false)
		v.Questions = append(v.Questions, q)
	}
	for _, r := range st.RollbackHistory {
		v := place(r.From, r.Timestamp, false)
		v.Rollbacks = append(v.Rollbacks, r)
	}
	for _, o := range st.Overrides {
		v := place(o.Node, o.At, false)
		v.Overrides = append(v.Overrides, o)
	}
	fails := slices.Clone(ops)
	slices.SortStableFunc(fails, func(a, b Operation) int { return a.Time.Compare(b.Time) })
	for _, op := range fails {
		if node, f, ok := ParseFailure(op); ok {
			v := place(node, f.At, true)
			v.Failures = append(v.Failures, f)
		}
	}
	for i := range tl.Visits {
		v := &tl.Visits[i]
		v.Attempts = len(v.Failures) + 1
		if v.Current && st.Status == StatusFailed && len(v.Failures) > 0 {
			v.Attempts = len(v.Failures)
		}
		if v.Current && st.Attempt > v.Attempts {
			v.Attempts = st.Attempt
		}
	}
	// Skipped nodes go in at the time they were passed over, before a
	// visit entered at the same instant (the move that skipped them).
	for _, s := range st.SkippedNodes {
		s := s
		at := len(tl.Visits)
		for i, v := range tl.Visits {
			if !v.Entered.IsZero() && !v.Entered.Before(s.At) {
				at = i
				break
			}
		}
		tl.Visits = slices.Insert(tl.Visits, at, Visit{Node: s.Node, Entered: s.At, Skip: &s})
	}
	return tl
}

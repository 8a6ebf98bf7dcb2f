package engine

import (
	"slices"
	"time"
)

// Time away. A task leaves its worktree when it is stashed or parked (by
// start, switch or stash pop making room for another task), and comes
// back when it is popped or taken again. While it is away the worktree
// works on something else: metrics leave that time, and the commits made
// meanwhile, out of the task's phases. The log is a list of events so
// that two clones' versions merge as a union (statemerge.go).

// Away events.
const (
	AwayStashed = "stashed" // git hegel stash
	AwayParked  = "parked"  // start, switch or stash pop made room for another task
	AwayBack    = "back"    // popped, switched to or claimed again
)

// AwayEvent is one departure or return.
type AwayEvent struct {
	At    time.Time `json:"at"`
	Event string    `json:"event"`
}

// MaxAwayLog bounds the away log; older events are dropped.
const MaxAwayLog = 100

// Interval is a span of time, From inclusive, To exclusive.
type Interval struct{ From, To time.Time }

// away reports whether the log's last event is a departure.
func (s *State) away() bool {
	n := len(s.AwayLog)
	return n > 0 && s.AwayLog[n-1].Event != AwayBack
}

// logAway appends an event, keeping the last MaxAwayLog.
func (s *State) logAway(at time.Time, event string) {
	s.AwayLog = append(s.AwayLog, AwayEvent{At: at.UTC(), Event: event})
	if n := len(s.AwayLog); n > MaxAwayLog {
		s.AwayLog = slices.Clone(s.AwayLog[n-MaxAwayLog:])
	}
}

// leave records that the task left its worktree at t.
func (s *State) leave(t time.Time, event string) {
	if !s.away() {
		s.logAway(t, event)
	}
}

// comeBack records that the task is back in a worktree at t.
func (s *State) comeBack(t time.Time) {
	if s.away() {
		s.logAway(t, AwayBack)
	}
}

// AwayIntervals are the spans the task was away, oldest first: each
// from a departure to the next return, the last one to now while it is
// still away. A stashed task's state (the one its ref keeps while the
// stash holds it) has been away since it was stashed, its last update.
func (s *State) AwayIntervals(now time.Time) []Interval {
	evs := slices.Clone(s.AwayLog)
	slices.SortStableFunc(evs, func(a, b AwayEvent) int { return a.At.Compare(b.At) })
	var out []Interval
	var from *time.Time
	for _, ev := range evs {
		switch {
		case ev.Event != AwayBack && from == nil:
			t := ev.At
			from = &t
		case ev.Event == AwayBack && from != nil:
			if ev.At.After(*from) {
				out = append(out, Interval{From: *from, To: ev.At})
			}
			from = nil
		}
	}
	if from == nil && s.Status == StatusStashed {
		t := s.UpdatedAt
		from = &t
	}
	if from != nil && now.After(*from) {
		out = append(out, Interval{From: *from, To: now})
	}
	return out
}

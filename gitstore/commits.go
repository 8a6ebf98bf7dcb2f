package gitstore

import "time"

// maxCommitWalk bounds how far back the commit times walk goes: a guard
// rule asks about recent phases, not the project's whole history.
const maxCommitWalk = 10000

// CommitTimes returns the committer times of the commits on HEAD's first
// parent line made at or after since, newest first (require_commits and
// the per-phase commit counts of metrics).
func (r *Repo) CommitTimes(since time.Time) ([]time.Time, error) {
	head, err := r.Head()
	if err != nil {
		return nil, err
	}
	var out []time.Time
	g := newGraph(r.storage)
	h := head.Commit
	for i := 0; i < maxCommitWalk && !h.IsZero(); i++ {
		n, err := g.node(h)
		if err != nil {
			return out, nil // a shallow or damaged history ends the walk
		}
		when := time.Unix(n.when, 0)
		if when.Before(since.Truncate(time.Second)) {
			break
		}
		out = append(out, when)
		if len(n.parents) == 0 {
			break
		}
		h = n.parents[0]
	}
	return out, nil
}

// CommitsAfter counts the commits on HEAD's first parent line after base
// (the commit HEAD was at when a phase started) and not before since.
// Commit times have whole seconds, so time alone would count a commit made
// in the phase's first second but before it started; ancestry does not.
// With base "" (not recorded) it counts by time alone.
func (r *Repo) CommitsAfter(base string, since time.Time) (int, error) {
	head, err := r.Head()
	if err != nil {
		return 0, err
	}
	g := newGraph(r.storage)
	h := head.Commit
	n := 0
	for i := 0; i < maxCommitWalk && !h.IsZero(); i++ {
		if base != "" && h.String() == base {
			break
		}
		c, err := g.node(h)
		if err != nil {
			break // a shallow or damaged history ends the walk
		}
		if time.Unix(c.when, 0).Before(since.Truncate(time.Second)) {
			break
		}
		n++
		if len(c.parents) == 0 {
			break
		}
		h = c.parents[0]
	}
	return n, nil
}

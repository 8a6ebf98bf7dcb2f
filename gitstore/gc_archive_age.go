package gitstore

import (
	"time"

	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// archiveEnd is when gc counts archived task name as ended: the later of
// the ended_at its state holds and when this clone first held the
// archive. The state may have come from a fetch, and another clone can
// write any date there; an early one must not make this clone's gc take
// the checkpoints and agent-action snapshots it keeps of the task (they
// go with the archive) before the retention has passed here.
//
// When this clone first held it is read from its reflog of the archive
// ref, a local record nothing fetched writes: the entry that last created
// the ref (a ref deleted and made again counts from the new one). Without
// one (git expires reflog entries, after 90 days by default) the oldest
// entry left is the earliest time this clone is known to have held it.
// With no entry at all there is nothing local to go by, and the state's
// date stands. For an archive made here the two agree: the archive ref is
// created by the command that ended the task, within the second or the
// few its artifacts take to copy.
func (r *Repo) archiveEnd(name string, ended time.Time) time.Time {
	if held, ok := heldSince(r.readReflog(ArchiveRef(name))); ok && held.After(ended) {
		return held
	}
	return ended
}

// heldSince is when the current life of a ref began by its reflog: its
// newest entry from no commit, else its oldest entry.
func heldSince(log []refs.ReflogEntry) (time.Time, bool) {
	if len(log) == 0 {
		return time.Time{}, false
	}
	for i := len(log) - 1; i >= 0; i-- {
		if log[i].Old.IsZero() && !log[i].New.IsZero() {
			return log[i].When, true
		}
	}
	return log[0].When, true
}

package gitstore

import (
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// What gc removes is decided by dates written in synced data (an
// archived task's ended_at, a history entry's ended_at, the commit dates
// of the stash list), and another clone can write any date there: an
// early one must not make this clone's gc take data before the retention
// has passed here. So data counts as old no earlier than this clone has
// held it, by its reflog of the ref that holds it, a local record nothing
// fetched writes. For data written here the two agree: the ref moves as
// the data is written.

// archiveEnd is when gc counts archived task name as ended: the later of
// the ended_at its state holds and when this clone first held the
// archive. It takes the checkpoints and agent-action snapshots this
// clone keeps of the task with it.
//
// When this clone first held it is read from its reflog of the archive
// ref: the entry that last created the ref (a ref deleted and made again
// counts from the new one). Without one (git expires reflog entries,
// after 90 days by default) the oldest entry left is the earliest time
// this clone is known to have held it. With no entry at all there is
// nothing local to go by, and the state's date stands. For an archive
// made here the two agree: the archive ref is created by the command that
// ended the task, within the second or the few its artifacts take to
// copy.
func (r *Repo) archiveEnd(name string, ended time.Time) time.Time {
	if held, ok := heldSince(r.readReflog(ArchiveRef(name))); ok && held.After(ended) {
		return held
	}
	return ended
}

// heldSince is when the current life of a ref began by its reflog.
func heldSince(log []refs.ReflogEntry) (time.Time, bool) {
	life := currentLife(log)
	if len(life) == 0 {
		return time.Time{}, false
	}
	return life[0].When, true
}

// currentLife is the part of a reflog since the ref's current life
// began: from its newest entry from no commit (the ref created, or made
// again after a delete), else all of it (that entry expired).
func currentLife(log []refs.ReflogEntry) []refs.ReflogEntry {
	for i := len(log) - 1; i >= 0; i-- {
		if log[i].Old.IsZero() && !log[i].New.IsZero() {
			return log[i:]
		}
	}
	return log
}

// heldAt is the commit a ref pointed at just before t by its reflog: what
// this clone is known to have held since before t. It is the zero hash
// when the ref's current life began at t or later (or its oldest entry
// left is that late). ok is false when there is nothing local to go by:
// no reflog, or one that gc restarted at t or later (gc restarts the log
// of a chain it re-roots, which holds only what it held before).
func heldAt(log []refs.ReflogEntry, t time.Time) (plumbing.Hash, bool) {
	life := currentLife(log)
	if len(life) == 0 || (restartedByGC(life[0]) && !life[0].When.Before(t)) {
		return plumbing.ZeroHash, false
	}
	for i := len(life) - 1; i >= 0; i-- {
		if life[i].When.Before(t) {
			return life[i].New, true
		}
	}
	return plumbing.ZeroHash, true
}

// gcReflogPrefix starts the reflog message of every update gc makes.
const gcReflogPrefix = "gc: "

func restartedByGC(e refs.ReflogEntry) bool {
	return e.Old.IsZero() && strings.HasPrefix(e.Msg, gcReflogPrefix)
}

// heldCommits is the commits of ref's chain this clone held before t
// (heldAt): those the commit it held then reaches. all is true when there
// is nothing local to go by, and every commit counts as held. A held
// commit that cannot be read makes none count (what it would allow to go
// stays for now).
func (r *Repo) heldCommits(ref plumbing.ReferenceName, t time.Time) (held map[plumbing.Hash]bool, all bool) {
	tip, ok := heldAt(r.readReflog(ref), t)
	if !ok {
		return nil, true
	}
	held, err := reachable(newGraph(r.storage), tip)
	if err != nil {
		return map[plumbing.Hash]bool{}, false
	}
	return held, false
}

package gitstore

import (
	"errors"
	"math/rand/v2"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/engine"
)

// Sync and the archive: refs/hegel/archive/* travel like task refs (same
// validation, same merge). A task that finished here has no task ref any
// more, so a remote task or archive ref of the same name is merged against
// what this repository keeps of it instead:
//
//   - contained in the local archive or deleted-task record: nothing to
//     add (the task finished, or was deleted, after that version);
//   - the local archive is contained in it: the task went on from its
//     finished state elsewhere (prev after done, the name started again),
//     so it is added, as a fast-forward;
//   - otherwise both sides moved on: the local archive stays, the remote's
//     version is saved as a stash entry, and a merge commit on the archive
//     records both, as for a live task.
//
// And a live task ref that a fetched archive contains is removed: that
// task finished elsewhere, and the archive holds all of it.

// relArchive is the archive's namespace below refs/hegel/ (its entry in
// syncNamespaces is the tasks' one with this name).
const relArchive = "archive/"

// archived reports whether a task ref is in the archive (it is synced,
// validated and merged exactly as a live task's ref).
func (h hegelRef) archived() bool { return h.ns != nil && h.ns.rel == relArchive }

// mergeFinished merges theirs, a remote task or archive ref whose local ref
// does not exist. handled means it did all there is to do; otherwise the
// caller creates the ref, reporting change.
func (s *syncer) mergeFinished(ref hegelRef, theirs plumbing.Hash, saved map[plumbing.Hash]string) (handled bool, change engine.TaskChange, err error) {
	name := ref.task()
	if d, err := readRefOrZero(s.r.refs, deletedRef(name)); err == nil && !d.IsZero() {
		if ok, err := s.g.isAncestor(theirs, d); err == nil && ok {
			return true, "", nil
		}
	}
	if ref.archived() {
		return false, engine.TaskAdded, nil
	}
	aref := ArchiveRef(name)
	for i := 0; i < mergeAttempts; i++ {
		a, err := readRefOrZero(s.r.refs, aref)
		if err != nil {
			return false, "", err
		}
		if a.IsZero() {
			return false, engine.TaskAdded, nil
		}
		if ok, err := s.g.isAncestor(theirs, a); err != nil {
			return false, "", err
		} else if ok {
			return true, "", nil
		}
		if ok, err := s.g.isAncestor(a, theirs); err != nil {
			return false, "", err
		} else if ok {
			return false, engine.TaskFastForwarded, nil
		}
		arch, _, err := classify(relArchive + name)
		if err != nil {
			return false, "", err
		}
		res, err := s.mergeTask(arch, a, theirs, saved)
		if err != nil {
			return false, "", err
		}
		err = s.r.refs.Update(aref, a, res.next)
		if errors.Is(err, ErrConflict) {
			time.Sleep(time.Duration(rand.Int64N(int64(time.Millisecond) << min(i, 5))))
			continue
		}
		if err != nil {
			return false, "", describeRefError(aref, err)
		}
		s.rep.Tasks = append(s.rep.Tasks, engine.TaskSync{Task: name, Change: engine.TaskDiverged, StashID: res.stash})
		return true, "", nil
	}
	return false, "", errors.New(string(aref) + " kept changing while merging; try again")
}

// dropArchivedTask removes the local task ref of a task whose fetched
// archive contains it: that task finished elsewhere. It is a
// compare-and-swap, so a local change made meanwhile keeps the ref.
func (s *syncer) dropArchivedTask(ref hegelRef, archive plumbing.Hash) {
	name := ref.task()
	h, err := readRefOrZero(s.r.refs, TaskRef(name))
	if err != nil || h.IsZero() {
		return
	}
	if ok, err := s.g.isAncestor(h, archive); err != nil || !ok {
		return
	}
	if s.r.refs.Update(TaskRef(name), h, plumbing.ZeroHash) == nil {
		s.r.removeTaskCache(name)
	}
}

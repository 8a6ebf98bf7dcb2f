package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/gitstore/objects"
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
//   - otherwise both sides moved on: the two states merge field by field,
//     as for a live task; a merged state that is still finished continues
//     the archive, an open one (a resolution that took the remote's node)
//     is live again on top of it. A conflict leaves both as they are.
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
func (s *syncer) mergeFinished(ref hegelRef, theirs plumbing.Hash) (handled bool, change engine.TaskChange, err error) {
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
		bases, err := s.g.mergeBases(a, theirs)
		if err != nil {
			return false, "", err
		}
		res, err := s.mergeTask(arch, bases, a, theirs)
		if err != nil {
			return false, "", err
		}
		if res.change == engine.TaskConflicted {
			// Neither the task nor the archive travels until resolved.
			s.conflicted[ref.rel], s.conflicted[arch.rel] = true, true
			s.record(ref, a, res)
			return true, "", nil
		}
		// A merged state that is still finished continues the archive; an
		// open one (the remote's moves taken over a finish here) makes
		// the task live again on top of the archive, as stash pop does.
		into, expect := aref, a
		if !res.state.Finished() {
			into, expect = TaskRef(name), plumbing.ZeroHash
		}
		err = s.r.refs.Update(into, expect, res.next)
		if errors.Is(err, ErrConflict) {
			time.Sleep(time.Duration(rand.Int64N(int64(time.Millisecond) << min(i, 5))))
			continue
		}
		if err != nil {
			return false, "", describeRefError(into, err)
		}
		if into == aref {
			s.record(arch, a, res)
		} else {
			s.record(ref, plumbing.ZeroHash, res)
		}
		return true, "", nil
	}
	return false, "", errors.New(string(aref) + " kept changing while merging; try again")
}

// dropArchivedTask removes the local task ref of a task whose fetched
// archive contains it: that task finished elsewhere. It is a
// compare-and-swap, so a local change made meanwhile keeps the ref.
//
// When the task was open and held by a worktree of this clone (its
// adoption record, a local fact, names the worktree its state names), the
// end is not silent: the state this clone had is saved as a stash entry
// (so 'git hegel stash pop' takes it up again, continuing the archive's
// chain), and the TaskHeld returned says who archived it. The chain
// itself stays reachable from the archive, which contains it.
//
// A task stashed here that the archive ended because the other clone
// dropped (or cleared) the stash entry holding it is named by the
// StashEnded returned, so the fetch says why it ended and how to bring
// it back.
func (s *syncer) dropArchivedTask(ref hegelRef, archive plumbing.Hash) (*engine.TaskHeld, *engine.StashEnded) {
	name := ref.task()
	h, err := readRefOrZero(s.r.refs, TaskRef(name))
	if err != nil || h.IsZero() {
		return nil, nil
	}
	if ok, err := s.g.isAncestor(h, archive); err != nil || !ok {
		return nil, nil
	}
	ours := s.heldTask(name, h)
	if s.r.refs.Update(TaskRef(name), h, plumbing.ZeroHash) != nil {
		return nil, nil
	}
	s.r.removeTaskCache(name)
	if ours == nil {
		return nil, s.stashEnded(name, h, archive)
	}
	held := &engine.TaskHeld{Worktree: ours.State.Worktree, WorktreeID: ours.State.WorktreeID, WasNode: ours.State.CurrentNode,
		ArchivedBy: s.archivedBy(archive)}
	if d, err := s.r.readDocAt(ArchiveRef(name), archive); err == nil {
		if t, err := decodeTask(ArchiveRef(name), d); err == nil {
			held.Node, held.Status = t.State.CurrentNode, t.State.Status
		}
	}
	if id := s.stashHolding(name, ours.State); id != "" {
		// The other clone saved this state already (both sides had
		// moved on), and the stash list just merged brought it.
		held.YoursStash = id
		return held, nil
	}
	st := &engine.Stash{
		Message:    "before " + s.rem.Name + " archived it",
		Timestamp:  s.r.Now(),
		Task:       name,
		Worktree:   ours.State.Worktree,
		Definition: ours.Definition,
		State:      ours.State,
	}
	if err := s.r.Stashes().PushStash(st, st.Label()+" (archived at "+s.rem.Name+")"); err != nil {
		s.warn(fmt.Sprintf("task %s: cannot keep this clone's state as a stash entry: %s", name, oneLine(err.Error())))
		return held, nil
	}
	held.YoursStash = st.ID
	return held, nil
}

// stashEnded says why a fetched archive ended task name, stashed here at
// h: when the archive's state says a stash drop or clear ended that run
// ("stash drop <id>" in ended_by, written by the other clone's drop), the
// entry and who archived it; nil otherwise. The id is someone else's
// text until it is a valid stash id.
func (s *syncer) stashEnded(name string, h, archive plumbing.Hash) *engine.StashEnded {
	d, err := s.r.readDocAt(TaskRef(name), h)
	if err != nil {
		return nil
	}
	t, err := decodeTask(TaskRef(name), d)
	if err != nil || t.State.Status != engine.StatusStashed {
		return nil
	}
	d, err = s.r.readDocAt(ArchiveRef(name), archive)
	if err != nil {
		return nil
	}
	a, err := decodeTask(ArchiveRef(name), d)
	if err != nil || a.State.WorkflowID != t.State.WorkflowID {
		return nil
	}
	op, id, _ := strings.Cut(a.State.EndedBy, " ")
	op, id, _ = strings.Cut(id, " ")
	if !strings.HasPrefix(a.State.EndedBy, "stash ") || op != string(engine.StashOpDrop) && op != string(engine.StashOpClear) || !engine.ValidStashID(id) {
		return nil
	}
	return &engine.StashEnded{Stash: id, Op: engine.StashOp(op), By: s.archivedBy(archive), Status: a.State.Status}
}

// heldTask returns the task at h when it is open and a worktree of this
// clone holds it by the local adoption record, else nil.
func (s *syncer) heldTask(name string, h plumbing.Hash) *engine.Task {
	d, err := s.r.readDocAt(TaskRef(name), h)
	if err != nil {
		return nil
	}
	t, err := decodeTask(TaskRef(name), d)
	if err != nil || !t.State.Active() || t.State.WorktreeID == "" {
		return nil
	}
	if !s.r.Tasks().Adopted(name, t.State.WorktreeID) {
		return nil
	}
	return t
}

// archivedBy is the author of commit c ("Name <email>") as one printable
// line: it came from the remote.
func (s *syncer) archivedBy(c plumbing.Hash) string {
	data, err := s.r.objects.Read(plumbing.CommitObject, c)
	if err != nil {
		return ""
	}
	f, err := objects.ParseCommit(c, data)
	if err != nil {
		return ""
	}
	a := f.Author
	if i := bytes.IndexByte(a, '>'); i >= 0 {
		a = a[:i+1]
	}
	return printable(string(a), 200)
}

// printable keeps text from elsewhere to one line of at most n bytes
// without control characters (a terminal escape sequence in a name
// must not reach the terminal) or bidirectional controls (nor turn the
// line around).
func printable(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError || text.IsBidiControl(r) {
			return -1
		}
		return r
	}, s)
	if len(s) > n {
		s = s[:n]
		for len(s) > 0 && !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		s += "…"
	}
	return strings.TrimSpace(s)
}

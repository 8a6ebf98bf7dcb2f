package gitstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/engine"
)

// The fetched-move record: <common git dir>/hegel/moved/<task>, holding
// the node a fetch moved the task to while a worktree of this clone held
// it (an approval on another clone, say). The next command in that
// worktree takes the entry checkpoint of that node (engine.FetchedMoves),
// so a rollback to it works here as on the clone that moved it. Like the
// adoption record it lives outside the synced refs: only this clone's own
// fetch writes it, for a task this clone's record says it holds.
const movedDir = "hegel/moved"

func movedPath(task string) string { return movedDir + "/" + task }

// FetchedMove implements engine.FetchedMoves: the node a fetch moved
// task to, if one did since the last command here took its checkpoint.
func (s Tasks) FetchedMove(task string) (string, bool) {
	b, err := readFile(s.r.common, movedPath(task))
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(b)), true
}

// ClearFetchedMove implements engine.FetchedMoves: the move of task was
// seen to. A record already gone is no error.
func (s Tasks) ClearFetchedMove(task string) error {
	return s.r.removeCommon(movedPath(task))
}

// recordFetchedMove notes that a fetch moved task to node.
func (r *Repo) recordFetchedMove(task, node string) error {
	return r.writeCommon(movedPath(task), []byte(node+"\n"), false)
}

// removeCommon removes name (relative to the common git dir); a file
// that is not there is no error.
func (r *Repo) removeCommon(name string) error {
	var err error
	if r.CommonDir == "" {
		err = r.common.Remove(name)
	} else {
		err = os.Remove(filepath.Join(r.CommonDir, filepath.FromSlash(name)))
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// noteFetchedMove records a fetched move of a task a worktree of this
// clone holds (by the adoption record, not by what the state says): the
// version fetched, still held by that worktree and open, is at another
// node than ours was, or entered it again. A record that cannot be
// written is a warning: the fetch itself went through.
func (s *syncer) noteFetchedMove(ref hegelRef, ours, next plumbing.Hash) {
	if ours.IsZero() || ours == next {
		return
	}
	// The record first: a task no worktree here took costs one failed
	// open, not two state reads.
	holder := s.r.adoptedBy(ref.task())
	if holder == "" {
		return
	}
	o, t := s.stateAt(ref, ours), s.stateAt(ref, next)
	if o == nil || t == nil || !o.Active() || !t.Active() || o.WorktreeID != holder || t.WorktreeID != holder {
		return
	}
	self, err := s.r.WorktreeID()
	if err != nil || !sameInstance(holder, self) {
		return
	}
	if t.CurrentNode == o.CurrentNode && t.PhaseStartTime.Equal(o.PhaseStartTime) {
		return
	}
	if err := s.r.recordFetchedMove(ref.task(), t.CurrentNode); err != nil {
		s.rep.Warnings = append(s.rep.Warnings, fmt.Sprintf("task %s moved to '%s', but the note to take its checkpoint there could not be written: %v; 'git hegel checkpoint' takes one", ref.task(), t.CurrentNode, oneLine(err.Error())))
	}
}

// locksLost returns the locks an open task a worktree of this clone
// holds (by this clone's own record) had at ours and no longer has at
// next, the version the fetch wrote: the remote removed them.
func (s *syncer) locksLost(ref hegelRef, ours, next plumbing.Hash) []string {
	if ours.IsZero() || ours == next {
		return nil
	}
	holder := s.r.adoptedBy(ref.task())
	if holder == "" {
		return nil
	}
	o, t := s.stateAt(ref, ours), s.stateAt(ref, next)
	if o == nil || t == nil || !o.Active() || !t.Active() || o.WorktreeID != holder || t.WorktreeID != holder || len(o.FilesLocked) == 0 {
		return nil
	}
	if self, err := s.r.WorktreeID(); err != nil || !sameInstance(holder, self) {
		return nil
	}
	var lost []string
	for _, l := range o.FilesLocked {
		if !slices.ContainsFunc(t.FilesLocked, func(x engine.FileLock) bool { return x.Path == l.Path }) {
			lost = append(lost, l.Path)
		}
	}
	return lost
}

// stateAt reads the task state ref held at commit h (nil if unreadable).
func (s *syncer) stateAt(ref hegelRef, h plumbing.Hash) *engine.State {
	d, err := s.r.readDocAt(ref.local(), h)
	if err != nil {
		return nil
	}
	t, err := decodeTask(ref.local(), d)
	if err != nil {
		return nil
	}
	return t.State
}

package rollback

import (
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-hegel/git-hegel/gitstore"
	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// A ParkJournal names the trees of both sides of a stash's file operation,
// and finishing or undoing an interrupted one reads them. Some are in no
// ref (what the working tree held before a pop, the merged result it
// writes), so a `git gc --prune=now` run after a crash would delete them
// and leave the operation neither finishable nor undoable. While the
// journal exists, ParkingRefPrefix + the worktree's name points at a
// commit whose tree holds them; the ref and its reflog go with the
// journal.

// ParkingRefPrefix is where each worktree's parking ref lives
// (refs/hegel/parking/main, refs/hegel/parking/worktrees/<name>).
const ParkingRefPrefix = "refs/hegel/parking/"

// parkingRef is this worktree's parking ref. A worktree whose directory
// name git would not take in a ref (git makes them valid, a hand-made one
// may not be) is named by its digest instead.
func (m *Manager) parkingRef() string {
	name := m.r.Layout.WorktreeName()
	if refs.CheckName(plumbing.ReferenceName(ParkingRefPrefix+name)) != nil {
		name = fmt.Sprintf("worktrees/%x", sha256.Sum256([]byte(name)))
	}
	return ParkingRefPrefix + name
}

// holdParking points the parking ref at a commit that reaches every tree
// j names.
func (m *Manager) holdParking(j *ParkJournal) error {
	var leaves []leaf
	for _, s := range []struct {
		name string
		tree string
	}{
		{"from-index", j.From.IndexTree}, {"from-worktree", j.From.WorkTree},
		{"to-index", j.To.IndexTree}, {"to-worktree", j.To.WorkTree},
	} {
		if h := orEmpty(hashOf(s.tree)); !h.IsZero() {
			leaves = append(leaves, leaf{path: s.name, mode: filemode.Dir, hash: h})
		}
	}
	if len(leaves) == 0 {
		return nil
	}
	mem := map[plumbing.Hash][]byte{}
	root, err := buildTree(leaves, mem)
	if err != nil {
		return err
	}
	if err := m.w.obj.write(plumbing.TreeObject, root, mem[root]); err != nil {
		return err
	}
	msg := fmt.Sprintf("stash: the trees %s names (%s)", parkJournalFile, j.Op)
	c, err := m.r.CommitTree(root, nil, msg)
	if err != nil {
		return err
	}
	ref := m.parkingRef()
	old, err := m.r.ReadRef(ref)
	if err != nil && !errors.Is(err, gitstore.ErrNotFound) {
		return err
	}
	return m.r.UpdateRefMsg(ref, old, c, msg)
}

// releaseParking removes the parking ref and its reflog once the journal
// is gone. A failure leaves a ref that only keeps a few trees; the next
// operation replaces it.
func (m *Manager) releaseParking() {
	ref := m.parkingRef()
	if old, err := m.r.ReadRef(ref); err == nil {
		_ = m.r.RemoveRefAndLog(ref, old)
	}
}

// removeParkJournal removes the journal, then the parking ref.
func (m *Manager) removeParkJournal() error {
	if err := m.w.parkJournal.remove(); err != nil {
		return err
	}
	m.releaseParking()
	return nil
}

package rollback

import (
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-hegel/git-hegel/gitstore"
)

// Parking files with a stash (git hegel stash push --files): the
// uncommitted files (tracked changes, staged or not, and untracked files
// that are not ignored) are snapshotted as a checkpoint tree, the stash
// entry names it and the stash list keeps it reachable, and the working
// tree and the index go back to HEAD, as git stash -u leaves them (ignored
// files and submodules' checkouts untouched). Popping or applying the
// stash writes the parked changes back over a working tree that has none
// of its own on those paths, and refuses, with nothing changed, when it
// has.
//
// The parked tree is a checkpoint's root tree (checkpoint.json, version,
// index/, worktree/) plus base/, HEAD's tree when the files were parked:
// what they are changes to.

// KindStash marks the checkpoint.json of files parked with a stash; such
// a snapshot is never in a checkpoint chain.
const KindStash = "stash"

const baseDir = "base"

// Parked is a snapshot taken for a stash, between Park and Clean (or
// Release): the index lock is held.
type Parked struct {
	// Tree is the parked tree ("" when nothing is uncommitted), Count
	// the paths it changes; Branch and Head are where HEAD was.
	Tree   string
	Count  int
	Branch string
	Head   string

	head   head
	base   plumbing.Hash // HEAD's tree (zero: unborn)
	wt, ix []change      // what cleaning changes
	idx    *gitIndex
	assume []string
	// The snapshot parked: its trees and intent-to-add entries.
	worktree, indexTree plumbing.Hash
	ita                 []string
}

// Park snapshots the uncommitted files and stores them (t says what the
// caller records in the snapshot's checkpoint.json; its kind is
// KindStash), and checks that the working tree can be cleaned; nothing is
// changed yet. Call Clean once the stash that names them is stored, or
// Release.
func (m *Manager) Park(t Template) (*Parked, error) {
	if err := m.refuseJournal(); err != nil {
		return nil, err
	}
	if op := m.w.operationInProgress(); op != "" {
		return nil, fmt.Errorf("%s is in progress; finish or abort it before parking files", op)
	}
	if err := m.w.lockIndex(); err != nil {
		return nil, err
	}
	pk, err := m.park(t)
	if err != nil {
		m.w.unlockIndex()
		return nil, err
	}
	return pk, nil
}

func (m *Manager) park(t Template) (*Parked, error) {
	idx, err := m.w.readIndex()
	if err != nil {
		return nil, err
	}
	h, err := m.w.readHead()
	if err != nil {
		return nil, err
	}
	snap, err := m.snapshotter().take(idx, true)
	if err != nil {
		return nil, err
	}
	m.w.attrSeen = snap.attributes
	m.warnSkipped(snap.skipped)
	var base plumbing.Hash
	if !h.Commit.IsZero() {
		c, err := m.commit(h.Commit)
		if err != nil {
			return nil, fmt.Errorf("cannot read HEAD's commit %s: %w", h.Commit, err)
		}
		base = orEmpty(c.TreeHash)
	}
	pk := &Parked{head: h, base: base, idx: snap.idx, assume: snap.assumeUnchanged,
		worktree: orEmpty(snap.worktree), indexTree: orEmpty(snap.indexTree), ita: snap.intentToAdd}
	r := &treeReader{o: m.w.obj}
	wt, err := diffTrees(r, r, orEmpty(snap.worktree), base)
	if err != nil {
		return nil, err
	}
	ix, err := diffTrees(r, r, orEmpty(snap.indexTree), base)
	if err != nil {
		return nil, err
	}
	wt = skipWorktree(wt, idx)
	wt, _ = m.w.splitSubmodules(wt, idx)
	if len(wt) == 0 && len(ix) == 0 && len(snap.intentToAdd) == 0 {
		return pk, nil
	}
	if err := m.w.conflicts(wt); err != nil {
		return nil, err
	}
	if err := m.w.checkWritable(wt); err != nil {
		return nil, err
	}
	pk.wt, pk.ix = wt, ix
	t.Kind = KindStash
	cp := m.newCheckpoint(t, h, snap)
	cp.ID = "stash"
	root, err := m.writeParkedRoot(cp, base)
	if err != nil {
		return nil, err
	}
	changed := map[string]bool{}
	for _, c := range append(append([]change(nil), wt...), ix...) {
		changed[c.path] = true
	}
	for _, p := range snap.intentToAdd {
		changed[p] = true
	}
	pk.Tree, pk.Count, pk.Branch, pk.Head = root.String(), len(changed), cp.Branch, cp.Head
	return pk, nil
}

// writeParkedRoot stores cp's root tree with base/ added.
func (m *Manager) writeParkedRoot(cp *Checkpoint, base plumbing.Hash) (plumbing.Hash, error) {
	if err := m.writeRoot(cp); err != nil {
		return plumbing.ZeroHash, err
	}
	if base.IsZero() {
		return cp.Root, nil
	}
	data, err := m.w.obj.read(plumbing.TreeObject, cp.Root)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	ents, err := parseTree(data, false)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	leaves := []leaf{{path: baseDir, mode: filemode.Dir, hash: base}}
	for _, e := range ents {
		leaves = append(leaves, leaf{path: e.Name, mode: e.Mode, hash: e.Hash})
	}
	sortLeaves(leaves)
	mem := map[plumbing.Hash][]byte{}
	root, err := buildTree(leaves, mem)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if err := m.w.obj.write(plumbing.TreeObject, root, mem[root]); err != nil {
		return plumbing.ZeroHash, err
	}
	return root, nil
}

func sortLeaves(ls []leaf) {
	for i := 1; i < len(ls); i++ {
		for j := i; j > 0 && ls[j].path < ls[j-1].path; j-- {
			ls[j], ls[j-1] = ls[j-1], ls[j]
		}
	}
}

// Release gives up a Parked without cleaning (the stash could not be
// stored): nothing changed.
func (m *Manager) Release(pk *Parked) { m.w.unlockIndex() }

// Clean puts the working tree and the index back to HEAD once the parked
// files are safe in a stash, as git stash -u does. It is journaled
// (ParkJournal, with record): if it is cut short, FinishParking goes on
// from where it stopped; the files are in the stash either way.
func (m *Manager) Clean(pk *Parked, record Meta) error {
	defer m.w.unlockIndex()
	if pk.Tree == "" {
		return nil
	}
	target := &Checkpoint{AssumeUnchanged: pk.assume}
	j := &ParkJournal{Op: ParkClean, Record: record, HeadRef: string(pk.head.Ref), Head: hexOf(pk.head.Commit),
		From: parkSide{WorkTree: hexOf(pk.worktree), IndexTree: hexOf(pk.indexTree), AssumeUnchanged: pk.assume, IntentToAdd: pk.ita},
		To:   parkSide{WorkTree: hexOf(pk.base), IndexTree: hexOf(pk.base), AssumeUnchanged: pk.assume}}
	if err := m.saveParkJournal(j); err != nil {
		return err
	}
	if err := m.restoreFiles(restore{cur: pk.head, to: pk.head, wt: pk.wt, idx: pk.idx, ix: pk.ix, target: target}); err != nil {
		return err
	}
	return m.w.parkJournal.remove()
}

// ErrLocalChanges reports files that popping a stash would overwrite.
var ErrLocalChanges = errors.New("local changes in the way")

// Unpark writes the files a stash parked back into the working tree and
// the index. A path already as the stash has it is left alone (running it
// twice is harmless); one that differs from what the stash's changes were
// made to (local changes, staged or not, or a file no checkpoint holds) is
// refused before anything changes. tree is the parked tree; label names
// the stash in messages. Writing the files back is journaled (ParkJournal,
// with record): if it is cut short, UndoParking puts back what it had
// written; the files are still in the stash.
func (m *Manager) Unpark(tree, label string, record Meta) error {
	if tree == "" {
		return nil
	}
	if err := m.refuseJournal(); err != nil {
		return err
	}
	if !plumbing.IsHash(tree) {
		return fmt.Errorf("Cannot restore %s: its files are damaged (%q is not an object id)", label, tree)
	}
	if err := m.w.lockIndex(); err != nil {
		return err
	}
	defer m.w.unlockIndex()
	cp, base, err := m.readParked(plumbing.NewHash(tree))
	if err != nil {
		return fmt.Errorf("Cannot restore %s: its files are damaged: %v", label, err)
	}
	idx, err := m.w.readIndex()
	if err != nil {
		return err
	}
	h, err := m.w.readHead()
	if err != nil {
		return err
	}
	snap, err := m.snapshotter().take(idx, true) // stored: the journal's side to go back to
	if err != nil {
		return err
	}
	m.w.attrSeen = snap.attributes
	checked := &treeReader{o: m.w.obj, strict: true, foldCase: m.w.folds()}
	trusted := &treeReader{o: m.w.obj}
	// The parked changes, path by path: base -> parked.
	pwt, err := diffTrees(trusted, checked, base, orEmpty(cp.WorkTree))
	if err != nil {
		return fmt.Errorf("Cannot restore %s: %w", label, err)
	}
	pix, err := diffTrees(trusted, checked, base, orEmpty(cp.IndexTree))
	if err != nil {
		return fmt.Errorf("Cannot restore %s: %w", label, err)
	}
	// What the working tree and the index hold now, where they differ
	// from the parked state.
	nowWT, err := diffTrees(trusted, trusted, snap.worktree, orEmpty(cp.WorkTree))
	if err != nil {
		return err
	}
	nowIdx, err := diffTrees(trusted, trusted, snap.indexTree, orEmpty(cp.IndexTree))
	if err != nil {
		return err
	}
	wt, busyWT := unparkChanges(pwt, nowWT)
	ix, busyIdx := unparkChanges(pix, nowIdx)
	if len(busyWT)+len(busyIdx) > 0 {
		what := "local changes"
		if len(busyWT) == 0 {
			what, busyWT = "staged changes", busyIdx
		}
		if len(busyWT) == 1 {
			what = "has " + what
		} else {
			what = "have " + what
		}
		return userErr(ErrLocalChanges, "Cannot restore %s: %s %s; commit or stash them first (nothing was changed)", label, listSome(busyWT, 3, m.quote), what)
	}
	wt = skipWorktree(wt, idx)
	wt, _ = m.w.splitSubmodules(wt, idx)
	for _, list := range [][]change{wt, ix} {
		for _, c := range list {
			if err := checkPath(c.path); err != nil {
				return fmt.Errorf("Cannot restore %s: %w", label, err)
			}
			if c.to.mode != 0 && c.to.mode != filemode.Submodule && !m.w.obj.has(c.to.hash) {
				return fmt.Errorf("Cannot restore %s: its files are incomplete: object %s (%s) is missing", label, c.to.hash, quotePath(c.path))
			}
		}
	}
	if err := m.w.conflicts(wt); err != nil {
		return err
	}
	if err := m.w.checkWritable(wt); err != nil {
		return err
	}
	target := &Checkpoint{AssumeUnchanged: snap.assumeUnchanged, IntentToAdd: append(append([]string(nil), snap.intentToAdd...), cp.IntentToAdd...)}
	if len(wt) == 0 && len(ix) == 0 && len(cp.IntentToAdd) == 0 {
		return nil // all as the stash has it already
	}
	postWT, err := m.overlay(orEmpty(snap.worktree), wt)
	if err != nil {
		return err
	}
	postIdx, err := m.overlay(orEmpty(snap.indexTree), ix)
	if err != nil {
		return err
	}
	j := &ParkJournal{Op: ParkUnpark, Record: record, HeadRef: string(h.Ref), Head: hexOf(h.Commit),
		From: parkSide{WorkTree: hexOf(orEmpty(snap.worktree)), IndexTree: hexOf(orEmpty(snap.indexTree)), AssumeUnchanged: snap.assumeUnchanged, IntentToAdd: snap.intentToAdd},
		To:   parkSide{WorkTree: hexOf(postWT), IndexTree: hexOf(postIdx), AssumeUnchanged: target.AssumeUnchanged, IntentToAdd: target.IntentToAdd}}
	if err := m.saveParkJournal(j); err != nil {
		return err
	}
	if err := m.restoreFiles(restore{cur: h, to: h, wt: wt, idx: snap.idx, ix: ix, target: target}); err != nil {
		return err
	}
	return m.w.parkJournal.remove()
}

// unparkChanges turns the parked changes (base -> parked) into changes of
// the current state (now: where it differs from parked, its side in
// from): a path as parked needs nothing, one as in base gets the parked
// version, anything else is busy.
func unparkChanges(parked, now []change) (out []change, busy []string) {
	cur := make(map[string]leaf, len(now))
	for _, c := range now {
		cur[c.path] = c.from
	}
	for _, c := range parked {
		got, differs := cur[c.path]
		switch {
		case !differs:
			// already as parked
		case got.mode == c.from.mode && got.hash == c.from.hash:
			out = append(out, change{path: c.path, from: got, to: c.to})
		default:
			busy = append(busy, c.path)
		}
	}
	return out, busy
}

// readParked reads a parked tree: its checkpoint.json and its base tree.
func (m *Manager) readParked(root plumbing.Hash) (*Checkpoint, plumbing.Hash, error) {
	data, err := m.w.obj.read(plumbing.TreeObject, root)
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	ents, err := parseTree(data, true)
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	cp := &Checkpoint{Root: root}
	var meta, ver []byte
	var base plumbing.Hash
	for _, e := range ents {
		switch {
		case e.Name == metaFile && e.Mode == filemode.Regular:
			meta, err = m.w.obj.read(plumbing.BlobObject, e.Hash)
		case e.Name == versionFile && e.Mode == filemode.Regular:
			ver, err = m.w.obj.read(plumbing.BlobObject, e.Hash)
		case e.Name == indexDir && e.Mode == filemode.Dir:
			cp.IndexTree = e.Hash
		case e.Name == worktreeDir && e.Mode == filemode.Dir:
			cp.WorkTree = e.Hash
		case e.Name == baseDir && e.Mode == filemode.Dir:
			base = e.Hash
		}
		if err != nil {
			return nil, plumbing.ZeroHash, err
		}
	}
	if v := string(ver); v != gitstore.FormatVersion+"\n" {
		return nil, plumbing.ZeroHash, fmt.Errorf("%w %q", gitstore.ErrUnknownVersion, v)
	}
	if cp.Meta, err = unmarshalFlat(meta, cp, ownKeys); err != nil || cp.Kind != KindStash {
		return nil, plumbing.ZeroHash, fmt.Errorf("damaged %s", metaFile)
	}
	return cp, base, nil
}

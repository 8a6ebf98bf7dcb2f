package rollback

import (
	"errors"
	"fmt"
	"slices"

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
// stash writes the parked changes back, merging a file a later commit
// changed too (park_merge.go), and refuses, with nothing changed, over
// uncommitted changes to those paths. Paths a StashKeep matches
// (git-hegel's and the agents' settings) are neither parked nor written
// back.
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
	// Kept lists the uncommitted paths left in place because a stash
	// never parks them (StashKeep).
	Kept []string

	head   head
	base   plumbing.Hash // HEAD's tree (zero: unborn)
	wt, ix []change      // what cleaning changes
	idx    *gitIndex
	assume []string
	// The snapshot parked: its trees and intent-to-add entries.
	worktree, indexTree plumbing.Hash
	ita                 []string
	// What cleaning leaves: HEAD's tree with the kept paths as they are.
	cleanWT, cleanIX plumbing.Hash
	keptITA          []string
}

// Park snapshots the uncommitted files and stores them (t says what the
// caller records in the snapshot's checkpoint.json; its kind is
// KindStash), and checks that the working tree can be cleaned; nothing is
// changed yet. Call Clean once the stash that names them is stored, or
// Release.
func (m *Manager) Park(t Template, keep *StashKeep) (*Parked, error) {
	if err := m.refuseJournal(); err != nil {
		return nil, err
	}
	if op := m.w.operationInProgress(); op != "" {
		return nil, fmt.Errorf("%s is in progress; finish or abort it before parking files", op)
	}
	if err := m.w.lockIndex(); err != nil {
		return nil, err
	}
	pk, err := m.park(t, keep)
	if err != nil {
		m.w.unlockIndex()
		return nil, err
	}
	return pk, nil
}

func (m *Manager) park(t Template, keep *StashKeep) (*Parked, error) {
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
	// The paths a stash keeps (git-hegel's and the agents' settings) are
	// neither parked nor cleaned: the parked trees have them as HEAD
	// does, and cleaning leaves them as they are.
	keptWT, wt := splitKept(wt, keep)
	keptIX, ix := splitKept(ix, keep)
	var ita []string
	for _, p := range snap.intentToAdd {
		if !keep.Match(p) {
			ita = append(ita, p)
		} else {
			pk.keptITA = append(pk.keptITA, p)
		}
	}
	for _, c := range append(append([]change(nil), keptWT...), keptIX...) {
		pk.Kept = appendOnce(pk.Kept, c.path)
	}
	if len(wt) == 0 && len(ix) == 0 && len(ita) == 0 {
		return pk, nil
	}
	if err := m.w.conflicts(wt, parkWay); err != nil {
		return nil, err
	}
	if err := m.w.checkWritable(wt, parkWay); err != nil {
		return nil, err
	}
	pk.wt, pk.ix = wt, ix
	parked := *snap
	parked.intentToAdd = ita
	if parked.worktree, err = m.overlay(orEmpty(snap.worktree), keptWT); err != nil {
		return nil, err
	}
	if parked.indexTree, err = m.overlay(orEmpty(snap.indexTree), keptIX); err != nil {
		return nil, err
	}
	// Where cleaning goes: HEAD's tree, with the kept paths as they are.
	if pk.cleanWT, err = m.overlay(base, flip(keptWT)); err != nil {
		return nil, err
	}
	if pk.cleanIX, err = m.overlay(base, flip(keptIX)); err != nil {
		return nil, err
	}
	t.Kind = KindStash
	cp := m.newCheckpoint(t, h, &parked)
	cp.ID = "stash"
	root, err := m.writeParkedRoot(cp, base)
	if err != nil {
		return nil, err
	}
	changed := map[string]bool{}
	for _, c := range append(append([]change(nil), wt...), ix...) {
		changed[c.path] = true
	}
	for _, p := range ita {
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
	target := &Checkpoint{AssumeUnchanged: pk.assume, IntentToAdd: pk.keptITA}
	j := &ParkJournal{Op: ParkClean, Record: record, HeadRef: string(pk.head.Ref), Head: hexOf(pk.head.Commit),
		From: parkSide{WorkTree: hexOf(pk.worktree), IndexTree: hexOf(pk.indexTree), AssumeUnchanged: pk.assume, IntentToAdd: pk.ita},
		To:   parkSide{WorkTree: hexOf(pk.cleanWT), IndexTree: hexOf(pk.cleanIX), AssumeUnchanged: pk.assume, IntentToAdd: pk.keptITA}}
	if err := m.saveParkJournal(j); err != nil {
		return err
	}
	if err := m.restoreFiles(restore{cur: pk.head, to: pk.head, wt: pk.wt, idx: pk.idx, ix: pk.ix, target: target}); err != nil {
		return err
	}
	return m.removeParkJournal()
}

// ErrLocalChanges reports files that popping a stash would overwrite.
var ErrLocalChanges = errors.New("local changes in the way")

// ErrSparse reports parked changes to files outside the sparse checkout,
// which popping the stash could not write.
var ErrSparse = errors.New("parked files outside the sparse checkout")

// UnparkResult is what Unpark did besides writing the parked files back.
type UnparkResult struct {
	// Conflicts are the paths whose parked change could not be merged
	// with HEAD's: written with conflict markers, or left as HEAD has
	// them (Kind says which). The stash still holds its version.
	Conflicts []UnparkConflict
	// Kept are the paths the stash holds that a stash never writes
	// (StashKeep): left as they are.
	Kept []string
}

// Unpark writes the files a stash parked back into the working tree and
// the index, as git stash pop does. A path already as the stash has it is
// left alone (running it twice is harmless); one still as the stash's
// base (HEAD when it was parked) gets the parked version. One that HEAD
// changed since, with no uncommitted change of its own, is merged three
// ways (base, HEAD, parked): the result is written to the working tree,
// with conflict markers where both changed the same lines, and the index
// keeps HEAD's version; conflicts are listed in the result. One with
// uncommitted changes (staged or not, or an untracked file) that the
// stash would overwrite is refused before anything changes. Paths keep
// matches are never written, and are listed. tree is the parked tree;
// label names the stash in messages. Writing the files back is journaled
// (ParkJournal, with record): if it is cut short, UndoParking puts back
// what it had written; the files are still in the stash.
func (m *Manager) Unpark(tree, label string, keep *StashKeep, record Meta) (*UnparkResult, error) {
	res := &UnparkResult{}
	if tree == "" {
		return res, nil
	}
	if err := m.refuseJournal(); err != nil {
		return nil, err
	}
	if !plumbing.IsHash(tree) {
		return nil, fmt.Errorf("Cannot restore %s: its files are damaged (%q is not an object id)", label, tree)
	}
	if err := m.w.lockIndex(); err != nil {
		return nil, err
	}
	defer m.w.unlockIndex()
	cp, base, err := m.readParked(plumbing.NewHash(tree))
	if err != nil {
		return nil, fmt.Errorf("Cannot restore %s: its files are damaged: %v", label, err)
	}
	idx, err := m.w.readIndex()
	if err != nil {
		return nil, err
	}
	h, err := m.w.readHead()
	if err != nil {
		return nil, err
	}
	var headTree plumbing.Hash
	if !h.Commit.IsZero() {
		c, err := m.commit(h.Commit)
		if err != nil {
			return nil, fmt.Errorf("cannot read HEAD's commit %s: %w", h.Commit, err)
		}
		headTree = orEmpty(c.TreeHash)
	}
	snap, err := m.snapshotter().take(idx, true) // stored: the journal's side to go back to
	if err != nil {
		return nil, err
	}
	m.w.attrSeen = snap.attributes
	checked := &treeReader{o: m.w.obj, strict: true, foldCase: m.w.folds()}
	trusted := &treeReader{o: m.w.obj}
	// The parked changes, path by path: base -> parked.
	pwt, err := diffTrees(trusted, checked, base, orEmpty(cp.WorkTree))
	if err != nil {
		return nil, fmt.Errorf("Cannot restore %s: %w", label, err)
	}
	pix, err := diffTrees(trusted, checked, base, orEmpty(cp.IndexTree))
	if err != nil {
		return nil, fmt.Errorf("Cannot restore %s: %w", label, err)
	}
	// A stash fetched from elsewhere decides nothing about git-hegel's and
	// the agents' settings: those paths are never written.
	keptWT, pwt := splitKept(pwt, keep)
	keptIX, pix := splitKept(pix, keep)
	for _, c := range append(keptWT, keptIX...) {
		res.Kept = appendOnce(res.Kept, c.path)
	}
	var parkedITA []string
	for _, p := range cp.IntentToAdd {
		if keep.Match(p) {
			res.Kept = appendOnce(res.Kept, p)
		} else {
			parkedITA = append(parkedITA, p)
		}
	}
	// Each path's other versions, where they differ from the parked
	// state (a path missing from a map is as parked): the working tree
	// and the index now, and HEAD; and what is uncommitted.
	var nowWT, nowIdx, headWT, localWT, localIdx []change
	for _, d := range []struct {
		out  *[]change
		a, b plumbing.Hash
	}{
		{&nowWT, orEmpty(snap.worktree), orEmpty(cp.WorkTree)},
		{&nowIdx, orEmpty(snap.indexTree), orEmpty(cp.IndexTree)},
		{&headWT, headTree, orEmpty(cp.WorkTree)},
		{&localWT, orEmpty(snap.worktree), headTree},
		{&localIdx, orEmpty(snap.indexTree), headTree},
	} {
		if *d.out, err = diffTrees(trusted, trusted, d.a, d.b); err != nil {
			return nil, err
		}
	}
	pl := planUnpark(pwt, pix, fromSides(nowWT), fromSides(nowIdx), fromSides(headWT), pathsOf(localWT), pathsOf(localIdx))
	if len(pl.busyWT)+len(pl.busyIdx) > 0 {
		what, busy := "local changes to", pl.busyWT
		if len(busy) == 0 {
			what, busy = "staged changes to", pl.busyIdx
		}
		return nil, userErr(ErrLocalChanges, "Cannot restore %s: your %s %s would be overwritten; commit or stash them first (nothing was changed)", label, what, listSome(busy, 3, m.quote))
	}
	wt, ix := pl.wt, pl.ix
	for _, mg := range pl.merge {
		c, conflict, err := m.mergeParked(mg)
		if err != nil {
			return nil, fmt.Errorf("Cannot restore %s: %v (nothing was changed)", label, err)
		}
		if c != nil {
			wt = append(wt, *c)
		}
		if conflict != "" {
			res.Conflicts = append(res.Conflicts, UnparkConflict{Path: mg.path, Kind: conflict})
		}
	}
	// A parked change to a file outside the sparse checkout (its entry
	// flagged skip-worktree since the push) would not be written, and a
	// pop drops the stash: the change would be lost, unseen. Refused, so
	// the user can widen the checkout first.
	if kept := skipWorktree(slices.Clone(wt), idx); len(kept) < len(wt) {
		in := make(map[string]bool, len(kept))
		for _, c := range kept {
			in[c.path] = true
		}
		var outside []string
		for _, c := range wt {
			if !in[c.path] {
				outside = append(outside, c.path)
			}
		}
		return nil, userErr(ErrSparse, "Cannot restore %s: it changes %s, outside the sparse checkout; widen it ('git sparse-checkout add <dir>', or 'git sparse-checkout disable') and run the command again (nothing was changed)",
			label, listSome(outside, 3, m.quote))
	}
	wt, _ = m.w.splitSubmodules(wt, idx)
	for _, list := range [][]change{wt, ix} {
		for _, c := range list {
			if err := checkPath(c.path); err != nil {
				return nil, fmt.Errorf("Cannot restore %s: %w", label, err)
			}
			if c.to.mode != 0 && c.to.mode != filemode.Submodule && !m.w.obj.has(c.to.hash) {
				return nil, fmt.Errorf("Cannot restore %s: its files are incomplete: object %s (%s) is missing", label, c.to.hash, quotePath(c.path))
			}
		}
	}
	if err := m.w.conflicts(wt, unparkWay); err != nil {
		return nil, err
	}
	if err := m.w.checkWritable(wt, unparkWay); err != nil {
		return nil, err
	}
	target := &Checkpoint{AssumeUnchanged: snap.assumeUnchanged, IntentToAdd: append(append([]string(nil), snap.intentToAdd...), parkedITA...)}
	if len(wt) == 0 && len(ix) == 0 && len(parkedITA) == 0 {
		return res, nil // all as the stash has it already, or HEAD's kept
	}
	postWT, err := m.overlay(orEmpty(snap.worktree), wt)
	if err != nil {
		return nil, err
	}
	postIdx, err := m.overlay(orEmpty(snap.indexTree), ix)
	if err != nil {
		return nil, err
	}
	j := &ParkJournal{Op: ParkUnpark, Record: record, HeadRef: string(h.Ref), Head: hexOf(h.Commit),
		From: parkSide{WorkTree: hexOf(orEmpty(snap.worktree)), IndexTree: hexOf(orEmpty(snap.indexTree)), AssumeUnchanged: snap.assumeUnchanged, IntentToAdd: snap.intentToAdd},
		To:   parkSide{WorkTree: hexOf(postWT), IndexTree: hexOf(postIdx), AssumeUnchanged: target.AssumeUnchanged, IntentToAdd: target.IntentToAdd}}
	if err := m.saveParkJournal(j); err != nil {
		return nil, err
	}
	if err := m.restoreFiles(restore{cur: h, to: h, wt: wt, idx: snap.idx, ix: ix, target: target}); err != nil {
		return nil, err
	}
	return res, m.removeParkJournal()
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
	if err := cp.restoreRaw(cp.Meta); err != nil {
		return nil, plumbing.ZeroHash, fmt.Errorf("damaged %s: %v", metaFile, err)
	}
	return cp, base, nil
}

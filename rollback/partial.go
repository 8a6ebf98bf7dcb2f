package rollback

import (
	"errors"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
)

// A partial restore (PlanOptions.Only) puts back some paths only: what a
// few agent actions touched. These are its helpers: the working tree as it
// is now, as a checkpoint that is not stored, and the paths two
// checkpoints disagree on.

// ErrNothingToRestore is a partial restore given no path at all.
var ErrNothingToRestore = errors.New("no path to restore")

// onlyPaths keeps the changes whose path is in only (sorted or not).
func onlyPaths(cs []change, only []string) []change {
	keep := make(map[string]bool, len(only))
	for _, p := range only {
		keep[p] = true
	}
	out := cs[:0:0]
	for _, c := range cs {
		if keep[c.path] {
			out = append(out, c)
		}
	}
	return out
}

// Current snapshots the working tree, the index and HEAD as they are now,
// without storing anything: the returned checkpoint is in no chain, and
// its trees live in memory, for ChangedPaths.
func (m *Manager) Current() (*Checkpoint, error) {
	if err := m.refuseJournal(); err != nil {
		return nil, err
	}
	idx, err := m.w.readIndex()
	if err != nil {
		return nil, err
	}
	h, err := m.w.readHead()
	if err != nil {
		return nil, err
	}
	snap, err := m.snapshotter().take(idx, false)
	if err != nil {
		return nil, err
	}
	return m.newCheckpoint(Template{Kind: KindSafety}, h, snap), nil
}

// ChangedPaths lists, sorted, the paths whose file, index entry or index
// flags (intent-to-add, assume-unchanged) differ between a and b (either may come from Current). Both are read strictly:
// a tree that does not parse, or an unsafe path (a forged chain), is an
// error.
func (m *Manager) ChangedPaths(a, b *Checkpoint) ([]string, error) {
	checked := &treeReader{o: m.w.obj, strict: true, foldCase: m.w.folds()}
	seen := map[string]bool{}
	for _, pair := range [][2]plumbing.Hash{{a.WorkTree, b.WorkTree}, {a.IndexTree, b.IndexTree}} {
		from, to := orEmpty(pair[0]), orEmpty(pair[1])
		if from == to {
			continue
		}
		cs, err := diffTrees(checked, checked, from, to)
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			if err := checkPath(c.path); err != nil {
				return nil, err
			}
			seen[c.path] = true
		}
	}
	// An index flag set or cleared (git add -N, git update-index
	// --assume-unchanged) is a change of its path too.
	for _, pair := range [][2][]string{{a.IntentToAdd, b.IntentToAdd}, {a.AssumeUnchanged, b.AssumeUnchanged}} {
		for _, p := range symmetricDifference(pair[0], pair[1]) {
			if err := checkPath(p); err != nil {
				return nil, err
			}
			seen[p] = true
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}

// symmetricDifference lists the strings in exactly one of a and b.
func symmetricDifference(a, b []string) []string {
	in := make(map[string]int, len(a)+len(b))
	for _, p := range a {
		in[p] |= 1
	}
	for _, p := range b {
		in[p] |= 2
	}
	var out []string
	for p, m := range in {
		if m != 3 {
			out = append(out, p)
		}
	}
	return out
}

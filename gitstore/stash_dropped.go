package gitstore

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/git-hegel/git-hegel/engine"
)

// DroppedStashes implements engine.StashStore. It walks the history back to
// since and diffs the entries of each drop and clear commit with its
// parent's; pops, pushes and merges are only walked through.
func (s Stashes) DroppedStashes(since time.Time) ([]*engine.DroppedStash, error) {
	tip, err := s.load()
	if err != nil || tip.commit.IsZero() {
		return nil, err
	}
	live := map[string]bool{}
	for _, e := range tip.entries {
		live[e.Name] = true
	}
	found := map[string]bool{}
	var out []*engine.DroppedStash
	// A commit's date is what the clone that made it wrote: one dated
	// before since is older than the window only if this clone held it
	// then (heldAt), so a fetched drop with an early date stays listed
	// and restorable for the window after it arrived.
	var held map[plumbing.Hash]bool
	all := false
	heldBefore := func(h plumbing.Hash) bool {
		if held == nil && !all {
			held, all = s.r.heldCommits(StashRef, since)
		}
		return all || held[h]
	}
	seen := map[plumbing.Hash]bool{tip.commit: true}
	queue := []plumbing.Hash{tip.commit}
	for len(queue) > 0 {
		h := queue[0]
		queue = queue[1:]
		if err := checkSize(s.r.storage, h, "commit "+h.String(), s.r.commitLimit(), "syncMaxCommitSize"); err != nil {
			return nil, fmt.Errorf("%s: %w", StashRef, err)
		}
		c, err := object.GetCommit(s.r.storage, h)
		if err != nil {
			return nil, fmt.Errorf("%s: cannot read commit %s: %s", StashRef, h, oneLine(err.Error()))
		}
		if c.Committer.When.Before(since) && heldBefore(h) {
			continue // older than the window, and so is everything before it
		}
		for _, p := range c.ParentHashes {
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
		op := stashOpOf(c.Message)
		if len(c.ParentHashes) != 1 || (op != engine.StashOpDrop && op != engine.StashOpClear) {
			continue
		}
		cur, err := s.loadAt(h)
		if err != nil {
			return nil, err
		}
		parent, err := s.loadAt(c.ParentHashes[0])
		if err != nil {
			return nil, err
		}
		now := map[string]bool{}
		for _, e := range cur.entries {
			now[e.Name] = true
		}
		for _, e := range parent.entries {
			if now[e.Name] || live[e.Name] || found[e.Name] {
				continue
			}
			found[e.Name] = true
			d := &engine.DroppedStash{Stash: s.readEntry(e, false), DroppedAt: c.Committer.When, Op: op}
			out = append(out, d)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].DroppedAt.Equal(out[j].DroppedAt) {
			return out[i].DroppedAt.After(out[j].DroppedAt)
		}
		return out[i].ID > out[j].ID
	})
	return out, nil
}

// stashOpOf reads the operation back from a commit subject "stash <op>: …".
func stashOpOf(msg string) engine.StashOp {
	rest, ok := strings.CutPrefix(msg, "stash ")
	if !ok {
		return ""
	}
	op, _, ok := strings.Cut(rest, ":")
	if !ok {
		return ""
	}
	return engine.StashOp(op)
}

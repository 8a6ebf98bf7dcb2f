package rollback

import (
	"fmt"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
)

// Merge merges the chain's local and remote versions when both clones
// moved it on (sync calls it): the union by checkpoint id (ours win on
// equal ids), oldest first, cut to the FIFO bound. The result is written
// as a fresh chain whose newest commit also has the remote tip as a
// parent, in the middle, where the chain reader ignores it: pushing the
// result is then a fast-forward. It returns the commit to move the local
// ref to (sync moves it with compare-and-swap), and how many checkpoints
// came from the remote and how many the bound dropped.
//
// The cost of fast-forward-only pushes: checkpoints that ever reached the
// remote stay reachable from it, so gc there does not reclaim them.
func (c *Chain) Merge(local, remote plumbing.Hash) (tip plumbing.Hash, added, dropped int, err error) {
	ours, err := c.at(local)
	if err != nil {
		return plumbing.ZeroHash, 0, 0, err
	}
	theirs, err := c.at(remote)
	if err != nil {
		return plumbing.ZeroHash, 0, 0, err
	}
	seen := make(map[string]bool, len(ours))
	for _, cp := range ours {
		seen[cp.ID] = true
	}
	// Theirs first, so that after the stable sort by time ours count as
	// newer on equal timestamps: on a tie the bound evicts the remote's
	// checkpoints before the ones taken here.
	var merged []*Checkpoint
	for _, cp := range theirs {
		if !seen[cp.ID] {
			seen[cp.ID] = true
			merged = append(merged, cp)
			added++
		}
	}
	merged = append(merged, ours...)
	sort.SliceStable(merged, func(i, j int) bool { return merged[i].CreatedAt.Before(merged[j].CreatedAt) })
	before := len(merged)
	auto, manual := c.m.bounds()
	merged, _ = evictOldest(merged, auto, manual)
	dropped = before - len(merged)
	if len(merged) < 2 {
		// With a bound of 1 the newest has no previous checkpoint, and the
		// remote tip would be read as one: keep ours, unpushed.
		return plumbing.ZeroHash, added, dropped, fmt.Errorf("cannot merge the checkpoints of %s with hegel.maxCheckpoints below 2", c.name)
	}
	tip, err = c.m.buildChain(merged, remote)
	return tip, added, dropped, err
}

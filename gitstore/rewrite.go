package gitstore

import (
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Re-rooting: gc makes what it removed unreachable, so git gc can reclaim
// it. A chain whose older commits hold removed data (dropped stashes, the
// archived run a reused task name continues) is rewritten without them:
// every kept commit is written again with the same tree, author, committer
// and message, and only the parents that are kept.

// chainCommits lists the commits reachable from tip, every commit after
// all its parents (oldest first).
func chainCommits(g *graph, tip plumbing.Hash) ([]*gnode, error) {
	var order []*gnode
	state := map[plumbing.Hash]int{} // 1: on the stack, 2: done
	type frame struct {
		n *gnode
		i int
	}
	root, err := g.node(tip)
	if err != nil {
		return nil, err
	}
	stack := []frame{{n: root}}
	state[tip] = 1
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.i < len(f.n.parents) {
			p := f.n.parents[f.i]
			f.i++
			if state[p] != 0 {
				continue
			}
			pn, err := g.node(p)
			if err != nil {
				return nil, err
			}
			state[p] = 1
			stack = append(stack, frame{n: pn})
			continue
		}
		state[f.n.hash] = 2
		order = append(order, f.n)
		stack = stack[:len(stack)-1]
	}
	return order, nil
}

// rewriteChain writes the commits of the chain at tip that keep selects,
// each with only its kept parents, and returns the new tip (tip itself
// when nothing changed; zero when keep selects nothing). tree, if set,
// may replace a kept commit's tree.
func (r *Repo) rewriteChain(tip plumbing.Hash, keep func(*gnode) bool, tree func(plumbing.Hash) (plumbing.Hash, error)) (plumbing.Hash, error) {
	g := newGraph(r.storage)
	order, err := chainCommits(g, tip)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	kept := map[plumbing.Hash]bool{}
	for _, n := range order {
		kept[n.hash] = keep(n)
	}
	if !kept[tip] {
		return plumbing.ZeroHash, nil
	}
	moved := map[plumbing.Hash]plumbing.Hash{}
	for _, n := range order {
		if !kept[n.hash] {
			continue
		}
		var parents []plumbing.Hash
		same := true
		for _, p := range n.parents {
			if !kept[p] {
				same = false
				continue
			}
			np := moved[p]
			same = same && np == p
			parents = append(parents, np)
		}
		t := n.tree
		if tree != nil {
			if t, err = tree(n.tree); err != nil {
				return plumbing.ZeroHash, err
			}
		}
		if same && t == n.tree {
			moved[n.hash] = n.hash
			continue
		}
		c, err := object.GetCommit(r.storage, n.hash)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("cannot read commit %s: %s", n.hash, oneLine(err.Error()))
		}
		nc := &object.Commit{Author: c.Author, Committer: c.Committer, Message: c.Message, TreeHash: t, ParentHashes: parents}
		data, err := encodeObject(nc)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		h, err := r.objects.Write(plumbing.CommitObject, data)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		moved[n.hash] = h
	}
	return moved[tip], nil
}

// reachable returns the commits reachable from tips (none for zero tips).
func reachable(g *graph, tips ...plumbing.Hash) (map[plumbing.Hash]bool, error) {
	seen := map[plumbing.Hash]bool{}
	var stack []plumbing.Hash
	for _, t := range tips {
		if !t.IsZero() && !seen[t] {
			seen[t] = true
			stack = append(stack, t)
		}
	}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n, err := g.node(h)
		if err != nil {
			return nil, err
		}
		for _, p := range n.parents {
			if !seen[p] {
				seen[p] = true
				stack = append(stack, p)
			}
		}
	}
	return seen, nil
}

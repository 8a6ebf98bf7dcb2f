package gitstore

import (
	"encoding/json"
	"errors"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/engine"
)

// maxChain bounds the commits `git hegel log <task>` reads.
const maxChain = 100000

// TaskChain returns the commits of a task's chain, oldest first, from its
// task ref or, once it finished, its archive ref (which it names), by
// first parents: each commit one operation. A commit whose state cannot be
// read comes with a nil State.
func (r *Repo) TaskChain(name string) (plumbing.ReferenceName, []engine.ChainCommit, error) {
	ref := TaskRef(name)
	tip, err := r.refs.Read(ref)
	if errors.Is(err, ErrNotFound) {
		ref = ArchiveRef(name)
		tip, err = r.refs.Read(ref)
	}
	if err != nil {
		return ref, nil, err
	}
	var out []engine.ChainCommit
	for h := tip; !h.IsZero() && len(out) < maxChain; {
		ci, err := r.readChainCommit(h)
		if err != nil {
			return ref, nil, engine.Damaged(string(ref), name, string(ref)+": commit "+h.String()+" cannot be read: "+oneLine(err.Error()))
		}
		out = append(out, engine.ChainCommit{Commit: h.String(), At: ci.when, Who: ci.author, Message: ci.message,
			State: r.chainStateIn(ci.tree)})
		h = ci.parent
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return ref, out, nil
}

// chainStateIn reads the node and status in state.json of a task tree
// (nil when it cannot).
func (r *Repo) chainStateIn(tree plumbing.Hash) *engine.ChainState {
	b := r.stateBlobIn(tree)
	if b == nil {
		return nil
	}
	st, _ := chainStateOf(b)
	return st
}

// stateBlobIn reads state.json of a task tree (nil when it cannot).
func (r *Repo) stateBlobIn(tree plumbing.Hash) []byte {
	ents, err := readTree(r.storage, tree)
	if err != nil {
		return nil
	}
	for _, e := range ents {
		if e.name == stateFile {
			b, err := r.readBlob(e.hash)
			if err != nil {
				return nil
			}
			return b
		}
	}
	return nil
}

// stateIn reads state.json of a task tree in full (nil when it cannot).
func (r *Repo) stateIn(tree plumbing.Hash) *engine.State {
	b := r.stateBlobIn(tree)
	if b == nil {
		return nil
	}
	var st engine.State
	if json.Unmarshal(b, &st) != nil {
		return nil
	}
	return &st
}

package gitstore

import (
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore/refs"
)

var _ engine.InputOrigin = Tasks{}

// InputFetched implements engine.InputOrigin from this clone's reflog of
// the task's ref, as definitionRemotes does for definitions: the newest
// entry that changed path names who wrote its current value. A sync
// writes "fetch <remote>: ..." there; a command here writes its own
// message. A remote can write anything into the task's chain, never into
// this reflog.
func (s Tasks) InputFetched(task, path string) (string, bool) {
	log, at := s.r.reflogBlobs(task, path)
	remote := ""
	if unrecordedStart(log) {
		remote = engine.UnrecordedOrigin
	}
	for _, e := range log {
		if at(e.New) != at(e.Old) {
			remote = fetchRemote(e.Msg)
		}
	}
	return remote, remote != ""
}

// unrecordedStart says whether log, the newest entries of a task ref's
// reflog, does not reach back to the ref's creation: git gc expired the
// older entries (gc.reflogExpire, 90 days by default), someone expired
// them by hand, or the window of maxReflogDefinitions left them out.
// Whatever the ref held before its oldest entry has no origin this clone
// can vouch for, so it counts as fetched (engine.UnrecordedOrigin):
// otherwise a pushed text withheld today would reach the agent once git
// forgot the fetch that brought it.
func unrecordedStart(log []refs.ReflogEntry) bool {
	return len(log) == 0 || !log[0].Old.IsZero()
}

// reflogBlobs returns the newest entries of this clone's reflog of the
// task's ref (at most maxReflogDefinitions) and the blob at path in a
// commit (zero for none), read once per commit.
func (r *Repo) reflogBlobs(task, path string) ([]refs.ReflogEntry, func(plumbing.Hash) plumbing.Hash) {
	log := r.readReflog(TaskRef(task))
	if len(log) > maxReflogDefinitions {
		log = log[len(log)-maxReflogDefinitions:]
	}
	blobs := map[plumbing.Hash]plumbing.Hash{}
	return log, func(c plumbing.Hash) plumbing.Hash {
		if c.IsZero() {
			return plumbing.ZeroHash
		}
		if b, ok := blobs[c]; ok {
			return b
		}
		b := r.blobAt(c, path)
		blobs[c] = b
		return b
	}
}

// blobAt is the blob at path in commit c's tree (zero when there is none
// or it cannot be read).
func (r *Repo) blobAt(c plumbing.Hash, path string) plumbing.Hash {
	ci, err := r.readChainCommit(c)
	if err != nil {
		return plumbing.ZeroHash
	}
	h, parts := ci.tree, strings.Split(path, "/")
	for i, name := range parts {
		ents, err := readTree(r.storage, h)
		if err != nil {
			return plumbing.ZeroHash
		}
		found := false
		for _, e := range ents {
			if e.name != name {
				continue
			}
			last := i == len(parts)-1
			if (last && e.fm != filemode.Regular) || (!last && !e.isDir()) {
				return plumbing.ZeroHash
			}
			h, found = e.hash, true
			break
		}
		if !found {
			return plumbing.ZeroHash
		}
	}
	return h
}

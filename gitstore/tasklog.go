package gitstore

import (
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore/objects"
)

// MaxTaskLog bounds how many commits TaskLog reads when asked for all.
const MaxTaskLog = 10000

// TaskLog returns the commits of a task's ref (its archive ref when
// archived), newest first along first parents, as `git log
// --first-parent refs/hegel/tasks/<task>` lists them: at most limit
// (0: MaxTaskLog). more is set when older commits were left out. A chain
// that ends early (a shallow clone, a damaged object) ends the list.
func (r *Repo) TaskLog(name string, archived bool, limit int) (ops []engine.Operation, more bool, err error) {
	ref := TaskRef(name)
	if archived {
		ref = ArchiveRef(name)
	}
	h, err := r.refs.Read(ref)
	if err != nil {
		return nil, false, err
	}
	if limit <= 0 || limit > MaxTaskLog {
		limit = MaxTaskLog
	}
	for !h.IsZero() {
		if len(ops) == limit {
			return ops, true, nil
		}
		op, parent, err := r.readOperation(h)
		if err != nil {
			if len(ops) == 0 {
				return nil, false, fmt.Errorf("%s: %s", ref, oneLine(err.Error()))
			}
			return ops, false, nil
		}
		ops = append(ops, op)
		h = parent
	}
	return ops, false, nil
}

// readOperation reads one commit: its subject, author, committer time and
// first parent.
func (r *Repo) readOperation(h plumbing.Hash) (engine.Operation, plumbing.Hash, error) {
	ci, err := r.readChainCommit(h)
	if err != nil {
		return engine.Operation{Commit: h.String()}, plumbing.ZeroHash, err
	}
	subject, _, _ := strings.Cut(ci.message, "\n")
	return engine.Operation{Commit: h.String(), Author: ci.author, Time: ci.when,
		Subject: strings.TrimSpace(subject), Merge: ci.parents > 1}, ci.parent, nil
}

// chainCommit is what the task log and `log <task>` read of a commit.
type chainCommit struct {
	tree, parent plumbing.Hash // parent: the first, zero for none
	parents      int
	others       []plumbing.Hash // the parents after the first (a merge's)
	author       string          // the author's name
	when         time.Time       // committer time, UTC
	message      string
}

// readChainCommit reads a commit of a task's chain from its raw header,
// without go-git's full decode.
func (r *Repo) readChainCommit(h plumbing.Hash) (chainCommit, error) {
	var ci chainCommit
	// A loose object's size is read by inflating it: asking first and
	// reading after inflated every commit twice, and a task page lists up
	// to a thousand (the 500-operation page took twice as long). A loose
	// commit was written here or unpacked from a fetch that checked its
	// size, so it is read and then checked; a packed one is checked first,
	// from its header.
	limit := r.commitLimit()
	loose := r.objects.IsLoose(h)
	if !loose {
		if err := checkSize(r.storage, h, "commit "+h.String(), limit, "syncMaxCommitSize"); err != nil {
			return ci, err
		}
	}
	data, err := r.objects.Read(plumbing.CommitObject, h)
	if err != nil {
		return ci, err
	}
	if loose && limit > 0 && int64(len(data)) > limit {
		return ci, &TooLargeError{What: "commit " + h.String(), Size: int64(len(data)), Limit: limit, Key: "syncMaxCommitSize"}
	}
	c, err := objects.ParseCommit(h, data)
	if err != nil {
		return ci, err
	}
	ci.tree, ci.parents, ci.author = c.Tree, len(c.Parents), objects.IdentName(c.Author)
	if len(c.Parents) > 0 {
		ci.parent = c.Parents[0]
		ci.others = c.Parents[1:]
	}
	if c.When != 0 {
		ci.when = time.Unix(c.When, 0).UTC()
	}
	ci.message = string(c.Message)
	return ci, nil
}

// ReadArchivedFile implements engine.ArchiveStore.
func (s Tasks) ReadArchivedFile(name, path string, limit int64) ([]byte, error) {
	r := s.r
	tree, ok, err := r.archivedArtifacts(name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s: %w", path, engine.ErrNotFound)
	}
	parts := strings.Split(path, "/")
	for i, part := range parts {
		ents, err := readTree(r.storage, tree)
		if err != nil {
			return nil, err
		}
		var found *rawEntry
		for j := range ents {
			if ents[j].name == part {
				found = &ents[j]
				break
			}
		}
		last := i == len(parts)-1
		if found == nil || found.isDir() != !last {
			return nil, fmt.Errorf("%s: %w", path, engine.ErrNotFound)
		}
		if !last {
			tree = found.hash
			continue
		}
		if n, err := r.storage.EncodedObjectSize(found.hash); err == nil && limit > 0 && n > limit {
			return nil, fmt.Errorf("the archived copy of %s is %s, more than the %s shown", path, byteSize(n), byteSize(limit))
		}
		return r.objects.Read(plumbing.BlobObject, found.hash)
	}
	return nil, fmt.Errorf("%s: %w", path, engine.ErrNotFound)
}

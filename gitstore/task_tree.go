package gitstore

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-hegel/git-hegel/engine"
)

// A task's tree holds the state and definition every command reads, and
// entries only some read (events/). Reading a task reads the first two;
// saving one carries the others over by hash without reading them.

// extrasMemo remembers, per task commit, the root entries other than
// version, state.json and workflow.yaml, so SaveTask after LoadTask reads
// no tree (after git gc that read would load a whole pack index).
type extrasMemo struct {
	mu sync.Mutex
	m  map[plumbing.Hash]map[string]leaf
}

func (r *Repo) rememberExtras(commit plumbing.Hash, ex map[string]leaf) {
	r.extras.mu.Lock()
	defer r.extras.mu.Unlock()
	if r.extras.m == nil {
		r.extras.m = map[plumbing.Hash]map[string]leaf{}
	}
	r.extras.m[commit] = ex
}

// taskExtras returns the entries of parent's tree to carry over.
func (r *Repo) taskExtras(parent plumbing.Hash) (map[string]leaf, error) {
	if parent.IsZero() {
		return nil, nil
	}
	r.extras.mu.Lock()
	ex, ok := r.extras.m[parent]
	r.extras.mu.Unlock()
	if ok {
		return ex, nil
	}
	n, err := newGraph(r.storage).node(parent)
	if err != nil {
		return nil, err
	}
	ents, err := readTree(r.storage, n.tree)
	if err != nil {
		return nil, err
	}
	ex = extrasOf(ents)
	r.rememberExtras(parent, ex)
	return ex, nil
}

// extrasOf picks the carried-over entries of a task's root tree.
func extrasOf(ents []rawEntry) map[string]leaf {
	ex := map[string]leaf{}
	for _, e := range ents {
		switch e.name {
		case versionFile, stateFile, workflowFile:
		default:
			ex[e.name] = leaf{mode: e.fm, hash: e.hash}
		}
	}
	return ex
}

// readTaskDoc reads a task commit's state and definition only.
func (r *Repo) readTaskDoc(ref plumbing.ReferenceName, h plumbing.Hash) (*Doc, error) {
	// Size limits (limits.go): a commit over the limit is not read at all.
	if err := checkSize(r.storage, h, "commit "+h.String(), r.commitLimit(), "syncMaxCommitSize"); err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	n, err := newGraph(r.storage).node(h)
	if err != nil {
		return nil, fmt.Errorf("%s points at %s, which is not a readable commit: %s", ref, h, oneLine(err.Error()))
	}
	ents, err := readTree(r.storage, n.tree)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read tree %s: %s", ref, n.tree, oneLine(err.Error()))
	}
	r.rememberTree(h, n.tree)
	d := &Doc{Files: map[string][]byte{}, Commit: h, Tree: n.tree}
	for _, e := range ents {
		switch e.name {
		case versionFile, stateFile, workflowFile:
			if e.fm != filemode.Regular {
				return nil, fmt.Errorf("%s: unexpected entry %s (mode %s)", ref, e.name, e.fm)
			}
			b, err := r.readBlob(e.hash)
			if err != nil {
				return nil, fmt.Errorf("%s: cannot read %s: %s", ref, e.name, oneLine(err.Error()))
			}
			d.Files[e.name] = b
		}
	}
	r.rememberExtras(h, extrasOf(ents))
	v, ok := d.Files[versionFile]
	if !ok {
		return nil, fmt.Errorf("%s: %w: no version blob", ref, ErrUnknownVersion)
	}
	if got := strings.TrimSpace(string(v)); got != FormatVersion {
		return nil, fmt.Errorf("%s: %w %q (this git-hegel understands %q; upgrade it)", ref, ErrUnknownVersion, got, FormatVersion)
	}
	delete(d.Files, versionFile)
	return d, nil
}

// writeTaskTree writes files plus the carried-over entries keep as the
// task's new commit on parent (nothing when the tree is unchanged).
func (r *Repo) writeTaskTree(ref plumbing.ReferenceName, parent plumbing.Hash, files map[string][]byte, keep map[string]leaf, msg string) (plumbing.Hash, plumbing.Hash, error) {
	return r.writeTaskTreeFrom(ref, parent, parent, files, keep, msg)
}

// writeTaskTreeFrom is writeTaskTree moving ref from expect rather than
// from parent: a task reopened from the archive continues the archive's
// chain (parent) on a task ref that does not exist yet (expect zero).
func (r *Repo) writeTaskTreeFrom(ref plumbing.ReferenceName, parent, expect plumbing.Hash, files map[string][]byte, keep map[string]leaf, msg string) (plumbing.Hash, plumbing.Hash, error) {
	leaves := make(map[string]leaf, len(files)+len(keep)+1)
	for p, l := range keep {
		leaves[p] = l
	}
	for p, data := range files {
		h, err := r.writeBlob(data)
		if err != nil {
			return plumbing.ZeroHash, plumbing.ZeroHash, err
		}
		leaves[p] = leaf{mode: filemode.Regular, hash: h}
	}
	vh, err := r.writeBlob([]byte(FormatVersion + "\n"))
	if err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}
	leaves[versionFile] = leaf{mode: filemode.Regular, hash: vh}
	tree, err := r.writeTreeOf(leaves)
	if err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}
	c, err := r.commitTree(ref, parent, expect, tree, msg)
	if err == nil && !c.IsZero() {
		r.rememberExtras(c, keep)
	}
	return c, tree, err
}

// commitTree commits tree on parent and moves ref from expect (parent,
// except for writeTaskTreeFrom) with compare-and-swap, unless tree equals
// parent's and ref is at parent: then nothing is written and parent
// returned.
func (r *Repo) commitTree(ref plumbing.ReferenceName, parent, expect, tree plumbing.Hash, msg string) (plumbing.Hash, error) {
	if !parent.IsZero() && parent == expect {
		if known, ok := r.knownTree(parent); ok {
			if known == tree {
				return parent, nil
			}
		} else if n, err := newGraph(r.storage).node(parent); err == nil && n.tree == tree {
			return parent, nil
		}
	}
	var parents []plumbing.Hash
	if !parent.IsZero() {
		parents = append(parents, parent)
	}
	c, err := r.writeCommit(tree, parents, msg)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if err := r.refs.Update(ref, expect, c); err != nil {
		return plumbing.ZeroHash, err
	}
	r.rememberTree(c, tree)
	return c, nil
}

// putDirs are the directories of a task's tree that Task.Put may write
// (the step runner's results and inputs, engine/run_store.go).
var putDirs = []string{"results", "inputs"}

// withEntries returns keep (never modified: it may be memoized) with the
// entries of put written: each "<dir>/<name>" below one of putDirs.
func (r *Repo) withEntries(keep map[string]leaf, put map[string][]byte) (map[string]leaf, error) {
	byDir := map[string]map[string][]byte{}
	for p, data := range put {
		dir, name, ok := strings.Cut(p, "/")
		if !ok || name == "" || strings.Contains(name, "/") || !slices.Contains(putDirs, dir) {
			return nil, fmt.Errorf("cannot store %q in a task's tree", p)
		}
		if byDir[dir] == nil {
			byDir[dir] = map[string][]byte{}
		}
		byDir[dir][name] = data
	}
	out := make(map[string]leaf, len(keep)+len(byDir))
	for k, l := range keep {
		out[k] = l
	}
	for dir, files := range byDir {
		leaves := map[string]leaf{}
		if l, ok := keep[dir]; ok && l.mode == filemode.Dir {
			ents, err := readTree(r.storage, l.hash)
			if err != nil {
				return nil, err
			}
			for _, e := range ents {
				leaves[e.name] = leaf{mode: e.fm, hash: e.hash}
			}
		}
		for name, data := range files {
			h, err := r.writeBlob(data)
			if err != nil {
				return nil, err
			}
			leaves[name] = leaf{mode: filemode.Regular, hash: h}
		}
		h, err := r.writeTreeOf(leaves)
		if err != nil {
			return nil, err
		}
		out[dir] = leaf{mode: filemode.Dir, hash: h}
	}
	return out, nil
}

// ReadTaskFile implements engine.TaskFileReader: the entry at path
// ("results/plan") of the live task's tree, else the archived one's.
func (s Tasks) ReadTaskFile(task, path string) ([]byte, error) {
	if err := engine.CheckTaskName(task); err != nil {
		return nil, err
	}
	for _, ref := range []plumbing.ReferenceName{TaskRef(task), ArchiveRef(task)} {
		h, err := s.r.refs.Read(ref)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return s.r.taskFile(ref, h, path)
	}
	return nil, fmt.Errorf("task %s: %w", task, ErrNotFound)
}

// taskFile reads path ("dir/name") in task commit h's tree.
func (r *Repo) taskFile(ref plumbing.ReferenceName, h plumbing.Hash, path string) ([]byte, error) {
	keep, err := r.taskExtras(h)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", ref, oneLine(err.Error()))
	}
	dir, name, _ := strings.Cut(path, "/")
	l, ok := keep[dir]
	if !ok || l.mode != filemode.Dir {
		return nil, fmt.Errorf("%s:%s: %w", ref, path, ErrNotFound)
	}
	ents, err := readTree(r.storage, l.hash)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", ref, oneLine(err.Error()))
	}
	for _, e := range ents {
		if e.name == name && e.fm == filemode.Regular {
			return r.readBlob(e.hash)
		}
	}
	return nil, fmt.Errorf("%s:%s: %w", ref, path, ErrNotFound)
}

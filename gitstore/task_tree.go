package gitstore

import (
	"fmt"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-hegel/git-hegel/gitstore/objects"
)

// A task's tree holds the state and definition every command reads, and
// entries only some read (events/). Reading a task reads the first two;
// saving one carries the others over by hash without reading them.

// extrasMemo remembers, per task commit, the root entries other than
// version, state.json and workflow.yaml, so SaveTask after LoadTask reads
// no tree. docs remembers the blobs of those three, so a save does not
// write (and freshen) a blob its parent commit already holds: the parent
// is what the ref points at, so the blob is reachable and no prune can
// take it.
type extrasMemo struct {
	mu   sync.Mutex
	m    map[plumbing.Hash]map[string]leaf
	docs map[plumbing.Hash]map[string]plumbing.Hash
}

// rememberDocBlobs records the blobs of a task commit's documents.
func (r *Repo) rememberDocBlobs(commit plumbing.Hash, blobs map[string]plumbing.Hash) {
	r.extras.mu.Lock()
	defer r.extras.mu.Unlock()
	if r.extras.docs == nil {
		r.extras.docs = map[plumbing.Hash]map[string]plumbing.Hash{}
	}
	r.extras.docs[commit] = blobs
}

// parentHolds reports whether commit's tree holds blob h as name.
func (r *Repo) parentHolds(commit plumbing.Hash, name string, h plumbing.Hash) bool {
	if commit.IsZero() {
		return false
	}
	r.extras.mu.Lock()
	defer r.extras.mu.Unlock()
	got, ok := r.extras.docs[commit][name]
	return ok && got == h
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

// formatVersionBlob is the name of the version blob every tree carries.
var formatVersionBlob = sync.OnceValue(func() plumbing.Hash {
	return objects.HashObject(plumbing.BlobObject, []byte(FormatVersion+"\n"))
})

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
	blobs := map[string]plumbing.Hash{}
	for _, e := range ents {
		switch e.name {
		case versionFile, stateFile, workflowFile:
			if e.fm != filemode.Regular {
				return nil, fmt.Errorf("%s: unexpected entry %s (mode %s)", ref, e.name, e.fm)
			}
			blobs[e.name] = e.hash
			if e.name == versionFile && e.hash == formatVersionBlob() {
				// Its content is known from its name: no read.
				d.Files[e.name] = []byte(FormatVersion + "\n")
				continue
			}
			b, err := r.readBlob(e.hash)
			if err != nil {
				return nil, fmt.Errorf("%s: cannot read %s: %s", ref, e.name, oneLine(err.Error()))
			}
			d.Files[e.name] = b
		}
	}
	r.rememberExtras(h, extrasOf(ents))
	r.rememberDocBlobs(h, blobs)
	v, ok := d.Files[versionFile]
	if !ok {
		return nil, fmt.Errorf("%s: %w: no version blob", ref, ErrUnknownVersion)
	}
	if got := strings.TrimSpace(string(v)); got != FormatVersion {
		return nil, otherVersion(string(ref)+": ", got)
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
	blobs := make(map[string]plumbing.Hash, len(files)+1)
	write := func(p string, data []byte) error {
		h := objects.HashObject(plumbing.BlobObject, data)
		if !r.parentHolds(parent, p, h) {
			if err := r.objects.WriteHashed(plumbing.BlobObject, h, data); err != nil {
				return err
			}
		}
		leaves[p] = leaf{mode: filemode.Regular, hash: h}
		blobs[p] = h
		return nil
	}
	for p, data := range files {
		if err := write(p, data); err != nil {
			return plumbing.ZeroHash, plumbing.ZeroHash, err
		}
	}
	if err := write(versionFile, []byte(FormatVersion+"\n")); err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}
	tree, err := r.writeTreeOf(leaves)
	if err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}
	c, err := r.commitTree(ref, parent, expect, tree, msg)
	if err == nil && !c.IsZero() {
		r.rememberExtras(c, keep)
		r.rememberDocBlobs(c, blobs)
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

// treeMemo remembers commit → tree for commits read or written, so
// writeDoc can tell an unchanged tree without reading the parent commit.
type treeMemo struct {
	mu sync.Mutex
	m  map[plumbing.Hash]plumbing.Hash
}

func (r *Repo) rememberTree(commit, tree plumbing.Hash) {
	r.trees.mu.Lock()
	defer r.trees.mu.Unlock()
	if r.trees.m == nil {
		r.trees.m = map[plumbing.Hash]plumbing.Hash{}
	}
	r.trees.m[commit] = tree
}

func (r *Repo) knownTree(commit plumbing.Hash) (plumbing.Hash, bool) {
	r.trees.mu.Lock()
	defer r.trees.mu.Unlock()
	t, ok := r.trees.m[commit]
	return t, ok
}

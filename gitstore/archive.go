package gitstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-hegel/git-hegel/engine"
)

// The archive: refs/hegel/archive/<task> holds a finished task, as the
// next commit of the task's own chain, with copies of its artifacts under
// artifacts/. refs/hegel/deleted/<task> records a task `git hegel delete`
// removed; its commit's parents keep what was removed reachable, so it
// can be restored.
const (
	ArchiveRefPrefix = "refs/hegel/archive/"
	DeletedRefPrefix = "refs/hegel/deleted/"
	artifactsDir     = "artifacts"
	deletedFile      = "deleted.json"
)

var _ engine.ArchiveStore = Tasks{}

// ArchiveRef returns the ref that holds an archived task.
func ArchiveRef(name string) plumbing.ReferenceName {
	return plumbing.ReferenceName(ArchiveRefPrefix + name)
}

func deletedRef(name string) plumbing.ReferenceName {
	return plumbing.ReferenceName(DeletedRefPrefix + name)
}

func archiveKey(name string) string { return "archive/" + name }

// LoadArchived implements engine.ArchiveStore.
func (s Tasks) LoadArchived(name string) (*engine.Task, error) {
	return s.r.loadTaskAt(ArchiveRef(name), archiveKey(name))
}

// ListArchived implements engine.ArchiveStore.
func (s Tasks) ListArchived() ([]string, error) {
	refs, err := s.r.refs.List(ArchiveRefPrefix)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(refs))
	for _, ref := range refs {
		names = append(names, strings.TrimPrefix(ref.Name.String(), ArchiveRefPrefix))
	}
	return names, nil
}

// ListStates implements engine.ArchiveStore. The refs are listed once and
// each state comes from the task cache when the ref still points at the
// cached commit, so the cost is a directory walk and one small file per
// task; only the state is decoded.
func (s Tasks) ListStates(archived bool) ([]engine.ListedTask, error) {
	prefixes := []string{TaskRefPrefix}
	if archived {
		prefixes = append(prefixes, ArchiveRefPrefix)
	}
	var out []engine.ListedTask
	cache := s.r.readTaskList()
	seen, changed := map[string]bool{}, false
	for _, prefix := range prefixes {
		refs, err := s.r.refs.List(prefix)
		if err != nil {
			return nil, err
		}
		arch := prefix == ArchiveRefPrefix
		for _, ref := range refs {
			name := strings.TrimPrefix(ref.Name.String(), prefix)
			key := name
			if arch {
				key = archiveKey(name)
			}
			lk := listKey(prefix, name)
			seen[lk] = true
			l := engine.ListedTask{Name: name, Archived: arch}
			raw := cache.lookup(lk, ref.Hash)
			if raw == nil {
				raw, l.Err = s.r.rawStateAt(ref.Name, key, ref.Hash)
				if l.Err == nil {
					cache.Entries[lk] = taskListEntry{Commit: ref.Hash.String(), State: raw}
					changed = true
				}
			}
			if l.Err == nil {
				l.State, l.Err = decodeState(ref.Name, raw)
			}
			out = append(out, l)
		}
	}
	// Forget what is gone (archived tasks only when they were listed).
	for k := range cache.Entries {
		if !seen[k] && (archived || strings.HasPrefix(k, "tasks/")) {
			delete(cache.Entries, k)
			changed = true
		}
	}
	if changed {
		s.r.writeTaskList(cache)
	}
	return out, nil
}

// rawStateAt returns the state.json of the task commit h, from the task
// cache if it can.
func (r *Repo) rawStateAt(ref plumbing.ReferenceName, key string, h plumbing.Hash) (json.RawMessage, error) {
	if raw := r.cachedState(key, h); raw != nil {
		return raw, nil
	}
	d, err := r.readTaskDoc(ref, h)
	if err != nil {
		return nil, err
	}
	r.writeTaskCache(key, d)
	raw, ok := d.Files[stateFile]
	if !ok {
		return nil, fmt.Errorf("%s: no %s in its tree", ref, stateFile)
	}
	return raw, nil
}

// decodeState reads a task's state.json. A state without its task field
// (edited by hand) is named by the ref that holds it: every command finds
// a task, writes it back and names it in messages by that field.
func decodeState(ref plumbing.ReferenceName, raw []byte) (*engine.State, error) {
	var st engine.State
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, fmt.Errorf("%s: damaged %s: %s", ref, stateFile, oneLine(err.Error()))
	}
	if st.Task == "" {
		st.Task = refTaskName(ref)
	}
	return &st, nil
}

// ArchiveTask implements engine.ArchiveStore.
func (s Tasks) ArchiveTask(t *engine.Task, files []engine.ArchivedFile, msg string, dropCheckpoints bool) (string, error) {
	r := s.r
	name := t.State.Task
	tip := plumbing.NewHash(t.Rev)
	aref := ArchiveRef(name)
	var rev plumbing.Hash
	for attempt := 0; ; attempt++ {
		old, err := readRefOrZero(r.refs, aref)
		if err != nil {
			return "", err
		}
		if !old.IsZero() {
			if have, err := newGraph(r.storage).isAncestor(tip, old); err != nil {
				return "", err
			} else if have {
				rev = old // archived already (a crash before the task ref went)
				break
			}
		}
		extra := old
		if !old.IsZero() {
			// The run continued from the archive (prev after done, the
			// name reused): the old archive is in the task's chain.
			if inChain, err := newGraph(r.storage).isAncestor(old, tip); err != nil {
				return "", err
			} else if inChain {
				extra = plumbing.ZeroHash
			}
		}
		c, tree, err := r.archiveCommit(t, tip, extra, files, msg)
		if err != nil {
			return "", err
		}
		err = r.refs.Update(aref, old, c)
		if err == nil {
			rev = c
			state, _ := encodeJSON(t.State)
			r.writeTaskCache(archiveKey(name), &Doc{Files: map[string][]byte{stateFile: state, workflowFile: t.Definition}, Commit: c, Tree: tree})
			break
		}
		if !errors.Is(err, ErrConflict) || attempt == 20 {
			return "", describeRefError(aref, err)
		}
	}
	// The task ref goes only if nobody moved it meanwhile (a prev after
	// done reopens the task: it stays live, and is archived again when it
	// finishes).
	switch err := r.refs.Update(TaskRef(name), tip, plumbing.ZeroHash); {
	case err == nil:
		r.removeTaskCache(name)
	case !errors.Is(err, ErrConflict):
		return rev.String(), describeRefError(TaskRef(name), err)
	}
	if dropCheckpoints {
		// The agent-action snapshots go with the checkpoints: an undo
		// works on an active task only.
		for _, cref := range []plumbing.ReferenceName{plumbing.ReferenceName(CheckpointRefPrefix + name), plumbing.ReferenceName(ActionsRefPrefix + name)} {
			if cp, err := readRefOrZero(r.refs, cref); err == nil && !cp.IsZero() {
				if err := r.refs.Update(cref, cp, plumbing.ZeroHash); err != nil && !errors.Is(err, ErrConflict) {
					return rev.String(), describeRefError(cref, err)
				}
			}
			r.dropChainCache(string(cref))
		}
	}
	return rev.String(), nil
}

// archiveCommit writes the archive commit of t: its state and workflow,
// the artifact copies, parents the task's tip and the archive's old tip
// (an earlier run of the same name that the task's chain does not
// contain), so nothing either held becomes unreachable.
func (r *Repo) archiveCommit(t *engine.Task, tip, old plumbing.Hash, files []engine.ArchivedFile, msg string) (plumbing.Hash, plumbing.Hash, error) {
	state, err := encodeJSON(t.State)
	if err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}
	blobs := map[string][]byte{versionFile: []byte(FormatVersion + "\n"), stateFile: state, workflowFile: t.Definition}
	for _, f := range files {
		blobs[artifactsDir+"/"+f.Path] = f.Data
	}
	// The task's other entries (events/) come along; the artifact copies
	// are the ones just taken.
	keep, err := r.taskExtras(tip)
	if err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}
	leaves := map[string]leaf{}
	for k, l := range withoutArtifacts(keep) {
		leaves[k] = l
	}
	for p, b := range blobs {
		h, err := r.writeBlob(b)
		if err != nil {
			return plumbing.ZeroHash, plumbing.ZeroHash, err
		}
		leaves[p] = leaf{mode: filemode.Regular, hash: h}
	}
	tree, err := r.writeTreeOf(leaves)
	if err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}
	parents := []plumbing.Hash{tip}
	if !old.IsZero() {
		parents = append(parents, old)
	}
	c, err := r.writeCommit(tree, parents, msg)
	return c, tree, err
}

// artifactsOf returns the artifacts/ entry of commit c's tree as a leaf
// (an empty map when there is none).
func (r *Repo) artifactsOf(c plumbing.Hash) (map[string]leaf, error) {
	ex, err := r.taskExtras(c)
	if err != nil {
		return nil, err
	}
	out := map[string]leaf{}
	if l, ok := ex[artifactsDir]; ok && l.mode == filemode.Dir {
		out[artifactsDir] = l
	}
	return out, nil
}

// withoutArtifacts is keep less the artifact copies.
func withoutArtifacts(keep map[string]leaf) map[string]leaf {
	if _, ok := keep[artifactsDir]; !ok {
		return keep
	}
	out := make(map[string]leaf, len(keep))
	for k, l := range keep {
		if k != artifactsDir {
			out[k] = l
		}
	}
	return out
}

// archivedArtifacts is the tree of an archived task's artifacts (ok
// false when it kept none).
func (r *Repo) archivedArtifacts(name string) (tree plumbing.Hash, ok bool, err error) {
	h, err := r.refs.Read(ArchiveRef(name))
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	keep, err := r.artifactsOf(h)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	l, ok := keep[artifactsDir]
	return l.hash, ok, nil
}

// ArchivedFiles implements engine.ArchiveStore.
func (s Tasks) ArchivedFiles(name string) ([]engine.ArchivedFile, error) {
	r := s.r
	tree, ok, err := r.archivedArtifacts(name)
	if err != nil || !ok {
		return nil, err
	}
	var out []engine.ArchivedFile
	var walk func(tree plumbing.Hash, prefix string) error
	walk = func(tree plumbing.Hash, prefix string) error {
		ents, err := readTree(r.storage, tree)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if e.isDir() {
				if err := walk(e.hash, prefix+e.name+"/"); err != nil {
					return err
				}
				continue
			}
			size, err := r.storage.EncodedObjectSize(e.hash)
			if err != nil {
				return err
			}
			out = append(out, engine.ArchivedFile{Path: prefix + e.name, Size: size})
		}
		return nil
	}
	return out, walk(tree, "")
}

// DeleteTask implements engine.ArchiveStore. The record is written first,
// with the task's commit and its checkpoints as parents, then the refs
// are removed with compare-and-swap; if the task moved meanwhile, the
// record is taken back and nothing is deleted.
func (s Tasks) DeleteTask(name string, at time.Time) (*engine.DeletedTask, error) {
	r := s.r
	d := &engine.DeletedTask{Task: name, DeletedAt: at.UTC()}
	ref := ArchiveRef(name)
	tip, err := readRefOrZero(r.refs, ref)
	if err != nil {
		return nil, err
	}
	d.Archived = !tip.IsZero()
	if tip.IsZero() {
		ref = TaskRef(name)
		if tip, err = r.refs.Read(ref); err != nil {
			return nil, err
		}
	}
	t, err := r.loadTaskAt(ref, keyOf(ref, name))
	if err != nil {
		return nil, err
	}
	d.Workflow, d.Status, d.Commit = t.State.Workflow, t.State.Status, tip.String()
	cref := plumbing.ReferenceName(CheckpointRefPrefix + name)
	cp, err := readRefOrZero(r.refs, cref)
	if err != nil {
		return nil, err
	}
	parents := []plumbing.Hash{tip}
	if !cp.IsZero() {
		d.Checkpoints = cp.String()
		parents = append(parents, cp)
	}
	meta, err := encodeJSON(d)
	if err != nil {
		return nil, err
	}
	tree, err := r.writeTree(map[string][]byte{versionFile: []byte(FormatVersion + "\n"), deletedFile: meta})
	if err != nil {
		return nil, err
	}
	c, err := r.writeCommit(tree, parents, fmt.Sprintf("delete: %s (%s %s)", name, d.Workflow, d.Status))
	if err != nil {
		return nil, err
	}
	dref := deletedRef(name)
	prev, err := readRefOrZero(r.refs, dref)
	if err != nil {
		return nil, err
	}
	if err := r.refs.Update(dref, prev, c); err != nil {
		return nil, describeRefError(dref, err)
	}
	if err := r.refs.Update(ref, tip, plumbing.ZeroHash); err != nil {
		_ = r.refs.Update(dref, c, prev)
		if errors.Is(err, ErrConflict) {
			return nil, fmt.Errorf("task %s changed while it was being deleted; nothing was deleted", name)
		}
		return nil, describeRefError(ref, err)
	}
	r.removeTaskCache(keyOf(ref, name))
	if !cp.IsZero() {
		if err := r.refs.Update(cref, cp, plumbing.ZeroHash); err != nil && !errors.Is(err, ErrConflict) {
			return d, describeRefError(cref, err)
		}
	}
	return d, nil
}

func keyOf(ref plumbing.ReferenceName, name string) string {
	if strings.HasPrefix(string(ref), ArchiveRefPrefix) {
		return archiveKey(name)
	}
	return name
}

// DeletedTasks implements engine.ArchiveStore.
func (s Tasks) DeletedTasks() ([]*engine.DeletedTask, error) {
	refs, err := s.r.refs.List(DeletedRefPrefix)
	if err != nil {
		return nil, err
	}
	var out []*engine.DeletedTask
	for _, ref := range refs {
		d, err := s.r.readDeleted(ref.Name, ref.Hash)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].DeletedAt.After(out[j].DeletedAt) })
	return out, nil
}

func (r *Repo) readDeleted(ref plumbing.ReferenceName, h plumbing.Hash) (*engine.DeletedTask, error) {
	doc, err := r.readDocAt(ref, h)
	if err != nil {
		return nil, err
	}
	var d engine.DeletedTask
	if err := json.Unmarshal(doc.Files[deletedFile], &d); err != nil {
		return nil, fmt.Errorf("%s: damaged %s: %s", ref, deletedFile, oneLine(err.Error()))
	}
	if !plumbing.IsHash(d.Commit) || (d.Checkpoints != "" && !plumbing.IsHash(d.Checkpoints)) {
		return nil, fmt.Errorf("%s: %s names no commit", ref, deletedFile)
	}
	return &d, nil
}

// RestoreTask implements engine.ArchiveStore.
func (s Tasks) RestoreTask(name string) (*engine.DeletedTask, error) {
	r := s.r
	dref := deletedRef(name)
	dh, err := r.refs.Read(dref)
	if err != nil {
		return nil, err
	}
	d, err := r.readDeleted(dref, dh)
	if err != nil {
		return nil, err
	}
	ref := TaskRef(name)
	if d.Archived {
		ref = ArchiveRef(name)
	}
	for _, other := range []plumbing.ReferenceName{TaskRef(name), ArchiveRef(name)} {
		if h, err := readRefOrZero(r.refs, other); err != nil {
			return nil, err
		} else if !h.IsZero() {
			return nil, fmt.Errorf("%s exists: %w", other, engine.ErrExists)
		}
	}
	if err := r.refs.Update(ref, plumbing.ZeroHash, plumbing.NewHash(d.Commit)); err != nil {
		if errors.Is(err, ErrConflict) {
			return nil, fmt.Errorf("%s exists: %w", ref, engine.ErrExists)
		}
		return nil, describeRefError(ref, err)
	}
	if d.Checkpoints != "" {
		cref := plumbing.ReferenceName(CheckpointRefPrefix + name)
		// Checkpoints taken since (the name was used again) are kept.
		if err := r.refs.Update(cref, plumbing.ZeroHash, plumbing.NewHash(d.Checkpoints)); err != nil && !errors.Is(err, ErrConflict) {
			return d, describeRefError(cref, err)
		}
	}
	if err := r.refs.Update(dref, dh, plumbing.ZeroHash); err != nil && !errors.Is(err, ErrConflict) {
		return d, describeRefError(dref, err)
	}
	return d, nil
}

// ExpireDeleted implements engine.ArchiveStore.
func (s Tasks) ExpireDeleted(before time.Time) (int, error) {
	refs, err := s.r.refs.List(DeletedRefPrefix)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, ref := range refs {
		d, err := s.r.readDeleted(ref.Name, ref.Hash)
		if err != nil || !d.DeletedAt.Before(before) {
			continue // a damaged record is kept for a person to look at
		}
		if err := s.r.refs.Update(ref.Name, ref.Hash, plumbing.ZeroHash); err == nil {
			n++
		}
	}
	return n, nil
}

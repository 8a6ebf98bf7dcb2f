package gitstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/git-hegel/git-hegel/engine"
)

// Task refs: one commit chain per task, tree {version, state.json,
// workflow.yaml}.
const (
	TaskRefPrefix = "refs/hegel/tasks/"
	stateFile     = "state.json"
	workflowFile  = "workflow.yaml"
)

// Tasks is the git-backed engine.TaskStore.
type Tasks struct{ r *Repo }

var _ engine.TaskStore = Tasks{}

// Tasks returns the repository's task store.
func (r *Repo) Tasks() Tasks { return Tasks{r} }

// TaskRef returns the ref that holds a task.
func TaskRef(name string) plumbing.ReferenceName {
	return plumbing.ReferenceName(TaskRefPrefix + name)
}

// LoadTask implements engine.TaskStore.
func (s Tasks) LoadTask(name string) (*engine.Task, error) {
	return s.r.loadTaskAt(TaskRef(name), name)
}

// loadTaskAt reads the task a task or archive ref points at, through the
// task cache (key: the task name, or "archive/<name>").
func (r *Repo) loadTaskAt(ref plumbing.ReferenceName, key string) (*engine.Task, error) {
	h, err := r.refs.Read(ref)
	if err != nil {
		return nil, err
	}
	if d := r.readTaskCache(key, h); d != nil {
		if t, err := decodeTask(ref, d); err == nil {
			return t, nil
		}
	}
	d, err := r.readTaskDocAt(ref, h)
	if err != nil {
		return nil, err
	}
	t, err := decodeTask(ref, d)
	if err == nil {
		r.writeTaskCache(key, d)
	}
	return t, err
}

// readTaskDocAt reads the files of a task commit that make the task:
// state.json and workflow.yaml (an archived task's artifacts/ are not
// read), after checking the version.
func (r *Repo) readTaskDocAt(ref plumbing.ReferenceName, h plumbing.Hash) (*Doc, error) {
	c, err := object.GetCommit(r.storage, h)
	if err != nil {
		return nil, fmt.Errorf("%s points at %s, which is not a readable commit: %s", ref, h, oneLine(err.Error()))
	}
	tree, err := object.GetTree(r.storage, c.TreeHash)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read tree %s: %s", ref, c.TreeHash, oneLine(err.Error()))
	}
	r.rememberTree(h, c.TreeHash)
	d := &Doc{Files: map[string][]byte{}, Commit: h, Tree: c.TreeHash}
	for _, e := range tree.Entries {
		switch e.Name {
		case versionFile, stateFile, workflowFile:
		default:
			continue
		}
		if e.Mode != filemode.Regular {
			return nil, fmt.Errorf("%s: unexpected entry %s (mode %s)", ref, e.Name, e.Mode)
		}
		b, err := r.readBlob(e.Hash)
		if err != nil {
			return nil, fmt.Errorf("%s: cannot read %s: %s", ref, e.Name, oneLine(err.Error()))
		}
		d.Files[e.Name] = b
	}
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

func decodeTask(ref plumbing.ReferenceName, d *Doc) (*engine.Task, error) {
	raw, ok := d.Files[stateFile]
	if !ok {
		return nil, fmt.Errorf("%s: no %s in its tree", ref, stateFile)
	}
	var st engine.State
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, fmt.Errorf("%s: damaged %s: %s", ref, stateFile, oneLine(err.Error()))
	}
	return &engine.Task{State: &st, Definition: d.Files[workflowFile], Rev: d.Commit.String(),
		Archived: strings.HasPrefix(string(ref), ArchiveRefPrefix)}, nil
}

// SaveTask implements engine.TaskStore. An archived task continues its
// chain: a finished state is written to the archive ref (keeping the
// artifact copies), an open one to the task ref, which must not exist.
func (s Tasks) SaveTask(t *engine.Task, msg string) (string, error) {
	ref, key := TaskRef(t.State.Task), t.State.Task
	parent := plumbing.ZeroHash
	if t.Rev != "" {
		parent = plumbing.NewHash(t.Rev)
	}
	expect := parent
	state, err := encodeJSON(t.State)
	if err != nil {
		return "", err
	}
	files := map[string][]byte{stateFile: state, workflowFile: t.Definition}
	var keep map[string]leaf
	if t.Archived {
		if t.State.Finished() {
			ref, key = ArchiveRef(t.State.Task), archiveKey(t.State.Task)
			if keep, err = s.r.artifactsOf(parent); err != nil {
				return "", err
			}
		} else {
			expect = plumbing.ZeroHash // back from the archive: the task ref is created
		}
	}
	h, tree, err := s.r.writeTaskCommit(ref, parent, expect, files, keep, msg)
	if err != nil {
		return "", describeRefError(ref, err)
	}
	s.r.writeTaskCache(key, &Doc{Files: files, Commit: h, Tree: tree})
	return h.String(), nil
}

// writeTaskCommit writes files (plus version and the leaves in keep) as a
// commit whose parent is parent, and moves ref from expect to it. An
// unchanged tree on the same ref writes nothing.
func (r *Repo) writeTaskCommit(ref plumbing.ReferenceName, parent, expect plumbing.Hash, files map[string][]byte, keep map[string]leaf, msg string) (plumbing.Hash, plumbing.Hash, error) {
	if keep == nil && parent == expect {
		return r.writeDocTree(ref, parent, files, msg)
	}
	leaves := map[string]leaf{}
	for p, l := range keep {
		leaves[p] = l
	}
	all := map[string][]byte{versionFile: []byte(FormatVersion + "\n")}
	for p, b := range files {
		all[p] = b
	}
	for p, b := range all {
		bh, err := r.writeBlob(b)
		if err != nil {
			return plumbing.ZeroHash, plumbing.ZeroHash, err
		}
		leaves[p] = leaf{mode: filemode.Regular, hash: bh}
	}
	tree, err := r.writeTreeOf(leaves)
	if err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}
	if parent == expect && !parent.IsZero() {
		if known, ok := r.knownTree(parent); ok && known == tree {
			return parent, tree, nil
		}
	}
	var parents []plumbing.Hash
	if !parent.IsZero() {
		parents = append(parents, parent)
	}
	c, err := r.writeCommit(tree, parents, msg)
	if err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}
	if err := r.refs.Update(ref, expect, c); err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}
	r.rememberTree(c, tree)
	return c, tree, nil
}

// ListTasks implements engine.TaskStore.
func (s Tasks) ListTasks() ([]string, error) {
	refs, err := s.r.refs.List(TaskRefPrefix)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(refs))
	for _, ref := range refs {
		names = append(names, strings.TrimPrefix(ref.Name.String(), TaskRefPrefix))
	}
	return names, nil
}

// encodeJSON is the one encoding of stored JSON: indented for people who
// read it with git show, and newline-terminated like any text file.
func encodeJSON(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// describeRefError keeps sentinel errors matchable while giving lock
// failures a message that tells the user what to do.
func describeRefError(ref plumbing.ReferenceName, err error) error {
	switch {
	case errors.Is(err, ErrConflict), errors.Is(err, ErrNotFound):
		return err
	case errors.Is(err, ErrLocked):
		return fmt.Errorf("cannot update %s: %w", ref, err)
	}
	return fmt.Errorf("cannot update %s: %s", ref, oneLine(err.Error()))
}

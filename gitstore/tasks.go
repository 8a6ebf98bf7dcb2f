package gitstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// Task refs: one commit chain per task, tree {version, state.json,
// workflow.yaml} plus, once an agent reported events, events/ (events.go).
// Saving a task carries every other entry of the parent's tree over by
// hash, so commands that only change the state never touch the events.
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
// Whatever stops the task from being read but a missing ref is damage
// (engine.DamagedError): the other tasks go on without it.
func (r *Repo) loadTaskAt(ref plumbing.ReferenceName, key string) (*engine.Task, error) {
	h, err := r.refs.Read(ref)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, err
		}
		return nil, damagedTask(ref, err)
	}
	return r.loadTaskCommit(ref, key, h)
}

// loadTaskCommit reads the task ref held at commit h (which it may no
// longer hold), through the task cache.
func (r *Repo) loadTaskCommit(ref plumbing.ReferenceName, key string, h plumbing.Hash) (*engine.Task, error) {
	if d := r.readTaskCache(key, h); d != nil {
		if t, err := decodeTask(ref, d); err == nil {
			return t, nil
		}
	}
	d, err := r.readTaskDoc(ref, h)
	if err != nil {
		return nil, damagedTask(ref, err)
	}
	t, err := decodeTask(ref, d)
	if err != nil {
		return nil, damagedTask(ref, err)
	}
	r.writeTaskCache(key, d)
	return t, nil
}

// damagedTask marks err, met reading a task or archive ref, as damage.
func damagedTask(ref plumbing.ReferenceName, err error) error {
	if errors.Is(err, engine.ErrDamaged) {
		return err
	}
	d := engine.Damaged(string(ref), refTaskName(ref), oneLine(err.Error()))
	d.Cause = err
	return d
}

func decodeTask(ref plumbing.ReferenceName, d *Doc) (*engine.Task, error) {
	raw, ok := d.Files[stateFile]
	if !ok {
		return nil, fmt.Errorf("%s: no %s in its tree", ref, stateFile)
	}
	st, err := decodeState(ref, raw)
	if err != nil {
		return nil, err
	}
	return &engine.Task{State: st, Definition: d.Files[workflowFile], Rev: d.Commit.String(),
		Archived: strings.HasPrefix(string(ref), ArchiveRefPrefix)}, nil
}

// refTaskName is the task a task or archive ref holds.
func refTaskName(ref plumbing.ReferenceName) string {
	return strings.TrimPrefix(strings.TrimPrefix(string(ref), TaskRefPrefix), ArchiveRefPrefix)
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
	keep, err := s.r.taskExtras(parent)
	if err != nil {
		return "", describeRefError(ref, err)
	}
	if t.Archived {
		if t.State.Finished() {
			ref, key = ArchiveRef(t.State.Task), archiveKey(t.State.Task)
		} else {
			// Back from the archive: the task ref is created, and the
			// artifact copies stay behind (the next finish copies anew).
			expect = plumbing.ZeroHash
			keep = withoutArtifacts(keep)
		}
	}
	if len(t.Put) > 0 {
		if keep, err = s.r.withEntries(keep, t.Put); err != nil {
			return "", describeRefError(ref, err)
		}
	}
	h, tree, err := s.r.writeTaskTreeFrom(ref, parent, expect, files, keep, msg)
	if err != nil {
		return "", describeRefError(ref, err)
	}
	s.r.writeTaskCache(key, &Doc{Files: files, Commit: h, Tree: tree})
	return h.String(), nil
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
	case errors.Is(err, refs.ErrLocked):
		return fmt.Errorf("cannot update %s: %w", ref, err)
	}
	return fmt.Errorf("cannot update %s: %s", ref, oneLine(err.Error()))
}

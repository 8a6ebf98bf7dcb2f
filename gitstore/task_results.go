package gitstore

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-hegel/git-hegel/engine"
)

// The step runner's entries of a task's tree: results/<node> and
// inputs/<name> (engine/run_store.go, docs/storage.md). SaveTask writes
// them from Task.Put beside the documents; ReadTaskFile reads one back.

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
	ref, h, err := s.liveOrArchived(task)
	if err != nil {
		return nil, err
	}
	return s.r.taskFile(ref, h, path)
}

// ReadTaskDir implements engine.TaskDirReader: every regular file of dir
// ("results") in the live task's tree, else the archived one's, read
// with one look at the ref (the runner hands a step all earlier results).
func (s Tasks) ReadTaskDir(task, dir string) (map[string][]byte, error) {
	ref, h, err := s.liveOrArchived(task)
	if err != nil {
		return nil, err
	}
	return s.r.taskDir(ref, h, dir)
}

// liveOrArchived is the task's ref and commit: the live one, else the
// archived one.
func (s Tasks) liveOrArchived(task string) (plumbing.ReferenceName, plumbing.Hash, error) {
	if err := engine.CheckTaskName(task); err != nil {
		return "", plumbing.ZeroHash, err
	}
	for _, ref := range []plumbing.ReferenceName{TaskRef(task), ArchiveRef(task)} {
		h, err := s.r.refs.Read(ref)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return "", plumbing.ZeroHash, err
		}
		return ref, h, nil
	}
	return "", plumbing.ZeroHash, fmt.Errorf("task %s: %w", task, ErrNotFound)
}

// taskDir reads the regular files of dir in task commit h's tree.
func (r *Repo) taskDir(ref plumbing.ReferenceName, h plumbing.Hash, dir string) (map[string][]byte, error) {
	keep, err := r.taskExtras(h)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", ref, oneLine(err.Error()))
	}
	out := map[string][]byte{}
	l, ok := keep[dir]
	if !ok || l.mode != filemode.Dir {
		return out, nil
	}
	ents, err := readTree(r.storage, l.hash)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", ref, oneLine(err.Error()))
	}
	for _, e := range ents {
		if e.fm != filemode.Regular {
			continue
		}
		b, err := r.readBlob(e.hash)
		if err != nil {
			return nil, fmt.Errorf("%s:%s/%s: %s", ref, dir, e.name, oneLine(err.Error()))
		}
		out[e.name] = b
	}
	return out, nil
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

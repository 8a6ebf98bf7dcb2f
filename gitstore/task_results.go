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

// The entries of a task's tree besides its documents: the step
// runner's results/<node> and inputs/<name> (engine/run_store.go), and
// submitted/<node>/<name>, the artifacts a node left when it ended
// (engine/artifacts.go; docs/storage.md). SaveTask writes them from
// Task.Put beside the documents; ReadTaskFile reads one back.

// putDirs are the directories of a task's tree that Task.Put may write,
// with how many levels lie below each: a node's submitted/<node> folder
// is written whole, so a file the node no longer submits goes.
var putDirs = map[string]int{"results": 1, "inputs": 1, "submitted": 2, "logs": 1}

// withEntries returns keep (never modified: it may be memoized) with the
// entries of put written: each "<dir>/<name>" (or "<dir>/<sub>/<name>"
// as putDirs says).
func (r *Repo) withEntries(keep map[string]leaf, put map[string][]byte) (map[string]leaf, error) {
	for p := range put {
		parts := strings.Split(p, "/")
		depth, ok := putDirs[parts[0]]
		if !ok || len(parts) != depth+1 || slices.Contains(parts, "") || slices.Contains(parts, ".") || slices.Contains(parts, "..") {
			return nil, fmt.Errorf("cannot store %q in a task's tree", p)
		}
	}
	return r.putLevel(keep, put, "", false)
}

// putLevel writes put (paths relative to this level) over the entries of
// the tree called name ("" at the root); fresh starts from nothing
// instead.
func (r *Repo) putLevel(entries map[string]leaf, put map[string][]byte, name string, fresh bool) (map[string]leaf, error) {
	out := map[string]leaf{}
	if !fresh {
		for k, l := range entries {
			out[k] = l
		}
	}
	sub := map[string]map[string][]byte{}
	for p, data := range put {
		dir, rest, ok := strings.Cut(p, "/")
		if !ok {
			h, err := r.writeBlob(data)
			if err != nil {
				return nil, err
			}
			out[p] = leaf{mode: filemode.Regular, hash: h}
			continue
		}
		if sub[dir] == nil {
			sub[dir] = map[string][]byte{}
		}
		sub[dir][rest] = data
	}
	for dir, files := range sub {
		var below map[string]leaf
		if l, ok := out[dir]; ok && l.mode == filemode.Dir {
			ents, err := readTree(r.storage, l.hash)
			if err != nil {
				return nil, err
			}
			below = map[string]leaf{}
			for _, e := range ents {
				below[e.name] = leaf{mode: e.fm, hash: e.hash}
			}
		}
		// submitted/<node>: the node's folder holds what it submitted
		// this time, nothing older.
		leaves, err := r.putLevel(below, files, dir, name == "submitted")
		if err != nil {
			return nil, err
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

// taskFile reads path ("dir/name", "dir/sub/name") in task commit h's
// tree.
func (r *Repo) taskFile(ref plumbing.ReferenceName, h plumbing.Hash, path string) ([]byte, error) {
	keep, err := r.taskExtras(h)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", ref, oneLine(err.Error()))
	}
	parts := strings.Split(path, "/")
	l, ok := keep[parts[0]]
	for _, name := range parts[1:] {
		if !ok || l.mode != filemode.Dir {
			return nil, fmt.Errorf("%s:%s: %w", ref, path, ErrNotFound)
		}
		ents, err := readTree(r.storage, l.hash)
		if err != nil {
			return nil, fmt.Errorf("%s: %s", ref, oneLine(err.Error()))
		}
		ok = false
		for _, e := range ents {
			if e.name == name {
				l, ok = leaf{mode: e.fm, hash: e.hash}, true
				break
			}
		}
	}
	if !ok || l.mode != filemode.Regular || len(parts) < 2 {
		return nil, fmt.Errorf("%s:%s: %w", ref, path, ErrNotFound)
	}
	return r.readBlob(l.hash)
}

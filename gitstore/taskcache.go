package gitstore

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// The task cache keeps, per task, the decoded content of the commit its ref
// last pointed at: <common git dir>/hegel/task-cache/<task>.json. A hit
// costs one small file read instead of four object reads; after git gc
// those reads make go-git load every pack index whole, so without the cache
// status would grow with the size of the repository. An entry is used only
// when the ref still points at its commit, so it cannot go stale; a torn or
// damaged file is a miss. Deleting the directory loses nothing.
const taskCacheDir = "hegel/task-cache"

type cachedTask struct {
	Commit   string          `json:"commit"`
	Tree     string          `json:"tree"`
	State    json.RawMessage `json:"state"`
	Workflow string          `json:"workflow"`
	// Extras are the tree's other root entries ("<mode> <hash>" by name),
	// so a save after a cached load reads no tree. Absent in caches
	// written before events existed.
	Extras map[string]string `json:"extras,omitempty"`
}

// taskCachePath is the cache file for a key: a task's name, or
// "archive/<name>" for an archived task.
func taskCachePath(key string) string { return taskCacheDir + "/" + key + ".json" }

// removeTaskCache drops a cache entry (best effort: an entry is only used
// while its ref points at its commit anyway).
func (r *Repo) removeTaskCache(key string) { _ = r.common.Remove(taskCachePath(key)) }

// readTaskCache returns the cached document for commit h, or nil.
func (r *Repo) readTaskCache(name string, h plumbing.Hash) *Doc {
	b, err := readFile(r.common, taskCachePath(name))
	if err != nil {
		return nil
	}
	var c cachedTask
	if json.Unmarshal(b, &c) != nil || c.Commit != h.String() || len(c.State) == 0 {
		return nil
	}
	tree := plumbing.NewHash(c.Tree)
	r.rememberTree(h, tree)
	if c.Extras != nil {
		ex := map[string]leaf{}
		for name, v := range c.Extras {
			mode, hash, ok := strings.Cut(v, " ")
			fm, err := filemode.New(mode)
			if !ok || err != nil || len(hash) != 40 {
				return nil
			}
			ex[name] = leaf{mode: fm, hash: plumbing.NewHash(hash)}
		}
		r.rememberExtras(h, ex)
	}
	return &Doc{
		Files:  map[string][]byte{stateFile: c.State, workflowFile: []byte(c.Workflow)},
		Commit: h,
		Tree:   tree,
	}
}

// writeTaskCache records d as the task's cached content. It is best
// effort: a cache that cannot be written only costs speed.
func (r *Repo) writeTaskCache(name string, d *Doc) {
	c := cachedTask{
		Commit: d.Commit.String(), Tree: d.Tree.String(),
		State: d.Files[stateFile], Workflow: string(d.Files[workflowFile]),
	}
	r.extras.mu.Lock()
	if ex, ok := r.extras.m[d.Commit]; ok {
		c.Extras = map[string]string{}
		for name, l := range ex {
			c.Extras[name] = l.mode.String() + " " + l.hash.String()
		}
	}
	r.extras.mu.Unlock()
	b, err := json.Marshal(c)
	if err != nil {
		return
	}
	// No fsync: after a crash a torn file fails to parse and is a miss.
	_ = r.writeCommon(taskCachePath(name), b, false)
}

// treeMemo remembers commit → tree for commits read through a cache, so
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

// cachedState returns the cached state.json of commit h, or nil.
func (r *Repo) cachedState(key string, h plumbing.Hash) []byte {
	if d := r.readTaskCache(key, h); d != nil {
		return d.Files[stateFile]
	}
	return nil
}

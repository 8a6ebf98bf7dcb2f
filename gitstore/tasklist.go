package gitstore

import (
	"encoding/json"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// The task list cache: <common git dir>/hegel/task-list.json holds, for
// every task and archived task the last listing saw, the commit its ref
// pointed at and the state.json of that commit. `git hegel tasks` reads it
// whole instead of one cache file per task (with 1,000 tasks, 1,000 small
// file reads were most of the listing's time); an entry is used only while
// its ref still points at its commit, so it cannot go stale, and a listing
// that found anything new rewrites it. Like the task cache, it exists for
// speed only: deleting it loses nothing.
const taskListFile = "hegel/task-list.json"

type taskList struct {
	Version int                      `json:"version"`
	Entries map[string]taskListEntry `json:"entries"` // "tasks/<name>" or "archive/<name>"
}

type taskListEntry struct {
	Commit string          `json:"commit"`
	State  json.RawMessage `json:"state"`
}

const taskListVersion = 1

// readTaskList returns the cached list, or an empty one.
func (r *Repo) readTaskList() *taskList {
	l := &taskList{Version: taskListVersion, Entries: map[string]taskListEntry{}}
	b, err := readFile(r.common, taskListFile)
	if err != nil {
		return l
	}
	var got taskList
	if json.Unmarshal(b, &got) != nil || got.Version != taskListVersion || got.Entries == nil {
		return l
	}
	return &got
}

// lookup returns the cached state of key if its ref is still at h.
func (l *taskList) lookup(key string, h plumbing.Hash) json.RawMessage {
	if e, ok := l.Entries[key]; ok && e.Commit == h.String() && len(e.State) > 0 {
		return e.State
	}
	return nil
}

// writeTaskList stores l. It is best effort, like the task cache: a cache
// that cannot be written only costs speed, and a torn file fails to parse
// and is a miss.
func (r *Repo) writeTaskList(l *taskList) {
	b, err := json.Marshal(l)
	if err != nil {
		return
	}
	// No fsync (durable false); shared permissions as everything else in
	// the common git dir.
	_ = r.writeCommon(taskListFile, b, false)
}

// listKey is a task's key in the list cache.
func listKey(prefix, name string) string {
	return strings.TrimPrefix(prefix, hegelPrefix) + name
}

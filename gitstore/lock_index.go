package gitstore

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/git-hegel/git-hegel/engine"
)

// The lock index: which live tasks hold file locks, so that the agent
// hook's check of an edit reads the task refs and one file instead of
// every open task (with thousands of tasks, 0.2 s on every edit). It is
// a cache in the common git dir, part of nothing that syncs:
//
//	<git common dir>/hegel/lock-index
//	hegel-lock-index 1
//	<task> TAB <commit> TAB <the state as JSON on one line, or nothing>
//
// one line per live task, keyed by the commit its ref held when the line
// was written: a task whose ref now holds another commit is read again,
// so the index never answers for a state it did not read. The state is
// kept only for a task that locks files; a task that could not be read
// has no line, and is read again by the next check. A damaged or missing
// index is built again; deleting it costs one slow check.
const lockIndexFile = "hegel/lock-index"

const lockIndexHeader = "hegel-lock-index 1"

type lockIndexEntry struct {
	commit string
	state  []byte // nil: the task locks nothing
}

// LockStates implements engine.LockIndex: the states of the live tasks
// that lock files, whatever their status.
func (s Tasks) LockStates() ([]*engine.State, error) {
	refs, err := s.r.refs.List(TaskRefPrefix)
	if err != nil {
		return nil, err
	}
	old := s.readLockIndex()
	changed := len(old) != len(refs)
	var buf bytes.Buffer
	buf.WriteString(lockIndexHeader + "\n")
	var out []*engine.State
	for _, ref := range refs {
		name := strings.TrimPrefix(ref.Name.String(), TaskRefPrefix)
		commit := ref.Hash.String()
		ent, ok := old[name]
		if !ok || ent.commit != commit {
			changed = true
			// The state at the listed commit, whatever the ref holds by
			// now: a line answers for its own commit only.
			t, err := s.r.loadTaskCommit(ref.Name, name, ref.Hash)
			if err != nil {
				// Not read (an object missing for a moment, a full
				// disk): no line, so the next check reads it again
				// rather than take the task for one without locks.
				continue
			}
			ent = lockIndexEntry{commit: commit}
			if t.State != nil && len(t.State.FilesLocked) > 0 {
				b, err := json.Marshal(t.State)
				if err != nil {
					continue
				}
				ent.state = b
			}
		}
		buf.WriteString(name + "\t" + commit + "\t")
		buf.Write(ent.state)
		buf.WriteByte('\n')
		if ent.state != nil {
			var st engine.State
			if json.Unmarshal(ent.state, &st) == nil {
				out = append(out, &st)
			}
		}
	}
	if changed {
		_ = s.r.writeCommon(lockIndexFile, buf.Bytes(), false) // a cache: the answer stands without it
	}
	return out, nil
}

// readLockIndex reads the index; nil when missing or damaged.
func (s Tasks) readLockIndex() map[string]lockIndexEntry {
	// Only a regular file: a FIFO left there would block the reading
	// hook, and so the agent's edit, for good (the rename that writes the
	// index replaces whatever is there).
	if fi, err := s.r.common.Lstat(lockIndexFile); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	b, err := readFile(s.r.common, lockIndexFile)
	if err != nil {
		return nil
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) == 0 || lines[0] != lockIndexHeader {
		return nil
	}
	out := make(map[string]lockIndexEntry, len(lines))
	for _, line := range lines[1:] {
		if line == "" {
			continue
		}
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 || !engine.ValidTaskName(f[0]) || len(f[1]) != 40 {
			return nil
		}
		ent := lockIndexEntry{commit: f[1]}
		if f[2] != "" {
			if !json.Valid([]byte(f[2])) {
				return nil // damaged: a lock must never be lost to it
			}
			ent.state = []byte(f[2])
		}
		out[f[0]] = ent
	}
	return out
}

package gitstore

import (
	"encoding/json"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/engine"
)

var _ engine.TextOrigin = Tasks{}

// TextFetched implements engine.TextOrigin from this clone's reflog of the
// task's ref, as InputFetched does for a file of the task: for each of
// fields (keys of state.json), the newest entry that changed its value
// names who wrote it. A sync writes "fetch <remote>: ..." there (a merge
// too: a field the merge changed came from the other side); a command
// here writes its own message. A task no fetch ever wrote here is read
// from one file, its reflog.
func (s Tasks) TextFetched(task string, fields []string) map[string]string {
	r := s.r
	log, at := r.reflogBlobs(task, stateFile)
	unrecorded := unrecordedStart(log)
	fetched := unrecorded
	for _, e := range log {
		if fetchRemote(e.Msg) != "" {
			fetched = true
			break
		}
	}
	if !fetched {
		return nil
	}
	// values decodes a version of state.json into its fields' raw JSON
	// (none, for a blob that cannot be read or parsed: every field then
	// differs from it, and the change is attributed to who made it).
	values := map[plumbing.Hash]map[string]json.RawMessage{}
	value := func(b plumbing.Hash, field string) string {
		m, ok := values[b]
		if !ok {
			if !b.IsZero() {
				if data, err := r.readBlob(b); err == nil {
					_ = json.Unmarshal(data, &m)
				}
			}
			values[b] = m
		}
		return string(m[field])
	}
	out := map[string]string{}
	if unrecorded {
		// A field no recorded entry changed holds what the ref held
		// before the record starts.
		for _, f := range fields {
			out[f] = engine.UnrecordedOrigin
		}
	}
	for _, e := range log {
		ob, nb := at(e.Old), at(e.New)
		if ob == nb {
			continue
		}
		remote := fetchRemote(e.Msg)
		for _, f := range fields {
			if value(ob, f) == value(nb, f) {
				continue
			}
			if remote != "" {
				out[f] = remote
			} else {
				delete(out, f)
			}
		}
	}
	return out
}

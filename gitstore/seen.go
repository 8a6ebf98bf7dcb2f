package gitstore

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/git-hegel/git-hegel/engine"
)

// The seen record: which artifact contents this clone has shown (show,
// artifact, the web task page) or written (a node that ended here
// submitted them), by task, so approve can refuse content nobody here
// looked at (engine/seen.go). One text file in the common git dir,
// shared by the clone's worktrees and part of nothing that syncs:
//
//	<common git dir>/hegel/seen
//	hegel-seen 1
//	<blob id> <task>
//
// newest last. It is rewritten whole through a temporary file and a
// rename, keeping the newest maxSeenEntries lines, so it stays small. A
// file over maxSeenBytes, without the header, or of another version is
// read as empty, and a line that does not parse is skipped: a damaged
// record costs a look at the artifacts again, never an error. Two
// commands writing at once may lose one's new lines, with the same cost.
// Blob ids and task names are checked before they are written (they come
// from task states, which may have been fetched) and are only ever
// compared: none of them names a file.
const seenFile = "hegel/seen"

// SeenFile is the seen record's path, relative to the common git dir.
const SeenFile = seenFile

const (
	seenHeader     = "hegel-seen 1"
	maxSeenEntries = 2000
	// maxSeenBytes is well above what maxSeenEntries lines take (a line
	// is at most 40 + 1 + 100 + 1 bytes).
	maxSeenBytes = 512 << 10
)

var _ engine.SeenRecord = Tasks{}

type seenEntry struct{ blob, task string }

// readSeen returns the record's entries, oldest first; nil when there is
// none or it is damaged.
func (r *Repo) readSeen() []seenEntry {
	b, err := readFileLimit(r.common, seenFile, maxSeenBytes)
	if err != nil {
		return nil
	}
	lines := strings.Split(string(b), "\n")
	if lines[0] != seenHeader {
		return nil
	}
	var out []seenEntry
	for _, l := range lines[1:] {
		blob, task, ok := strings.Cut(l, " ")
		if ok && isHexID(blob) && engine.ValidTaskName(task) {
			out = append(out, seenEntry{blob, task})
		}
	}
	return out
}

// SeenArtifacts implements engine.SeenRecord.
func (s Tasks) SeenArtifacts(task string) map[string]bool {
	out := map[string]bool{}
	for _, e := range s.r.readSeen() {
		if e.task == task {
			out[e.blob] = true
		}
	}
	return out
}

// RecordSeen implements engine.SeenRecord. Nothing is written when every
// blob is recorded for task already.
func (s Tasks) RecordSeen(task string, blobs []string) error {
	if !engine.ValidTaskName(task) {
		return fmt.Errorf("not a task name: %q", task)
	}
	old := s.r.readSeen()
	have := map[seenEntry]bool{}
	for _, e := range old {
		have[e] = true
	}
	entries := old
	for _, b := range blobs {
		if !isHexID(b) {
			return fmt.Errorf("not a blob id: %q", b)
		}
		e := seenEntry{b, task}
		if !have[e] {
			have[e] = true
			entries = append(entries, e)
		}
	}
	if len(entries) == len(old) {
		return nil
	}
	if n := len(entries) - maxSeenEntries; n > 0 {
		entries = entries[n:]
	}
	var buf bytes.Buffer
	buf.WriteString(seenHeader + "\n")
	for _, e := range entries {
		buf.WriteString(e.blob + " " + e.task + "\n")
	}
	if err := s.r.writeCommon(seenFile, buf.Bytes(), false); err != nil {
		return fmt.Errorf("cannot write %s: %s", seenFile, oneLine(err.Error()))
	}
	return nil
}

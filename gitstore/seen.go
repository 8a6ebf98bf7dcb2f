package gitstore

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

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
	seenHeader = "hegel-seen 1"
	// maxSeenEntries bounds what every show and approve reads: a full
	// record of 2,000 lines made a `show` 10-18% slower than one with two
	// lines (2-4 ms on a loaded machine, docs/benchmarks.md), 1,000 lines
	// about 1%. Evicting a line only makes approve ask for another look.
	maxSeenEntries = 1000
	// maxSeenBytes is above what maxSeenEntries lines take (a line is at
	// most 40 + 1 + 100 + 1 bytes).
	maxSeenBytes = 256 << 10
)

var _ engine.SeenRecord = Tasks{}

type seenEntry struct{ blob, task string }

// readSeen returns the entries of the record that keep accepts (by task,
// before the line is checked further), oldest first; nil when there is
// no record or it is damaged. Every show and approve reads it, so it is
// streamed: lines of other tasks are skipped before anything is copied
// or checked.
func (r *Repo) readSeen(keep func(task []byte) bool) []seenEntry {
	f, err := r.common.Open(seenFile)
	if err != nil {
		return nil
	}
	defer f.Close()
	br := bufio.NewReaderSize(io.LimitReader(f, maxSeenBytes+1), 16<<10)
	if h, err := br.ReadSlice('\n'); err != nil || string(h) != seenHeader+"\n" {
		return nil
	}
	n := int64(len(seenHeader) + 1)
	var out []seenEntry
	for {
		line, err := br.ReadSlice('\n')
		n += int64(len(line))
		if n > maxSeenBytes {
			return nil
		}
		if err == bufio.ErrBufferFull {
			// Longer than any entry: skip the rest of it.
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				n += int64(len(line))
			}
			continue
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		if len(line) >= 42 && line[40] == ' ' && keep(line[41:]) {
			blob, task := string(line[:40]), string(line[41:])
			if lowerHex(blob) && engine.ValidTaskName(task) {
				out = append(out, seenEntry{blob, task})
			}
		}
		if err != nil {
			return out
		}
	}
}

// lowerHex reports whether s is lowercase hexadecimal digits only.
func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// SeenArtifacts implements engine.SeenRecord.
func (s Tasks) SeenArtifacts(task string) map[string]bool {
	out := map[string]bool{}
	for _, e := range s.r.readSeen(func(t []byte) bool { return string(t) == task }) {
		out[e.blob] = true
	}
	return out
}

// RecordSeen implements engine.SeenRecord. Nothing is written when every
// blob is recorded for task already.
func (s Tasks) RecordSeen(task string, blobs []string) error {
	if !engine.ValidTaskName(task) {
		return fmt.Errorf("not a task name: %q", task)
	}
	var old []seenEntry
	have := map[seenEntry]bool{}
	for _, e := range s.r.readSeen(func([]byte) bool { return true }) {
		if !have[e] {
			have[e] = true
			old = append(old, e)
		}
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

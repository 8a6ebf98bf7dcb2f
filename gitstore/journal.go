package gitstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/git-hegel/git-hegel/engine/agent"
	"github.com/git-hegel/git-hegel/gitstore/gitdir"
	"github.com/git-hegel/git-hegel/gitstore/objects"
)

// The agent event journal: <worktree git dir>/hegel-journal.jsonl, one
// agent.Event per line. `git hegel hook` appends to it on every agent tool
// call, so appending is the whole of its cost: one open with O_APPEND, a
// shared flock, one write. Nothing is ever rewritten in place:
//
//   - an append is a single write(2) of whole lines on an O_APPEND file, so
//     concurrent hooks never interleave, and a crash loses at most the event
//     being written (a torn line is skipped on read, and every append starts
//     with a newline so the next event is not glued to it);
//   - a fold (events.go) takes the exclusive lock, renames the journal to
//     hegel-journal.folding-<id>, releases the lock, commits the folded
//     events to the task refs and only then deletes the folding file. A hook
//     that opened the journal before the rename sees, once it holds its
//     lock, that the path no longer names its file and appends to the new
//     journal instead.
const (
	JournalFile    = "hegel-journal.jsonl"
	foldingPrefix  = "hegel-journal.folding-"
	maxJournalLine = 64 << 10 // longer lines are not events git-hegel wrote
)

// Journal is one worktree's agent event journal.
type Journal struct {
	dir  string             // the worktree's git dir
	perm objects.SharedPerm // core.sharedRepository, for a new journal file
}

// OpenJournal returns the journal of the worktree whose git dir is gitDir.
// cfg (may be nil) supplies core.sharedRepository for new files.
func OpenJournal(gitDir string, cfg *gitdir.Config) *Journal {
	j := &Journal{dir: gitDir}
	if cfg != nil {
		j.perm = sharedPermOf(cfg)
	}
	return j
}

// Journal returns the repository's journal (this worktree's).
func (r *Repo) Journal() *Journal { return OpenJournal(r.GitDir, r.cfg) }

// Path is the journal file's path.
func (j *Journal) Path() string { return filepath.Join(j.dir, JournalFile) }

// Append writes evs, one JSON line each, in one write.
func (j *Journal) Append(evs ...agent.Event) error {
	if len(evs) == 0 {
		return nil
	}
	if j.dir == "" {
		return errors.New("no git directory to keep agent events in")
	}
	// A leading newline ends a line torn by a crash mid-append, so the
	// torn event is the only one lost (readers skip empty lines).
	var buf bytes.Buffer
	buf.WriteByte('\n')
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i := range evs {
		if err := enc.Encode(&evs[i]); err != nil {
			return err
		}
	}
	for attempt := 0; attempt < 100; attempt++ {
		f, err := j.openAppend()
		if err != nil {
			return fmt.Errorf("cannot open %s: %s", j.Path(), oneLine(err.Error()))
		}
		if err := flock(f, false); err != nil {
			f.Close()
			return fmt.Errorf("cannot lock %s: %s", j.Path(), oneLine(err.Error()))
		}
		if !sameFile(f, j.Path()) {
			// A fold renamed the journal between our open and our lock.
			funlock(f)
			f.Close()
			continue
		}
		_, err = f.Write(buf.Bytes())
		funlock(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("cannot append to %s: %s", j.Path(), oneLine(err.Error()))
		}
		return nil
	}
	return fmt.Errorf("cannot append to %s: it keeps being rotated", j.Path())
}

func (j *Journal) openAppend() (*os.File, error) {
	f, err := os.OpenFile(j.Path(), os.O_WRONLY|os.O_APPEND, 0)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return f, err
	}
	return j.perm.OpenFile(j.Path(), os.O_WRONLY|os.O_APPEND|os.O_CREATE)
}

// tailChunk is how much of the journal's end is read at a time.
const tailChunk = 64 << 10

// tailSlack tolerates appends slightly out of time order (concurrent
// hooks): reading backwards stops only at an event this much older than
// asked for.
const tailSlack = 10 * time.Second

// Tail returns the journal's events from since on, oldest first, reading
// backwards from the end so its cost follows the window asked for, not the
// journal's length. A missing journal has no events.
func (j *Journal) Tail(since time.Time) ([]agent.Event, error) {
	if j.dir == "" {
		return nil, nil
	}
	f, err := os.Open(j.Path())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	end := fi.Size()
	var out []agent.Event
	var carry []byte // the start of a line split across chunks
	stop := since.Add(-tailSlack)
	for end > 0 {
		start := max(end-tailChunk, 0)
		chunk := make([]byte, end-start, int(end-start)+len(carry))
		if _, err := f.ReadAt(chunk, start); err != nil && err != io.EOF {
			return nil, err
		}
		chunk = append(chunk, carry...)
		lines := bytes.Split(chunk, []byte("\n"))
		if start > 0 {
			carry = lines[0] // may be cut: finish it with the next chunk
			lines = lines[1:]
			if len(carry) > maxJournalLine {
				carry = nil
			}
		} else {
			carry = nil
		}
		done := false
		for i := len(lines) - 1; i >= 0; i-- {
			ev, ok := decodeEvent(lines[i])
			if !ok {
				continue
			}
			if ev.Time.Before(stop) {
				done = true
				break
			}
			if !ev.Time.Before(since) {
				out = append(out, ev)
			}
		}
		if done {
			break
		}
		end = start
	}
	slices.Reverse(out)
	return out, nil
}

// decodeEvent reads one journal line; torn or foreign lines are skipped.
func decodeEvent(line []byte) (agent.Event, bool) {
	var ev agent.Event
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil || ev.Kind == "" {
		return ev, false
	}
	return ev, true
}

// readEvents decodes every event in data.
func readEvents(data []byte) []agent.Event {
	var out []agent.Event
	for _, line := range bytes.Split(data, []byte("\n")) {
		if ev, ok := decodeEvent(line); ok {
			out = append(out, ev)
		}
	}
	return out
}

// Pending returns every event in the journal and in folds a crash left
// behind, oldest file first.
func (j *Journal) Pending() ([]agent.Event, error) {
	files, err := j.foldingFiles()
	if err != nil {
		return nil, err
	}
	var out []agent.Event
	if j.dir == "" {
		return nil, nil
	}
	for _, p := range append(files, j.Path()) {
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, readEvents(b)...)
	}
	return out, nil
}

// foldingFiles lists folds in progress or left by a crash, oldest first
// (their ids start with the time they were made).
func (j *Journal) foldingFiles() ([]string, error) {
	if j.dir == "" {
		return nil, nil
	}
	ents, err := os.ReadDir(j.dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), foldingPrefix) && !e.IsDir() {
			out = append(out, filepath.Join(j.dir, e.Name()))
		}
	}
	slices.Sort(out)
	return out, nil
}

// rotate moves the journal aside for folding, under the exclusive lock so
// no append is half done. It returns the folding file, or "" when there is
// nothing to fold.
func (j *Journal) rotate(now time.Time) (string, error) {
	if j.dir == "" {
		return "", nil
	}
	f, err := os.OpenFile(j.Path(), os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	if err := flock(f, true); err != nil {
		return "", err
	}
	defer funlock(f)
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 || !sameFile(f, j.Path()) {
		return "", err
	}
	id := foldStamp(now) + "-" + objects.NewID()[:8]
	dst := filepath.Join(j.dir, foldingPrefix+id)
	if err := os.Rename(j.Path(), dst); err != nil {
		return "", err
	}
	return dst, nil
}

// foldStamp writes t as 20060102T150405 plus nine digits of nanoseconds
// and Z: sortable, and free of the dots segment names are split on.
func foldStamp(t time.Time) string {
	t = t.UTC()
	return fmt.Sprintf("%s%09dZ", t.Format("20060102T150405"), t.Nanosecond())
}

// parseFoldStamp reads foldStamp's format.
func parseFoldStamp(s string) (time.Time, bool) {
	if len(s) != 25 || s[24] != 'Z' {
		return time.Time{}, false
	}
	t, err := time.Parse("20060102T150405", s[:15])
	if err != nil {
		return time.Time{}, false
	}
	ns, err := strconv.Atoi(s[15:24])
	if err != nil {
		return time.Time{}, false
	}
	return t.Add(time.Duration(ns)), true
}

// foldID is the id of a folding file: it names the segments it becomes,
// so a fold interrupted after its commit is recognised and not repeated.
func foldID(path string) string { return strings.TrimPrefix(filepath.Base(path), foldingPrefix) }

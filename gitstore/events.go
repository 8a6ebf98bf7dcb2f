package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/agent"
	"github.com/git-hegel/git-hegel/engine/text"
)

// Folded agent events live in the task's tree, one blob per fold and run:
//
//	events/<run>/<seq>.<node>.<last>.<fold id>.jsonl
//
// <run> is the run's workflow_id without punctuation (a reused task name
// keeps runs apart), <seq> counts the run's segments from 000001, <node> is
// the node the task was at when the events were folded (they happened in
// it), <last> is the time of the segment's newest event (so reads for a
// recent window skip older segments unread), and <fold id> names the
// journal file they came from, so a fold that crashed after its commit is
// recognised and not applied twice. The blob holds the journal's lines as
// they were written.
const eventsDir = "events"

// Events is the agent.EventStore of one worktree: its journal, and the
// task refs the journal is folded into.
type Events struct {
	r *Repo
	j *Journal
}

var _ agent.EventStore = (*Events)(nil)

// Events returns this worktree's event store.
func (r *Repo) Events() *Events { return &Events{r: r, j: r.Journal()} }

// Record implements agent.EventStore.
func (s *Events) Record(evs ...agent.Event) error { return s.j.Append(evs...) }

// Fold implements agent.EventStore: first any fold a crash left behind,
// then the journal itself.
func (s *Events) Fold() error {
	files, err := s.j.foldingFiles()
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	rotated, err := s.j.rotate(s.r.Now())
	if err != nil {
		return fmt.Errorf("cannot rotate %s: %s", s.j.Path(), oneLine(err.Error()))
	}
	if rotated != "" {
		files = append(files, rotated)
	}
	for _, f := range files {
		if err := s.foldFile(f); err != nil {
			return err
		}
	}
	return nil
}

// foldFile commits one folding file's events to their tasks, then
// removes it.
func (s *Events) foldFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	id := foldID(path)
	byTask := map[string][]byte{}
	counts := map[string]int{}
	last := map[string]time.Time{}
	var tasks []string
	for _, line := range splitLines(data) {
		task, at, ok := peekEvent(line)
		if !ok || !engine.ValidTaskName(task) {
			continue // not attributable: dropped
		}
		if _, seen := byTask[task]; !seen {
			tasks = append(tasks, task)
		}
		byTask[task] = append(append(byTask[task], line...), '\n')
		counts[task]++
		if at.After(last[task]) {
			last[task] = at
		}
	}
	slices.Sort(tasks)
	for _, task := range tasks {
		if err := s.foldInto(task, id, last[task], byTask[task], counts[task]); err != nil {
			return err
		}
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// foldInto adds one segment to task's current run, with compare-and-swap.
func (s *Events) foldInto(task, id string, last time.Time, blob []byte, n int) error {
	ref := TaskRef(task)
	for attempt := 0; attempt < 50; attempt++ {
		h, err := s.r.refs.Read(ref)
		if errors.Is(err, ErrNotFound) {
			return nil // the task is gone; its events have nowhere to go
		}
		if err != nil {
			return err
		}
		d, err := s.r.readTaskDoc(ref, h)
		if err != nil {
			return err
		}
		t, err := decodeTask(ref, d)
		if err != nil {
			return err
		}
		keep, err := s.r.taskExtras(h)
		if err != nil {
			return err
		}
		run, node := engine.RunKey(t.State), t.State.CurrentNode
		runEnts, err := s.runEntries(keep, run)
		if err != nil {
			return fmt.Errorf("%s: %v", ref, err)
		}
		for _, e := range runEnts {
			if strings.Contains(e.name, "."+id+".") {
				return nil // folded before a crash; only the file was left
			}
		}
		segs := map[string]plumbing.Hash{}
		for i, chunk := range chunkLines(blob, maxSegment) {
			bh, err := s.r.writeBlob(chunk)
			if err != nil {
				return err
			}
			segs[fmt.Sprintf("%06d.%s.%s.%s.jsonl", len(runEnts)+1+i, node, foldStamp(last), id)] = bh
		}
		newKeep, err := s.withSegments(keep, run, runEnts, segs)
		if err != nil {
			return err
		}
		_, _, err = s.r.writeTaskTree(ref, h, d.Files, newKeep, fmt.Sprintf("events: %s from %s", text.Plural(n, "event", "events"), node))
		if errors.Is(err, ErrConflict) {
			continue
		}
		if err != nil {
			return describeRefError(ref, err)
		}
		return nil
	}
	return fmt.Errorf("%s kept changing while its events were folded; they stay in the journal", ref)
}

// runEntries lists the segments of run in the task's events/ tree.
func (s *Events) runEntries(keep map[string]leaf, run string) ([]rawEntry, error) {
	ev, ok := keep[eventsDir]
	if !ok {
		return nil, nil
	}
	if ev.mode != filemode.Dir {
		return nil, errors.New("events is not a directory")
	}
	runs, err := readTree(s.r.storage, ev.hash)
	if err != nil {
		return nil, err
	}
	for _, e := range runs {
		if e.name == run && e.isDir() {
			return readTree(s.r.storage, e.hash)
		}
	}
	return nil, nil
}

// maxSegment bounds a segment blob, well under the 4 MiB a fetch accepts
// by default (hegel.syncMaxBlobSize): a long session folds into several.
const maxSegment = 1 << 20

// chunkLines splits data at line ends into pieces of at most max bytes
// (a single longer line is a piece of its own).
func chunkLines(data []byte, max int) [][]byte {
	var out [][]byte
	for len(data) > max {
		cut := bytes.LastIndexByte(data[:max], '\n')
		if cut < 0 {
			if cut = bytes.IndexByte(data, '\n'); cut < 0 {
				break
			}
		}
		out = append(out, data[:cut+1])
		data = data[cut+1:]
	}
	if len(data) > 0 {
		out = append(out, data)
	}
	return out
}

// withSegments returns keep with events/<run>/<name> added for each of segs.
func (s *Events) withSegments(keep map[string]leaf, run string, runEnts []rawEntry, segs map[string]plumbing.Hash) (map[string]leaf, error) {
	runLeaves := map[string]leaf{}
	for name, h := range segs {
		runLeaves[name] = leaf{mode: filemode.Regular, hash: h}
	}
	for _, e := range runEnts {
		runLeaves[e.name] = leaf{mode: e.fm, hash: e.hash}
	}
	runTree, err := s.r.writeTreeOf(runLeaves)
	if err != nil {
		return nil, err
	}
	evLeaves := map[string]leaf{run: {mode: filemode.Dir, hash: runTree}}
	if ev, ok := keep[eventsDir]; ok {
		others, err := readTree(s.r.storage, ev.hash)
		if err != nil {
			return nil, err
		}
		for _, e := range others {
			if e.name != run {
				evLeaves[e.name] = leaf{mode: e.fm, hash: e.hash}
			}
		}
	}
	evTree, err := s.r.writeTreeOf(evLeaves)
	if err != nil {
		return nil, err
	}
	out := make(map[string]leaf, len(keep)+1)
	for k, v := range keep {
		out[k] = v
	}
	out[eventsDir] = leaf{mode: filemode.Dir, hash: evTree}
	return out, nil
}

// Events implements agent.EventStore.
func (s *Events) Events(task, run string, since time.Time) ([]agent.Event, error) {
	out, err := s.Folded(task, run, since)
	if err != nil {
		return nil, err
	}
	pending, err := s.j.Pending()
	if err != nil {
		return nil, err
	}
	for _, ev := range pending {
		if ev.Task == task && !ev.Time.Before(since) {
			out = append(out, ev)
		}
	}
	slices.SortStableFunc(out, func(a, b agent.Event) int { return a.Time.Compare(b.Time) })
	return out, nil
}

// Folded returns task's events of run stored on its ref from since on,
// oldest first, each with the node it happened in. Segments folded before
// since are not read.
func (s *Events) Folded(task, run string, since time.Time) ([]agent.Event, error) {
	ref := TaskRef(task)
	h, err := s.r.refs.Read(ref)
	if errors.Is(err, ErrNotFound) {
		// A finished task keeps its events in the archive (archive.go).
		ref = ArchiveRef(task)
		h, err = s.r.refs.Read(ref)
	}
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	keep, err := s.r.taskExtras(h)
	if err != nil {
		return nil, err
	}
	ents, err := s.runEntries(keep, run)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", ref, err)
	}
	var out []agent.Event
	for _, e := range ents {
		node, newest, ok := parseSegmentName(e.name)
		if !ok || e.fm != filemode.Regular || newest.Before(since) {
			continue
		}
		b, err := s.r.readBlob(e.hash)
		if err != nil {
			return nil, fmt.Errorf("%s: cannot read events/%s/%s: %s", ref, run, e.name, oneLine(err.Error()))
		}
		for _, ev := range readEvents(b) {
			if ev.Time.Before(since) {
				continue
			}
			if ev.Node == "" {
				ev.Node = node
			}
			out = append(out, ev)
		}
	}
	return out, nil
}

// parseSegmentName reads <seq>.<node>.<last>.<fold id>.jsonl, returning
// the node and the time of the newest event.
func parseSegmentName(name string) (node string, newest time.Time, ok bool) {
	parts := strings.Split(strings.TrimSuffix(name, ".jsonl"), ".")
	if len(parts) != 4 || !strings.HasSuffix(name, ".jsonl") {
		return "", time.Time{}, false
	}
	if _, err := strconv.Atoi(parts[0]); err != nil {
		return "", time.Time{}, false
	}
	t, ok := parseFoldStamp(parts[2])
	if !ok {
		return "", time.Time{}, false
	}
	return parts[1], t, true
}

// peekEvent reads the task and time of a journal line without decoding
// all of it: folding 10,000 events must stay well under 200 ms, and a full
// decode of each line was most of that. Lines git-hegel did not write in
// its usual field order are decoded in full.
func peekEvent(line []byte) (string, time.Time, bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' || line[len(line)-1] != '}' {
		return "", time.Time{}, false
	}
	if bytes.HasPrefix(line, []byte(`{"time":"`)) && bytes.Contains(line, []byte(`,"kind":"`)) {
		rest := line[len(`{"time":"`):]
		if i := bytes.IndexByte(rest, '"'); i > 0 {
			if at, err := time.Parse(time.RFC3339Nano, string(rest[:i])); err == nil {
				if j := bytes.Index(line, []byte(`,"task":"`)); j > 0 {
					t := line[j+len(`,"task":"`):]
					if k := bytes.IndexByte(t, '"'); k > 0 {
						return string(t[:k]), at, true
					}
				}
			}
		}
	}
	ev, ok := decodeEvent(line)
	return ev.Task, ev.Time, ok
}

func splitLines(data []byte) [][]byte {
	var out [][]byte
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			out = append(out, data)
			break
		}
		if i > 0 {
			out = append(out, data[:i])
		}
		data = data[i+1:]
	}
	return out
}

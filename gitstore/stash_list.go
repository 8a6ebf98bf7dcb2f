package gitstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/workflow"
	"github.com/git-hegel/git-hegel/gitstore/objects"
)

// ListStashes implements engine.StashStore. It returns summaries: State
// holds only Task, Workflow, Mode, CurrentNode and Status. They come from
// the summary cache when it has them, else from the blobs, read
// concurrently and only as far as the summary fields.
func (s Stashes) ListStashes() ([]*engine.Stash, error) {
	t, err := s.load()
	if err != nil {
		return nil, err
	}
	n := len(t.entries)
	cache := s.readSummaryCache()
	sums := make([]*stashSummary, n)
	var misses []int
	for i, e := range t.entries {
		if sm, ok := cache[e.Hash]; ok {
			sums[i] = sm
		} else {
			misses = append(misses, i)
		}
	}
	cacheable := make([]bool, n)
	for i := range cacheable {
		cacheable[i] = sums[i] != nil
	}
	workers := min(len(misses), 2*runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	var next atomic.Int64
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var rd summaryReader
			for k := int(next.Add(1) - 1); k < len(misses); k = int(next.Add(1) - 1) {
				i := misses[k]
				sums[i], cacheable[i] = s.summarize(t.entries[i], &rd)
			}
		}()
	}
	wg.Wait()
	if len(misses) > 0 || len(cache) != n-len(misses) {
		s.writeSummaryCache(t.entries, sums, cacheable)
	}
	out := make([]*engine.Stash, n)
	for i, e := range t.entries {
		out[n-1-i] = sums[i].stash(e)
	}
	return out, nil
}

// readEntry decodes one entry: in full (the whole blob parsed and
// checked), or as a summary (see ListStashes). Problems are reported in
// Damaged, never as an error: one bad entry must not hide the others.
func (s Stashes) readEntry(e object.TreeEntry, full bool) *engine.Stash {
	if !full {
		sm, _ := s.summarize(e, &summaryReader{})
		return sm.stash(e)
	}
	st := &engine.Stash{ID: stashID(e.Name), Rev: e.Hash.String()}
	if reason := badEntry(e); reason != "" {
		st.Damaged = reason
		return st
	}
	data, err := s.r.readBlob(e.Hash)
	var b *stashBlob
	if err == nil {
		b, err = decodeStashBlob(data)
	}
	if err != nil {
		st.Damaged = oneLine(err.Error())
		return st
	}
	st.Message, st.Timestamp, st.Task, st.Worktree, st.State = b.Message, b.Timestamp, b.Task, b.Worktree, b.WorkflowState
	st.Definition = []byte(b.Workflow)
	st.Files = b.Files
	return st
}

// badEntry says why a tree entry cannot be a stash, or "".
func badEntry(e object.TreeEntry) string {
	if !strings.HasSuffix(e.Name, stashBlobSuffix) || !engine.ValidStashID(stashID(e.Name)) || e.Mode != filemode.Regular {
		return "not a stash entry (unexpected name or mode)"
	}
	return ""
}

// stashSummary is what a listing shows of a stash. It depends only on the
// blob's content, so it can be cached by blob id.
type stashSummary struct {
	damaged                      string
	message                      string
	timestamp                    time.Time
	task, worktree               string
	workflow, mode, node, status string
	metaMode                     string
	files                        int // files parked; 0: none
}

// summarize reads the summary of entry e. cacheable is false when the
// result depends on more than the blob's content (the blob could not be
// read at all).
func (s Stashes) summarize(e object.TreeEntry, rd *summaryReader) (sm *stashSummary, cacheable bool) {
	if reason := badEntry(e); reason != "" {
		return &stashSummary{damaged: reason}, false
	}
	b, err := rd.read(s.r, e.Hash)
	if err != nil {
		var de *damageError
		return &stashSummary{damaged: oneLine(err.Error())}, errors.As(err, &de)
	}
	st := b.WorkflowState
	sm = &stashSummary{
		message: b.Message, timestamp: b.Timestamp, task: b.Task, worktree: b.Worktree,
		workflow: st.Workflow, mode: st.Mode, node: st.CurrentNode, status: st.Status,
		metaMode: st.MetaMode,
	}
	if b.Files != nil {
		sm.files = max(b.Files.Count, 1)
	}
	return sm, true
}

func (sm *stashSummary) stash(e object.TreeEntry) *engine.Stash {
	st := &engine.Stash{ID: stashID(e.Name), Rev: e.Hash.String(), Damaged: sm.damaged}
	if sm.damaged != "" {
		return st
	}
	st.Message, st.Timestamp, st.Task, st.Worktree = sm.message, sm.timestamp, sm.task, sm.worktree
	st.State = &engine.State{Task: sm.task, Workflow: sm.workflow, Mode: sm.mode, CurrentNode: sm.node, Status: sm.status, MetaMode: sm.metaMode}
	if sm.files > 0 {
		st.Files = &engine.StashFiles{Count: sm.files}
	}
	return st
}

// damageError is a problem in a blob's content (as opposed to reading it).
type damageError struct{ msg string }

func (e *damageError) Error() string { return e.msg }

func damaged(format string, a ...any) error { return &damageError{fmt.Sprintf(format, a...)} }

// The summary cache: <common git dir>/hegel/stash-summaries holds the
// summary of each live stash, keyed by blob id. A blob never changes, so
// an entry can never be stale; the file is derived data that any listing
// rebuilds when it is missing, damaged or incomplete, and deleting it
// loses nothing. It turns listing 10,000 stashes from 10,000 object
// reads into one file read.
const (
	summaryCacheFile   = "hegel/stash-summaries"
	summaryCacheHeader = "git-hegel stash summaries 3"
	summaryCacheFields = 12
)

func (s Stashes) summaryCachePath() string {
	if s.r.CommonDir == "" {
		return "" // in-memory repository: nothing to cache in
	}
	return filepath.Join(s.r.CommonDir, filepath.FromSlash(summaryCacheFile))
}

// readSummaryCache returns the cached summaries; any problem with the file
// means an empty cache.
func (s Stashes) readSummaryCache() map[plumbing.Hash]*stashSummary {
	p := s.summaryCachePath()
	if p == "" {
		return nil
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	head, rest, ok := strings.Cut(string(data), "\n")
	if !ok || head != summaryCacheHeader {
		return nil
	}
	out := make(map[plumbing.Hash]*stashSummary, strings.Count(rest, "\n"))
	var f [summaryCacheFields]string
	for line := range strings.Lines(rest) {
		line = strings.TrimSuffix(line, "\n")
		k := 0
		for ; k < summaryCacheFields-1; k++ {
			var ok bool
			if f[k], line, ok = strings.Cut(line, "\t"); !ok {
				break
			}
		}
		if k != summaryCacheFields-1 {
			return nil
		}
		f[k] = line
		h, ok := objects.ParseHex(f[0])
		if !ok {
			return nil
		}
		sm := &stashSummary{}
		ts, err := time.Parse(time.RFC3339Nano, f[1])
		if err != nil {
			return nil
		}
		sm.timestamp = ts
		for i, dst := range []*string{&sm.message, &sm.task, &sm.worktree, &sm.workflow, &sm.mode, &sm.node, &sm.status, &sm.damaged, &sm.metaMode} {
			if *dst, err = strconv.Unquote(f[2+i]); err != nil {
				return nil
			}
		}
		if sm.files, err = strconv.Atoi(f[11]); err != nil {
			return nil
		}
		out[h] = sm
	}
	return out
}

// writeSummaryCache replaces the cache with the cacheable summaries of
// entries. Failing to write it is not an error: it is only a cache.
func (s Stashes) writeSummaryCache(entries []object.TreeEntry, sums []*stashSummary, cacheable []bool) {
	p := s.summaryCachePath()
	if p == "" {
		return
	}
	var buf bytes.Buffer
	buf.Grow(200 * len(entries))
	buf.WriteString(summaryCacheHeader + "\n")
	for i, e := range entries {
		if !cacheable[i] {
			continue
		}
		sm := sums[i]
		buf.WriteString(e.Hash.String())
		buf.WriteByte('\t')
		buf.WriteString(sm.timestamp.UTC().Format(time.RFC3339Nano))
		for _, v := range []string{sm.message, sm.task, sm.worktree, sm.workflow, sm.mode, sm.node, sm.status, sm.damaged, sm.metaMode} {
			buf.WriteByte('\t')
			buf.WriteString(strconv.Quote(v))
		}
		buf.WriteByte('\t')
		buf.WriteString(strconv.Itoa(sm.files))
		buf.WriteByte('\n')
	}
	_ = s.r.writeCommon(summaryCacheFile, buf.Bytes(), false)
}

// decodeStashBlob parses and checks a whole blob.
func decodeStashBlob(data []byte) (*stashBlob, error) {
	var b stashBlob
	if err := json.Unmarshal(data, &b); err != nil {
		var probe struct {
			Version json.RawMessage `json:"version"`
		}
		if json.Unmarshal(data, &probe) == nil && string(probe.Version) != strconv.Itoa(stashBlobVersion) && len(probe.Version) > 0 {
			return nil, unknownStashVersion(string(probe.Version))
		}
		return nil, damaged("invalid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if err := checkStashBlob(&b); err != nil {
		return nil, err
	}
	if strings.TrimSpace(b.Workflow) == "" {
		return nil, damaged("no workflow definition")
	}
	return &b, nil
}

// unknownStashVersionPrefix starts the damage of an entry of an unknown
// version, which doctor --fix leaves to the git-hegel that wrote it.
const unknownStashVersionPrefix = "unknown version "

func unknownStashVersion(v string) error {
	return damaged(unknownStashVersionPrefix+"%s (this git-hegel understands %d; upgrade it)", v, stashBlobVersion)
}

func checkStashBlob(b *stashBlob) error {
	switch {
	case b.Version != stashBlobVersion:
		return unknownStashVersion(strconv.Itoa(b.Version))
	case b.WorkflowState == nil:
		return damaged("no workflow_state")
	case !engine.ValidTaskName(b.Task):
		return damaged("invalid task name %q", b.Task)
	case b.WorkflowState.Mode == "" || b.WorkflowState.CurrentNode == "":
		return damaged("workflow_state has no mode or current_node")
	case b.WorkflowState.MetaMode != "" && !workflow.ValidMetaModeName(b.WorkflowState.MetaMode):
		// As a task state with one is refused: a stash from another clone
		// must not carry free text where a name is listed.
		return damaged("invalid meta_mode %q", b.WorkflowState.MetaMode)
	}
	return nil
}

// summaryFields is how many fields decodeSummary needs before it stops:
// version, message, timestamp, task, worktree and workflow_state.
const summaryFields = 6

// summaryReader reads the summary of stash blobs, reusing its buffers
// and inflater from one blob to the next. One per goroutine.
type summaryReader struct {
	rd *objects.ObjectReader
}

// read reads a blob only as far as its summary fields: stashes are
// written as loose objects, which are inflated only that far.
func (sr *summaryReader) read(r *Repo, h plumbing.Hash) (*stashBlob, error) {
	if sr.rd == nil {
		sr.rd = r.objects.NewReader()
	}
	rd, err := sr.rd.Open(plumbing.BlobObject, h)
	if err != nil {
		return nil, fmt.Errorf("cannot read blob %s: %s", h, oneLine(err.Error()))
	}
	return decodeSummary(rd)
}

// decodeSummary reads the summary fields of a stash blob from rd, stopping
// as soon as it has them all; the checks are those of a full read, except
// that damage after the summary fields goes unnoticed until the entry is
// read in full (pop, apply, show).
func decodeSummary(rd io.Reader) (*stashBlob, error) {
	dec := json.NewDecoder(rd)
	invalid := func(err error) error {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		var pe *time.ParseError
		if errors.As(err, &se) || errors.As(err, &te) || errors.As(err, &pe) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return damaged("invalid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
		}
		return fmt.Errorf("cannot read blob: %s", oneLine(err.Error())) // the object, not its content
	}
	if tok, err := dec.Token(); err != nil {
		return nil, invalid(err)
	} else if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, damaged("invalid JSON: not an object")
	}
	var b stashBlob
	seen := 0
	for seen < summaryFields && dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, invalid(err)
		}
		var dst any
		summary := true
		switch tok {
		case "version":
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return nil, invalid(err)
			}
			if string(v) != strconv.Itoa(stashBlobVersion) {
				return nil, unknownStashVersion(string(v))
			}
			b.Version = stashBlobVersion
			seen++
			continue
		case "message":
			dst = &b.Message
		case "timestamp":
			dst = &b.Timestamp
		case "task":
			dst = &b.Task
		case "worktree":
			dst = &b.Worktree
		case "files":
			// optional, before workflow_state: read, not counted
			if err := dec.Decode(&b.Files); err != nil {
				return nil, invalid(err)
			}
			continue
		case "workflow_state":
			dst = &b.WorkflowState
		default:
			var skip json.RawMessage
			dst, summary = &skip, false
		}
		if err := dec.Decode(dst); err != nil {
			return nil, invalid(err)
		}
		if summary {
			seen++
		}
	}
	if b.Version == 0 {
		return nil, damaged("no version")
	}
	if err := checkStashBlob(&b); err != nil {
		return nil, err
	}
	return &b, nil
}

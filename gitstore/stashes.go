package gitstore

import (
	"bytes"
	"compress/zlib"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/git-hegel/git-hegel/engine"
)

// The stash list: one commit chain on StashRef whose tree is
//
//	version               "1\n", as on every git-hegel ref
//	entries/<id>.json     one blob per live stash (no entries/ when empty)
//
// Each commit is one operation; its subject is "stash <op>: <detail>".
// Entries are written once and never rewritten: push adds a name, pop and
// drop remove one, restore adds an old blob back under its old name. So
// push, pop and drop read and write only the entries/ tree (names and
// hashes) and the one blob concerned, whatever the number of stashes.
const (
	StashRef         = plumbing.ReferenceName("refs/hegel/stashes")
	stashEntriesDir  = "entries"
	stashBlobSuffix  = ".json"
	stashBlobVersion = 1
	stashAttempts    = 200
)

// Stashes is the git-backed engine.StashStore.
type Stashes struct{ r *Repo }

var _ engine.StashStore = Stashes{}

// Stashes returns the repository's stash store.
func (r *Repo) Stashes() Stashes { return Stashes{r} }

// stashBlob is the stored form of one stash. Field order matters for speed,
// not meaning: the small fields come first and the definition last, so
// listing can stop reading a blob once it has what it shows.
type stashBlob struct {
	Version       int           `json:"version"`
	Message       string        `json:"message"`
	Timestamp     time.Time     `json:"timestamp"`
	Task          string        `json:"task"`
	Worktree      string        `json:"worktree"`
	WorkflowState *engine.State `json:"workflow_state"`
	Workflow      string        `json:"workflow"` // the definition's YAML text
}

// stashTip is the stash list as one commit holds it.
type stashTip struct {
	commit  plumbing.Hash // zero: the ref does not exist yet
	tree    plumbing.Hash
	rest    []object.TreeEntry // root entries besides entries/ (version, and any a newer build added)
	entries []object.TreeEntry // entries/, in git order: oldest id first
}

// load reads the tip of the stash list without reading any entry blob.
func (s Stashes) load() (*stashTip, error) {
	h, err := s.r.refs.Read(StashRef)
	if errors.Is(err, ErrNotFound) {
		return &stashTip{}, nil
	}
	if err != nil {
		return nil, err
	}
	return s.loadAt(h)
}

func (s Stashes) loadAt(h plumbing.Hash) (*stashTip, error) {
	c, err := object.GetCommit(s.r.storage, h)
	if err != nil {
		return nil, fmt.Errorf("%s points at %s, which is not a readable commit: %s", StashRef, h, oneLine(err.Error()))
	}
	root, err := object.GetTree(s.r.storage, c.TreeHash)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read tree %s: %s", StashRef, c.TreeHash, oneLine(err.Error()))
	}
	t := &stashTip{commit: h, tree: c.TreeHash}
	version := false
	for _, e := range root.Entries {
		switch e.Name {
		case stashEntriesDir:
			if e.Mode != filemode.Dir {
				return nil, fmt.Errorf("%s: %s is not a directory", StashRef, stashEntriesDir)
			}
			sub, err := object.GetTree(s.r.storage, e.Hash)
			if err != nil {
				return nil, fmt.Errorf("%s: cannot read %s/: %s", StashRef, stashEntriesDir, oneLine(err.Error()))
			}
			t.entries = append([]object.TreeEntry(nil), sub.Entries...)
			continue
		case versionFile:
			b, err := s.r.readBlob(e.Hash)
			if err != nil {
				return nil, fmt.Errorf("%s: cannot read %s: %s", StashRef, versionFile, oneLine(err.Error()))
			}
			if got := strings.TrimSpace(string(b)); got != FormatVersion {
				return nil, fmt.Errorf("%s: %w %q (this git-hegel understands %q; upgrade it)", StashRef, ErrUnknownVersion, got, FormatVersion)
			}
			version = true
		}
		t.rest = append(t.rest, e)
	}
	if !version {
		return nil, fmt.Errorf("%s: %w: no version blob", StashRef, ErrUnknownVersion)
	}
	return t, nil
}

func stashName(id string) string { return id + stashBlobSuffix }

func stashID(name string) string { return strings.TrimSuffix(name, stashBlobSuffix) }

// find returns the position of id among the entries, or -1.
func (t *stashTip) find(id string) int {
	name := stashName(id)
	i := sort.Search(len(t.entries), func(i int) bool { return t.entries[i].Name >= name })
	if i < len(t.entries) && t.entries[i].Name == name {
		return i
	}
	return -1
}

// newest returns the newest well-formed id, or "".
func (t *stashTip) newest() string {
	for i := len(t.entries) - 1; i >= 0; i-- {
		if id := stashID(t.entries[i].Name); engine.ValidStashID(id) {
			return id
		}
	}
	return ""
}

// without returns the entries minus position i, in a new slice.
func (t *stashTip) without(i int) []object.TreeEntry {
	out := make([]object.TreeEntry, 0, len(t.entries)-1)
	out = append(out, t.entries[:i]...)
	return append(out, t.entries[i+1:]...)
}

// with returns the entries plus a blob named id, in a new slice.
func (t *stashTip) with(id string, blob plumbing.Hash) []object.TreeEntry {
	e := object.TreeEntry{Name: stashName(id), Mode: filemode.Regular, Hash: blob}
	i := sort.Search(len(t.entries), func(i int) bool { return t.entries[i].Name >= e.Name })
	out := make([]object.TreeEntry, 0, len(t.entries)+1)
	out = append(out, t.entries[:i]...)
	out = append(out, e)
	return append(out, t.entries[i:]...)
}

// commit writes entries as the new stash list on top of t, with
// compare-and-swap on t's commit. An unchanged tree writes nothing.
func (s Stashes) commit(t *stashTip, entries []object.TreeEntry, subject string) error {
	root := append([]object.TreeEntry(nil), t.rest...)
	if t.commit.IsZero() {
		v, err := s.r.writeBlob([]byte(FormatVersion + "\n"))
		if err != nil {
			return err
		}
		root = append(root, object.TreeEntry{Name: versionFile, Mode: filemode.Regular, Hash: v})
	}
	if len(entries) > 0 {
		sortTreeEntries(entries) // already sorted unless a foreign entry is a directory
		h, err := s.r.storeTree(entries)
		if err != nil {
			return err
		}
		root = append(root, object.TreeEntry{Name: stashEntriesDir, Mode: filemode.Dir, Hash: h})
	}
	sortTreeEntries(root)
	tree, err := s.r.storeTree(root)
	if err != nil {
		return err
	}
	if tree == t.tree {
		return nil
	}
	var parents []plumbing.Hash
	if !t.commit.IsZero() {
		parents = append(parents, t.commit)
	}
	c, err := s.r.writeCommit(tree, parents, subject)
	if err != nil {
		return err
	}
	return s.r.refs.Update(StashRef, t.commit, c)
}

func (r *Repo) storeTree(entries []object.TreeEntry) (plumbing.Hash, error) {
	o := r.storage.NewEncodedObject()
	if err := (&object.Tree{Entries: entries}).Encode(o); err != nil {
		return plumbing.ZeroHash, err
	}
	return r.storage.SetEncodedObject(o)
}

// update applies fn to the current stash list and commits the result,
// reloading and reapplying fn whenever another process committed first.
func (s Stashes) update(fn func(t *stashTip) ([]object.TreeEntry, string, error)) error {
	for i := 0; i < stashAttempts; i++ {
		t, err := s.load()
		if err != nil {
			return err
		}
		entries, subject, err := fn(t)
		if err != nil {
			return err
		}
		err = s.commit(t, entries, subject)
		if err == nil {
			return nil
		}
		if !errors.Is(err, ErrConflict) {
			return describeRefError(StashRef, err)
		}
		// Jittered exponential backoff (1ms doubling to 64ms) so that
		// many writers spread out instead of colliding again.
		time.Sleep(time.Duration(rand.Int64N(int64(time.Millisecond) << min(i, 6))))
	}
	return fmt.Errorf("%s kept changing while this command ran; try again", StashRef)
}

func stashSubject(op engine.StashOp, detail string) string {
	return "stash " + string(op) + ": " + oneLine(detail)
}

// PushStash implements engine.StashStore.
func (s Stashes) PushStash(st *engine.Stash, detail string) error {
	if !utf8.Valid(st.Definition) {
		return errors.New("cannot stash: the workflow definition is not valid UTF-8")
	}
	b, err := encodeJSON(stashBlob{
		Version:       stashBlobVersion,
		Message:       st.Message,
		Timestamp:     st.Timestamp,
		Task:          st.Task,
		Worktree:      st.Worktree,
		WorkflowState: st.State,
		Workflow:      string(st.Definition),
	})
	if err != nil {
		return err
	}
	blob, err := s.r.writeBlob(b)
	if err != nil {
		return err
	}
	err = s.update(func(t *stashTip) ([]object.TreeEntry, string, error) {
		st.ID = engine.NextStashID(st.Timestamp, t.newest())
		return t.with(st.ID, blob), stashSubject(engine.StashOpPush, detail), nil
	})
	if err != nil {
		return err
	}
	st.Rev = blob.String()
	return nil
}

// RemoveStash implements engine.StashStore.
func (s Stashes) RemoveStash(id string, op engine.StashOp, detail string) error {
	return s.update(func(t *stashTip) ([]object.TreeEntry, string, error) {
		i := t.find(id)
		if i < 0 {
			return nil, "", fmt.Errorf("stash %s: %w", id, ErrNotFound)
		}
		return t.without(i), stashSubject(op, detail), nil
	})
}

// ClearStashes implements engine.StashStore.
func (s Stashes) ClearStashes(ids []string) (int, error) {
	drop := make(map[string]bool, len(ids))
	for _, id := range ids {
		drop[stashName(id)] = true
	}
	n := 0
	err := s.update(func(t *stashTip) ([]object.TreeEntry, string, error) {
		keep := make([]object.TreeEntry, 0, len(t.entries))
		for _, e := range t.entries {
			if !drop[e.Name] {
				keep = append(keep, e)
			}
		}
		n = len(t.entries) - len(keep)
		return keep, stashSubject(engine.StashOpClear, plural(n, "stash", "stashes")), nil
	})
	return n, err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// RestoreStash implements engine.StashStore.
func (s Stashes) RestoreStash(d *engine.DroppedStash, detail string) error {
	if !plumbing.IsHash(d.Rev) {
		return fmt.Errorf("cannot restore stash %s: no blob recorded for it", d.ID)
	}
	blob := plumbing.NewHash(d.Rev)
	return s.update(func(t *stashTip) ([]object.TreeEntry, string, error) {
		if t.find(d.ID) >= 0 {
			return nil, "", fmt.Errorf("stash %s: %w", d.ID, engine.ErrExists)
		}
		return t.with(d.ID, blob), stashSubject(engine.StashOpRestore, detail), nil
	})
}

// StashIDs implements engine.StashStore.
func (s Stashes) StashIDs() ([]string, error) {
	t, err := s.load()
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(t.entries))
	for i, e := range t.entries {
		ids[len(ids)-1-i] = stashID(e.Name)
	}
	return ids, nil
}

// LoadStash implements engine.StashStore: it reads and checks the whole
// blob.
func (s Stashes) LoadStash(id string) (*engine.Stash, error) {
	t, err := s.load()
	if err != nil {
		return nil, err
	}
	i := t.find(id)
	if i < 0 {
		return nil, fmt.Errorf("stash %s: %w", id, ErrNotFound)
	}
	return s.readEntry(t.entries[i], true), nil
}

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
	return &stashSummary{
		message: b.Message, timestamp: b.Timestamp, task: b.Task, worktree: b.Worktree,
		workflow: st.Workflow, mode: st.Mode, node: st.CurrentNode, status: st.Status,
	}, true
}

func (sm *stashSummary) stash(e object.TreeEntry) *engine.Stash {
	st := &engine.Stash{ID: stashID(e.Name), Rev: e.Hash.String(), Damaged: sm.damaged}
	if sm.damaged != "" {
		return st
	}
	st.Message, st.Timestamp, st.Task, st.Worktree = sm.message, sm.timestamp, sm.task, sm.worktree
	st.State = &engine.State{Task: sm.task, Workflow: sm.workflow, Mode: sm.mode, CurrentNode: sm.node, Status: sm.status}
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
	summaryCacheHeader = "git-hegel stash summaries 1"
	summaryCacheFields = 10
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
		h, ok := parseHex(f[0])
		if !ok {
			return nil
		}
		sm := &stashSummary{}
		ts, err := time.Parse(time.RFC3339Nano, f[1])
		if err != nil {
			return nil
		}
		sm.timestamp = ts
		for i, dst := range []*string{&sm.message, &sm.task, &sm.worktree, &sm.workflow, &sm.mode, &sm.node, &sm.status, &sm.damaged} {
			if *dst, err = strconv.Unquote(f[2+i]); err != nil {
				return nil
			}
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
		for _, v := range []string{sm.message, sm.task, sm.worktree, sm.workflow, sm.mode, sm.node, sm.status, sm.damaged} {
			buf.WriteByte('\t')
			buf.WriteString(strconv.Quote(v))
		}
		buf.WriteByte('\n')
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), "stash-summaries.tmp-")
	if err != nil {
		return
	}
	_, err = tmp.Write(buf.Bytes())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
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

func unknownStashVersion(v string) error {
	return damaged("unknown version %s (this git-hegel understands %d; upgrade it)", v, stashBlobVersion)
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
	}
	return nil
}

// summaryFields is how many fields decodeSummary needs before it stops:
// version, message, timestamp, task, worktree and workflow_state.
const summaryFields = 6

// slowBlobRead serializes blob reads that go through go-git's storage.
var slowBlobRead sync.Mutex

// summaryReader reads the summary of stash blobs, reusing its buffers
// and inflater from one blob to the next. One per goroutine.
type summaryReader struct {
	buf []byte
	zr  io.ReadCloser
	br  bytes.Reader
}

// read reads a blob only as far as its summary fields, from the loose
// object file directly when there is one (the common case: stashes are
// written as loose objects), else through go-git.
func (sr *summaryReader) read(r *Repo, h plumbing.Hash) (*stashBlob, error) {
	if r.CommonDir != "" {
		hex := h.String()
		err := sr.readFile(filepath.Join(r.CommonDir, "objects", hex[:2], hex[2:]))
		if err == nil {
			return sr.decodeLoose()
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("cannot read blob %s: %s", hex, oneLine(err.Error()))
		}
	}
	slowBlobRead.Lock() // go-git's pack readers are not safe for concurrent use
	data, err := r.readBlob(h)
	slowBlobRead.Unlock()
	if err != nil {
		return nil, fmt.Errorf("cannot read blob %s: %s", h, oneLine(err.Error()))
	}
	return decodeSummary(bytes.NewReader(data))
}

// readFile reads the file at p into sr.buf.
func (sr *summaryReader) readFile(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	sr.buf = sr.buf[:0]
	for {
		if len(sr.buf) == cap(sr.buf) {
			sr.buf = append(sr.buf, 0)[:len(sr.buf)]
		}
		n, err := f.Read(sr.buf[len(sr.buf):cap(sr.buf)])
		sr.buf = sr.buf[:len(sr.buf)+n]
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// decodeLoose inflates the loose object in sr.buf ("blob <size>\x00<data>",
// zlib-compressed) only as far as decodeSummary reads.
func (sr *summaryReader) decodeLoose() (*stashBlob, error) {
	sr.br.Reset(sr.buf)
	var err error
	if sr.zr == nil {
		sr.zr, err = zlib.NewReader(&sr.br)
	} else {
		err = sr.zr.(zlib.Resetter).Reset(&sr.br, nil)
	}
	if err != nil {
		sr.zr = nil
		return nil, fmt.Errorf("cannot inflate blob: %s", oneLine(err.Error()))
	}
	var hdr [32]byte
	n := 0
	for {
		if n == len(hdr) {
			return nil, errors.New("not a blob object")
		}
		if _, err := io.ReadFull(sr.zr, hdr[n:n+1]); err != nil {
			return nil, fmt.Errorf("cannot inflate blob: %s", oneLine(err.Error()))
		}
		if hdr[n] == 0 {
			break
		}
		n++
	}
	if !bytes.HasPrefix(hdr[:n], []byte("blob ")) {
		return nil, errors.New("not a blob object")
	}
	return decodeSummary(sr.zr)
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

// DroppedStashes implements engine.StashStore. It walks the history back to
// since and diffs the entries of each drop and clear commit with its
// parent's; pops, pushes and merges are only walked through.
func (s Stashes) DroppedStashes(since time.Time) ([]*engine.DroppedStash, error) {
	tip, err := s.load()
	if err != nil || tip.commit.IsZero() {
		return nil, err
	}
	live := map[string]bool{}
	for _, e := range tip.entries {
		live[e.Name] = true
	}
	found := map[string]bool{}
	var out []*engine.DroppedStash
	seen := map[plumbing.Hash]bool{tip.commit: true}
	queue := []plumbing.Hash{tip.commit}
	for len(queue) > 0 {
		h := queue[0]
		queue = queue[1:]
		c, err := object.GetCommit(s.r.storage, h)
		if err != nil {
			return nil, fmt.Errorf("%s: cannot read commit %s: %s", StashRef, h, oneLine(err.Error()))
		}
		if c.Committer.When.Before(since) {
			continue // older than the window, and so is everything before it
		}
		for _, p := range c.ParentHashes {
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
		op := stashOpOf(c.Message)
		if len(c.ParentHashes) != 1 || (op != engine.StashOpDrop && op != engine.StashOpClear) {
			continue
		}
		cur, err := s.loadAt(h)
		if err != nil {
			return nil, err
		}
		parent, err := s.loadAt(c.ParentHashes[0])
		if err != nil {
			return nil, err
		}
		now := map[string]bool{}
		for _, e := range cur.entries {
			now[e.Name] = true
		}
		for _, e := range parent.entries {
			if now[e.Name] || live[e.Name] || found[e.Name] {
				continue
			}
			found[e.Name] = true
			d := &engine.DroppedStash{Stash: s.readEntry(e, false), DroppedAt: c.Committer.When, Op: op}
			out = append(out, d)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].DroppedAt.Equal(out[j].DroppedAt) {
			return out[i].DroppedAt.After(out[j].DroppedAt)
		}
		return out[i].ID > out[j].ID
	})
	return out, nil
}

// stashOpOf reads the operation back from a commit subject "stash <op>: …".
func stashOpOf(msg string) engine.StashOp {
	rest, ok := strings.CutPrefix(msg, "stash ")
	if !ok {
		return ""
	}
	op, _, ok := strings.Cut(rest, ":")
	if !ok {
		return ""
	}
	return engine.StashOp(op)
}

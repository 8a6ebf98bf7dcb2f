package gitstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-hegel/git-hegel/engine"
)

// The history (refs/hegel/history, docs/storage.md): one commit chain
// whose tree holds one blob per finished run, sharded by the UTC day the
// run started on, and the digests gc keeps of the runs it removed:
//
//	version
//	entries/<YYYY>/<MM>/<DD>/<id>.json
//	summaries/<YYYY>/<MM>/<DD>.json
//
// Adding an entry rewrites the four trees on its path and the root, never
// a blob: the cost does not grow with the history. A query reads the day
// trees of the days it asks for and nothing older.
const (
	historyEntriesDir   = "entries"
	historySummariesDir = "summaries"
	historyEntryExt     = ".json"
)

// History is the git-backed engine.HistoryStore. It remembers the trees it
// read, so one command never reads a tree twice.
type History struct {
	r     *Repo
	trees map[plumbing.Hash][]rawEntry
	// tipRead, tip and root: the ref as this store last read it.
	tipRead bool
	tip     plumbing.Hash
	root    plumbing.Hash
	// Damaged lists the entries that could not be read (skipped).
	Damaged []string
	// Verify makes HistoryDay read every entry from its object, never
	// from the cache of past days (doctor checks the objects themselves).
	Verify bool
}

var _ engine.HistoryStore = (*History)(nil)

// History returns the repository's history store.
func (r *Repo) History() *History {
	return &History{r: r, trees: map[plumbing.Hash][]rawEntry{}}
}

// summaryFile is the blob of summaries/<YYYY>/<MM>/<DD>.json.
type summaryFile struct {
	Version int             `json:"version"`
	Day     string          `json:"day"`
	Runs    []engine.Digest `json:"runs"`
}

// dayParts splits 2006-01-02 into its path components.
func dayParts(day string) ([]string, bool) {
	if _, err := time.Parse(engine.HistoryDayLayout, day); err != nil {
		return nil, false
	}
	return []string{day[0:4], day[5:7], day[8:10]}, true
}

// readTip reads the ref and its root tree (zero when there is no history).
func (h *History) readTip() (plumbing.Hash, plumbing.Hash, error) {
	if h.tipRead {
		return h.tip, h.root, nil
	}
	tip, err := readRefOrZero(h.r.refs, HistoryRef)
	if err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}
	root := plumbing.ZeroHash
	if !tip.IsZero() {
		n, err := newGraph(h.r.storage).node(tip)
		if err != nil {
			return plumbing.ZeroHash, plumbing.ZeroHash, h.damaged(fmt.Sprintf("%s points at %s, which is not a readable commit: %s", HistoryRef, tip, oneLine(err.Error())))
		}
		root = n.tree
		ents, err := h.tree(root)
		if err != nil {
			return plumbing.ZeroHash, plumbing.ZeroHash, h.damagedBy(err)
		}
		if err := checkVersion(h.r, ents); err != nil {
			return plumbing.ZeroHash, plumbing.ZeroHash, h.damagedBy(err)
		}
	}
	h.tip, h.root, h.tipRead = tip, root, true
	return tip, root, nil
}

func (h *History) damaged(msg string) error {
	return engine.Damaged(string(HistoryRef), "", msg)
}

// damagedBy reports the history as damaged by a failed read.
func (h *History) damagedBy(err error) error {
	return h.damaged(fmt.Sprintf("%s: %s", HistoryRef, oneLine(err.Error())))
}

// checkVersion refuses a tree whose version blob is missing or unknown.
func checkVersion(r *Repo, ents []rawEntry) error {
	for _, e := range ents {
		if e.name != versionFile {
			continue
		}
		b, err := r.readBlob(e.hash)
		if err != nil {
			return err
		}
		if got := strings.TrimSpace(string(b)); got != FormatVersion {
			return otherVersion("", got)
		}
		return nil
	}
	return fmt.Errorf("%w: no version blob", ErrUnknownVersion)
}

// tree reads a tree once per store.
func (h *History) tree(t plumbing.Hash) ([]rawEntry, error) {
	if t.IsZero() {
		return nil, nil
	}
	if ents, ok := h.trees[t]; ok {
		return ents, nil
	}
	ents, err := readTree(h.r.storage, t)
	if err != nil {
		return nil, err
	}
	h.trees[t] = ents
	return ents, nil
}

// find returns the entry name of tree t (ok false when absent).
func (h *History) find(t plumbing.Hash, name string) (rawEntry, bool, error) {
	ents, err := h.tree(t)
	if err != nil {
		return rawEntry{}, false, err
	}
	for _, e := range ents {
		if e.name == name {
			return e, true, nil
		}
	}
	return rawEntry{}, false, nil
}

// walk follows names down from the root: the tree (or blob) at the end,
// zero when any part is missing.
func (h *History) walk(root plumbing.Hash, names ...string) (rawEntry, bool, error) {
	cur := rawEntry{fm: filemode.Dir, hash: root}
	for _, n := range names {
		if cur.hash.IsZero() || !cur.isDir() {
			return rawEntry{}, false, nil
		}
		e, ok, err := h.find(cur.hash, n)
		if err != nil || !ok {
			return rawEntry{}, false, err
		}
		cur = e
	}
	return cur, !cur.hash.IsZero(), nil
}

// HistoryDays implements engine.HistoryStore.
func (h *History) HistoryDays() ([]string, error) {
	_, root, err := h.readTip()
	if err != nil || root.IsZero() {
		return nil, err
	}
	seen := map[string]bool{}
	for _, dir := range []string{historyEntriesDir, historySummariesDir} {
		top, ok, err := h.walk(root, dir)
		if err != nil {
			return nil, h.damagedBy(err)
		}
		if !ok || !top.isDir() {
			continue
		}
		years, err := h.tree(top.hash)
		if err != nil {
			return nil, h.damagedBy(err)
		}
		for _, y := range years {
			if !y.isDir() {
				continue
			}
			months, err := h.tree(y.hash)
			if err != nil {
				return nil, h.damagedBy(err)
			}
			for _, m := range months {
				if !m.isDir() {
					continue
				}
				days, err := h.tree(m.hash)
				if err != nil {
					return nil, h.damagedBy(err)
				}
				for _, d := range days {
					name := strings.TrimSuffix(d.name, historyEntryExt)
					if (dir == historyEntriesDir) != d.isDir() {
						continue
					}
					day := y.name + "-" + m.name + "-" + name
					if _, ok := dayParts(day); ok {
						seen[day] = true
					}
				}
			}
		}
	}
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out, nil
}

// dayTree is the tree of entries/<day> (zero when it has none).
func (h *History) dayTree(day string) (plumbing.Hash, error) {
	parts, ok := dayParts(day)
	if !ok {
		return plumbing.ZeroHash, fmt.Errorf("bad history day %q", day)
	}
	_, root, err := h.readTip()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	e, ok, err := h.walk(root, append([]string{historyEntriesDir}, parts...)...)
	if err != nil || !ok || !e.isDir() {
		return plumbing.ZeroHash, err
	}
	return e.hash, nil
}

// summaryBlob is the blob of summaries/<day>.json (zero when none).
func (h *History) summaryBlob(day string) (plumbing.Hash, error) {
	parts, ok := dayParts(day)
	if !ok {
		return plumbing.ZeroHash, fmt.Errorf("bad history day %q", day)
	}
	_, root, err := h.readTip()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	e, ok, err := h.walk(root, historySummariesDir, parts[0], parts[1], parts[2]+historyEntryExt)
	if err != nil || !ok || e.isDir() {
		return plumbing.ZeroHash, err
	}
	return e.hash, nil
}

// HistoryDay implements engine.HistoryStore. An entry that cannot be read
// is skipped and named in Damaged.
func (h *History) HistoryDay(day string) ([]*engine.HistoryEntry, error) {
	t, err := h.dayTree(day)
	if err != nil || t.IsZero() {
		return nil, err
	}
	// A past day's entries come from the cache while its tree is the
	// one they were read from (history_cache.go).
	past := !h.Verify && day < h.r.Now().UTC().Format(engine.HistoryDayLayout)
	if past {
		if out, ok := h.r.readEntryCache(day, t); ok {
			return out, nil
		}
	}
	ents, err := h.tree(t)
	if err != nil {
		return nil, h.damaged(fmt.Sprintf("%s: day %s: %s", HistoryRef, day, oneLine(err.Error())))
	}
	damaged := len(h.Damaged)
	out := make([]*engine.HistoryEntry, 0, len(ents))
	var raw [][]byte // the blobs as read, for the cache
	for _, e := range ents {
		en, b, err := h.readEntry(day, e)
		if err != nil {
			h.Damaged = append(h.Damaged, fmt.Sprintf("%s:%s/%s: %s", HistoryRef, entryDir(day), e.name, oneLine(err.Error())))
			continue
		}
		out = append(out, en)
		if past {
			raw = append(raw, b)
		}
	}
	if past && len(h.Damaged) == damaged {
		h.r.writeEntryCache(day, t, raw)
	}
	return out, nil
}

func entryDir(day string) string {
	p, _ := dayParts(day)
	return historyEntriesDir + "/" + strings.Join(p, "/")
}

// readEntry reads and checks one entry of day; it returns the blob too.
func (h *History) readEntry(day string, e rawEntry) (*engine.HistoryEntry, []byte, error) {
	id, ok := strings.CutSuffix(e.name, historyEntryExt)
	if !ok || e.fm != filemode.Regular || engine.HistoryIDDay(id) != day {
		return nil, nil, errors.New("not a history entry")
	}
	b, err := h.r.readBlob(e.hash)
	if err != nil {
		return nil, nil, err
	}
	var en engine.HistoryEntry
	if err := json.Unmarshal(b, &en); err != nil {
		return nil, nil, fmt.Errorf("does not parse: %s", oneLine(err.Error()))
	}
	if en.ID != id {
		return nil, nil, fmt.Errorf("holds the entry %q", en.ID)
	}
	return &en, b, nil
}

// readSummary reads summaries/<day>.json (nil when there is none).
func (h *History) readSummary(day string) (*summaryFile, plumbing.Hash, error) {
	b, err := h.summaryBlob(day)
	if err != nil || b.IsZero() {
		return nil, b, err
	}
	data, err := h.r.readBlob(b)
	if err != nil {
		return nil, b, err
	}
	var s summaryFile
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, b, fmt.Errorf("%s: summary of %s does not parse: %s", HistoryRef, day, oneLine(err.Error()))
	}
	return &s, b, nil
}

// HistoryDigests implements engine.HistoryStore, through the cache of
// past days (history_cache.go).
func (h *History) HistoryDigests(day string) ([]engine.Digest, error) {
	t, err := h.dayTree(day)
	if err != nil {
		return nil, err
	}
	sb, err := h.summaryBlob(day)
	if err != nil {
		return nil, err
	}
	if runs, ok := h.r.readDigestCache(day, t, sb); ok {
		return runs, nil
	}
	entries, err := h.HistoryDay(day)
	if err != nil {
		return nil, err
	}
	var runs []engine.Digest
	seen := map[string]bool{}
	if sb != (plumbing.Hash{}) {
		s, _, err := h.readSummary(day)
		if err != nil {
			return nil, h.damaged(err.Error())
		}
		for _, d := range s.Runs {
			if !seen[d.ID] {
				seen[d.ID] = true
				runs = append(runs, d)
			}
		}
	}
	for _, e := range entries {
		if !seen[e.ID] {
			seen[e.ID] = true
			runs = append(runs, e.Digest())
		}
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].ID < runs[j].ID })
	if day < h.r.Now().UTC().Format(engine.HistoryDayLayout) && len(h.Damaged) == 0 {
		h.r.writeDigestCache(day, t, sb, runs)
	}
	return runs, nil
}

// historyAttempts bounds the compare-and-swap retries of one write.
const historyAttempts = 50

// AddHistory implements engine.HistoryStore: one commit that adds the
// entry's blob. An entry of that id already there is left as it is.
func (h *History) AddHistory(e *engine.HistoryEntry) error {
	day := engine.HistoryIDDay(e.ID)
	parts, ok := dayParts(day)
	if !ok {
		return fmt.Errorf("bad history id %q", e.ID)
	}
	data, err := encodeJSON(e)
	if err != nil {
		return err
	}
	blob, err := h.r.writeBlob(data)
	if err != nil {
		return err
	}
	path := append([]string{historyEntriesDir}, parts...)
	msg := fmt.Sprintf("history: %s %s %s (%s)", e.ID, e.Task, e.Status, e.Workflow)
	for i := 0; i < historyAttempts; i++ {
		h.tipRead = false
		tip, root, err := h.readTip()
		if err != nil {
			return err
		}
		if ex, ok, err := h.walk(root, append(path, e.ID+historyEntryExt)...); err != nil {
			return err
		} else if ok && !ex.isDir() {
			return nil // recorded already
		}
		newRoot, err := h.setPath(root, true, path, e.ID+historyEntryExt, leaf{mode: filemode.Regular, hash: blob})
		if err != nil {
			return err
		}
		var parents []plumbing.Hash
		if !tip.IsZero() {
			parents = append(parents, tip)
		}
		c, err := h.r.writeCommit(newRoot, parents, msg)
		if err != nil {
			return err
		}
		err = h.r.refs.Update(HistoryRef, tip, c)
		if err == nil {
			h.tip, h.root = c, newRoot
			return nil
		}
		if !errors.Is(err, ErrConflict) {
			return describeRefError(HistoryRef, err)
		}
		time.Sleep(time.Duration(rand.IntN(1+min(i, 10)*2)) * time.Millisecond)
	}
	return fmt.Errorf("%s kept changing; the entry %s was not written", HistoryRef, e.ID)
}

// setPath returns tree t with name set to l in the directory dirs below
// it (l zero: name removed), writing only the trees on that path. The
// root (top) gets the version blob; a directory left empty is removed.
func (h *History) setPath(t plumbing.Hash, top bool, dirs []string, name string, l leaf) (plumbing.Hash, error) {
	ents, err := h.tree(t)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	m := make(map[string]leaf, len(ents)+1)
	for _, e := range ents {
		m[e.name] = leaf{mode: e.fm, hash: e.hash}
	}
	if len(dirs) == 0 {
		if l.hash.IsZero() {
			delete(m, name)
		} else {
			m[name] = l
		}
	} else {
		sub := plumbing.ZeroHash
		if cur, ok := m[dirs[0]]; ok && cur.mode == filemode.Dir {
			sub = cur.hash
		}
		nsub, err := h.setPath(sub, false, dirs[1:], name, l)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if nsub.IsZero() {
			delete(m, dirs[0])
		} else {
			m[dirs[0]] = leaf{mode: filemode.Dir, hash: nsub}
		}
	}
	if top {
		vh, err := h.r.writeBlob([]byte(FormatVersion + "\n"))
		if err != nil {
			return plumbing.ZeroHash, err
		}
		m[versionFile] = leaf{mode: filemode.Regular, hash: vh}
	}
	return h.writeLevel(m)
}

// writeLevel writes one tree level (zero when it is empty).
func (h *History) writeLevel(m map[string]leaf) (plumbing.Hash, error) {
	if len(m) == 0 {
		return plumbing.ZeroHash, nil
	}
	nt, err := h.r.writeTreeOf(m)
	if err == nil {
		ents := make([]rawEntry, 0, len(m))
		for name, l := range m {
			ents = append(ents, rawEntry{fm: l.mode, name: name, hash: l.hash})
		}
		sortRawEntries(ents)
		h.trees[nt] = ents
	}
	return nt, err
}

// sortRawEntries orders entries as git does (directories as "name/").
func sortRawEntries(es []rawEntry) {
	key := func(e rawEntry) string {
		if e.isDir() {
			return e.name + "/"
		}
		return e.name
	}
	sort.Slice(es, func(i, j int) bool { return key(es[i]) < key(es[j]) })
}

package gitstore

import (
	"bytes"
	"encoding/json"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/engine"
)

// The statistics of past days are cached in <common git dir>/hegel/
// history-days/<YYYY-MM-DD>.json: the digests of the runs that started that
// (UTC) day, with the hashes of the day's entries tree and summary blob
// they were read from. A file is used only while both hashes still match,
// so it cannot go stale; it is rebuilt from the history when they do not.
// Days older than digestCacheDays are dropped. Deleting the directory
// loses nothing.
const (
	digestCacheDir  = "hegel/history-days"
	digestCacheDays = 90
)

type digestCache struct {
	Entries string          `json:"entries"`
	Summary string          `json:"summary"`
	Runs    []engine.Digest `json:"runs"`
}

func digestCachePath(day string) string { return digestCacheDir + "/" + day + ".json" }

func (r *Repo) readDigestCache(day string, entries, summary plumbing.Hash) ([]engine.Digest, bool) {
	b, err := readFile(r.common, digestCachePath(day))
	if err != nil {
		return nil, false
	}
	var c digestCache
	if json.Unmarshal(b, &c) != nil || c.Entries != entries.String() || c.Summary != summary.String() {
		return nil, false
	}
	return c.Runs, true
}

// writeDigestCache records a past day's digests (best effort) and drops
// the days the cache no longer keeps.
func (r *Repo) writeDigestCache(day string, entries, summary plumbing.Hash, runs []engine.Digest) {
	b, err := json.Marshal(digestCache{Entries: entries.String(), Summary: summary.String(), Runs: runs})
	if err != nil {
		return
	}
	// No fsync: a torn file fails to parse and is a miss.
	if r.writeCommon(digestCachePath(day), b, false) == nil {
		r.pruneDigestCache()
	}
}

// The entries of past days are cached the same way for `git hegel log`,
// in <common git dir>/hegel/history-entries/<YYYY-MM-DD>.json: the day's
// entries as read, with the hash of the day's entries tree. A day's tree
// names every entry blob by its hash, so while it is unchanged so are
// the entries: the file cannot go stale. It saves one object read per
// entry (log --since 1.week.ago reads ~1,900 over 100,000 entries); the
// JSON is decoded all the same. A day with an entry that cannot be read
// is never cached, and doctor reads the objects themselves (Verify).
const entryCacheDir = "hegel/history-entries"

type entryCache struct {
	Entries string                 `json:"entries"`
	Runs    []*engine.HistoryEntry `json:"runs"`
}

func entryCachePath(day string) string { return entryCacheDir + "/" + day + ".json" }

func (r *Repo) readEntryCache(day string, entries plumbing.Hash) ([]*engine.HistoryEntry, bool) {
	b, err := readFile(r.common, entryCachePath(day))
	if err != nil {
		return nil, false
	}
	var c entryCache
	if json.Unmarshal(b, &c) != nil || c.Entries != entries.String() {
		return nil, false
	}
	for _, e := range c.Runs {
		if e == nil || engine.HistoryIDDay(e.ID) != day {
			return nil, false
		}
	}
	if c.Runs == nil {
		c.Runs = []*engine.HistoryEntry{}
	}
	return c.Runs, true
}

// writeEntryCache records a past day's entries (best effort) and drops the
// days the cache no longer keeps. runs are the entries' blobs, each a JSON
// document that parsed: they are written as they are, not encoded again.
func (r *Repo) writeEntryCache(day string, entries plumbing.Hash, runs [][]byte) {
	n := 64
	for _, b := range runs {
		n += len(b) + 1
	}
	buf := make([]byte, 0, n)
	buf = append(buf, `{"entries":"`+entries.String()+`","runs":[`...)
	for i, b := range runs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, bytes.TrimSpace(b)...)
	}
	buf = append(buf, "]}\n"...)
	// No fsync: a torn file fails to parse and is a miss.
	if r.writeCommon(entryCachePath(day), buf, false) == nil {
		r.pruneDayCache(entryCacheDir)
	}
}

// pruneDigestCache removes the cached days older than digestCacheDays.
func (r *Repo) pruneDigestCache() { r.pruneDayCache(digestCacheDir) }

// pruneDayCache removes the files of dir (one per day) older than
// digestCacheDays.
func (r *Repo) pruneDayCache(dir string) {
	ents, err := r.common.ReadDir(dir)
	if err != nil || len(ents) <= digestCacheDays {
		return
	}
	oldest := r.Now().UTC().AddDate(0, 0, -digestCacheDays).Format(engine.HistoryDayLayout)
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	for _, n := range names {
		day := strings.TrimSuffix(n, ".json")
		if _, err := time.Parse(engine.HistoryDayLayout, day); err == nil && day >= oldest {
			break
		}
		_ = r.common.Remove(path.Join(dir, n))
	}
}

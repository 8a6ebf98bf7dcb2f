package gitstore

import (
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

// pruneDigestCache removes the cached days older than digestCacheDays.
func (r *Repo) pruneDigestCache() {
	ents, err := r.common.ReadDir(digestCacheDir)
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
		_ = r.common.Remove(path.Join(digestCacheDir, n))
	}
}

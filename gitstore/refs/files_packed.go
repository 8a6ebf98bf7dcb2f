package refs

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// Reading packed-refs once. A ref that is not loose is looked up in
// packed-refs, and every write checks it for a name that would clash, so
// with the refs packed (git gc, git clone, a sync that wrote many) each
// read or write parsed the whole file: 20,000 lines with 10,000 tasks.
// As git does, the parsed file is kept while its stat data (size,
// modification time and, where there is one, inode) is unchanged: every
// writer of packed-refs, git and this package alike, replaces it by
// renaming a new file over it. Those can repeat (two rewrites within one
// clock tick, at the same size, the inode of the one before last reused),
// so a copy is kept only once the file has settled (packedRacyWindow).

// packedCache is a Files' last parsed packed-refs.
type packedCache struct {
	mu  sync.Mutex
	key packedStat
	p   *packedRefs
	// settled: key's modification time was packedRacyWindow or more
	// before the stat that found it, so any later rewrite of the file has
	// a later time and another key. A copy read while the file was newer
	// than that is used once and read again next time: within a clock
	// tick a rewrite at the same size and on a reused inode has the same
	// stat data (git's racy-clean rule for the index, applied here).
	settled bool
}

// packedRacyWindow is how old packed-refs' modification time must be for
// its stat data to identify its content: coarser than any kernel clock
// tick and than the seconds some filesystems store.
const packedRacyWindow = 2 * time.Second

// packedStat is what identifies one version of packed-refs.
type packedStat struct {
	size  int64
	mtime time.Time
	id    uint64 // inode, 0 where unknown
}

// readPacked returns packed-refs parsed; a missing file is an empty one.
// The result is shared: callers must not change it.
func (r *Files) readPacked() (*packedRefs, error) {
	return r.loadPacked(false)
}

// readPackedLocked is readPacked for a caller holding packed-refs.lock,
// about to write packed-refs from what it reads: it always reads the
// file. Stat data can repeat: pack-refs rewrites packed-refs at the same
// size, its inode is reused every other rewrite, and a modification time
// is only as fine as the kernel's clock tick. A stale copy here would be
// written back, undoing another writer's change (git's packed_refs_lock
// drops its snapshot for the same reason).
func (r *Files) readPackedLocked() (*packedRefs, error) {
	return r.loadPacked(true)
}

// loadPacked is readPacked; fresh reads the file even when its stat data
// matches the copy kept.
func (r *Files) loadPacked(fresh bool) (*packedRefs, error) {
	// Stat before reading: if the file is replaced in between, the
	// content kept is newer than the key, and the next stat differs from
	// the key, so it is read again; never the other way round.
	fi, err := r.fs.Stat(packedRefsFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return &packedRefs{sorted: true}, nil
		}
		return nil, fmt.Errorf("read %s: %w", r.display(packedRefsFile), err)
	}
	key := packedStat{size: fi.Size(), mtime: fi.ModTime(), id: FileID(fi)}
	settled := time.Since(key.mtime) >= packedRacyWindow
	c := &r.packed
	c.mu.Lock()
	defer c.mu.Unlock()
	if !fresh && c.p != nil && c.settled && c.key == key {
		return c.p, nil
	}
	p, err := r.readPackedFile()
	if err != nil {
		return nil, err
	}
	c.key, c.p, c.settled = key, p, settled
	return p, nil
}

// conflict returns a packed ref that is an ancestor or a descendant of
// name (refs/a and refs/a/b cannot both exist), if there is one.
func (p *packedRefs) conflict(name plumbing.ReferenceName) (string, bool) {
	s := string(name)
	if !p.sorted {
		for _, e := range p.entries {
			en := string(e.name)
			if strings.HasPrefix(s, en+"/") || strings.HasPrefix(en, s+"/") {
				return en, true
			}
		}
		return "", false
	}
	// Ancestors: each prefix of name that ends before a slash.
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			if e, ok := p.find(plumbing.ReferenceName(s[:i])); ok {
				return string(e.name), true
			}
		}
	}
	// Descendants: the first entry at or after name+"/" in byte order.
	below := s + "/"
	i, _ := slices.BinarySearchFunc(p.entries, below, func(e packedEntry, n string) int { return strings.Compare(string(e.name), n) })
	if i < len(p.entries) && strings.HasPrefix(string(p.entries[i].name), below) {
		return string(p.entries[i].name), true
	}
	return "", false
}

// under returns the packed refs whose names start with prefix, sorted by
// name: a slice of the file's entries when it is sorted (with 20,000
// refs packed, listing refs/hegel/ sorted them all again, and went
// through a map).
func (p *packedRefs) under(prefix string) []Ref {
	var out []Ref
	if p.sorted {
		i, _ := slices.BinarySearchFunc(p.entries, prefix, func(e packedEntry, n string) int { return strings.Compare(string(e.name), n) })
		j := i
		for j < len(p.entries) && strings.HasPrefix(string(p.entries[j].name), prefix) {
			j++
		}
		out = make([]Ref, 0, j-i)
		for _, e := range p.entries[i:j] {
			out = append(out, Ref{Name: e.name, Hash: e.hash})
		}
		return out
	}
	for _, e := range p.entries {
		if strings.HasPrefix(string(e.name), prefix) {
			out = append(out, Ref{Name: e.name, Hash: e.hash})
		}
	}
	// Stable: of a name packed twice, the first entry comes first, and
	// mergeRefs keeps it, as git does.
	slices.SortStableFunc(out, compareRefs)
	return out
}

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
// renaming a new file over it, which gives it a new inode.

// packedCache is a Files' last parsed packed-refs.
type packedCache struct {
	mu  sync.Mutex
	key packedStat
	p   *packedRefs
}

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
	key := packedStat{size: fi.Size(), mtime: fi.ModTime(), id: fileID(fi)}
	c := &r.packed
	c.mu.Lock()
	defer c.mu.Unlock()
	if !fresh && c.p != nil && c.key == key {
		return c.p, nil
	}
	p, err := r.readPackedFile()
	if err != nil {
		return nil, err
	}
	c.key, c.p = key, p
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

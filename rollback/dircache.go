package rollback

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gitobjects "github.com/git-hegel/git-hegel/gitstore/objects"
)

// The directory cache spares the scan of a snapshot the reading of
// directories whose entries cannot have changed, as git's untracked cache
// (the index's UNTR extension) spares `git status`. It records, per
// directory scanned, the directory's stat data and its raw listing: every
// name and its type, not which of them are untracked or ignored. Only
// whether the listing is still the same is taken from it; tracked,
// untracked and ignored are decided on each scan from the index and the
// ignore files read then, so a `git add`, an edited .gitignore or a new
// core.excludesFile need no invalidation.
//
// Creating, deleting or renaming an entry changes its directory's mtime
// and ctime on Linux's filesystems, so a directory whose stat data is
// unchanged still has the listing recorded. A directory modified within a
// second before the scan that recorded it started is racy (it could have
// changed again after it was read, within the same timestamp tick) and is
// read again. Only the Linux scan uses the cache (stat_linux.go); other
// systems read every directory.
//
// It lives in the worktree's git directory as hegel-dircache and is only a
// cache: missing, damaged, truncated (a CRC-32C of the whole closes it)
// or from another version, it is ignored and the scan reads every
// directory.

const (
	dirCacheFile    = "hegel-dircache"
	dirCacheMagic   = "HGDC"
	dirCacheVersion = 1
	dirCacheMaxSize = 256 << 20
)

// dirCacheMaxNames bounds the cache: a working tree with more directory
// entries than this is scanned without it (a variable for the tests).
var dirCacheMaxNames = 4 << 20

// dirCacheRacy is how long before a scan started a directory must have
// last changed for its listing to be trusted by the next scan (a variable
// for the tests).
var dirCacheRacy = time.Second

// dirListing is a directory's stat data and entries, as last read: either
// ents, or (taken from the cache file unchanged) n entries still encoded
// in raw.
type dirListing struct {
	stat statData
	ents []dirent
	n    int
	raw  string
}

// entries decodes the listing (raw was checked when the file was loaded).
func (l dirListing) entries() []dirent {
	if l.raw == "" {
		return l.ents
	}
	return l.appendEntries(make([]dirent, 0, l.n))
}

// appendEntries appends the listing's entries to out: a copy, which the
// caller may change.
func (l dirListing) appendEntries(out []dirent) []dirent {
	if l.raw == "" {
		return append(out, l.ents...)
	}
	for r := l.raw; len(r) >= 3; {
		k := int(r[1])<<8 | int(r[2])
		out = append(out, dirent{name: r[3 : 3+k], kind: fileKind(r[0])})
		r = r[3+k:]
	}
	return out
}

// dirCache is the cache as loaded, and the listings the scan collects for
// the next one.
type dirCache struct {
	old map[string]dirListing
	// before: a listing whose directory was modified at or after this is
	// read again.
	before time.Time
	start  time.Time // when this scan started

	reused atomic.Int64 // directories not read

	mu    sync.Mutex
	next  map[string]dirListing
	names int
	full  bool // more than dirCacheMaxNames: nothing is saved
}

// listingFS is a working tree whose scan can use the directory cache.
type listingFS interface {
	// scanDirListing is scanDir taking the listing from c when c still
	// holds it, and recording in c the listing used; it reports whether
	// the directory was left unread. The listing and stat data returned
	// live in buf (a scan worker's, reused for its next directory).
	scanDirListing(p string, c *dirCache, decide func([]dirent) []bool, buf *scanBufs) ([]dirent, []fstat, bool, error)
}

// dirListingUse is the cache and the directory it is asked about.
type dirListingUse struct {
	c   *dirCache
	dir string
}

// newDirCache starts a scan with the cache loaded from gitDir (an empty
// one when there is none, or it is damaged).
func newDirCache(gitDir string, now time.Time) *dirCache {
	c := &dirCache{start: now, next: map[string]dirListing{}}
	c.old, c.before = loadDirCache(gitDir)
	return c
}

// reuse returns the listing recorded for dir, decoded into dst's array
// (a new one when it is too small; never the cache's own), if its stat
// data is the same and it is not racy; it is kept for the next scan.
func (c *dirCache) reuse(dir string, st statData, dst []dirent) ([]dirent, bool) {
	if c == nil {
		return nil, false
	}
	l, ok := c.old[dir]
	if !ok || l.stat != st {
		return nil, false
	}
	if !time.Unix(int64(st.MtimeSec), int64(st.MtimeNsec)).Before(c.before) ||
		!time.Unix(int64(st.CtimeSec), int64(st.CtimeNsec)).Before(c.before) {
		return nil, false
	}
	c.reused.Add(1)
	c.keep(dir, l, l.n)
	return l.appendEntries(dst[:0]), true
}

// record keeps dir's listing, just read and sorted, for the next scan.
func (c *dirCache) record(dir string, st statData, ents []dirent) {
	if c == nil {
		return
	}
	c.keep(dir, dirListing{stat: st, ents: ents}, len(ents))
}

func (c *dirCache) keep(dir string, l dirListing, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.full {
		return
	}
	c.names += n + 1
	if c.names > dirCacheMaxNames {
		c.full, c.next = true, nil
		return
	}
	c.next[dir] = l
}

// loadDirCache reads the cache file; nil for none or a damaged one.
func loadDirCache(gitDir string) (map[string]dirListing, time.Time) {
	if gitDir == "" {
		return nil, time.Time{}
	}
	f, err := os.Open(filepath.Join(gitDir, dirCacheFile))
	if err != nil {
		return nil, time.Time{}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() > dirCacheMaxSize || fi.Size() < 36 {
		return nil, time.Time{}
	}
	// Read into a string: the names alias it, no copy of the file made.
	var sb strings.Builder
	sb.Grow(int(fi.Size()))
	if _, err := io.Copy(&sb, io.LimitReader(f, fi.Size())); err != nil {
		return nil, time.Time{}
	}
	m, before, ok := decodeDirCache(sb.String(), fi.ModTime())
	if !ok {
		return nil, time.Time{}
	}
	return m, before
}

// decodeDirCache parses and checks a cache file written at mtime. The
// listings stay encoded (raw), each checked here, and are decoded only
// for the directories the scan asks about.
func decodeDirCache(b string, mtime time.Time) (map[string]dirListing, time.Time, bool) {
	if len(b) < 36 || b[:4] != dirCacheMagic {
		return nil, time.Time{}, false
	}
	body := b[:len(b)-4]
	u32 := func(s string) uint32 { return binary.BigEndian.Uint32([]byte(s[:4])) }
	u64 := func(s string) uint64 { return binary.BigEndian.Uint64([]byte(s[:8])) }
	// In pieces through one small buffer: no copy of the whole file.
	tab := crc32.MakeTable(crc32.Castagnoli)
	var sum uint32
	var piece [16 << 10]byte
	for rest := body; rest != ""; {
		k := copy(piece[:], rest)
		sum = crc32.Update(sum, tab, piece[:k])
		rest = rest[k:]
	}
	if sum != u32(b[len(b)-4:]) {
		return nil, time.Time{}, false
	}
	if u32(body[4:]) != dirCacheVersion {
		return nil, time.Time{}, false
	}
	start, written := int64(u64(body[8:])), int64(u64(body[16:]))
	n := int(u32(body[24:]))
	if written < start || start <= 0 || n > dirCacheMaxNames {
		return nil, time.Time{}, false
	}
	// The scan started at start by the clock; the file's own mtime, set by
	// the filesystem, less the scan's duration, says the same by the
	// filesystem's clock. The earlier of the two, less a tick, is when a
	// directory must have last changed to be trusted.
	before := time.Unix(0, start)
	if fsStart := mtime.Add(-time.Duration(written - start)); fsStart.Before(before) {
		before = fsStart
	}
	before = before.Add(-dirCacheRacy)
	pos := 28
	take := func(k int) (string, bool) {
		if k < 0 || len(body)-pos < k {
			return "", false
		}
		out := body[pos : pos+k]
		pos += k
		return out, true
	}
	out := make(map[string]dirListing, min(n, 1<<16))
	names := 0
	for i := 0; i < n; i++ {
		h, ok := take(2)
		if !ok {
			return nil, time.Time{}, false
		}
		dir, ok := take(int(h[0])<<8 | int(h[1]))
		if !ok || !validCacheDir(dir) {
			return nil, time.Time{}, false
		}
		if _, dup := out[dir]; dup {
			return nil, time.Time{}, false
		}
		sd, ok := take(9*4 + 4)
		if !ok {
			return nil, time.Time{}, false
		}
		u := func(k int) uint32 { return u32(sd[4*k:]) }
		l := dirListing{stat: statData{CtimeSec: u(0), CtimeNsec: u(1), MtimeSec: u(2), MtimeNsec: u(3),
			Dev: u(4), Ino: u(5), UID: u(6), GID: u(7), Size: u(8)}}
		l.n = int(u(9))
		names += l.n + 1
		if names > dirCacheMaxNames || l.n > len(body)-pos {
			return nil, time.Time{}, false
		}
		first, prev := pos, ""
		for e := 0; e < l.n; e++ {
			h, ok := take(3)
			if !ok {
				return nil, time.Time{}, false
			}
			kind := fileKind(h[0])
			nm, ok := take(int(h[1])<<8 | int(h[2]))
			// Sorted, strictly: no name twice.
			if !ok || kind < kindFile || kind > kindOther || !validCacheName(nm) || (e > 0 && prev >= nm) {
				return nil, time.Time{}, false
			}
			prev = nm
		}
		l.raw = body[first:pos]
		if l.n == 0 {
			l.ents = []dirent{}
		}
		out[dir] = l
	}
	if pos != len(body) {
		return nil, time.Time{}, false
	}
	return out, before, true
}

// validCacheName: one directory entry's name, as a directory can hold it.
func validCacheName(n string) bool {
	if n == "" || n == "." || n == ".." {
		return false
	}
	// A plain loop: strings.ContainsAny made this most of a load's time.
	for i := 0; i < len(n); i++ {
		if c := n[i]; c == '/' || c == 0 {
			return false
		}
	}
	return true
}

// validCacheDir: "" (the top) or a relative slash-separated path of valid
// names.
func validCacheDir(p string) bool {
	if p == "" {
		return true
	}
	for _, n := range strings.Split(p, "/") {
		if !validCacheName(n) {
			return false
		}
	}
	return true
}

// save replaces the cache file with the listings this scan collected
// (best effort: it is only a cache). A cache over its bound is removed.
func (c *dirCache) save(gitDir string, perm gitobjects.SharedPerm, now time.Time) {
	if c == nil || gitDir == "" {
		return
	}
	final := filepath.Join(gitDir, dirCacheFile)
	if c.full {
		os.Remove(final)
		return
	}
	if len(c.next) == len(c.old) && int(c.reused.Load()) == len(c.next) {
		// Every directory's listing came from the file, and it holds no
		// other: it is still what it should be.
		return
	}
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	var u8 [8]byte
	put32 := func(v uint32) { binary.BigEndian.PutUint32(u8[:4], v); w.Write(u8[:4]) }
	put64 := func(v uint64) { binary.BigEndian.PutUint64(u8[:], v); w.Write(u8[:]) }
	put16 := func(v int) { binary.BigEndian.PutUint16(u8[:2], uint16(v)); w.Write(u8[:2]) }
	w.WriteString(dirCacheMagic)
	put32(dirCacheVersion)
	put64(uint64(c.start.UnixNano()))
	put64(uint64(now.UnixNano()))
	n := 0
	for p, l := range c.next {
		if storable(p, l) {
			n++
		}
	}
	put32(uint32(n))
	for p, l := range c.next {
		if !storable(p, l) {
			continue
		}
		put16(len(p))
		w.WriteString(p)
		s := l.stat
		for _, v := range []uint32{s.CtimeSec, s.CtimeNsec, s.MtimeSec, s.MtimeNsec, s.Dev, s.Ino, s.UID, s.GID, s.Size} {
			put32(v)
		}
		if l.raw != "" {
			put32(uint32(l.n))
			w.WriteString(l.raw)
			continue
		}
		put32(uint32(len(l.ents)))
		for _, e := range l.ents {
			w.WriteByte(byte(e.kind))
			put16(len(e.name))
			w.WriteString(e.name)
		}
	}
	w.Flush()
	b := buf.Bytes()
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
	_ = perm.WriteFile(final, b, false) // only a cache: a failure means a full scan next time
}

// sortDirents orders a listing by name, as the file keeps them.
func sortDirents(ds []dirent) {
	slices.SortFunc(ds, func(a, b dirent) int { return strings.Compare(a.name, b.name) })
}

// storable: what a load would accept (names too long for the format, or a
// listing with an entry of unknown type, are left out: that directory is
// read next time).
func storable(p string, l dirListing) bool {
	if len(p) > 0xffff || !validCacheDir(p) {
		return false
	}
	if l.raw != "" {
		return true // as loaded, checked then
	}
	for i, e := range l.ents {
		if i > 0 && l.ents[i-1].name >= e.name {
			return false
		}
		if len(e.name) > 0xffff || e.kind < kindFile || e.kind > kindOther || !validCacheName(e.name) {
			return false
		}
	}
	return true
}

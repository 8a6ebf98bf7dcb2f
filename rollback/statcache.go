package rollback

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	gitobjects "github.com/git-hegel/git-hegel/gitstore/objects"
	"github.com/go-git/go-git/v5/plumbing"
)

// The stat cache remembers, for the files the last stored snapshot had to
// hash (tracked files that differ from the index, untracked files), their
// stat data and blob. The next snapshot reads only those whose stat data
// changed: a checkpoint at every `next` of a working tree with 1,500
// uncommitted files would otherwise read all of them each time, where git
// reads a modified file only once its stat data no longer matches.
//
// It lives in the worktree's git directory as hegel-statcache and is only a
// cache: missing, damaged or from another version, it is ignored and
// rewritten. Entries follow git's racy-git rule: one whose mtime is not
// older than the cache file is hashed again.

const (
	statCacheFile    = "hegel-statcache"
	statCacheMagic   = "HGSC"
	statCacheVersion = 1
)

type statCacheEntry struct {
	stat  statData
	flags uint8 // dirtyLink, dirtyExec
	hash  plumbing.Hash
}

type statCache struct {
	entries map[string]statCacheEntry
	mtime   time.Time
	ident   string // the file's size, mtime and inode (fsmonitor.go)
}

func statFlags(st fstat) uint8 {
	var f uint8
	if st.kind == kindSymlink {
		f |= dirtyLink
	}
	if st.exec {
		f |= dirtyExec
	}
	return f
}

// lookup returns the cached blob of a file whose stat data still matches.
func (c *statCache) lookup(p string, st fstat, cfg scanConfig) (plumbing.Hash, bool) {
	if c == nil || !st.hasStat {
		return plumbing.ZeroHash, false
	}
	e, ok := c.entries[p]
	if !ok || e.flags != statFlags(st) || racy(e.stat, c.mtime) {
		return plumbing.ZeroHash, false
	}
	a, b := e.stat, st.stat
	if a.MtimeSec != b.MtimeSec || a.MtimeNsec != b.MtimeNsec || a.Size != b.Size || a.Ino != b.Ino ||
		a.UID != b.UID || a.GID != b.GID || uint32(st.size) != a.Size {
		return plumbing.ZeroHash, false
	}
	if cfg.trustCtime && (a.CtimeSec != b.CtimeSec || a.CtimeNsec != b.CtimeNsec) {
		return plumbing.ZeroHash, false
	}
	return e.hash, true
}

func loadStatCache(gitDir string) *statCache {
	if gitDir == "" {
		return nil
	}
	f, err := os.Open(filepath.Join(gitDir, statCacheFile))
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	r := bufio.NewReader(f)
	var hdr [12]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil || string(hdr[:4]) != statCacheMagic ||
		binary.BigEndian.Uint32(hdr[4:]) != statCacheVersion {
		return nil
	}
	n := int(binary.BigEndian.Uint32(hdr[8:]))
	c := &statCache{entries: make(map[string]statCacheEntry, min(n, 1<<20)), mtime: fi.ModTime(), ident: fileIdent(fi)}
	var rec [2 + 36 + 1 + 20]byte
	for i := 0; i < n; i++ {
		if _, err := io.ReadFull(r, rec[:2]); err != nil {
			return nil
		}
		name := make([]byte, binary.BigEndian.Uint16(rec[:2]))
		if _, err := io.ReadFull(r, name); err != nil {
			return nil
		}
		if _, err := io.ReadFull(r, rec[2:]); err != nil {
			return nil
		}
		u := func(k int) uint32 { return binary.BigEndian.Uint32(rec[2+4*k:]) }
		e := statCacheEntry{
			stat: statData{CtimeSec: u(0), CtimeNsec: u(1), MtimeSec: u(2), MtimeNsec: u(3),
				Dev: u(4), Ino: u(5), UID: u(6), GID: u(7), Size: u(8)},
			flags: rec[38],
		}
		copy(e.hash[:], rec[39:])
		c.entries[string(name)] = e
	}
	return c
}

// saveStatCache replaces the cache with entries (best effort: it is only
// a cache). It returns the new file's identity (fileIdent) when it holds
// every entry, "" otherwise.
func saveStatCache(gitDir string, perm gitobjects.SharedPerm, entries map[string]statCacheEntry) string {
	if gitDir == "" {
		return ""
	}
	var buf bytes.Buffer
	buf.WriteString(statCacheMagic)
	var u32 [4]byte
	put := func(v uint32) { binary.BigEndian.PutUint32(u32[:], v); buf.Write(u32[:]) }
	put(statCacheVersion)
	put(uint32(len(entries)))
	for p, e := range entries {
		if len(p) > 0xffff {
			continue
		}
		var l [2]byte
		binary.BigEndian.PutUint16(l[:], uint16(len(p)))
		buf.Write(l[:])
		buf.WriteString(p)
		s := e.stat
		for _, v := range []uint32{s.CtimeSec, s.CtimeNsec, s.MtimeSec, s.MtimeNsec, s.Dev, s.Ino, s.UID, s.GID, s.Size} {
			put(v)
		}
		buf.WriteByte(e.flags)
		buf.Write(e.hash[:])
	}
	// The count was written before entries that might be skipped.
	b := buf.Bytes()
	n := 0
	for p := range entries {
		if len(p) <= 0xffff {
			n++
		}
	}
	binary.BigEndian.PutUint32(b[8:], uint32(n))
	final := filepath.Join(gitDir, statCacheFile)
	tmp := final + ".tmp-" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, b, 0o666); err != nil || perm.Adjust(tmp) != nil {
		os.Remove(tmp)
		return ""
	}
	// The rename keeps the inode and times: the identity is the file's.
	fi, err := os.Lstat(tmp)
	if err := os.Rename(tmp, final); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			os.Remove(tmp)
		}
		return ""
	}
	if err != nil || n != len(entries) {
		return ""
	}
	return fileIdent(fi)
}

package rollback

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"
	"unsafe"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// The index is read and written here rather than with go-git's
// plumbing/format/index: on a 100,000-entry index go-git's decoder takes
// 110-220 ms and its encoder 150-420 ms (reflection-driven field I/O, one
// allocation per field), against 15-30 ms for this codec; a checkpoint and
// a rollback each have about a second in total (docs/rollback.md). go-git's
// codec stays the reference: the tests decode what this code writes with it
// and the other way round. In-memory repositories still keep a go-git
// *index.Index; toGoGit/fromGoGit convert.

// Flags in an index entry.
const (
	flagAssumeValid  = 0x8000
	flagExtended     = 0x4000
	flagStageMask    = 0x3000
	flagNameMask     = 0x0fff
	extSkipWorktree  = 0x4000
	extIntentToAdd   = 0x2000
	entryFixedLength = 62 // stat data, hash and flags, before the name
)

// statData is what git records about a file to tell, without reading it,
// that it has not changed since it was last hashed.
type statData struct {
	CtimeSec, CtimeNsec uint32
	MtimeSec, MtimeNsec uint32
	Dev, Ino            uint32
	UID, GID            uint32
	Size                uint32
}

// idxEntry is one index entry, kept compact: a 100,000-entry index fits in
// about 12 MB.
type idxEntry struct {
	Name     string
	Hash     plumbing.Hash
	Mode     uint32 // 0100644, 0100755, 0120000 or 0160000
	Stat     statData
	Flags    uint16 // stage and assume-valid bits (name length and extended flag are recomputed on write)
	ExtFlags uint16
}

func (e *idxEntry) stage() int              { return int(e.Flags&flagStageMask) >> 12 }
func (e *idxEntry) skipWorktree() bool      { return e.ExtFlags&extSkipWorktree != 0 }
func (e *idxEntry) intentToAdd() bool       { return e.ExtFlags&extIntentToAdd != 0 }
func (e *idxEntry) assumeValid() bool       { return e.Flags&flagAssumeValid != 0 }
func (e *idxEntry) mode() filemode.FileMode { return filemode.FileMode(e.Mode) }

// gitIndex is a decoded index: its entries sorted by name and stage, the
// format version, and the file's modification time (for racy-git checks;
// zero when unknown).
type gitIndex struct {
	Version uint32
	Entries []idxEntry
	ModTime time.Time
	ident   string // size, mtime and inode of the file read ("" in memory)
	// sum is the checksum that closes the file read (zero in memory): the
	// SHA-1 of its content, so the same sum is the same entries.
	sum    plumbing.Hash
	extOff int // where the extensions begin in the file read
	// untracked is the untracked cache (the UNTR extension's payload):
	// of the file read, aliasing its bytes; on write, the one to write
	// (nil: none). untracked_carry.go says when a restore keeps it.
	untracked []byte
	// fsmonitor: the file read has the fsmonitor extension (FSMN).
	fsmonitor bool
}

// errIndexFormat wraps every decoding failure so callers can say "the
// index is damaged" in one place.
var errIndexFormat = errors.New("unreadable index")

// decodeIndex parses an index file (versions 2 to 4). Optional extensions
// are skipped (they are caches git rebuilds), the untracked cache's bytes
// kept aside unparsed; mandatory ones are refused.
func decodeIndex(data []byte) (*gitIndex, error) {
	return decodeIndexChecked(data, true)
}

// decodeIndexChecked is decodeIndex that hashes the file to check its
// checksum only with verify (index_checked.go says when it need not).
func decodeIndexChecked(data []byte, verify bool) (*gitIndex, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", errIndexFormat, fmt.Sprintf(format, a...))
	}
	if len(data) < 12+sha1.Size {
		return nil, bad("file too short")
	}
	body, sum := data[:len(data)-sha1.Size], data[len(data)-sha1.Size:]
	// The checksum (some 8 ms on 100,000 entries) is computed while the
	// entries are decoded; nothing decoded is used before it matches.
	summed := make(chan bool, 1)
	if verify {
		go func() {
			h := sha1.Sum(body)
			summed <- bytes.Equal(h[:], sum)
		}()
	} else {
		summed <- true
	}
	idx, err := decodeIndexBody(body, bad)
	if !<-summed {
		return nil, bad("checksum mismatch")
	}
	if err != nil {
		return nil, err
	}
	copy(idx.sum[:], sum)
	return idx, nil
}

func decodeIndexBody(body []byte, bad func(format string, a ...any) error) (*gitIndex, error) {
	if string(body[:4]) != "DIRC" {
		return nil, bad("bad signature")
	}
	idx := &gitIndex{Version: binary.BigEndian.Uint32(body[4:8])}
	if idx.Version < 2 || idx.Version > 4 {
		return nil, bad("unsupported version %d", idx.Version)
	}
	n := int(binary.BigEndian.Uint32(body[8:12]))
	if n > len(body)/entryFixedLength {
		return nil, bad("entry count %d too large", n)
	}
	// Names are substrings of the file's bytes seen as a string: no
	// allocation per name, and no copy. The caller must not modify data
	// afterwards (readIndex reads into a buffer of its own).
	str := unsafe.String(&body[0], len(body))
	idx.Entries = make([]idxEntry, n)
	off := 12
	prev := ""
	for i := 0; i < n; i++ {
		if off+entryFixedLength > len(body) {
			return nil, bad("entry %d truncated", i)
		}
		b := body[off:]
		e := &idx.Entries[i]
		u := func(k int) uint32 { return binary.BigEndian.Uint32(b[4*k:]) }
		e.Stat = statData{
			CtimeSec: u(0), CtimeNsec: u(1), MtimeSec: u(2), MtimeNsec: u(3),
			Dev: u(4), Ino: u(5), UID: u(7), GID: u(8), Size: u(9),
		}
		e.Mode = u(6)
		copy(e.Hash[:], b[40:60])
		flags := binary.BigEndian.Uint16(b[60:62])
		e.Flags = flags &^ (flagNameMask | flagExtended) // recomputed on write
		p := off + entryFixedLength
		if flags&flagExtended != 0 {
			if idx.Version < 3 {
				return nil, bad("extended flags in a version 2 index")
			}
			if p+2 > len(body) {
				return nil, bad("entry %d truncated", i)
			}
			e.ExtFlags = binary.BigEndian.Uint16(body[p:])
			p += 2
		}
		if idx.Version == 4 {
			strip, w := decodeVarint(body[p:])
			if w == 0 || strip > uint64(len(prev)) {
				return nil, bad("entry %d: bad name prefix", i)
			}
			p += w
			end := bytes.IndexByte(body[p:], 0)
			if end < 0 {
				return nil, bad("entry %d: unterminated name", i)
			}
			e.Name = prev[:len(prev)-int(strip)] + str[p:p+end]
			off = p + end + 1
		} else {
			nl := int(flags & flagNameMask)
			if nl == flagNameMask {
				nl = bytes.IndexByte(body[p:], 0)
				if nl < 0 {
					return nil, bad("entry %d: unterminated name", i)
				}
			}
			if p+nl > len(body) {
				return nil, bad("entry %d truncated", i)
			}
			e.Name = str[p : p+nl]
			// Entries are padded with 1 to 8 NULs to a multiple of 8.
			off += (p - off + nl + 8) &^ 7
		}
		if e.Name == "" {
			return nil, bad("entry %d has an empty name", i)
		}
		prev = e.Name
	}
	idx.extOff = off
	for off < len(body) {
		if off+8 > len(body) {
			return nil, bad("truncated extension")
		}
		sig := body[off : off+4]
		size := int(binary.BigEndian.Uint32(body[off+4:]))
		if size < 0 || off+8+size > len(body) {
			return nil, bad("extension %q truncated", sig)
		}
		if sig[0] < 'A' || sig[0] > 'Z' {
			return nil, bad("required extension %q is not supported", sig)
		}
		switch string(sig) {
		case "UNTR":
			idx.untracked = body[off+8 : off+8+size : off+8+size]
		case "FSMN":
			idx.fsmonitor = true
		}
		off += 8 + size
	}
	return idx, nil
}

// encodeIndex writes idx in its version (2 becomes 3 when an entry needs
// extended flags) with the cache-tree computed from the entries
// (cachetree.go) and, when idx.untracked is set, that untracked cache
// (a restore carries the old one with what it touched invalidated:
// untracked_carry.go).
func encodeIndex(w io.Writer, idx *gitIndex) error {
	// The cache-tree (a few ms on 100,000 entries) is computed while the
	// entries are encoded.
	tree := make(chan *cacheNode, 1)
	go func() { tree <- buildCacheTree(idx.Entries) }()
	version := idx.Version
	if version < 2 || version > 4 {
		version = 2
	}
	if version == 2 {
		for i := range idx.Entries {
			if idx.Entries[i].ExtFlags != 0 {
				version = 3
				break
			}
		}
	}
	// Encoded whole in memory (9 MB for 100,000 entries), then written
	// while another goroutine computes its checksum: the SHA-1 was a third
	// of writing the index, in line with the write before.
	size := 12
	for i := range idx.Entries {
		size += entryFixedLength + 2 + 8 + len(idx.Entries[i].Name)
	}
	bw := bytes.NewBuffer(make([]byte, 0, size))
	var hdr [12]byte
	copy(hdr[:], "DIRC")
	binary.BigEndian.PutUint32(hdr[4:], version)
	binary.BigEndian.PutUint32(hdr[8:], uint32(len(idx.Entries)))
	bw.Write(hdr[:])
	var buf [entryFixedLength + 2 + 16]byte
	var zeros [8]byte
	prev := ""
	for i := range idx.Entries {
		e := &idx.Entries[i]
		put := func(k int, v uint32) { binary.BigEndian.PutUint32(buf[4*k:], v) }
		s := e.Stat
		put(0, s.CtimeSec)
		put(1, s.CtimeNsec)
		put(2, s.MtimeSec)
		put(3, s.MtimeNsec)
		put(4, s.Dev)
		put(5, s.Ino)
		put(6, e.Mode)
		put(7, s.UID)
		put(8, s.GID)
		put(9, s.Size)
		copy(buf[40:60], e.Hash[:])
		flags := e.Flags &^ (flagNameMask | flagExtended)
		if len(e.Name) < flagNameMask {
			flags |= uint16(len(e.Name))
		} else {
			flags |= flagNameMask
		}
		n := entryFixedLength
		if e.ExtFlags != 0 {
			flags |= flagExtended
			binary.BigEndian.PutUint16(buf[n:], e.ExtFlags)
			n += 2
		}
		binary.BigEndian.PutUint16(buf[60:], flags)
		if version == 4 {
			common := 0
			for common < len(prev) && common < len(e.Name) && prev[common] == e.Name[common] {
				common++
			}
			n += putVarint(buf[n:], uint64(len(prev)-common))
			bw.Write(buf[:n])
			bw.WriteString(e.Name[common:])
			bw.WriteByte(0)
			prev = e.Name
			continue
		}
		bw.Write(buf[:n])
		bw.WriteString(e.Name)
		pad := 8 - (n+len(e.Name))%8
		bw.Write(zeros[:pad])
	}
	data := appendCacheTree(bw.Bytes(), <-tree)
	if idx.untracked != nil {
		data = append(data, "UNTR"...)
		data = binary.BigEndian.AppendUint32(data, uint32(len(idx.untracked)))
		data = append(data, idx.untracked...)
	}
	summed := make(chan [sha1.Size]byte, 1)
	go func() { summed <- sha1.Sum(data) }()
	_, err := w.Write(data)
	sum := <-summed
	if err != nil {
		return err
	}
	_, err = w.Write(sum[:])
	return err
}

// decodeVarint reads git's offset varint (varint.c); w == 0 on error.
func decodeVarint(b []byte) (v uint64, w int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	v = uint64(c & 127)
	w = 1
	for c&128 != 0 {
		if w >= len(b) || w > 9 {
			return 0, 0
		}
		v++
		c = b[w]
		w++
		v = v<<7 + uint64(c&127)
	}
	return v, w
}

func putVarint(b []byte, v uint64) int {
	var tmp [16]byte
	pos := len(tmp) - 1
	tmp[pos] = byte(v & 127)
	for v >>= 7; v != 0; v >>= 7 {
		v--
		pos--
		tmp[pos] = 128 | byte(v&127)
	}
	return copy(b, tmp[pos:])
}

// sortEntries orders entries as git does: by name, then stage.
func sortEntries(es []idxEntry) {
	sort.Slice(es, func(i, j int) bool {
		if es[i].Name != es[j].Name {
			return es[i].Name < es[j].Name
		}
		return es[i].stage() < es[j].stage()
	})
}

// fromGoGit converts go-git's in-memory index (memory storage).
func fromGoGit(gi *index.Index) *gitIndex {
	idx := &gitIndex{Version: gi.Version, Entries: make([]idxEntry, 0, len(gi.Entries))}
	for _, ge := range gi.Entries {
		e := idxEntry{Name: ge.Name, Hash: ge.Hash, Mode: uint32(ge.Mode)}
		e.Stat = statData{Dev: ge.Dev, Ino: ge.Inode, UID: ge.UID, GID: ge.GID, Size: ge.Size}
		if !ge.CreatedAt.IsZero() {
			e.Stat.CtimeSec, e.Stat.CtimeNsec = uint32(ge.CreatedAt.Unix()), uint32(ge.CreatedAt.Nanosecond())
		}
		if !ge.ModifiedAt.IsZero() {
			e.Stat.MtimeSec, e.Stat.MtimeNsec = uint32(ge.ModifiedAt.Unix()), uint32(ge.ModifiedAt.Nanosecond())
		}
		e.Flags = uint16(ge.Stage&3) << 12
		if ge.SkipWorktree {
			e.ExtFlags |= extSkipWorktree
		}
		if ge.IntentToAdd {
			e.ExtFlags |= extIntentToAdd
		}
		idx.Entries = append(idx.Entries, e)
	}
	sortEntries(idx.Entries)
	return idx
}

// toGoGit converts back for the memory storage.
func toGoGit(idx *gitIndex) *index.Index {
	v := idx.Version
	if v < 2 || v > 4 {
		v = 2
	}
	gi := &index.Index{Version: v, Entries: make([]*index.Entry, 0, len(idx.Entries))}
	for i := range idx.Entries {
		e := &idx.Entries[i]
		ge := &index.Entry{
			Name: e.Name, Hash: e.Hash, Mode: filemode.FileMode(e.Mode),
			Dev: e.Stat.Dev, Inode: e.Stat.Ino, UID: e.Stat.UID, GID: e.Stat.GID, Size: e.Stat.Size,
			Stage:        index.Stage(e.stage()),
			SkipWorktree: e.skipWorktree(),
			IntentToAdd:  e.intentToAdd(),
		}
		if e.Stat.CtimeSec != 0 || e.Stat.CtimeNsec != 0 {
			ge.CreatedAt = time.Unix(int64(e.Stat.CtimeSec), int64(e.Stat.CtimeNsec))
		}
		if e.Stat.MtimeSec != 0 || e.Stat.MtimeNsec != 0 {
			ge.ModifiedAt = time.Unix(int64(e.Stat.MtimeSec), int64(e.Stat.MtimeNsec))
		}
		gi.Entries = append(gi.Entries, ge)
	}
	return gi
}

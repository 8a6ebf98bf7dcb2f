package gitstore

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// indexHas returns the first of names (slash-separated, relative to the
// top of the work tree) that the index tracks, or "". It reads entry
// names only, in order, and stops at the first name sorted after every
// one asked for: a session at the top of the work tree (".hegel/…") sorts
// before nearly every path, so this costs a few hundred bytes of the
// index, not the whole file. rollback/index.go is the full codec; this
// one needs nothing of an entry but its name.
func (r *Repo) indexHas(names ...string) (string, error) {
	if r.IndexFile == "" {
		return r.memoryIndexHas(names)
	}
	f, err := os.Open(r.IndexFile)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil // no index yet: nothing is tracked
	}
	if err != nil {
		return "", fmt.Errorf("cannot read the index: %s", oneLine(err.Error()))
	}
	defer f.Close()
	got, err := scanIndexNames(bufio.NewReaderSize(f, 4<<10), names)
	if err != nil {
		return "", fmt.Errorf("cannot read the index %s: %s", r.IndexFile, oneLine(err.Error()))
	}
	return got, nil
}

func (r *Repo) memoryIndexHas(names []string) (string, error) {
	idx, err := r.storage.Index()
	if err != nil {
		return "", nil // an in-memory repository without an index
	}
	for _, n := range names {
		for _, e := range idx.Entries {
			if e.Name == n {
				return n, nil
			}
		}
	}
	return "", nil
}

// scanIndexNames walks the entries of an index file (versions 2 to 4)
// until it has seen every name in want or passed them all.
func scanIndexNames(rd *bufio.Reader, want []string) (string, error) {
	var hdr [12]byte
	if _, err := io.ReadFull(rd, hdr[:]); err != nil {
		return "", errors.New("truncated header")
	}
	if string(hdr[:4]) != "DIRC" {
		return "", errors.New("not an index file")
	}
	version := binary.BigEndian.Uint32(hdr[4:8])
	if version < 2 || version > 4 {
		return "", fmt.Errorf("index version %d", version)
	}
	count := binary.BigEndian.Uint32(hdr[8:12])
	last := ""
	for _, w := range want {
		last = max(last, w)
	}
	const fixed = 62 // stat data (40), object id (20), flags (2)
	var ent [fixed + 2]byte
	var name []byte
	for i := uint32(0); i < count; i++ {
		if _, err := io.ReadFull(rd, ent[:fixed]); err != nil {
			return "", errors.New("truncated entry")
		}
		flags := binary.BigEndian.Uint16(ent[60:62])
		size := fixed
		if version >= 3 && flags&0x4000 != 0 {
			if _, err := io.ReadFull(rd, ent[fixed:fixed+2]); err != nil {
				return "", errors.New("truncated entry")
			}
			size += 2
		}
		if version == 4 {
			strip, err := readIndexVarint(rd)
			if err != nil || strip > uint64(len(name)) {
				return "", errors.New("bad path prefix")
			}
			suffix, err := rd.ReadBytes(0)
			if err != nil {
				return "", errors.New("truncated path")
			}
			name = append(name[:len(name)-int(strip)], suffix[:len(suffix)-1]...)
		} else {
			n, err := rd.ReadBytes(0)
			if err != nil {
				return "", errors.New("truncated path")
			}
			name = append(name[:0], n[:len(n)-1]...)
			// Entries are padded with 1 to 8 NULs to a multiple of 8
			// bytes; ReadBytes took the first.
			pad := (size+len(name)+8)&^7 - (size + len(name) + 1)
			if _, err := rd.Discard(pad); err != nil {
				return "", errors.New("truncated entry")
			}
		}
		for _, w := range want {
			if string(name) == w {
				return w, nil
			}
		}
		if bytes.Compare(name, []byte(last)) > 0 {
			return "", nil // sorted: every name asked for is behind
		}
	}
	return "", nil
}

// readIndexVarint reads git's offset varint (index v4's path prefix
// length).
func readIndexVarint(rd *bufio.Reader) (uint64, error) {
	c, err := rd.ReadByte()
	if err != nil {
		return 0, err
	}
	v := uint64(c & 0x7f)
	for c&0x80 != 0 {
		if c, err = rd.ReadByte(); err != nil {
			return 0, err
		}
		v = ((v + 1) << 7) | uint64(c&0x7f)
		if v > 1<<32 {
			return 0, errors.New("varint overflow")
		}
	}
	return v, nil
}

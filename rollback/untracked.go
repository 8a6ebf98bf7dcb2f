package rollback

import (
	"bytes"
	"encoding/binary"
	"errors"
)

// The untracked cache (the index's UNTR extension, core.untrackedCache)
// records, for each directory git status read, its stat data and the
// untracked names it found there, so that the next git status reads only
// the directories whose stat data changed. This file reads and writes it
// in git 2.39's format (dir.c, read_untracked_extension and
// write_untracked_extension), byte for byte: a cache parsed here and
// written again unchanged gives the bytes git wrote. untracked_carry.go
// decides which directories a restore makes stale.
//
// The format, all integers big-endian, varints as in the index's path
// prefixes (decodeVarint):
//
//	varint ident length, ident ("Location <worktree>, system <uname>" and a NUL)
//	stat data of info/exclude, stat data of core.excludesFile (36 bytes each)
//	dir_flags (4 bytes)
//	object id of info/exclude, of core.excludesFile (20 bytes each)
//	the per-directory exclude file name (".gitignore"), NUL-terminated
//	varint number of directories (0: no tree, and the extension ends here)
//	each directory depth first, parents before their subdirectories:
//	  varint untracked count, varint subdirectory count, name NUL,
//	  each untracked name NUL
//	three EWAH bitmaps indexed by directory number: valid, check_only,
//	  and "has a per-directory exclude file" (sha1_valid)
//	the stat data of each valid directory, in order (36 bytes each)
//	the object id of each directory's exclude file, in order (20 bytes each)
//	a NUL

// untrCache is a parsed untracked cache.
type untrCache struct {
	ident                    []byte // with its NUL
	infoExclude, excludeFile [36]byte
	infoOid, excludeOid      [20]byte
	flags                    uint32
	perDir                   string
	root                     *untrDir // nil: none yet
	dirs                     int      // directories in the tree
}

// untrDir is one directory of the untracked cache.
type untrDir struct {
	name      string
	untracked []string
	subs      []*untrDir
	valid     bool
	checkOnly bool
	stat      statData // when valid
	oid       [20]byte // of its exclude file; zero when it has none
	byName    map[string][]*untrDir
}

var errUntracked = errors.New("unreadable untracked cache")

// parseUntracked parses an UNTR payload. It refuses anything git would
// refuse, and anything it would accept that does not write back to the
// same bytes (the caller checks that with encodeUntracked).
func parseUntracked(b []byte) (*untrCache, error) {
	if len(b) <= 1 || b[len(b)-1] != 0 {
		return nil, errUntracked
	}
	end := len(b) - 1
	uc := &untrCache{}
	n, w := decodeVarint(b)
	if w == 0 || n > uint64(end-w) {
		return nil, errUntracked
	}
	p := w
	uc.ident = b[p : p+int(n)]
	p += int(n)
	const fixed = 36 + 36 + 4
	if p+fixed+40+1 > end {
		return nil, errUntracked
	}
	copy(uc.infoExclude[:], b[p:])
	copy(uc.excludeFile[:], b[p+36:])
	uc.flags = binary.BigEndian.Uint32(b[p+72:])
	p += fixed
	copy(uc.infoOid[:], b[p:])
	copy(uc.excludeOid[:], b[p+20:])
	p += 40
	nul := bytes.IndexByte(b[p:end], 0)
	if nul < 0 {
		return nil, errUntracked
	}
	uc.perDir = string(b[p : p+nul])
	p += nul + 1
	if p == end {
		return uc, nil
	}
	count, w := decodeVarint(b[p:end])
	if w == 0 {
		return nil, errUntracked
	}
	p += w
	if count == 0 {
		if p != end {
			return nil, errUntracked
		}
		return uc, nil
	}
	// Each directory takes at least three bytes: a bound before allocating.
	if count > uint64(end-p)/3 {
		return nil, errUntracked
	}
	order := make([]*untrDir, 0, count)
	var readDir func(depth int) (*untrDir, error)
	readDir = func(depth int) (*untrDir, error) {
		if depth > 4096 || len(order) >= int(count) {
			return nil, errUntracked
		}
		nu, w := decodeVarint(b[p:end])
		if w == 0 {
			return nil, errUntracked
		}
		p += w
		ns, w := decodeVarint(b[p:end])
		if w == 0 {
			return nil, errUntracked
		}
		p += w
		if nu > uint64(end-p) || ns > count {
			return nil, errUntracked
		}
		str := func() (string, error) {
			i := bytes.IndexByte(b[p:end], 0)
			if i < 0 {
				return "", errUntracked
			}
			s := string(b[p : p+i])
			p += i + 1
			return s, nil
		}
		d := &untrDir{}
		var err error
		if d.name, err = str(); err != nil {
			return nil, err
		}
		if nu > 0 {
			d.untracked = make([]string, nu)
			for i := range d.untracked {
				if d.untracked[i], err = str(); err != nil {
					return nil, err
				}
			}
		}
		order = append(order, d)
		if ns > 0 {
			d.subs = make([]*untrDir, ns)
			for i := range d.subs {
				if d.subs[i], err = readDir(depth + 1); err != nil {
					return nil, err
				}
			}
		}
		return d, nil
	}
	root, err := readDir(0)
	if err != nil || len(order) != int(count) {
		return nil, errUntracked
	}
	var bits [3][]int
	for k := range bits {
		bm, w, err := readEWAH(b[p:end], len(order))
		if err != nil {
			return nil, err
		}
		p += w
		for _, i := range bm {
			if i >= len(order) {
				return nil, errUntracked
			}
		}
		bits[k] = bm
	}
	valid, checkOnly, hasOid := bits[0], bits[1], bits[2]
	for _, i := range checkOnly {
		order[i].checkOnly = true
	}
	for _, i := range valid {
		if p+36 > end {
			return nil, errUntracked
		}
		order[i].valid = true
		order[i].stat = statFromDisk(b[p:])
		p += 36
	}
	for _, i := range hasOid {
		if p+20 > end {
			return nil, errUntracked
		}
		copy(order[i].oid[:], b[p:])
		p += 20
	}
	if p != end {
		return nil, errUntracked
	}
	uc.root, uc.dirs = root, len(order)
	return uc, nil
}

func statFromDisk(b []byte) statData {
	u := func(k int) uint32 { return binary.BigEndian.Uint32(b[4*k:]) }
	return statData{CtimeSec: u(0), CtimeNsec: u(1), MtimeSec: u(2), MtimeNsec: u(3),
		Dev: u(4), Ino: u(5), UID: u(6), GID: u(7), Size: u(8)}
}

func appendStat(b []byte, s statData) []byte {
	for _, v := range [...]uint32{s.CtimeSec, s.CtimeNsec, s.MtimeSec, s.MtimeNsec, s.Dev, s.Ino, s.UID, s.GID, s.Size} {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	return b
}

// appendUntracked appends uc's payload (without signature and size) as
// git writes it: an invalid directory is written without its untracked
// names and without check_only.
func appendUntracked(b []byte, uc *untrCache) []byte {
	var vb [16]byte
	b = append(b, vb[:putVarint(vb[:], uint64(len(uc.ident)))]...)
	b = append(b, uc.ident...)
	b = append(b, uc.infoExclude[:]...)
	b = append(b, uc.excludeFile[:]...)
	b = binary.BigEndian.AppendUint32(b, uc.flags)
	b = append(b, uc.infoOid[:]...)
	b = append(b, uc.excludeOid[:]...)
	b = append(b, uc.perDir...)
	b = append(b, 0)
	if uc.root == nil {
		return append(b, vb[:putVarint(vb[:], 0)]...)
	}
	var (
		valid, checkOnly, hasOid ewahWriter
		tree, stats, oids        []byte
		index                    int
	)
	valid.init()
	checkOnly.init()
	hasOid.init()
	var walk func(d *untrDir)
	walk = func(d *untrDir) {
		i := index
		index++
		untracked := d.untracked
		if !d.valid {
			untracked = nil
		} else if d.checkOnly {
			checkOnly.set(i)
		}
		if d.valid {
			valid.set(i)
			stats = appendStat(stats, d.stat)
		}
		if d.oid != ([20]byte{}) {
			hasOid.set(i)
			oids = append(oids, d.oid[:]...)
		}
		tree = append(tree, vb[:putVarint(vb[:], uint64(len(untracked)))]...)
		tree = append(tree, vb[:putVarint(vb[:], uint64(len(d.subs)))]...)
		tree = append(tree, d.name...)
		tree = append(tree, 0)
		for _, u := range untracked {
			tree = append(tree, u...)
			tree = append(tree, 0)
		}
		for _, s := range d.subs {
			walk(s)
		}
	}
	walk(uc.root)
	b = append(b, vb[:putVarint(vb[:], uint64(index))]...)
	b = append(b, tree...)
	b = valid.appendTo(b)
	b = checkOnly.appendTo(b)
	b = hasOid.appendTo(b)
	b = append(b, stats...)
	b = append(b, oids...)
	return append(b, 0)
}

// EWAH-compressed bitmaps (git's ewah/), 64-bit words. A marker word
// ("running length word") holds a run bit (bit 0), the number of words of
// that bit that follow implicitly (bits 1-32) and the number of literal
// words stored after it (bits 33-63). Serialized: bit count (4 bytes),
// word count (4 bytes), the words (8 bytes each), the position of the
// last marker word (4 bytes).
const (
	rlwRunningBits = 32
	rlwLargestRun  = 1<<rlwRunningBits - 1
	rlwLargestLit  = 1<<(64-1-rlwRunningBits) - 1
)

func rlwRunBit(w uint64) bool     { return w&1 != 0 }
func rlwRunLen(w uint64) uint64   { return (w >> 1) & rlwLargestRun }
func rlwLiterals(w uint64) uint64 { return w >> (1 + rlwRunningBits) }
func rlwSize(w uint64) uint64     { return rlwRunLen(w) + rlwLiterals(w) }
func rlwWithRunLen(w, l uint64) uint64 {
	return w&^(rlwLargestRun<<1) | (l&rlwLargestRun)<<1
}
func rlwWithLiterals(w, l uint64) uint64 {
	const low = 1<<(rlwRunningBits+1) - 1
	return w&low | l<<(rlwRunningBits+1)
}
func rlwWithRunBit(w uint64, b bool) uint64 {
	if b {
		return w | 1
	}
	return w &^ 1
}

// readEWAH reads a serialized bitmap of at most limit bits and returns the
// positions of its set bits in increasing order and the bytes it took.
func readEWAH(b []byte, limit int) ([]int, int, error) {
	if len(b) < 8 {
		return nil, 0, errUntracked
	}
	bitSize := binary.BigEndian.Uint32(b)
	if uint64(bitSize) > uint64(limit) {
		return nil, 0, errUntracked
	}
	words := uint64(binary.BigEndian.Uint32(b[4:]))
	if words > uint64(len(b)-8)/8 || 8+8*int(words)+4 > len(b) {
		return nil, 0, errUntracked
	}
	buf := make([]uint64, words)
	for i := range buf {
		buf[i] = binary.BigEndian.Uint64(b[8+8*i:])
	}
	n := 8 + 8*int(words)
	if rlw := binary.BigEndian.Uint32(b[n:]); uint64(rlw) >= words {
		return nil, 0, errUntracked
	}
	n += 4
	var set []int
	pos := uint64(0)
	for ptr := 0; ptr < len(buf); {
		w := buf[ptr]
		run := rlwRunLen(w) * 64
		if pos+run > uint64(bitSize)+64 {
			return nil, 0, errUntracked
		}
		if rlwRunBit(w) {
			for k := uint64(0); k < run; k++ {
				set = append(set, int(pos+k))
			}
		}
		pos += run
		ptr++
		lits := rlwLiterals(w)
		if lits > uint64(len(buf)-ptr) {
			return nil, 0, errUntracked
		}
		for k := uint64(0); k < lits; k++ {
			for c := uint64(0); c < 64; c++ {
				if buf[ptr]&(1<<c) != 0 {
					set = append(set, int(pos+c))
				}
			}
			pos += 64
			ptr++
		}
	}
	for _, i := range set {
		if uint64(i) >= uint64(bitSize) {
			return nil, 0, errUntracked
		}
	}
	return set, n, nil
}

// ewahWriter builds a bitmap by setting bits in increasing order, word
// for word as git's ewah_set does, so the bytes are git's.
type ewahWriter struct {
	buf     []uint64
	rlw     int // index of the current marker word
	bitSize int
}

func (e *ewahWriter) init() {
	e.buf = append(e.buf[:0], 0)
	e.rlw, e.bitSize = 0, 0
}

func (e *ewahWriter) pushRLW(v uint64) {
	e.buf = append(e.buf, v)
	e.rlw = len(e.buf) - 1
}

func (e *ewahWriter) addEmptyWords(v bool, number uint64) {
	w := e.buf[e.rlw]
	if rlwRunBit(w) != v && rlwSize(w) == 0 {
		e.buf[e.rlw] = rlwWithRunBit(w, v)
	} else if rlwLiterals(w) != 0 || rlwRunBit(w) != v {
		e.pushRLW(0)
		if v {
			e.buf[e.rlw] = rlwWithRunBit(e.buf[e.rlw], v)
		}
	}
	runlen := rlwRunLen(e.buf[e.rlw])
	canAdd := min(number, rlwLargestRun-runlen)
	e.buf[e.rlw] = rlwWithRunLen(e.buf[e.rlw], runlen+canAdd)
	number -= canAdd
	for number >= rlwLargestRun {
		e.pushRLW(0)
		if v {
			e.buf[e.rlw] = rlwWithRunBit(e.buf[e.rlw], v)
		}
		e.buf[e.rlw] = rlwWithRunLen(e.buf[e.rlw], rlwLargestRun)
		number -= rlwLargestRun
	}
	if number > 0 {
		e.pushRLW(0)
		if v {
			e.buf[e.rlw] = rlwWithRunBit(e.buf[e.rlw], v)
		}
		e.buf[e.rlw] = rlwWithRunLen(e.buf[e.rlw], number)
	}
}

func (e *ewahWriter) addLiteral(word uint64) {
	cur := rlwLiterals(e.buf[e.rlw])
	if cur >= rlwLargestLit {
		e.pushRLW(0)
		e.buf[e.rlw] = rlwWithLiterals(e.buf[e.rlw], 1)
		e.buf = append(e.buf, word)
		return
	}
	e.buf[e.rlw] = rlwWithLiterals(e.buf[e.rlw], cur+1)
	e.buf = append(e.buf, word)
}

func (e *ewahWriter) addEmptyWord(v bool) {
	w := e.buf[e.rlw]
	noLiteral := rlwLiterals(w) == 0
	runLen := rlwRunLen(w)
	if noLiteral && runLen == 0 {
		w = rlwWithRunBit(w, v)
		e.buf[e.rlw] = w
	}
	if noLiteral && rlwRunBit(w) == v && runLen < rlwLargestRun {
		e.buf[e.rlw] = rlwWithRunLen(w, runLen+1)
		return
	}
	e.pushRLW(0)
	e.buf[e.rlw] = rlwWithRunLen(rlwWithRunBit(0, v), 1)
}

// set sets bit i, which must be past every bit set before.
func (e *ewahWriter) set(i int) {
	dist := (i+64)/64 - (e.bitSize+63)/64
	e.bitSize = i + 1
	bit := uint64(1) << (uint(i) % 64)
	if dist > 0 {
		if dist > 1 {
			e.addEmptyWords(false, uint64(dist-1))
		}
		e.addLiteral(bit)
		return
	}
	if rlwLiterals(e.buf[e.rlw]) == 0 {
		e.buf[e.rlw] = rlwWithRunLen(e.buf[e.rlw], rlwRunLen(e.buf[e.rlw])-1)
		e.addLiteral(bit)
		return
	}
	last := len(e.buf) - 1
	e.buf[last] |= bit
	if e.buf[last] == ^uint64(0) {
		e.buf = e.buf[:last]
		e.buf[e.rlw] = rlwWithLiterals(e.buf[e.rlw], rlwLiterals(e.buf[e.rlw])-1)
		e.addEmptyWord(true)
	}
}

func (e *ewahWriter) appendTo(b []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(e.bitSize))
	b = binary.BigEndian.AppendUint32(b, uint32(len(e.buf)))
	for _, w := range e.buf {
		b = binary.BigEndian.AppendUint64(b, w)
	}
	return binary.BigEndian.AppendUint32(b, uint32(e.rlw))
}

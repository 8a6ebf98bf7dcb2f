package objects

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"container/list"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// Packs are read here rather than through go-git, whose storage loads a
// pack's whole .idx into maps on the first lookup (20–36 ms per command on
// a 100,000-object pack), serializes every read, and never looks at the
// pack directory again: after a concurrent `git repack -a -d` its reads
// fail with "packfile not found". The .idx is mapped (a lookup is a binary
// search in it); the .pack is kept open and read with pread, from several
// goroutines without a lock. (Mapping the pack too made a rollback's peak
// RSS 130 MiB instead of 77: every read maps the pages around it.) A pack
// that repack deletes stays readable through its open file.

var errBadMapSize = errors.New("empty or oversized file")

// pack is one mapped pack and its index.
type pack struct {
	path  string // the .pack file
	mtime time.Time

	idx    []byte   // the mapped .idx
	f      *os.File // the .pack, read with pread (a mapping would count every page around each object read as the process's memory)
	size   int64
	mapped *mappings

	count   int
	v1      bool
	fanout  [256]uint32
	names   []byte // count × 20 bytes
	offsets []byte // v2: count × 4 bytes; v1: entries of 24 bytes
	large   []byte // v2: 8-byte offsets

	// gone is set once the pack's files are no longer in the pack
	// directory: its mapping still reads, but it cannot be freshened.
	gone      atomic.Bool
	freshened atomic.Bool
}

var idxMagic = []byte{0xff, 't', 'O', 'c'}

// mappings releases a pack's two mappings once: on Close, or when the
// pack is no longer referenced (nothing returned to callers points into a
// mapping: objects are always inflated or copied out).
type mappings struct {
	once   sync.Once
	unmaps []func() error // unmap, close
}

func (m *mappings) release() {
	m.once.Do(func() {
		for _, u := range m.unmaps {
			_ = u()
		}
	})
}

// openPack maps the pack whose index is idxPath. The pack's checksum must
// match the one its index records (a pack being replaced is skipped).
func openPack(idxPath string) (*pack, error) {
	p := &pack{path: strings.TrimSuffix(idxPath, ".idx") + ".pack", mapped: &mappings{}}
	runtime.AddCleanup(p, func(m *mappings) { m.release() }, p.mapped)
	fi, f, err := openForMap(idxPath)
	if err != nil {
		return nil, err
	}
	var unmap func() error
	p.idx, unmap, err = mapFile(f, fi.Size())
	if unmap != nil {
		p.mapped.unmaps = append(p.mapped.unmaps, unmap)
	}
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("cannot map %s: %w", idxPath, err)
	}
	if err := p.parseIdx(); err != nil {
		p.close()
		return nil, fmt.Errorf("%s: %w", idxPath, err)
	}
	fi, f, err = openForMap(p.path)
	if err != nil {
		p.close()
		return nil, err
	}
	p.mtime, p.f, p.size = fi.ModTime(), f, fi.Size()
	p.mapped.unmaps = append(p.mapped.unmaps, f.Close)
	var head [12]byte
	var tail [20]byte
	if p.size < 12+20 {
		p.close()
		return nil, fmt.Errorf("%s is not a pack", p.path)
	}
	if _, err := f.ReadAt(head[:], 0); err != nil || !bytes.Equal(head[:4], []byte("PACK")) {
		p.close()
		return nil, fmt.Errorf("%s is not a pack", p.path)
	}
	if _, err := f.ReadAt(tail[:], p.size-20); err != nil || !bytes.Equal(tail[:], p.idx[len(p.idx)-40:len(p.idx)-20]) {
		p.close()
		return nil, fmt.Errorf("%s does not match its index", p.path)
	}
	return p, nil
}

func openForMap(p string) (os.FileInfo, *os.File, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return fi, f, nil
}

func (p *pack) close() {
	p.mapped.release()
	p.idx = nil
}

// parseIdx reads the index header (version 1 or 2) and slices its tables.
func (p *pack) parseIdx() error {
	b := p.idx
	fan := b
	if len(b) >= 8 && bytes.Equal(b[:4], idxMagic) {
		if v := binary.BigEndian.Uint32(b[4:8]); v != 2 {
			return fmt.Errorf("unsupported pack index version %d", v)
		}
		fan = b[8:]
	} else {
		p.v1 = true
	}
	if len(fan) < 256*4 {
		return errors.New("truncated pack index")
	}
	for i := range p.fanout {
		p.fanout[i] = binary.BigEndian.Uint32(fan[4*i:])
		if i > 0 && p.fanout[i] < p.fanout[i-1] {
			return errors.New("corrupt pack index fan-out")
		}
	}
	n := int(p.fanout[255])
	p.count = n
	rest := fan[256*4:]
	if p.v1 {
		if len(rest) < n*24+40 {
			return errors.New("truncated pack index")
		}
		p.offsets = rest[:n*24]
		return nil
	}
	if len(rest) < n*(20+4+4)+40 {
		return errors.New("truncated pack index")
	}
	p.names = rest[:n*20]
	p.offsets = rest[n*24 : n*28]
	p.large = rest[n*28 : len(rest)-40]
	return nil
}

// name returns the i-th object name of the index.
func (p *pack) name(i int) []byte {
	if p.v1 {
		return p.offsets[i*24+4 : i*24+24]
	}
	return p.names[i*20 : i*20+20]
}

// find returns the offset of h in the pack.
func (p *pack) find(h plumbing.Hash) (int64, bool) {
	lo := 0
	if h[0] > 0 {
		lo = int(p.fanout[h[0]-1])
	}
	hi := int(p.fanout[h[0]])
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		switch c := bytes.Compare(p.name(mid), h[:]); {
		case c == 0:
			return p.offset(mid)
		case c < 0:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return 0, false
}

func (p *pack) offset(i int) (int64, bool) {
	if p.v1 {
		return int64(binary.BigEndian.Uint32(p.offsets[i*24:])), true
	}
	o := binary.BigEndian.Uint32(p.offsets[i*4:])
	if o&0x80000000 == 0 {
		return int64(o), true
	}
	k := int(o & 0x7fffffff)
	if (k+1)*8 > len(p.large) {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(p.large[k*8:])), true
}

// Pack entry types.
const (
	packCommit   = 1
	packTree     = 2
	packBlob     = 3
	packTag      = 4
	packOfsDelta = 6
	packRefDelta = 7
)

func packObjectType(t int) plumbing.ObjectType {
	switch t {
	case packCommit:
		return plumbing.CommitObject
	case packTree:
		return plumbing.TreeObject
	case packBlob:
		return plumbing.BlobObject
	case packTag:
		return plumbing.TagObject
	}
	return plumbing.InvalidObject
}

// entry is the header of one object in a pack.
type entry struct {
	typ      int
	size     int64 // inflated size of the data (of the delta, for deltas)
	data     int64 // where the zlib stream starts
	baseOff  int64 // ofs-delta
	baseHash plumbing.Hash
}

var errCorruptPack = errors.New("corrupt pack entry")

func (p *pack) entry(off int64) (entry, error) {
	if off < 12 || off >= p.size-20 {
		return entry{}, errCorruptPack
	}
	// The header: up to 10 bytes of type and size, then 10 of offset or 20
	// of base name.
	var buf [48]byte
	n, err := p.f.ReadAt(buf[:min(int64(len(buf)), p.size-20-off)], off)
	if n == 0 {
		return entry{}, fmt.Errorf("%w: %v", errCorruptPack, err)
	}
	d := buf[:n]
	i := int64(0)
	c := d[i]
	i++
	e := entry{typ: int(c>>4) & 7, size: int64(c & 15)}
	for shift := 4; c&0x80 != 0; shift += 7 {
		if i >= int64(len(d)) || shift > 56 {
			return entry{}, errCorruptPack
		}
		c = d[i]
		i++
		e.size |= int64(c&0x7f) << shift
	}
	switch e.typ {
	case packOfsDelta:
		if i >= int64(len(d)) {
			return entry{}, errCorruptPack
		}
		c = d[i]
		i++
		rel := int64(c & 0x7f)
		for c&0x80 != 0 {
			if i >= int64(len(d)) || rel > 1<<55 {
				return entry{}, errCorruptPack
			}
			c = d[i]
			i++
			rel = (rel+1)<<7 | int64(c&0x7f)
		}
		e.baseOff = off - rel
		if rel <= 0 || e.baseOff < 12 {
			return entry{}, errCorruptPack
		}
	case packRefDelta:
		if i+20 > int64(len(d)) {
			return entry{}, errCorruptPack
		}
		copy(e.baseHash[:], d[i:i+20])
		i += 20
	case packCommit, packTree, packBlob, packTag:
	default:
		return entry{}, errCorruptPack
	}
	e.data = off + i
	return e, nil
}

var (
	zlibReaders sync.Pool // of io.ReadCloser implementing zlib.Resetter
	packReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 8192) }}
)

// inflate returns the size bytes the zlib stream at off holds.
func (p *pack) inflate(off, size int64) ([]byte, error) {
	if off >= p.size-20 || size < 0 || size > p.size*1032 {
		return nil, errCorruptPack // zlib cannot expand beyond ~1032:1
	}
	src := io.NewSectionReader(p.f, off, p.size-20-off)
	var br *bufio.Reader
	if size <= 4096 {
		br = packReaders.Get().(*bufio.Reader)
		defer packReaders.Put(br)
		br.Reset(src)
	} else {
		// One read for most of a large object: a deflated stream is
		// rarely longer than what it inflates to.
		br = bufio.NewReaderSize(src, int(min(size+512, 1<<20)))
	}
	var zr io.ReadCloser
	if v := zlibReaders.Get(); v != nil {
		zr = v.(io.ReadCloser)
		if err := zr.(zlib.Resetter).Reset(br, nil); err != nil {
			return nil, err
		}
	} else {
		var err error
		if zr, err = zlib.NewReader(br); err != nil {
			return nil, err
		}
	}
	defer zlibReaders.Put(zr)
	out := make([]byte, size)
	if _, err := io.ReadFull(zr, out); err != nil {
		return nil, fmt.Errorf("%w: %v", errCorruptPack, err)
	}
	return out, nil
}

// inflatePrefix returns the first n bytes of the zlib stream at off.
func (p *pack) inflatePrefix(off, n int64) ([]byte, error) {
	if off >= p.size-20 || n < 0 {
		return nil, errCorruptPack
	}
	br := packReaders.Get().(*bufio.Reader)
	defer packReaders.Put(br)
	// A small window: n bytes of output need few bytes of input.
	br.Reset(io.NewSectionReader(p.f, off, min(p.size-20-off, 4096)))
	var zr io.ReadCloser
	if v := zlibReaders.Get(); v != nil {
		zr = v.(io.ReadCloser)
		if err := zr.(zlib.Resetter).Reset(br, nil); err != nil {
			return nil, fmt.Errorf("%w: %v", errCorruptPack, err)
		}
	} else {
		var err error
		if zr, err = zlib.NewReader(br); err != nil {
			return nil, fmt.Errorf("%w: %v", errCorruptPack, err)
		}
	}
	defer zlibReaders.Put(zr)
	out := make([]byte, n)
	if _, err := io.ReadFull(zr, out); err != nil {
		return nil, fmt.Errorf("%w: %v", errCorruptPack, err)
	}
	return out, nil
}

// applyDelta rebuilds an object from its base and a delta in git's format.
func applyDelta(base, delta []byte) ([]byte, error) {
	bad := errors.New("corrupt delta")
	varint := func() (int, bool) {
		n, shift := 0, 0
		for len(delta) > 0 && shift < 64 {
			c := delta[0]
			delta = delta[1:]
			n |= int(c&0x7f) << shift
			if c&0x80 == 0 {
				return n, true
			}
			shift += 7
		}
		return 0, false
	}
	srcSize, ok1 := varint()
	dstSize, ok2 := varint()
	if !ok1 || !ok2 || srcSize != len(base) || dstSize < 0 || dstSize > 1<<40 {
		return nil, bad
	}
	out := make([]byte, 0, dstSize)
	for len(delta) > 0 {
		cmd := delta[0]
		delta = delta[1:]
		switch {
		case cmd&0x80 != 0:
			var off, n int
			for k := 0; k < 4; k++ {
				if cmd&(1<<k) != 0 {
					if len(delta) == 0 {
						return nil, bad
					}
					off |= int(delta[0]) << (8 * k)
					delta = delta[1:]
				}
			}
			for k := 0; k < 3; k++ {
				if cmd&(0x10<<k) != 0 {
					if len(delta) == 0 {
						return nil, bad
					}
					n |= int(delta[0]) << (8 * k)
					delta = delta[1:]
				}
			}
			if n == 0 {
				n = 0x10000
			}
			if off+n > len(base) || off+n < off || len(out)+n > dstSize {
				return nil, bad
			}
			out = append(out, base[off:off+n]...)
		case cmd != 0:
			n := int(cmd)
			if n > len(delta) || len(out)+n > dstSize {
				return nil, bad
			}
			out = append(out, delta[:n]...)
			delta = delta[n:]
		default:
			return nil, bad
		}
	}
	if len(out) != dstSize {
		return nil, bad
	}
	return out, nil
}

// maxDeltaDepth bounds delta chains (git's default depth is 50; a longer
// one is allowed, a cycle is not).
const maxDeltaDepth = 10000

// unpack returns the object at off in p, resolving deltas. Bases on the
// way are kept in the delta cache: objects that share a base are usually
// read together (the trees of one directory, one file's versions).
func (o *Objects) unpack(p *pack, off int64) (plumbing.ObjectType, []byte, error) {
	type link struct{ off, data, size int64 }
	var chain []link
	var (
		baseType plumbing.ObjectType
		base     []byte
	)
	for cur := off; ; {
		if len(chain) > maxDeltaDepth {
			return plumbing.InvalidObject, nil, fmt.Errorf("%w: delta chain too long", errCorruptPack)
		}
		if t, b, ok := o.deltas.get(deltaKey{p, cur}); ok {
			baseType, base = t, b
			if len(chain) == 0 {
				base = bytes.Clone(b) // the caller owns what it gets
			}
			break
		}
		e, err := p.entry(cur)
		if err != nil {
			return plumbing.InvalidObject, nil, err
		}
		if e.typ == packOfsDelta || e.typ == packRefDelta {
			chain = append(chain, link{cur, e.data, e.size})
			if e.typ == packOfsDelta {
				cur = e.baseOff
				continue
			}
			if boff, ok := p.find(e.baseHash); ok {
				cur = boff
				continue
			}
			// A base in another pack (git's index-pack completes thin
			// packs, so only a hand-made pack gets here).
			baseType, base, err = o.readAny(e.baseHash)
			if err != nil {
				return plumbing.InvalidObject, nil, err
			}
			break
		}
		baseType = packObjectType(e.typ)
		if base, err = p.inflate(e.data, e.size); err != nil {
			return plumbing.InvalidObject, nil, err
		}
		if len(chain) > 0 {
			o.deltas.put(deltaKey{p, cur}, baseType, base)
		}
		break
	}
	for i := len(chain) - 1; i >= 0; i-- {
		delta, err := p.inflate(chain[i].data, chain[i].size)
		if err != nil {
			return plumbing.InvalidObject, nil, err
		}
		if base, err = applyDelta(base, delta); err != nil {
			return plumbing.InvalidObject, nil, err
		}
		if i > 0 {
			o.deltas.put(deltaKey{p, chain[i].off}, baseType, base)
		}
	}
	return baseType, base, nil
}

// packedSize returns the size of the object at off without inflating
// more than a delta's header: a delta starts with the sizes of its base
// and of its result. (Inflating the whole chain, as a read does, made
// every size check cost a second read: half of `git hegel log`'s time
// over a fast-import'ed history, whose blobs are deltas.)
func (o *Objects) packedSize(p *pack, off int64) (int64, error) {
	e, err := p.entry(off)
	if err != nil {
		return 0, err
	}
	if e.typ != packOfsDelta && e.typ != packRefDelta {
		return e.size, nil
	}
	head, err := p.inflatePrefix(e.data, min(e.size, 20))
	if err != nil {
		return 0, err
	}
	var size int64
	for range 2 { // the base's size, then the result's
		v, shift, ok := int64(0), 0, false
		for len(head) > 0 && shift < 64 {
			c := head[0]
			head = head[1:]
			v |= int64(c&0x7f) << shift
			if c&0x80 == 0 {
				ok = true
				break
			}
			shift += 7
		}
		if !ok || v < 0 || v > 1<<40 {
			return 0, fmt.Errorf("%w: corrupt delta header", errCorruptPack)
		}
		size = v
	}
	return size, nil
}

// lru keeps recently used objects up to a byte budget. It serves two
// caches: delta bases by pack and offset, and whole objects by name.
type lru[K comparable] struct {
	mu    sync.Mutex
	limit int
	used  int
	list  list.List
	items map[K]*list.Element
}

type lruItem[K comparable] struct {
	key  K
	typ  plumbing.ObjectType
	data []byte
}

func (c *lru[K]) get(k K) (plumbing.ObjectType, []byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[k]; ok {
		c.list.MoveToFront(el)
		it := el.Value.(*lruItem[K])
		return it.typ, it.data, true
	}
	return plumbing.InvalidObject, nil, false
}

// put keeps data, which must not change afterwards.
func (c *lru[K]) put(k K, t plumbing.ObjectType, data []byte) {
	if len(data) > c.limit/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[k]; ok {
		return
	}
	if c.items == nil {
		c.items = map[K]*list.Element{}
	}
	c.items[k] = c.list.PushFront(&lruItem[K]{k, t, data})
	c.used += len(data)
	for c.used > c.limit {
		el := c.list.Back()
		it := el.Value.(*lruItem[K])
		c.list.Remove(el)
		delete(c.items, it.key)
		c.used -= len(it.data)
	}
}

func (c *lru[K]) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.items, c.used = nil, 0
	c.list.Init()
}

type deltaKey struct {
	p   *pack
	off int64
}

// deltaCacheLimit is the budget of the delta base cache (git's
// core.deltaBaseCacheLimit defaults to 96 MiB; ours serves one command);
// objectCacheLimit that of whole objects read (go-git's default was 96 MiB).
const (
	deltaCacheLimit  = 32 << 20
	objectCacheLimit = 32 << 20
)

// packSet is the packs of every object directory as last scanned.
type packSet struct {
	packs   []*pack
	byPath  map[string]*pack
	dirs    map[string]time.Time // pack directory → its mtime at the scan
	scanned time.Time
	// unsettled: a pack listed by the scan was gone when it was opened,
	// or a directory changed while it was scanned. A concurrent repack
	// may then have written the pack that replaced it after the listing,
	// so a reader that misses an object scans again.
	unsettled bool
}

// unchanged reports whether no pack directory can have changed since s
// was scanned. A directory modified within a second of the scan is not
// trusted (coarse timestamps), as git distrusts "racily clean" entries.
func (s *packSet) unchanged(dirs []string) bool {
	if s == nil {
		return false
	}
	for _, d := range dirs {
		fi, err := os.Stat(d)
		var mt time.Time
		if err == nil {
			mt = fi.ModTime()
		}
		if old, ok := s.dirs[d]; !ok || !old.Equal(mt) || s.scanned.Sub(mt) < time.Second {
			return false
		}
	}
	return true
}

// scanPacks returns the packs as they are now. Packs already mapped are
// kept (their mappings stay valid); those whose files vanished are kept
// for reading too, marked gone, and looked at last.
func (o *Objects) scanPacks(force bool) *packSet {
	dirs := o.packDirs()
	if cur := o.packs.Load(); cur != nil && !force && cur.unchanged(dirs) {
		return cur
	}
	o.scanMu.Lock()
	defer o.scanMu.Unlock()
	old := o.packs.Load()
	if old != nil && !force && old.unchanged(dirs) {
		return old // another goroutine rescanned meanwhile
	}
	next := &packSet{byPath: map[string]*pack{}, dirs: map[string]time.Time{}, scanned: time.Now()}
	for _, d := range dirs {
		fi, err := os.Stat(d)
		if err == nil {
			next.dirs[d] = fi.ModTime()
		} else {
			next.dirs[d] = time.Time{}
		}
		names, _ := filepath.Glob(filepath.Join(d, "pack-*.idx"))
		for _, idx := range names {
			pk := strings.TrimSuffix(idx, ".idx") + ".pack"
			if old != nil {
				if p, ok := old.byPath[pk]; ok && !p.gone.Load() {
					next.add(p)
					continue
				}
			}
			p, err := openPack(idx)
			if err != nil {
				// Being written or deleted: the next scan sees it settled.
				next.unsettled = true
				continue
			}
			next.add(p)
		}
		if fi, err := os.Stat(d); err == nil && !fi.ModTime().Equal(next.dirs[d]) {
			next.unsettled = true
		}
	}
	sort.SliceStable(next.packs, func(i, j int) bool { return next.packs[i].mtime.After(next.packs[j].mtime) })
	if old != nil {
		for _, p := range old.packs {
			if _, ok := next.byPath[p.path]; !ok {
				p.gone.Store(true)
				next.packs = append(next.packs, p)
				o.retired = append(o.retired, p)
			}
		}
	}
	o.packs.Store(next)
	return next
}

func (s *packSet) add(p *pack) {
	s.packs = append(s.packs, p)
	s.byPath[p.path] = p
}

// find looks h up in the packs of s.
func (s *packSet) find(h plumbing.Hash, live bool) (*pack, int64, bool) {
	if s == nil {
		return nil, 0, false
	}
	for _, p := range s.packs {
		if live && p.gone.Load() {
			continue
		}
		if off, ok := p.find(h); ok {
			return p, off, true
		}
	}
	return nil, 0, false
}

// freshenPack sets p's mtime to now, once per process (git's
// freshen_packed_object), so a concurrent prune keeps what it holds.
func freshenPack(p *pack) bool {
	if p.freshened.Load() {
		return true
	}
	if err := touch(p.path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			p.gone.Store(true)
		}
		return false
	}
	p.freshened.Store(true)
	return true
}

package objects

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/adler32"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"
)

// A Batch stores the objects of one operation (a checkpoint: a blob per
// changed file and a tree per changed directory), in one pack when there
// are many. Written loose, the safety checkpoint of a rollback across
// 1,000 files was about 2,100 files created, each the most expensive
// thing a filesystem does here (docs/benchmarks.md); as a pack it is two.
// git does the same with what it receives: a fetched pack of
// transfer.unpackLimit (100) objects or more is kept as a pack, a smaller
// one is unpacked into loose objects.
//
// Objects added to a batch are readable once Finish returns, not before.
// Write is safe for concurrent use; the data passed must not change
// afterwards. The pack has no deltas (like git's bulk check-in): packing
// them well is git gc's work.
type Batch struct {
	o    *Objects
	mu   sync.Mutex
	seen map[plumbing.Hash]bool
	// held are the first objects, kept until there are enough for a pack;
	// heldStep says when each came (0: a blob, k: the k-th level of trees,
	// lowest first), the order in which they are written loose.
	held     []Object
	heldStep []int
	// steps counts the levels of trees added so far.
	steps int
	out   *packOut // nil until there are
	err   error
}

// batchPackMin is the number of objects from which a batch writes a pack
// (git's transfer.unpackLimit default).
const batchPackMin = 100

// NewBatch starts a batch. In memory it writes straight through.
func (o *Objects) NewBatch() *Batch {
	return &Batch{o: o, seen: map[plumbing.Hash]bool{}}
}

// Write adds object h (= HashObject(t, data)) unless the repository has
// it, in which case it is freshened as WriteHashed does.
func (b *Batch) Write(t plumbing.ObjectType, h plumbing.Hash, data []byte) error {
	if b.o.mem != nil {
		return b.o.WriteHashed(t, h, data)
	}
	if b.o.freshenQuick(h) {
		return nil
	}
	return b.add(0, t, h, data)
}

// add is Write for an object known not to be in the repository; step
// orders the writes if the objects end up loose (see held).
func (b *Batch) add(step int, t plumbing.ObjectType, h plumbing.Hash, data []byte) error {
	if b.o.mem != nil {
		return b.o.WriteHashed(t, h, data)
	}
	b.mu.Lock()
	if b.seen[h] || b.err != nil {
		err := b.err
		b.mu.Unlock()
		return err
	}
	b.seen[h] = true
	if b.out == nil {
		b.held = append(b.held, Object{t, h, data})
		b.heldStep = append(b.heldStep, step)
		if len(b.held) < batchPackMin {
			b.mu.Unlock()
			return nil
		}
		held := b.held
		b.held, b.heldStep = nil, nil
		b.out, b.err = b.o.newPackOut()
		if b.err != nil {
			err := b.err
			b.mu.Unlock()
			return err
		}
		b.mu.Unlock()
		for _, p := range held {
			if err := b.append(p.Type, p.Hash, p.Data); err != nil {
				return err
			}
		}
		return nil
	}
	b.mu.Unlock()
	return b.append(t, h, data)
}

// append compresses an object (outside the lock: workers compress in
// parallel) and appends it to the pack.
func (b *Batch) append(t plumbing.ObjectType, h plumbing.Hash, data []byte) error {
	entry, err := b.o.packEntry(t, data)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return b.err
	}
	if b.err = b.out.add(h, entry); b.err != nil {
		return b.err
	}
	return nil
}

// WriteTrees is Objects.WriteTrees into the batch; the trees of a level
// are compressed in parallel.
func (b *Batch) WriteTrees(root plumbing.Hash, lookup func(plumbing.Hash) ([]byte, bool)) error {
	return b.o.writeTrees(root, lookup, func(level []Object) error {
		b.mu.Lock()
		b.steps++
		step := b.steps
		b.mu.Unlock()
		return parallel(len(level), func(i int) error {
			return b.add(step, level[i].Type, level[i].Hash, level[i].Data)
		})
	})
}

// parallel runs do(0..n-1) on up to two goroutines per CPU and returns
// the first error once all have ended.
func parallel(n int, do func(i int) error) error {
	workers := min(n, 2*runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := 0; i < n; i++ {
			if err := do(i); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		wg       sync.WaitGroup
		next     atomic.Int64
		errOnce  sync.Once
		firstErr error
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if err := do(i); err != nil {
					errOnce.Do(func() { firstErr = err })
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// Finish stores what the batch holds: a pack and its index, or the few
// objects loose. Afterwards every object written is readable.
func (b *Batch) Finish() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		if b.out != nil {
			b.out.abort()
		}
		return b.err
	}
	if b.out == nil {
		// Loose, in the order a process killed midway must leave them:
		// blobs, then each level of trees after the one below it, so a
		// tree on disk always has its subtrees (WriteTrees relies on it).
		held, steps := b.held, b.heldStep
		b.held, b.heldStep = nil, nil
		for step := 0; step <= b.steps; step++ {
			var group []Object
			for i, o := range held {
				if steps[i] == step {
					group = append(group, o)
				}
			}
			if err := b.o.writeAll(group, false); err != nil {
				return err
			}
		}
		return nil
	}
	out := b.out
	b.out = nil
	if err := out.finish(b.o); err != nil {
		out.abort()
		b.err = err
		return err
	}
	return nil
}

// Abort drops what the batch holds (objects already written loose stay:
// unreachable, git gc removes them).
func (b *Batch) Abort() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.out != nil {
		b.out.abort()
		b.out = nil
	}
	b.held, b.heldStep = nil, nil
}

// packEntry is an object as a pack stores it undeltified: git's type and
// size header, then the content deflated.
func (o *Objects) packEntry(t plumbing.ObjectType, data []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(data)/2 + 32)
	n := uint64(len(data))
	c := byte(t)<<4 | byte(n&0x0f)
	n >>= 4
	for n != 0 {
		buf.WriteByte(c | 0x80)
		c = byte(n & 0x7f)
		n >>= 7
	}
	buf.WriteByte(c)
	if t == plumbing.TreeObject {
		// Trees are stored, not compressed: a rollback reads every tree
		// of its checkpoint that differs from the working tree's, and
		// inflating them was most of its diff (docs/benchmarks.md,
		// "2026-11-25: rollback scan"); deflating them most of a
		// checkpoint's tree writing. Made of hashes, they shrink by only
		// a third anyway.
		writeStoredZlib(&buf, data)
		return buf.Bytes(), nil
	}
	zw, _ := o.zw.Get().(*zlib.Writer)
	if zw == nil {
		zw, _ = zlib.NewWriterLevel(&buf, o.level)
	} else {
		zw.Reset(&buf)
	}
	zw.Write(data)
	err := zw.Close()
	o.zw.Put(zw)
	return buf.Bytes(), err
}

// packOut is a pack being written: a temporary file in the pack
// directory (tmp_pack_*, which git prune removes if it is left behind).
type packOut struct {
	f       *os.File
	off     int64
	entries []packOutEntry
}

type packOutEntry struct {
	hash plumbing.Hash
	off  int64
	crc  uint32
}

func (o *Objects) newPackOut() (*packOut, error) {
	dir := filepath.Join(o.dir, "pack")
	if err := o.perm.mkdirAll(dir); err != nil {
		return nil, fmt.Errorf("cannot write a pack: %w", err)
	}
	f, err := o.perm.OpenFile(filepath.Join(dir, "tmp_pack_"+NewID()[:12]), os.O_RDWR|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return nil, fmt.Errorf("cannot write a pack: %w", err)
	}
	// The object count is filled in by finish.
	if _, err := f.Write([]byte{'P', 'A', 'C', 'K', 0, 0, 0, 2, 0, 0, 0, 0}); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("cannot write a pack: %w", err)
	}
	return &packOut{f: f, off: 12}, nil
}

func (p *packOut) add(h plumbing.Hash, entry []byte) error {
	if _, err := p.f.Write(entry); err != nil {
		return fmt.Errorf("cannot write a pack: %w", err)
	}
	p.entries = append(p.entries, packOutEntry{hash: h, off: p.off, crc: crc32.ChecksumIEEE(entry)})
	p.off += int64(len(entry))
	return nil
}

func (p *packOut) abort() {
	if p.f != nil {
		name := p.f.Name()
		p.f.Close()
		os.Remove(name)
		p.f = nil
	}
}

// finish writes the count and the checksum, hardens the pack as core.fsync
// says (git's pack component), names it after its checksum, then writes
// its index the same way (pack-metadata): a pack without its index is
// invisible to readers, so the index goes last.
func (p *packOut) finish(o *Objects) error {
	f := p.f
	var count [4]byte
	binary.BigEndian.PutUint32(count[:], uint32(len(p.entries)))
	if _, err := f.WriteAt(count[:], 8); err != nil {
		return fmt.Errorf("cannot write a pack: %w", err)
	}
	sum := sha1.New()
	if _, err := io.Copy(sum, io.NewSectionReader(f, 0, p.off)); err != nil {
		return fmt.Errorf("cannot write a pack: %w", err)
	}
	var trailer plumbing.Hash
	copy(trailer[:], sum.Sum(nil))
	if _, err := f.WriteAt(trailer[:], p.off); err != nil {
		return fmt.Errorf("cannot write a pack: %w", err)
	}
	if err := o.dur.Sync(FsyncPack, f); err != nil {
		return fmt.Errorf("cannot write a pack: %w", err)
	}
	tmp := f.Name()
	if err := f.Close(); err != nil {
		return fmt.Errorf("cannot write a pack: %w", err)
	}
	p.f = nil
	dir := filepath.Dir(tmp)
	base := filepath.Join(dir, "pack-"+trailer.String())
	if _, err := os.Stat(base + ".idx"); err == nil {
		os.Remove(tmp) // the same pack is there already
		return nil
	}
	if err := os.Chmod(tmp, 0o444); err == nil {
		err = o.perm.Adjust(tmp)
	}
	if err := os.Rename(tmp, base+".pack"); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("cannot write a pack: %w", err)
	}
	if err := p.writeIdx(o, base+".idx", trailer); err != nil {
		os.Remove(base + ".pack")
		return err
	}
	o.scanPacks(true)
	return nil
}

// writeIdx writes a version 2 pack index for the entries.
func (p *packOut) writeIdx(o *Objects, path string, packSum plumbing.Hash) error {
	sort.Slice(p.entries, func(i, j int) bool { return bytes.Compare(p.entries[i].hash[:], p.entries[j].hash[:]) < 0 })
	var b bytes.Buffer
	n := len(p.entries)
	b.Grow(8 + 256*4 + n*(20+4+4) + 40)
	b.Write(idxMagic)
	binary.Write(&b, binary.BigEndian, uint32(2))
	var fanout [256]uint32
	for _, e := range p.entries {
		fanout[e.hash[0]]++
	}
	total := uint32(0)
	for i := range fanout {
		total += fanout[i]
		binary.Write(&b, binary.BigEndian, total)
	}
	for _, e := range p.entries {
		b.Write(e.hash[:])
	}
	for _, e := range p.entries {
		binary.Write(&b, binary.BigEndian, e.crc)
	}
	var large []int64
	for _, e := range p.entries {
		if e.off < 1<<31 {
			binary.Write(&b, binary.BigEndian, uint32(e.off))
			continue
		}
		binary.Write(&b, binary.BigEndian, uint32(1<<31|len(large)))
		large = append(large, e.off)
	}
	for _, off := range large {
		binary.Write(&b, binary.BigEndian, uint64(off))
	}
	b.Write(packSum[:])
	idxSum := sha1.Sum(b.Bytes())
	b.Write(idxSum[:])

	tmp := filepath.Join(filepath.Dir(path), "tmp_idx_"+NewID()[:12])
	f, err := o.perm.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return fmt.Errorf("cannot write a pack index: %w", err)
	}
	_, err = f.Write(b.Bytes())
	if err == nil {
		err = o.dur.Sync(FsyncPackMetadata, f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o444)
	}
	if err == nil {
		err = o.perm.Adjust(tmp)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		return fmt.Errorf("cannot write a pack index: %w", err)
	}
	return nil
}

// writeStoredZlib writes data as a zlib stream of stored (uncompressed)
// deflate blocks (RFC 1950 and 1951, block type 00): what zlib writes at
// level 0, without a compressor's allocation per object.
func writeStoredZlib(buf *bytes.Buffer, data []byte) {
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], adler32.Checksum(data))
	buf.Grow(len(data) + 6 + 5*(len(data)/0xffff+1))
	buf.Write([]byte{0x78, 0x01}) // deflate, 32K window, no dictionary, fastest
	for first := true; first || len(data) > 0; first = false {
		n := min(len(data), 0xffff)
		final := byte(0)
		if n == len(data) {
			final = 1
		}
		buf.Write([]byte{final, byte(n), byte(n >> 8), ^byte(n), ^byte(n >> 8)})
		buf.Write(data[:n])
		data = data[n:]
	}
	buf.Write(sum[:])
}

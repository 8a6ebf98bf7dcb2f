package objects

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"
	gitstorer "github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore/gitdir"
)

// Objects is the repository's object database: the one place git-hegel
// reads and writes git objects. On disk it reads loose objects and packs
// (its own mapped reader, pack.go) in the object directory and its
// alternates, writes loose objects in git's format, in parallel when asked,
// and follows git's rules where git's own maintenance runs beside it:
//
//   - an object that is not found is looked for again after re-reading the
//     pack directories (a concurrent repack moved it into a new pack);
//   - an object that exists is freshened (its loose file's or its pack's
//     mtime set to now) instead of written, so a concurrent prune keeps it
//     until the ref that needs it has moved;
//   - a loose object's fan-out directory that prune removed is created
//     again, and the write retried.
//
// In memory (unit tests) it wraps go-git's memory storage behind a mutex.
// An Objects is safe for concurrent use.
type Objects struct {
	dir  string   // where new objects go ("" in memory)
	alts []string // alternate object directories, read only
	perm SharedPerm
	// level is the zlib level of new loose objects (core.looseCompression).
	level int
	// dur is core.fsync and its method (nil: never fsync); batch holds
	// what core.fsyncMethod=batch has left to flush.
	dur   *Durability
	batch looseBatch

	mem   gitstorer.EncodedObjectStorer
	memMu sync.Mutex

	scanMu  sync.Mutex
	packs   atomic.Pointer[packSet]
	retired []*pack // packs whose files vanished (kept mapped until Close)
	deltas  lru[deltaKey]
	cache   lru[plumbing.Hash] // objects read, by name: a merge or a diff reads the same trees again

	zw sync.Pool // *zlib.Writer at level
}

// New returns the object database in dir, with the alternate object
// directories alts (read only): new files get the shared permissions perm,
// new loose objects the zlib level (LooseCompression), and what dur says
// is hardened is (nil: nothing).
func New(dir string, alts []string, perm SharedPerm, level int, dur *Durability) *Objects {
	o := &Objects{dir: dir, alts: alts, perm: perm, level: level, dur: dur}
	o.deltas.limit, o.cache.limit = deltaCacheLimit, objectCacheLimit
	return o
}

// NewMemory wraps an in-memory go-git object storage.
func NewMemory(s gitstorer.EncodedObjectStorer) *Objects {
	return &Objects{mem: s, level: zlib.BestSpeed}
}

// OnDisk reports whether objects live in files (not in memory).
func (o *Objects) OnDisk() bool { return o.mem == nil }

// Dir returns the object directory new objects are written to ("" in
// memory).
func (o *Objects) Dir() string { return o.dir }

// Close releases the mapped packs. The Objects must not be used after.
func (o *Objects) Close() {
	if o.mem != nil {
		return
	}
	o.scanMu.Lock()
	defer o.scanMu.Unlock()
	if s := o.packs.Swap(nil); s != nil {
		for _, p := range s.packs {
			p.close()
		}
	}
	o.retired = nil
	o.deltas.clear()
	o.cache.clear()
}

// Remember puts an object just written into the cache of objects read
// (a commit whose subject the ref update that follows logs).
func (o *Objects) Remember(h plumbing.Hash, t plumbing.ObjectType, data []byte) {
	if o.mem == nil {
		o.cache.put(h, t, bytes.Clone(data))
	}
}

// HashObject is git's name for data stored as an object of type t.
func HashObject(t plumbing.ObjectType, data []byte) plumbing.Hash {
	h := sha1.New()
	h.Write(objectHeader(t, len(data)))
	h.Write(data)
	var out plumbing.Hash
	copy(out[:], h.Sum(nil))
	return out
}

func objectHeader(t plumbing.ObjectType, n int) []byte {
	b := make([]byte, 0, 32)
	b = append(b, t.String()...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, 0)
}

// ErrObjectMissing is wrapped by reads of an object the repository does
// not have. It wraps engine.ErrNotFound, the storage contract's "does not
// exist", which the stores above and the engine match with errors.Is.
var ErrObjectMissing = fmt.Errorf("object %w", engine.ErrNotFound)

func missing(h plumbing.Hash) error { return fmt.Errorf("%w: %s", ErrObjectMissing, h) }

// Read returns the content of object h, which must be of type t
// (plumbing.AnyObject accepts any). The caller owns the slice.
func (o *Objects) Read(t plumbing.ObjectType, h plumbing.Hash) ([]byte, error) {
	typ, data, err := o.readAny(h)
	if err != nil {
		return nil, err
	}
	if t != plumbing.AnyObject && typ != t {
		return nil, fmt.Errorf("object %s is a %s, not a %s", h, typ, t)
	}
	return data, nil
}

// ReadAny returns the type and content of object h.
func (o *Objects) ReadAny(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	return o.readAny(h)
}

func (o *Objects) readAny(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	if o.mem != nil {
		return o.memRead(h)
	}
	if t, b, ok := o.cache.get(h); ok {
		return t, bytes.Clone(b), nil
	}
	t, b, err := o.readUncached(h)
	if err == nil {
		o.cache.put(h, t, bytes.Clone(b))
	}
	return t, b, err
}

// maxRescans bounds how often a read looks at the pack directories again
// while a concurrent repack keeps changing them.
const maxRescans = 20

func (o *Objects) readUncached(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	// git's order: packs, loose, then packs again after a rescan (someone
	// may just have packed it), then loose again (or loosened it). A
	// rescan that raced a repack (a listed pack deleted before it was
	// opened, its replacement written after the listing) is repeated: a
	// reachable object is always in a pack or loose, but one look at the
	// directory can miss both.
	for attempt := 0; ; attempt++ {
		set := o.currentPacks()
		if attempt > 0 {
			set = o.scanPacks(true)
		}
		if p, off, ok := set.find(h, false); ok {
			t, b, err := o.unpack(p, off)
			if err == nil {
				return t, b, nil
			}
			if attempt > 0 {
				return plumbing.InvalidObject, nil, fmt.Errorf("cannot read object %s from %s: %w", h, filepath.Base(p.path), err)
			}
			continue
		}
		t, b, err := o.readLoose(h)
		if err == nil || !errors.Is(err, fs.ErrNotExist) {
			return t, b, err
		}
		if attempt > 0 && (!set.unsettled || attempt >= maxRescans) {
			break
		}
	}
	return plumbing.InvalidObject, nil, missing(h)
}

// Has reports whether the repository has object h (re-reading the pack
// directories before saying no).
func (o *Objects) Has(h plumbing.Hash) bool {
	if o.mem != nil {
		o.memMu.Lock()
		defer o.memMu.Unlock()
		return o.mem.HasEncodedObject(h) == nil
	}
	// Asked often of objects that do not exist (what a fetch lacks), so
	// the second look re-reads the pack directories only if they changed.
	for attempt := 0; attempt < 2; attempt++ {
		set := o.currentPacks()
		if attempt > 0 {
			set = o.scanPacks(false)
		}
		if _, _, ok := set.find(h, false); ok {
			return true
		}
		if o.hasLoose(h) {
			return true
		}
	}
	return false
}

// currentPacks is the pack set as last scanned (scanning the first time).
func (o *Objects) currentPacks() *packSet {
	if s := o.packs.Load(); s != nil {
		return s
	}
	return o.scanPacks(false)
}

// IsLoose reports whether h is a loose object (in any object directory).
func (o *Objects) IsLoose(h plumbing.Hash) bool { return o.mem == nil && o.hasLoose(h) }

func (o *Objects) hasLoose(h plumbing.Hash) bool {
	for _, d := range o.objectDirs() {
		if _, err := os.Lstat(loosePath(d, h)); err == nil {
			return true
		}
	}
	return false
}

// Freshen reports whether the repository has object h, and if so sets the
// mtime of its loose file or pack to now, as git does instead of writing
// an object twice: a `git prune` running meanwhile then keeps it. It is
// what a writer asks before skipping an object it would otherwise store.
func (o *Objects) Freshen(h plumbing.Hash) bool {
	if o.mem != nil {
		return o.Has(h)
	}
	if o.freshenQuick(h) {
		return true
	}
	// Not in the packs known so far: one look for new packs (a stat of each
	// pack directory unless they changed) before the caller writes it.
	if p, _, ok := o.scanPacks(false).find(h, true); ok && freshenPack(p) {
		return true
	}
	return false
}

// freshenWrite is the check a writer makes before writing h: Freshen
// without looking for new packs.
func (o *Objects) freshenWrite(h plumbing.Hash) bool {
	if o.mem != nil {
		return o.Has(h)
	}
	return o.freshenQuick(h)
}

// freshenQuick is Freshen without looking for new packs (git's
// OBJECT_INFO_QUICK on the write path: a missed pack costs one loose
// copy, never an error).
func (o *Objects) freshenQuick(h plumbing.Hash) bool {
	for _, p := range o.currentPacks().packs {
		if p.gone.Load() {
			continue
		}
		if _, ok := p.find(h); ok && freshenPack(p) {
			return true
		}
	}
	for _, d := range o.objectDirs() {
		if touch(loosePath(d, h)) == nil {
			return true
		}
	}
	return false
}

// Write stores data as an object of type t and returns its name. An object
// the repository has already is freshened, not written again.
func (o *Objects) Write(t plumbing.ObjectType, data []byte) (plumbing.Hash, error) {
	h := HashObject(t, data)
	return h, o.WriteHashed(t, h, data)
}

// WriteHashed is Write for a caller that computed h = HashObject(t, data).
func (o *Objects) WriteHashed(t plumbing.ObjectType, h plumbing.Hash, data []byte) error {
	if o.mem != nil {
		return o.memWrite(t, h, data)
	}
	if o.freshenQuick(h) {
		return nil
	}
	return o.writeLoose(t, h, data)
}

// Object is an object to store: its type, name and content.
type Object struct {
	Type plumbing.ObjectType
	Hash plumbing.Hash
	Data []byte
}

// WriteAll stores objs (each named by its Hash), on disk in parallel: a
// checkpoint of a working tree with 1,500 changed files writes about 2,600
// objects, which one at a time took longer than git stash create. The
// first error is returned once every write has ended.
func (o *Objects) WriteAll(objs []Object) error { return o.writeAll(objs, true) }

// writeAll is WriteAll; without check, the objects are known to be new
// (the caller asked Freshen already).
func (o *Objects) writeAll(objs []Object, check bool) error {
	write := func(p Object) error {
		if check || o.mem != nil {
			return o.WriteHashed(p.Type, p.Hash, p.Data)
		}
		return o.writeLoose(p.Type, p.Hash, p.Data)
	}
	if o.mem != nil {
		for _, p := range objs {
			if err := write(p); err != nil {
				return err
			}
		}
		return nil
	}
	return parallel(len(objs), func(i int) error { return write(objs[i]) })
}

// objectDirs is the object directory then its alternates.
func (o *Objects) objectDirs() []string {
	if len(o.alts) == 0 {
		return []string{o.dir}
	}
	return append([]string{o.dir}, o.alts...)
}

func (o *Objects) packDirs() []string {
	dirs := o.objectDirs()
	out := make([]string, len(dirs))
	for i, d := range dirs {
		out[i] = filepath.Join(d, "pack")
	}
	return out
}

func loosePath(dir string, h plumbing.Hash) string {
	hex := h.String()
	return filepath.Join(dir, hex[:2], hex[2:])
}

// readLoose reads loose object h from the first object directory that has
// it; fs.ErrNotExist when none does.
func (o *Objects) readLoose(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	for _, d := range o.objectDirs() {
		raw, err := os.ReadFile(loosePath(d, h))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return plumbing.InvalidObject, nil, fmt.Errorf("cannot read object %s: %w", h, err)
		}
		t, _, data, err := inflateWhole(raw, math.MaxInt)
		if err != nil {
			return plumbing.InvalidObject, nil, fmt.Errorf("damaged loose object %s: %w", h, err)
		}
		return t, data, nil
	}
	return plumbing.InvalidObject, nil, fs.ErrNotExist
}

// inflateWhole inflates the loose object held in raw: its type, its size
// and, when the size is at most max, its content (nil otherwise). Its
// zlib reader comes from the pool the packs' reads use: each holds a 32
// KiB window, which a process reading a few objects would otherwise
// allocate for each.
func inflateWhole(raw []byte, max int) (plumbing.ObjectType, int, []byte, error) {
	zr, _ := zlibReaders.Get().(io.ReadCloser)
	if zr == nil {
		var err error
		if zr, err = zlib.NewReader(bytes.NewReader(raw)); err != nil {
			return plumbing.InvalidObject, 0, nil, err
		}
	}
	t, n, br, err := inflateLoose(raw, zr)
	if err != nil {
		return plumbing.InvalidObject, 0, nil, err
	}
	var data []byte
	if n <= max {
		data = make([]byte, n)
		if _, err := io.ReadFull(br, data); err != nil {
			return plumbing.InvalidObject, 0, nil, err
		}
	}
	zlibReaders.Put(zr)
	return t, n, data, nil
}

// inflateLoose starts inflating a loose object held in raw: it returns its
// type and size and a reader positioned at its content. zr, if not nil, is
// a zlib reader to reuse.
func inflateLoose(raw []byte, zr io.ReadCloser) (plumbing.ObjectType, int, *bufio.Reader, error) {
	src := bytes.NewReader(raw)
	var err error
	if zr == nil {
		zr, err = zlib.NewReader(src)
	} else {
		err = zr.(zlib.Resetter).Reset(src, nil)
	}
	if err != nil {
		return plumbing.InvalidObject, 0, nil, err
	}
	br := bufio.NewReaderSize(zr, 512)
	header, err := br.ReadString(0)
	if err != nil {
		return plumbing.InvalidObject, 0, nil, errors.New("no object header")
	}
	typ, size, ok := strings.Cut(strings.TrimSuffix(header, "\x00"), " ")
	n, err := strconv.Atoi(size)
	t, terr := plumbing.ParseObjectType(typ)
	if !ok || err != nil || n < 0 || terr != nil {
		return plumbing.InvalidObject, 0, nil, fmt.Errorf("bad object header %q", strings.TrimSuffix(header, "\x00"))
	}
	return t, n, br, nil
}

// ObjectReader reads objects one after another, reusing its buffers and
// inflater; a caller may stop reading an object early (a loose object is
// inflated only as far as it is read). One per goroutine.
type ObjectReader struct {
	o   *Objects
	raw []byte
	zr  io.ReadCloser
	br  bytes.Reader
}

// NewReader returns an ObjectReader.
func (o *Objects) NewReader() *ObjectReader { return &ObjectReader{o: o} }

// Open returns object h's content, which must be of type t, as a reader
// valid until the next Open.
func (r *ObjectReader) Open(t plumbing.ObjectType, h plumbing.Hash) (io.Reader, error) {
	if r.o.mem == nil {
		for _, d := range r.o.objectDirs() {
			err := r.readFile(loosePath(d, h))
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("cannot read object %s: %w", h, err)
			}
			typ, _, br, err := r.inflate()
			if err != nil {
				return nil, fmt.Errorf("damaged loose object %s: %w", h, err)
			}
			if t != plumbing.AnyObject && typ != t {
				return nil, fmt.Errorf("object %s is a %s, not a %s", h, typ, t)
			}
			return br, nil
		}
	}
	data, err := r.o.Read(t, h)
	if err != nil {
		return nil, err
	}
	r.br.Reset(data)
	return &r.br, nil
}

func (r *ObjectReader) inflate() (plumbing.ObjectType, int, *bufio.Reader, error) {
	if r.zr == nil {
		zr, err := zlib.NewReader(bytes.NewReader(r.raw))
		if err != nil {
			return plumbing.InvalidObject, 0, nil, err
		}
		r.zr = zr
	}
	t, n, br, err := inflateLoose(r.raw, r.zr)
	if err != nil {
		r.zr = nil
	}
	return t, n, br, err
}

// readFile reads the file at p into r.raw.
func (r *ObjectReader) readFile(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	r.raw = r.raw[:0]
	for {
		if len(r.raw) == cap(r.raw) {
			r.raw = append(r.raw, 0)[:len(r.raw)]
		}
		n, err := f.Read(r.raw[len(r.raw):cap(r.raw)])
		r.raw = r.raw[:len(r.raw)+n]
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// looseRetries bounds the retries of a loose write that a concurrent
// prune keeps undoing (removing the fan-out directory or the temporary
// file).
const looseRetries = 10

// writeLoose stores a loose object the way git does: zlib of
// "<type> <size>\0<content>" written to tmp_obj_* in its fan-out
// directory (so a prune that removes empty directories cannot remove it
// underneath), then renamed into place; read-only, with the repository's
// shared permissions.
func (o *Objects) writeLoose(t plumbing.ObjectType, h plumbing.Hash, data []byte) error {
	var buf bytes.Buffer
	if hdr := objectHeader(t, len(data)); len(hdr)+len(data) <= storedLooseMax {
		// Stored, not deflated: the file takes one filesystem block
		// either way, and a compressor costs far more to set up (its
		// tables) than the object to write.
		writeStoredZlib(&buf, append(hdr, data...))
	} else if err := o.deflateLoose(&buf, hdr, data); err != nil {
		return err
	}
	dir := filepath.Join(o.dir, h.String()[:2])
	final := loosePath(o.dir, h)
	var err error
	for attempt := 0; ; attempt++ {
		err = o.writeLooseOnce(dir, final, buf.Bytes())
		if err == nil || !errors.Is(err, fs.ErrNotExist) || attempt == looseRetries {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("cannot write object %s: %w", h, err)
	}
	return nil
}

// storedLooseMax is the largest loose object (header and content) stored
// without compression: with zlib's framing it still fits one 4 KiB block.
const storedLooseMax = 4096 - 64

// deflateLoose writes the zlib stream of a loose object (hdr, then data)
// to buf at the repository's level, with a compressor from the pool.
func (o *Objects) deflateLoose(buf *bytes.Buffer, hdr, data []byte) error {
	buf.Grow(len(data)/2 + 64)
	zw, _ := o.zw.Get().(*zlib.Writer)
	if zw == nil {
		zw, _ = zlib.NewWriterLevel(buf, o.level)
	} else {
		zw.Reset(buf)
	}
	zw.Write(hdr)
	zw.Write(data)
	err := zw.Close()
	o.zw.Put(zw)
	return err
}

func (o *Objects) writeLooseOnce(dir, final string, compressed []byte) error {
	tmp := filepath.Join(dir, "tmp_obj_"+NewID()[:12])
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if errors.Is(err, fs.ErrNotExist) {
		// A prune removed the (empty) fan-out directory, or it never existed.
		if err := o.perm.mkdirAll(dir); err != nil {
			return err
		}
		f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	}
	if err != nil {
		return err
	}
	_, err = f.Write(compressed)
	if err == nil {
		err = o.syncLoose(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = o.perm.adjust(tmp)
	}
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// sizeReadsWhole: a loose object no larger than this whose size is asked
// is inflated whole and kept in the cache of objects read. Callers ask a
// size to check a limit before reading the object, which then costs no
// second read of its file.
const sizeReadsWhole = 64 << 10

// Size returns the size of object h's content.
func (o *Objects) Size(h plumbing.Hash) (int64, error) {
	if o.mem != nil {
		o.memMu.Lock()
		defer o.memMu.Unlock()
		return o.mem.EncodedObjectSize(h)
	}
	if _, b, ok := o.cache.get(h); ok {
		return int64(len(b)), nil
	}
	for attempt := 0; attempt < 2; attempt++ {
		set := o.currentPacks()
		if attempt > 0 {
			set = o.scanPacks(true)
		}
		if p, off, ok := set.find(h, false); ok {
			return o.packedSize(p, off)
		}
		for _, d := range o.objectDirs() {
			raw, err := os.ReadFile(loosePath(d, h))
			if err != nil {
				continue
			}
			t, n, data, err := inflateWhole(raw, sizeReadsWhole)
			if err == nil && data != nil {
				o.cache.put(h, t, data)
			}
			return int64(n), err
		}
	}
	return 0, missing(h)
}

func (o *Objects) memRead(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	o.memMu.Lock()
	defer o.memMu.Unlock()
	obj, err := o.mem.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return plumbing.InvalidObject, nil, missing(h)
	}
	rd, err := obj.Reader()
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	defer rd.Close()
	b, err := io.ReadAll(rd)
	return obj.Type(), b, err
}

func (o *Objects) memWrite(t plumbing.ObjectType, h plumbing.Hash, data []byte) error {
	o.memMu.Lock()
	defer o.memMu.Unlock()
	if o.mem.HasEncodedObject(h) == nil {
		return nil
	}
	obj := o.mem.NewEncodedObject()
	obj.SetType(t)
	obj.SetSize(int64(len(data)))
	w, err := obj.Writer()
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	got, err := o.mem.SetEncodedObject(obj)
	if err != nil {
		return fmt.Errorf("cannot write object %s: %w", h, err)
	}
	if got != h {
		return fmt.Errorf("object %s was stored as %s", h, got)
	}
	return nil
}

// LooseCompression is the zlib level of new loose objects, as git picks
// it: core.looseCompression, else core.compression, else best speed.
func LooseCompression(c *gitdir.Config) int {
	for _, key := range []string{"loosecompression", "compression"} {
		if _, ok := c.Get("core", "", key); ok {
			n := c.Int("core", key, -2)
			if n == -1 {
				return zlib.DefaultCompression
			}
			if n >= 0 && n <= 9 {
				return int(n)
			}
		}
	}
	return zlib.BestSpeed
}

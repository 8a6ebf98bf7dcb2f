package rollback

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Loose objects are written here, in parallel, rather than through go-git's
// storage, which must be used from one goroutine at a time: a checkpoint of
// a working tree with 1,500 changed files writes about 2,600 objects, and
// one at a time that took longer than git stash create. The format is
// git's own (zlib of "<type> <size>\0<content>", written to a temporary
// file beside its final name and renamed), with git's default loose
// compression (core.looseCompression: best speed).

var zlibWriters = sync.Pool{New: func() any {
	w, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
	return w
}}

// writeLoose stores data as the loose object h in objectsDir. An object
// already there (another writer, same content) is fine.
func writeLoose(objectsDir string, t plumbing.ObjectType, h plumbing.Hash, data []byte) error {
	hex := h.String()
	dir := filepath.Join(objectsDir, hex[:2])
	final := filepath.Join(dir, hex[2:])
	if _, err := os.Lstat(final); err == nil {
		return nil
	}
	var buf bytes.Buffer
	buf.Grow(len(data)/2 + 64)
	zw := zlibWriters.Get().(*zlib.Writer)
	zw.Reset(&buf)
	zw.Write([]byte(t.String()))
	zw.Write([]byte{' '})
	zw.Write([]byte(strconv.Itoa(len(data))))
	zw.Write([]byte{0})
	zw.Write(data)
	err := zw.Close()
	zlibWriters.Put(zw)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "tmp_obj_")
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return err
		}
		f, err = os.CreateTemp(dir, "tmp_obj_")
	}
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(buf.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o444) // git's loose objects are read-only
	}
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// hasLoose reports whether h is a loose object in objectsDir.
func hasLoose(objectsDir string, h plumbing.Hash) bool {
	hex := h.String()
	_, err := os.Lstat(filepath.Join(objectsDir, hex[:2], hex[2:]))
	return err == nil
}

// readLoose reads the loose object h, checking its type; fs.ErrNotExist
// when it is not a loose object (it may be packed).
func readLoose(objectsDir string, t plumbing.ObjectType, h plumbing.Hash) ([]byte, error) {
	hex := h.String()
	f, err := os.Open(filepath.Join(objectsDir, hex[:2], hex[2:]))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fs.ErrNotExist
		}
		return nil, err
	}
	defer f.Close()
	zr, err := zlib.NewReader(bufio.NewReaderSize(f, 8192))
	if err != nil {
		return nil, fmt.Errorf("damaged loose object %s: %w", h, err)
	}
	defer zr.Close()
	br := bufio.NewReaderSize(zr, 512)
	header, err := br.ReadString(0)
	if err != nil {
		return nil, fmt.Errorf("damaged loose object %s: %w", h, err)
	}
	typ, size, ok := strings.Cut(strings.TrimSuffix(header, "\x00"), " ")
	n, err := strconv.Atoi(size)
	if !ok || err != nil || n < 0 || typ != t.String() {
		return nil, fmt.Errorf("loose object %s is not a %s", h, t)
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(br, data); err != nil {
		return nil, fmt.Errorf("damaged loose object %s: %w", h, err)
	}
	return data, nil
}

// prefetch reads, in parallel, the trees of b that a diff with a will
// read: those whose hash differs from a's tree at the same place. Only
// worth it when b is made of loose objects (a checkpoint not yet packed by
// git gc), which inflate concurrently; packed ones go through go-git one
// at a time, and for them the diff reads as it goes. Errors are left for
// the diff itself to report.
func prefetch(o *objects, a, b plumbing.Hash) error {
	if o.looseDir == "" || a == b || b.IsZero() || !hasLoose(o.looseDir, b) {
		return nil
	}
	type pair struct{ a, b plumbing.Hash }
	var (
		mu      sync.Mutex
		cond    = sync.NewCond(&mu)
		queue   = []pair{{a, b}}
		active  int
		workers = 2 * runtime.GOMAXPROCS(0)
		wg      sync.WaitGroup
	)
	children := func(h plumbing.Hash) map[string]plumbing.Hash {
		if h.IsZero() {
			return nil
		}
		data, err := o.read(plumbing.TreeObject, h)
		if err != nil {
			return nil
		}
		ents, err := parseTree(data, false)
		if err != nil {
			return nil
		}
		m := make(map[string]plumbing.Hash)
		for _, e := range ents {
			if e.mode == filemode.Dir {
				m[e.name] = e.hash
			}
		}
		return m
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				for len(queue) == 0 && active > 0 {
					cond.Wait()
				}
				if len(queue) == 0 {
					mu.Unlock()
					cond.Broadcast()
					return
				}
				p := queue[len(queue)-1]
				queue = queue[:len(queue)-1]
				active++
				mu.Unlock()
				ca, cb := children(p.a), children(p.b)
				var next []pair
				for name, hb := range cb {
					if ca[name] != hb {
						next = append(next, pair{ca[name], hb})
					}
				}
				mu.Lock()
				queue = append(queue, next...)
				active--
				mu.Unlock()
				cond.Broadcast()
			}
		}()
	}
	wg.Wait()
	return nil
}

// pendingObject is an object to store.
type pendingObject struct {
	t    plumbing.ObjectType
	h    plumbing.Hash
	data []byte
}

// writeAll stores objects the repository does not have yet, in parallel
// on disk.
func (o *objects) writeAll(objs []pendingObject) error {
	if o.looseDir == "" {
		o.mu.Lock()
		defer o.mu.Unlock()
		for _, p := range objs {
			if err := o.writeLocked(p.t, p.h, p.data); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		wg       sync.WaitGroup
		next     = make(chan pendingObject)
		errOnce  sync.Once
		firstErr error
	)
	for w := 0; w < min(len(objs), 2*runtime.GOMAXPROCS(0)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range next {
				if err := writeLoose(o.looseDir, p.t, p.h, p.data); err != nil {
					errOnce.Do(func() { firstErr = err })
				}
			}
		}()
	}
	for _, p := range objs {
		next <- p
	}
	close(next)
	wg.Wait()
	return firstErr
}

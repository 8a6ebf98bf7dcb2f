package gitstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	gitstorer "github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/memory"
)

// quarantine holds the objects a fetch received until they are validated,
// as git's receive-pack does for a push: rejected data never enters the
// repository's object store, so a refused fetch leaves nothing behind (not
// even objects git fsck would complain about). On disk the pack is kept
// as sent, in a temporary directory of the git dir; in memory (unit
// tests) in a memory storage.
type quarantine struct {
	dir   string // "" in memory
	store storage.Storer
	count int
}

// unpackLimit is git's fetch.unpackLimit default: a fetch of fewer
// objects is stored as loose objects, a larger one as a pack.
const unpackLimit = 100

func (r *Repo) newQuarantine() (*quarantine, error) {
	if r.CommonDir == "" {
		return &quarantine{store: memory.NewStorage()}, nil
	}
	removeStaleQuarantines(r.CommonDir)
	dir, err := os.MkdirTemp(r.CommonDir, quarantinePrefix)
	if err != nil {
		return nil, fmt.Errorf("cannot create a directory for fetched objects: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "objects", "pack"), 0o777); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("cannot create a directory for fetched objects: %w", err)
	}
	st := filesystem.NewStorageWithOptions(osfs.New(dir), cache.NewObjectLRUDefault(), filesystem.Options{KeepDescriptors: true})
	return &quarantine{dir: dir, store: st}, nil
}

const quarantinePrefix = "hegel-incoming-"

// removeStaleQuarantines removes quarantines a killed fetch left behind:
// any older than a day (a running fetch's is minutes old at most).
func removeStaleQuarantines(commonDir string) {
	old, _ := filepath.Glob(filepath.Join(commonDir, quarantinePrefix+"*"))
	for _, d := range old {
		if fi, err := os.Stat(d); err == nil && time.Since(fi.ModTime()) > 24*time.Hour {
			_ = os.RemoveAll(d)
		}
	}
}

// receive stores the pack read from rd and returns how many objects it
// holds.
func (q *quarantine) receive(rd io.Reader) (int, error) {
	var hdr [12]byte
	if _, err := io.ReadFull(rd, hdr[:]); err != nil {
		return 0, fmt.Errorf("reading the pack: %w", err)
	}
	if !bytes.Equal(hdr[:4], []byte("PACK")) {
		return 0, errors.New("the remote did not send a pack")
	}
	q.count = int(binary.BigEndian.Uint32(hdr[8:12]))
	if err := packfile.UpdateObjectStorage(q.store, io.MultiReader(bytes.NewReader(hdr[:]), rd)); err != nil {
		return 0, fmt.Errorf("reading the pack: %w", err)
	}
	return q.count, nil
}

// over returns a store that reads the quarantined objects, then base's.
func (q *quarantine) over(base gitstorer.EncodedObjectStorer) gitstorer.EncodedObjectStorer {
	return &overlay{top: q.store, base: base}
}

// migrate moves the validated objects into base: loose objects for a
// small fetch, the pack itself for a large one.
func (q *quarantine) migrate(base gitstorer.EncodedObjectStorer) error {
	if pw, ok := base.(gitstorer.PackfileWriter); ok && q.dir != "" && q.count >= unpackLimit {
		packs, _ := filepath.Glob(filepath.Join(q.dir, "objects", "pack", "pack-*.pack"))
		if len(packs) == 1 {
			return copyPack(pw, packs[0])
		}
	}
	iter, err := q.store.IterEncodedObjects(plumbing.AnyObject)
	if err != nil {
		return err
	}
	defer iter.Close()
	return iter.ForEach(func(o plumbing.EncodedObject) error {
		if base.HasEncodedObject(o.Hash()) == nil {
			return nil
		}
		_, err := base.SetEncodedObject(o)
		return err
	})
}

func copyPack(pw gitstorer.PackfileWriter, path string) (err error) {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := pw.PackfileWriter()
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, f); err != nil {
		_ = w.Close()
		return err
	}
	return w.Close()
}

// discard removes the quarantine and whatever it still holds.
func (q *quarantine) discard() {
	if c, ok := q.store.(io.Closer); ok {
		_ = c.Close()
	}
	if q.dir != "" {
		_ = os.RemoveAll(q.dir)
	}
}

// objectReader returns a store for the many object reads of a merge and
// a function that releases it: the repository's own, whose object layer
// keeps packs mapped and reads them without a lock (objects.go).
func (r *Repo) objectReader() (gitstorer.EncodedObjectStorer, func()) {
	return r.storage, func() {}
}

// overlay reads from top, then base; writes go to top.
type overlay struct {
	top  gitstorer.EncodedObjectStorer
	base gitstorer.EncodedObjectStorer
}

var _ gitstorer.EncodedObjectStorer = (*overlay)(nil)

func (o *overlay) NewEncodedObject() plumbing.EncodedObject { return o.top.NewEncodedObject() }

func (o *overlay) SetEncodedObject(obj plumbing.EncodedObject) (plumbing.Hash, error) {
	return o.top.SetEncodedObject(obj)
}

func (o *overlay) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	obj, err := o.top.EncodedObject(t, h)
	if err == nil {
		return obj, nil
	}
	return o.base.EncodedObject(t, h)
}

func (o *overlay) IterEncodedObjects(t plumbing.ObjectType) (gitstorer.EncodedObjectIter, error) {
	return o.top.IterEncodedObjects(t)
}

func (o *overlay) HasEncodedObject(h plumbing.Hash) error {
	if o.top.HasEncodedObject(h) == nil {
		return nil
	}
	return o.base.HasEncodedObject(h)
}

func (o *overlay) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	if n, err := o.top.EncodedObjectSize(h); err == nil {
		return n, nil
	}
	return o.base.EncodedObjectSize(h)
}

func (o *overlay) AddAlternate(string) error {
	return errors.New("alternates are not supported here")
}

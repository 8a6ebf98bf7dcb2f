package gitstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
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
// repository's object store, so a refused ref leaves nothing behind (not
// even objects git fsck would complain about). On disk the pack is stored
// and checked by git itself (index-pack, see sync_fsck.go) in a temporary
// directory of the git dir; in memory (unit tests) in a memory storage.
type quarantine struct {
	dir   string // "" in memory
	store storage.Storer
	count int
	// checked: git's checks passed on the whole pack as received.
	checked bool
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
	return &quarantine{dir: dir}, nil
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

func (q *quarantine) objectsDir() string { return filepath.Join(q.dir, "objects") }

// receive stores the pack read from rd and returns how many objects it
// holds. On disk, git index-pack stores it, with git's checks: a refusal
// is returned as the failure (the pack is then stored without the checks,
// so that sync can find which refs brought the refused object).
func (q *quarantine) receive(rd io.Reader, c *gitChecker) (*fsckFailure, error) {
	if q.dir == "" {
		var hdr [12]byte
		if _, err := io.ReadFull(rd, hdr[:]); err != nil {
			return nil, fmt.Errorf("reading the pack: %w", err)
		}
		if !bytes.Equal(hdr[:4], []byte("PACK")) {
			return nil, errors.New("the remote did not send a pack")
		}
		q.count = int(binary.BigEndian.Uint32(hdr[8:12]))
		if err := packfile.UpdateObjectStorage(q.store, io.MultiReader(bytes.NewReader(hdr[:]), rd)); err != nil {
			return nil, fmt.Errorf("reading the pack: %w", err)
		}
		return nil, nil
	}
	raw := filepath.Join(q.dir, "incoming.pack")
	n, err := writeRawPack(raw, rd)
	if err != nil {
		return nil, err
	}
	defer os.Remove(raw)
	q.count = n
	fail, err := c.indexPack(raw, q.objectsDir(), true)
	if err != nil {
		return nil, err
	}
	if fail != nil {
		// Store it unchecked (the quarantine is never migrated as a whole
		// now), to read which refs bring the refused object.
		packs := filepath.Join(q.objectsDir(), "pack")
		_ = os.RemoveAll(packs)
		if err := os.MkdirAll(packs, 0o777); err != nil {
			return nil, err
		}
		again, err := c.indexPack(raw, q.objectsDir(), false)
		if err != nil {
			return nil, err
		}
		if again != nil {
			return nil, fmt.Errorf("the remote sent a pack git cannot read: %s", again.reason())
		}
	} else {
		q.checked = true
	}
	q.store = filesystem.NewStorageWithOptions(osfs.New(q.dir), cache.NewObjectLRUDefault(),
		filesystem.Options{KeepDescriptors: true, LargeObjectThreshold: largeObject})
	return fail, nil
}

// over returns a store that reads the quarantined objects, then base's.
func (q *quarantine) over(base gitstorer.EncodedObjectStorer) gitstorer.EncodedObjectStorer {
	return &overlay{top: q.store, base: base}
}

// migrate moves the accepted objects into base. When every ref was
// accepted and git's checks passed on the whole pack, a large fetch keeps
// the pack as it is (its files are moved into the object store); a small
// one, or one some refs of which were refused, is stored as loose objects,
// only those the accepted refs bring.
func (q *quarantine) migrate(base gitstorer.EncodedObjectStorer, objectsDir string, accepted []plumbing.Hash, all bool) error {
	if q.store == nil {
		return nil
	}
	if all && q.checked && q.dir != "" && q.count >= unpackLimit && objectsDir != "" {
		packs, _ := filepath.Glob(filepath.Join(q.objectsDir(), "pack", "pack-*.pack"))
		if len(packs) == 1 {
			if err := movePack(packs[0], filepath.Join(objectsDir, "pack")); err != nil {
				return err
			}
			// go-git reads the list of packs once: make it look again.
			if ri, ok := base.(interface{ Reindex() }); ok {
				ri.Reindex()
			}
			return nil
		}
	}
	for _, h := range accepted {
		if base.HasEncodedObject(h) == nil {
			continue
		}
		o, err := q.store.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			continue // not fetched: the repository had it (a thin pack's base)
		}
		if _, err := base.SetEncodedObject(o); err != nil {
			return err
		}
	}
	return nil
}

// movePack moves a pack and its index into dir, the pack first: git (and
// go-git) find a pack by its index, so it is never seen half moved.
func movePack(pack, dir string) error {
	base := strings.TrimSuffix(filepath.Base(pack), ".pack")
	src := filepath.Dir(pack)
	for _, ext := range []string{".pack", ".rev", ".idx"} {
		from := filepath.Join(src, base+ext)
		if _, err := os.Stat(from); err != nil {
			if ext == ".rev" {
				continue
			}
			return err
		}
		if err := os.Rename(from, filepath.Join(dir, base+ext)); err != nil {
			return err
		}
	}
	return nil
}

// discard removes the quarantine and whatever it still holds.
func (q *quarantine) discard() {
	if c, ok := q.store.(io.Closer); ok && q.store != nil {
		_ = c.Close()
	}
	if q.dir != "" {
		_ = os.RemoveAll(q.dir)
	}
}

// objectReader returns a store for the many object reads of a merge and
// a function that releases it: the repository's own, whose object layer
// keeps packs open, reads them without a lock and caches what it read
// (gitstore/objects). Size limits are checked before reading (checkSize).
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

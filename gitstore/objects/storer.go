package objects

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	gitstorer "github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// storer is the go-git storage of a repository on disk: refs, config,
// index and shallow file as go-git reads them, objects through Objects,
// so that go-git's object helpers (object.GetCommit, the pack encoder)
// see exactly what git-hegel's own code sees.
type storer struct {
	gitstorer.ReferenceStorer
	gitstorer.ShallowStorer
	gitstorer.IndexStorer
	storage.ModuleStorer
	fs      *filesystem.Storage
	objects *Objects
}

var (
	_ storage.Storer                = (*storer)(nil)
	_ gitstorer.PackfileWriter      = (*storer)(nil)
	_ gitstorer.EncodedObjectStorer = (*storer)(nil)
)

// NewStorer returns the go-git storage of a repository on disk: fs for
// refs, config, index and shallow file, o for objects.
func NewStorer(fs *filesystem.Storage, o *Objects) storage.Storer {
	return &storer{ReferenceStorer: fs, ShallowStorer: fs, IndexStorer: fs, ModuleStorer: fs, fs: fs, objects: o}
}

// Config hides extensions.worktreeConfig from go-git, which refuses to
// open repositories that use it although it never reads per-worktree
// config.
func (s *storer) Config() (*gitconfig.Config, error) {
	c, err := s.fs.Config()
	if err != nil || c.Raw == nil || !c.Raw.HasSection("extensions") {
		return c, err
	}
	c.Raw.Section("extensions").RemoveOption("worktreeConfig")
	return c, nil
}

func (s *storer) SetConfig(c *gitconfig.Config) error { return s.fs.SetConfig(c) }

func (s *storer) NewEncodedObject() plumbing.EncodedObject { return &plumbing.MemoryObject{} }

func (s *storer) SetEncodedObject(obj plumbing.EncodedObject) (plumbing.Hash, error) {
	rd, err := obj.Reader()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	data, err := io.ReadAll(rd)
	rd.Close()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return s.objects.Write(obj.Type(), data)
}

func (s *storer) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	typ, data, err := s.objects.ReadAny(h)
	if errors.Is(err, ErrObjectMissing) {
		return nil, plumbing.ErrObjectNotFound
	}
	if err != nil {
		return nil, err
	}
	if t != plumbing.AnyObject && typ != t {
		return nil, plumbing.ErrObjectNotFound
	}
	return memoryObject(typ, data), nil
}

func memoryObject(t plumbing.ObjectType, data []byte) *plumbing.MemoryObject {
	obj := &plumbing.MemoryObject{}
	obj.SetType(t)
	_, _ = obj.Write(data)
	return obj
}

func (s *storer) HasEncodedObject(h plumbing.Hash) error {
	if s.objects.Has(h) {
		return nil
	}
	return plumbing.ErrObjectNotFound
}

func (s *storer) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	n, err := s.objects.Size(h)
	if errors.Is(err, ErrObjectMissing) {
		return 0, plumbing.ErrObjectNotFound
	}
	return n, err
}

// IterEncodedObjects lists objects as go-git's own storage sees them
// (nothing in git-hegel iterates a repository's objects).
func (s *storer) IterEncodedObjects(t plumbing.ObjectType) (gitstorer.EncodedObjectIter, error) {
	return s.fs.IterEncodedObjects(t)
}

func (s *storer) AddAlternate(string) error {
	return errors.New("adding alternates is not supported")
}

// PackfileWriter stores a pack as sent (a fetch of many objects).
func (s *storer) PackfileWriter() (io.WriteCloser, error) { return s.objects.PackWriter() }

// PackWriter returns a writer for a pack: on Close it is indexed and moved
// into the pack directory (pack first, index last, so readers never see an
// index without its pack), read-only with the shared permissions.
func (o *Objects) PackWriter() (io.WriteCloser, error) {
	if o.mem != nil {
		return nil, errors.New("no pack directory in memory")
	}
	dir := filepath.Join(o.dir, "pack")
	if err := o.perm.MkdirAll(dir); err != nil {
		return nil, err
	}
	f, err := o.perm.OpenFile(filepath.Join(dir, "tmp_pack_"+NewID()[:12]), os.O_RDWR|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return nil, err
	}
	return &packWriter{o: o, f: f, dir: dir}, nil
}

type packWriter struct {
	o   *Objects
	f   *os.File
	dir string
}

func (w *packWriter) Write(p []byte) (int, error) { return w.f.Write(p) }

func (w *packWriter) Close() error {
	tmp := w.f.Name()
	err := w.finish()
	w.f.Close()
	os.Remove(tmp)
	return err
}

func (w *packWriter) finish() error {
	if _, err := w.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	iw := new(idxfile.Writer)
	parser, err := packfile.NewParser(packfile.NewScanner(w.f), iw)
	if err != nil {
		return err
	}
	sum, err := parser.Parse()
	if errors.Is(err, packfile.ErrEmptyPackfile) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot index the pack: %w", err)
	}
	idx, err := iw.Index()
	if err != nil {
		return err
	}
	if err := w.o.dur.Sync(FsyncPack, w.f); err != nil {
		return err
	}
	base := filepath.Join(w.dir, "pack-"+sum.String())
	if _, err := os.Stat(base + ".idx"); err == nil {
		return nil // the same pack is there already
	}
	if err := os.Chmod(w.f.Name(), 0o444); err != nil {
		return err
	}
	if err := w.o.perm.Adjust(w.f.Name()); err != nil {
		return err
	}
	if err := os.Rename(w.f.Name(), base+".pack"); err != nil {
		return err
	}
	itmp := filepath.Join(w.dir, "tmp_idx_"+NewID()[:12])
	f, err := w.o.perm.OpenFile(itmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return err
	}
	_, err = idxfile.NewEncoder(f).Encode(idx)
	if err == nil {
		err = w.o.dur.Sync(FsyncPackMetadata, f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(itmp, 0o444)
	}
	if err == nil {
		err = w.o.perm.Adjust(itmp)
	}
	if err == nil {
		err = os.Rename(itmp, base+".idx")
	}
	if err != nil {
		os.Remove(itmp)
		return err
	}
	w.o.scanPacks(true)
	return nil
}

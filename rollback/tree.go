package rollback

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-hegel/git-hegel/gitstore"
	gitobjects "github.com/git-hegel/git-hegel/gitstore/objects"
)

// objects is the rollback code's view of gitstore's object layer (one
// for the whole program: reads and writes of loose objects, packs, trees
// and parallel writes all live there). It adds the trees that were built
// in memory but not written yet, so a preview can diff against them
// without writing anything.
type objects struct {
	mu  sync.Mutex
	mem map[plumbing.Hash][]byte // tree objects built or read by this process
	db  *gitobjects.Objects
	// batch, while a snapshot is stored, collects its blobs and trees
	// into one pack (gitobjects.Batch); nil otherwise.
	batch *gitobjects.Batch
}

// beginBatch makes write and flushTrees collect into one batch until
// finishBatch (or abortBatch).
func (o *objects) beginBatch() { o.batch = o.db.NewBatch() }

// finishBatch stores what the batch collected; its objects are readable
// afterwards.
func (o *objects) finishBatch() error {
	b := o.batch
	o.batch = nil
	if b == nil {
		return nil
	}
	return b.Finish()
}

// abortBatch drops an unfinished batch.
func (o *objects) abortBatch() {
	if o.batch != nil {
		o.batch.Abort()
		o.batch = nil
	}
}

func newObjects(r *gitstore.Repo) *objects {
	return &objects{mem: map[plumbing.Hash][]byte{}, db: r.Objects()}
}

// close releases nothing: the repository owns the mapped packs.
func (o *objects) close() {}

// hashObject is git's object name for data of type t.
func hashObject(t plumbing.ObjectType, data []byte) plumbing.Hash {
	return gitobjects.HashObject(t, data)
}

// has reports whether h can be read, freshening it where it is stored:
// the check a restore makes before it starts (an object of a pack a
// concurrent repack deleted still reads through this process's mapping).
func (o *objects) has(h plumbing.Hash) bool {
	return o.db.Freshen(h) || o.db.Has(h)
}

// stored reports whether h is on disk now, freshening it (git's rule for
// a writer that skips an object it has): a writer skips writing only what
// it reports. Not has: an object found only in a pack that a concurrent
// repack has deleted reads in this process, but a checkpoint that
// skipped it would name an object no other process can read; and one
// that cannot be freshened (a read-only alternate) is written again, as
// git writes it.
func (o *objects) stored(h plumbing.Hash) bool {
	return o.db.Freshen(h)
}

// write stores data as an object named h (already computed by the caller)
// unless the repository has it, in which case it is freshened.
func (o *objects) write(t plumbing.ObjectType, h plumbing.Hash, data []byte) error {
	if o.batch != nil {
		return o.batch.Write(t, h, data)
	}
	return o.db.WriteHashed(t, h, data)
}

// read returns an object's content, checking its type.
func (o *objects) read(t plumbing.ObjectType, h plumbing.Hash) ([]byte, error) {
	if t == plumbing.TreeObject {
		o.mu.Lock()
		b, ok := o.mem[h]
		o.mu.Unlock()
		if ok {
			return b, nil
		}
	}
	b, err := o.db.Read(t, h)
	if err != nil {
		return nil, fmt.Errorf("missing %s %s: %w", t, h, err)
	}
	if t == plumbing.TreeObject {
		// Kept: a rollback reads the same subtrees for the worktree and
		// the index, and again for its bookkeeping.
		o.mu.Lock()
		o.mem[h] = b
		o.mu.Unlock()
	}
	return b, nil
}

// flushTrees writes the in-memory trees reachable from root that the
// repository does not have (gitobjects.Objects.WriteTrees: top down, an
// existing tree skipped with everything below it, written by height).
func (o *objects) flushTrees(root plumbing.Hash) error {
	lookup := func(h plumbing.Hash) ([]byte, bool) {
		o.mu.Lock()
		defer o.mu.Unlock()
		b, ok := o.mem[h]
		return b, ok
	}
	if o.batch != nil {
		return o.batch.WriteTrees(root, lookup)
	}
	return o.db.WriteTrees(root, lookup)
}

// treeEntry is one entry of a tree object: gitstore's type, so that a
// parsed tree is used as gitobjects.ParseTree returns it (a rollback parses
// thousands; a copy into a type of our own was a fifth of its diff).
type treeEntry = gitobjects.TreeEntry

// leaf is a file, symbolic link or submodule at a full path.
type leaf struct {
	path string
	mode filemode.FileMode
	hash plumbing.Hash
}

var modeNames = map[filemode.FileMode]string{
	filemode.Regular:    "100644",
	filemode.Executable: "100755",
	filemode.Symlink:    "120000",
	filemode.Dir:        "40000",
	filemode.Submodule:  "160000",
}

// buildTree encodes the trees for leaves, which must be sorted by path
// (byte order, as the index is: that is also git's tree order at every
// level) and free of duplicates. Every tree goes into mem; the root's name
// is returned.
func buildTree(leaves []leaf, mem map[plumbing.Hash][]byte) (plumbing.Hash, error) {
	return buildTreeOf(len(leaves), func(i int) string { return leaves[i].path }, func(i int) leaf { return leaves[i] }, mem)
}

// buildTreeOf is buildTree over n leaves produced by at (path gives just
// the path, cheaply: it is what the grouping asks for most), so that large
// trees need no slice of leaves of their own. Large trees are built across
// the cores (gitobjects.BuildTree): path and at are called from several
// goroutines at once.
func buildTreeOf(n int, path func(int) string, at func(int) leaf, mem map[plumbing.Hash][]byte) (plumbing.Hash, error) {
	return gitobjects.BuildTree(n, path, func(i int) (filemode.FileMode, plumbing.Hash) {
		l := at(i)
		return l.mode, l.hash
	}, mem)
}

// errBadTree wraps every malformed-tree error.
var errBadTree = gitobjects.ErrBadTree

// parseTree decodes a tree object. With strict, it also refuses what git's
// fsck --strict refuses and what could make a restore write outside the
// working tree: bad modes, unsafe names, duplicate or unsorted entries, and
// .gitmodules as a symbolic link. Names alias data, which must not change
// afterwards (trees are kept, unmodified, in objects.mem).
func parseTree(data []byte, strict bool) ([]treeEntry, error) {
	out, err := gitobjects.ParseTree(data)
	if err != nil {
		return nil, err
	}
	if !strict {
		return out, nil
	}
	for i, e := range out {
		if _, ok := gitobjects.ModeString(e.Mode); !ok {
			return nil, fmt.Errorf("%w: %q has mode %o", ErrUnsafePath, e.Name, uint32(e.Mode))
		}
		if err := checkName(e.Name); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnsafePath, err)
		}
		if e.Mode == filemode.Symlink && strings.EqualFold(e.Name, ".gitmodules") {
			return nil, fmt.Errorf("%w: .gitmodules is a symbolic link", ErrUnsafePath)
		}
		if i > 0 && gitCompare(out[i-1], e) >= 0 {
			return nil, fmt.Errorf("%w: entries out of order or repeated at %q", ErrUnsafePath, e.Name)
		}
		if e.Mode == filemode.Dir && fileNamed(out[:i], e.Name) {
			return nil, fmt.Errorf("%w: %q appears twice", ErrUnsafePath, e.Name)
		}
	}
	return out, nil
}

// gitCompare orders tree entries as git does: by name, a directory's name
// compared as if it ended in a slash.
func gitCompare(a, b treeEntry) int {
	return gitobjects.CompareTreeEntries(a, b)
}

// fileNamed reports whether a non-directory named name precedes a
// directory of the same name. In git order only names that extend name
// with a byte below '/' can sit between the two, so the search stops at
// the first entry that does not.
func fileNamed(before []treeEntry, name string) bool {
	for i := len(before) - 1; i >= 0; i-- {
		o := before[i].Name
		if !strings.HasPrefix(o, name) {
			return false
		}
		if len(o) == len(name) {
			return before[i].Mode != filemode.Dir
		}
		if o[len(name)] >= '/' {
			return false
		}
	}
	return false
}

// treeReader reads trees for diffs and walks, validating the ones that come
// from a checkpoint (which may have been fetched from another machine).
// Parsed entries are not kept (10 MB for 100,000 files); parsing again is
// cheap next to reading, and the raw trees are kept in objects.mem.
type treeReader struct {
	o      *objects
	strict bool
	// foldCase also refuses names that differ only in case (core.ignorecase):
	// on such a filesystem they are one file.
	foldCase bool
}

func (r *treeReader) entries(h plumbing.Hash, dir string) ([]treeEntry, error) {
	data, err := r.o.read(plumbing.TreeObject, h)
	if err != nil {
		return nil, err
	}
	ents, err := parseTree(data, r.strict)
	if err != nil {
		if dir != "" {
			return nil, fmt.Errorf("%w (in %s/)", err, dir)
		}
		return nil, err
	}
	if r.strict && r.foldCase {
		folded := make(map[string]bool, len(ents))
		for _, e := range ents {
			k := strings.ToLower(e.Name)
			if folded[k] {
				return nil, fmt.Errorf("%w: %q differs from another entry in %s/ only in case", ErrUnsafePath, e.Name, dir)
			}
			folded[k] = true
		}
	}
	return ents, nil
}

// walkLeaves calls fn for every leaf below tree h, whose path is prefix.
func (r *treeReader) walkLeaves(h plumbing.Hash, prefix string, fn func(leaf) error) error {
	ents, err := r.entries(h, prefix)
	if err != nil {
		return err
	}
	for _, e := range ents {
		p := join(prefix, e.Name)
		if e.Mode == filemode.Dir {
			if err := r.walkLeaves(e.Hash, p, fn); err != nil {
				return err
			}
			continue
		}
		if err := fn(leaf{path: p, mode: e.Mode, hash: e.Hash}); err != nil {
			return err
		}
	}
	return nil
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// change is one path that differs between two trees. A zero mode means
// absent on that side.
type change struct {
	path     string
	from, to leaf
}

// diffTrees lists the leaves that differ between a (trusted: built from
// this working tree) and b (read through rb, which validates it). Equal
// subtrees are skipped without being read. The result is sorted by path.
// Subtrees are compared in parallel where the object store allows it: a
// rollback across 1,000 directories reads and checks 1,000 trees of the
// checkpoint, most of its diff's time.
func diffTrees(ra, rb *treeReader, a, b plumbing.Hash) ([]change, error) {
	if err := prefetch(rb.o, a, b); err != nil {
		return nil, err
	}
	d := &differ{ra: ra, rb: rb}
	if rb.o.db.OnDisk() {
		// As many as there are cores: the caller's goroutine only waits
		// once its own level is done, and a slot is held for a whole
		// subtree (a single top directory, as most repositories have,
		// took the only one of GOMAXPROCS-1 and left one core idle).
		d.slots = make(chan struct{}, runtime.GOMAXPROCS(0))
	}
	var out []change
	err := d.level(a, b, "", &out)
	d.wg.Wait()
	if err == nil {
		err = d.err
	}
	out = append(out, d.out...)
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, err
}

// differ compares two trees, handing subtrees to other goroutines while
// one of slots is free (nil: all on the caller's goroutine).
type differ struct {
	ra, rb *treeReader
	slots  chan struct{}
	wg     sync.WaitGroup
	mu     sync.Mutex
	out    []change // what the other goroutines found
	err    error    // the first error one of them met
}

// sub compares subtrees a and b at dir: on another goroutine if a slot is
// free, else on this one, into out.
func (d *differ) sub(a, b plumbing.Hash, dir string, out *[]change) error {
	if a == b {
		return nil
	}
	select {
	case d.slots <- struct{}{}:
	default:
		return d.level(a, b, dir, out)
	}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		var mine []change
		err := d.level(a, b, dir, &mine)
		<-d.slots
		d.mu.Lock()
		d.out = append(d.out, mine...)
		if err != nil && d.err == nil {
			d.err = err
		}
		d.mu.Unlock()
	}()
	return nil
}

func (d *differ) level(a, b plumbing.Hash, dir string, out *[]change) error {
	ra, rb := d.ra, d.rb
	if a == b {
		return nil
	}
	var ea, eb []treeEntry
	var err error
	if !a.IsZero() {
		if ea, err = ra.entries(a, dir); err != nil {
			return err
		}
	}
	if !b.IsZero() {
		if eb, err = rb.entries(b, dir); err != nil {
			return err
		}
	}
	removeAll := func(e treeEntry, p string) error {
		if e.Mode != filemode.Dir {
			*out = append(*out, change{path: p, from: leaf{p, e.Mode, e.Hash}})
			return nil
		}
		return ra.walkLeaves(e.Hash, p, func(l leaf) error {
			*out = append(*out, change{path: l.path, from: l})
			return nil
		})
	}
	addAll := func(e treeEntry, p string) error {
		if e.Mode != filemode.Dir {
			*out = append(*out, change{path: p, to: leaf{p, e.Mode, e.Hash}})
			return nil
		}
		return rb.walkLeaves(e.Hash, p, func(l leaf) error {
			*out = append(*out, change{path: l.path, to: l})
			return nil
		})
	}
	// Both lists are in git order; a file and a directory of the same
	// name sort apart and are handled as a removal and an addition, which
	// is what a type change is anyway.
	i, j := 0, 0
	for i < len(ea) || j < len(eb) {
		c := 0
		switch {
		case j == len(eb):
			c = -1
		case i == len(ea):
			c = 1
		default:
			c = gitCompare(ea[i], eb[j])
		}
		switch {
		case c < 0:
			if err := removeAll(ea[i], join(dir, ea[i].Name)); err != nil {
				return err
			}
			i++
		case c > 0:
			if err := addAll(eb[j], join(dir, eb[j].Name)); err != nil {
				return err
			}
			j++
		default:
			x, y := ea[i], eb[j]
			i++
			j++
			switch {
			case x.Mode == filemode.Dir:
				if x.Hash != y.Hash {
					if err := d.sub(x.Hash, y.Hash, join(dir, x.Name), out); err != nil {
						return err
					}
				}
			case x.Mode != y.Mode || x.Hash != y.Hash:
				p := join(dir, x.Name)
				*out = append(*out, change{path: p, from: leaf{p, x.Mode, x.Hash}, to: leaf{p, y.Mode, y.Hash}})
			}
		}
	}
	return nil
}

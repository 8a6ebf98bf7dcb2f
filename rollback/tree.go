package rollback

import (
	"bytes"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/git-hegel/git-hegel/gitstore"
)

// objects serializes access to the go-git storage (neither the filesystem
// nor the memory storage is safe for concurrent use) and holds trees that
// were built in memory but not written yet, so a preview can diff against
// them without writing anything.
type objects struct {
	mu  sync.Mutex
	s   storage.Storer
	mem map[plumbing.Hash][]byte // tree objects built or read by this process
	// looseDir is the objects directory of a repository on disk: new
	// objects are written there directly, in parallel (loose.go).
	looseDir string
}

func newObjects(s storage.Storer) *objects {
	return &objects{s: s, mem: map[plumbing.Hash][]byte{}}
}

// objectStorage returns the storage the rollback code reads and writes
// objects through. On disk it is one of its own over the same objects
// directory, opened with KeepDescriptors: the repository's storage opens
// and closes the pack file for every object it reads, which for the 2,000
// objects of a 1,000-file rollback costs more than inflating them.
// In memory it is the repository's.
func objectStorage(r *gitstore.Repo) storage.Storer {
	if r.CommonDir == "" {
		return r.Storage()
	}
	return filesystem.NewStorageWithOptions(osfs.New(r.CommonDir), cache.NewObjectLRU(4*cache.MiByte),
		filesystem.Options{KeepDescriptors: true})
}

// close releases the pack files kept open.
func (o *objects) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if c, ok := o.s.(*filesystem.Storage); ok {
		c.Close()
	}
}

// hashObject is git's object name for data of type t.
func hashObject(t plumbing.ObjectType, data []byte) plumbing.Hash {
	h := sha1.New()
	h.Write([]byte(t.String()))
	h.Write([]byte{' '})
	h.Write([]byte(strconv.Itoa(len(data))))
	h.Write([]byte{0})
	h.Write(data)
	var out plumbing.Hash
	copy(out[:], h.Sum(nil))
	return out
}

func (o *objects) has(h plumbing.Hash) bool {
	if o.looseDir != "" && hasLoose(o.looseDir, h) {
		return true // one lstat, no lock; go-git would open and close the file
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.s.HasEncodedObject(h) == nil
}

// write stores data as an object named h (already computed by the caller)
// unless the repository has it.
func (o *objects) write(t plumbing.ObjectType, h plumbing.Hash, data []byte) error {
	if o.looseDir == "" {
		o.mu.Lock()
		defer o.mu.Unlock()
		return o.writeLocked(t, h, data)
	}
	if o.has(h) {
		return nil
	}
	return writeLoose(o.looseDir, t, h, data)
}

func (o *objects) writeLocked(t plumbing.ObjectType, h plumbing.Hash, data []byte) error {
	if o.s.HasEncodedObject(h) == nil {
		return nil
	}
	obj := o.s.NewEncodedObject()
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
	got, err := o.s.SetEncodedObject(obj)
	if err != nil {
		return fmt.Errorf("cannot write object %s: %w", h, err)
	}
	if got != h {
		return fmt.Errorf("object %s was stored as %s", h, got)
	}
	return nil
}

// read returns an object's content, checking its type.
func (o *objects) read(t plumbing.ObjectType, h plumbing.Hash) ([]byte, error) {
	o.mu.Lock()
	if t == plumbing.TreeObject {
		if b, ok := o.mem[h]; ok {
			o.mu.Unlock()
			return b, nil
		}
	}
	o.mu.Unlock()
	if o.looseDir != "" {
		// A loose object is read here, without the storage's lock, so
		// that several goroutines can inflate at once.
		if b, err := readLoose(o.looseDir, t, h); err == nil {
			if t == plumbing.TreeObject {
				o.mu.Lock()
				o.mem[h] = b
				o.mu.Unlock()
			}
			return b, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	obj, err := o.s.EncodedObject(t, h)
	if err != nil {
		return nil, fmt.Errorf("missing %s %s: %w", t, h, err)
	}
	r, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s %s: %w", t, h, err)
	}
	if t == plumbing.TreeObject {
		// Kept: a rollback reads the same subtrees for the worktree and
		// the index, and again for its bookkeeping.
		o.mem[h] = b
	}
	return b, nil
}

// flushTrees writes the in-memory trees reachable from root, top down:
// a tree the repository already has is skipped with everything below it
// (the object graph is closed), so an unchanged checkpoint writes nothing
// and a changed one writes only the trees along the changed paths.
func (o *objects) flushTrees(root plumbing.Hash) error {
	// Trees are written by height, every tree after all its missing
	// subtrees, including when they are written in parallel: the top-down
	// skip above relies on an existing tree having all its subtrees, and a
	// process killed midway must leave nothing that breaks it.
	var levels [][]pendingObject
	height := map[plumbing.Hash]int{}
	var walk func(h plumbing.Hash) (int, error)
	walk = func(h plumbing.Hash) (int, error) {
		if ht, ok := height[h]; ok {
			return ht, nil
		}
		o.mu.Lock()
		data, ok := o.mem[h]
		o.mu.Unlock()
		if !ok || o.has(h) {
			return -1, nil
		}
		ents, err := parseTree(data, false)
		if err != nil {
			return 0, err
		}
		ht := 0
		for _, e := range ents {
			if e.mode == filemode.Dir {
				sub, err := walk(e.hash)
				if err != nil {
					return 0, err
				}
				ht = max(ht, sub+1)
			}
		}
		height[h] = ht
		for len(levels) <= ht {
			levels = append(levels, nil)
		}
		levels[ht] = append(levels[ht], pendingObject{plumbing.TreeObject, h, data})
		return ht, nil
	}
	if _, err := walk(root); err != nil {
		return err
	}
	for _, level := range levels {
		if err := o.writeAll(level); err != nil {
			return err
		}
	}
	return nil
}

// treeEntry is one entry of a tree object.
type treeEntry struct {
	name string
	mode filemode.FileMode
	hash plumbing.Hash
}

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
// trees need no slice of leaves of their own.
func buildTreeOf(n int, path func(int) string, at func(int) leaf, mem map[plumbing.Hash][]byte) (plumbing.Hash, error) {
	b := treeBuilder{path: path, at: at, mem: mem}
	return b.level(0, n, 0)
}

type treeBuilder struct {
	path func(int) string
	at   func(int) leaf
	mem  map[plumbing.Hash][]byte
}

func modeName(m filemode.FileMode) (string, bool) {
	switch m {
	case filemode.Regular:
		return "100644", true
	case filemode.Executable:
		return "100755", true
	case filemode.Symlink:
		return "120000", true
	case filemode.Dir:
		return "40000", true
	case filemode.Submodule:
		return "160000", true
	}
	return "", false
}

func (b *treeBuilder) level(lo, hi, prefix int) (plumbing.Hash, error) {
	buf := make([]byte, 0, 48*min(hi-lo, 256))
	last := ""
	for i := lo; i < hi; {
		p := b.path(i)
		rest := p[prefix:]
		var (
			name = rest
			mode filemode.FileMode
			hash plumbing.Hash
		)
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			name = rest[:j]
			group := p[:prefix+j+1]
			k := i + 1
			for k < hi && strings.HasPrefix(b.path(k), group) {
				k++
			}
			sub, err := b.level(i, k, prefix+j+1)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			mode, hash = filemode.Dir, sub
			i = k
		} else {
			l := b.at(i)
			mode, hash = l.mode, l.hash
			i++
		}
		if name == "" {
			return plumbing.ZeroHash, fmt.Errorf("invalid path %q", p)
		}
		if name == last {
			return plumbing.ZeroHash, fmt.Errorf("path %q is both a file and a directory", p[:prefix+len(name)])
		}
		last = name
		ms, ok := modeName(mode)
		if !ok {
			return plumbing.ZeroHash, fmt.Errorf("path %q has unsupported mode %o", p, uint32(mode))
		}
		buf = append(buf, ms...)
		buf = append(buf, ' ')
		buf = append(buf, name...)
		buf = append(buf, 0)
		buf = append(buf, hash[:]...)
	}
	h := hashObject(plumbing.TreeObject, buf)
	b.mem[h] = buf
	return h, nil
}

// errBadTree wraps every malformed-tree error.
var errBadTree = errors.New("malformed tree")

// parseTree decodes a tree object. With strict, it also refuses what git's
// fsck --strict refuses and what could make a restore write outside the
// working tree: bad modes, unsafe names, duplicate or unsorted entries, and
// .gitmodules as a symbolic link. Names alias data, which must not change
// afterwards (trees are kept, unmodified, in objects.mem).
func parseTree(data []byte, strict bool) ([]treeEntry, error) {
	out := make([]treeEntry, 0, len(data)/40+1)
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp <= 0 || sp > 7 {
			return nil, fmt.Errorf("%w: bad entry header", errBadTree)
		}
		var m uint32
		for _, c := range data[:sp] {
			if c < '0' || c > '7' {
				return nil, fmt.Errorf("%w: bad mode %q", errBadTree, data[:sp])
			}
			m = m<<3 | uint32(c-'0')
		}
		nul := bytes.IndexByte(data[sp+1:], 0)
		if nul < 0 || sp+1+nul+1+20 > len(data) {
			return nil, fmt.Errorf("%w: truncated entry", errBadTree)
		}
		e := treeEntry{mode: filemode.FileMode(m)}
		if nul > 0 {
			e.name = unsafe.String(&data[sp+1], nul)
		}
		copy(e.hash[:], data[sp+1+nul+1:])
		data = data[sp+1+nul+1+20:]
		if strict {
			if _, ok := modeNames[e.mode]; !ok {
				return nil, fmt.Errorf("%w: %q has mode %o", ErrUnsafePath, e.name, m)
			}
			if err := checkName(e.name); err != nil {
				return nil, fmt.Errorf("%w: %v", ErrUnsafePath, err)
			}
			if e.mode == filemode.Symlink && strings.EqualFold(e.name, ".gitmodules") {
				return nil, fmt.Errorf("%w: .gitmodules is a symbolic link", ErrUnsafePath)
			}
			if n := len(out); n > 0 && gitCompare(out[n-1], e) >= 0 {
				return nil, fmt.Errorf("%w: entries out of order or repeated at %q", ErrUnsafePath, e.name)
			}
			if e.mode == filemode.Dir && fileNamed(out, e.name) {
				return nil, fmt.Errorf("%w: %q appears twice", ErrUnsafePath, e.name)
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// gitCompare orders tree entries as git does: by name, a directory's name
// compared as if it ended in a slash.
func gitCompare(a, b treeEntry) int {
	n := min(len(a.name), len(b.name))
	if c := strings.Compare(a.name[:n], b.name[:n]); c != 0 {
		return c
	}
	ca, cb := byte(0), byte(0)
	if len(a.name) > n {
		ca = a.name[n]
	} else if a.mode == filemode.Dir {
		ca = '/'
	}
	if len(b.name) > n {
		cb = b.name[n]
	} else if b.mode == filemode.Dir {
		cb = '/'
	}
	switch {
	case ca < cb:
		return -1
	case ca > cb:
		return 1
	}
	return 0
}

// fileNamed reports whether a non-directory named name precedes a
// directory of the same name. In git order only names that extend name
// with a byte below '/' can sit between the two, so the search stops at
// the first entry that does not.
func fileNamed(before []treeEntry, name string) bool {
	for i := len(before) - 1; i >= 0; i-- {
		o := before[i].name
		if !strings.HasPrefix(o, name) {
			return false
		}
		if len(o) == len(name) {
			return before[i].mode != filemode.Dir
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
			k := strings.ToLower(e.name)
			if folded[k] {
				return nil, fmt.Errorf("%w: %q differs from another entry in %s/ only in case", ErrUnsafePath, e.name, dir)
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
		p := join(prefix, e.name)
		if e.mode == filemode.Dir {
			if err := r.walkLeaves(e.hash, p, fn); err != nil {
				return err
			}
			continue
		}
		if err := fn(leaf{path: p, mode: e.mode, hash: e.hash}); err != nil {
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
func diffTrees(ra, rb *treeReader, a, b plumbing.Hash) ([]change, error) {
	if err := prefetch(rb.o, a, b); err != nil {
		return nil, err
	}
	var out []change
	err := diffLevel(ra, rb, a, b, "", &out)
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, err
}

func diffLevel(ra, rb *treeReader, a, b plumbing.Hash, dir string, out *[]change) error {
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
		if e.mode != filemode.Dir {
			*out = append(*out, change{path: p, from: leaf{p, e.mode, e.hash}})
			return nil
		}
		return ra.walkLeaves(e.hash, p, func(l leaf) error {
			*out = append(*out, change{path: l.path, from: l})
			return nil
		})
	}
	addAll := func(e treeEntry, p string) error {
		if e.mode != filemode.Dir {
			*out = append(*out, change{path: p, to: leaf{p, e.mode, e.hash}})
			return nil
		}
		return rb.walkLeaves(e.hash, p, func(l leaf) error {
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
			if err := removeAll(ea[i], join(dir, ea[i].name)); err != nil {
				return err
			}
			i++
		case c > 0:
			if err := addAll(eb[j], join(dir, eb[j].name)); err != nil {
				return err
			}
			j++
		default:
			x, y := ea[i], eb[j]
			p := join(dir, x.name)
			i++
			j++
			switch {
			case x.mode == filemode.Dir:
				if err := diffLevel(ra, rb, x.hash, y.hash, p, out); err != nil {
					return err
				}
			case x.mode != y.mode || x.hash != y.hash:
				*out = append(*out, change{path: p, from: leaf{p, x.mode, x.hash}, to: leaf{p, y.mode, y.hash}})
			}
		}
	}
	return nil
}

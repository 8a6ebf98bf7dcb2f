package objects

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// TreeEntry is one entry of a tree object.
type TreeEntry struct {
	Name string
	Mode filemode.FileMode
	Hash plumbing.Hash
}

// ErrBadTree wraps every error about a malformed tree object.
var ErrBadTree = errors.New("malformed tree")

// ParseTree decodes a tree object. It checks only the encoding; callers
// that read trees from untrusted sources add their own checks. Names alias
// data, which must not change afterwards.
func ParseTree(data []byte) ([]TreeEntry, error) {
	out := make([]TreeEntry, 0, maxTreeEntries(data))
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp <= 0 || sp > 7 {
			return nil, fmt.Errorf("%w: bad entry header", ErrBadTree)
		}
		var m uint32
		for _, c := range data[:sp] {
			if c < '0' || c > '7' {
				return nil, fmt.Errorf("%w: bad mode %q", ErrBadTree, data[:sp])
			}
			m = m<<3 | uint32(c-'0')
		}
		nul := bytes.IndexByte(data[sp+1:], 0)
		if nul < 0 || sp+1+nul+1+20 > len(data) {
			return nil, fmt.Errorf("%w: truncated entry", ErrBadTree)
		}
		e := TreeEntry{Mode: filemode.FileMode(m)}
		if nul > 0 {
			e.Name = unsafe.String(&data[sp+1], nul)
		}
		copy(e.Hash[:], data[sp+1+nul+1:])
		data = data[sp+1+nul+1+20:]
		out = append(out, e)
	}
	return out, nil
}

// maxTreeEntries is how many entries tree data holds at most when git
// wrote it (its shortest entry is 28 bytes: "40000 x", NUL, 20 bytes of
// hash): a capacity that does not grow, where len/40 grew every tree of
// short names. Only a hint: a malformed tree of shorter entries grows it.
func maxTreeEntries(data []byte) int { return len(data)/28 + 1 }

// ModeString is a mode as a tree entry spells it, and whether git stores
// entries of that mode at all.
func ModeString(m filemode.FileMode) (string, bool) {
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

// appendTreeEntry appends one entry's encoding to buf.
func appendTreeEntry(buf []byte, name string, mode filemode.FileMode, h plumbing.Hash) ([]byte, error) {
	ms, ok := ModeString(mode)
	if !ok {
		return buf, fmt.Errorf("%q has unsupported mode %o", name, uint32(mode))
	}
	buf = append(buf, ms...)
	buf = append(buf, ' ')
	buf = append(buf, name...)
	buf = append(buf, 0)
	return append(buf, h[:]...), nil
}

// EncodeTree encodes entries, sorting them in git's order first (fsck
// refuses any other) and refusing empty, repeated or slash-holding names.
func EncodeTree(entries []TreeEntry) ([]byte, error) {
	es := append([]TreeEntry(nil), entries...)
	sortTreeEntries(es)
	buf := make([]byte, 0, 48*len(es))
	for i, e := range es {
		if e.Name == "" || strings.Contains(e.Name, "/") {
			return nil, fmt.Errorf("invalid tree entry name %q", e.Name)
		}
		if i > 0 && es[i-1].Name == e.Name {
			return nil, fmt.Errorf("path %s is both a file and a directory, or repeated", e.Name)
		}
		var err error
		if buf, err = appendTreeEntry(buf, e.Name, e.Mode, e.Hash); err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// CompareTreeEntries orders tree entries as git does: by name, a
// directory's name compared as if it ended in a slash.
func CompareTreeEntries(a, b TreeEntry) int {
	n := min(len(a.Name), len(b.Name))
	if c := strings.Compare(a.Name[:n], b.Name[:n]); c != 0 {
		return c
	}
	ca, cb := byte(0), byte(0)
	if len(a.Name) > n {
		ca = a.Name[n]
	} else if a.Mode == filemode.Dir {
		ca = '/'
	}
	if len(b.Name) > n {
		cb = b.Name[n]
	} else if b.Mode == filemode.Dir {
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

// sortTreeEntries sorts es in git's tree order.
func sortTreeEntries(es []TreeEntry) {
	sort.SliceStable(es, func(i, j int) bool { return CompareTreeEntries(es[i], es[j]) < 0 })
}

// BuildTree encodes the nested trees for n leaves, given by path (the
// full slash-separated path, asked for most, so it should be cheap) and
// at (its mode and object). Leaves must be sorted by path in byte order
// (the index's order, which is also git's tree order at every level) and
// free of duplicates. Every tree built goes into trees (name → encoding);
// nothing is written. The root's name is returned.
//
// A large tree's subtrees of treeSplitMin leaves or more are built on
// goroutines of their own, as many at a time as there are cores (a
// snapshot's working tree of 100,000 files was built on one core while
// the other idled, a sixth of the snapshot's time); the trees and the
// error are those a build on one goroutine makes. path and at may then
// be called from several goroutines at once.
func BuildTree(n int, path func(int) string, at func(int) (filemode.FileMode, plumbing.Hash), trees map[plumbing.Hash][]byte) (plumbing.Hash, error) {
	return BuildTreeReusing(n, path, at, trees, nil)
}

// TreeReuse lets a build take whole subtrees from an earlier one instead
// of visiting their leaves: an agent's snapshots, one per tool call, see
// the same 100,000 files but for the few the call changed.
type TreeReuse struct {
	// Known returns the name and leaf count of the subtree whose leaves
	// begin at lo and share the path prefix dir ("" for the root,
	// otherwise ending in a slash), when the caller knows it to be
	// unchanged and stored. A count that does not end exactly where the
	// prefix does is not used. It may be called from several goroutines.
	Known func(dir string, lo int) (plumbing.Hash, int, bool)
	// Done is told each subtree of the result whose parent was encoded
	// (so not those below a subtree Known gave): its directory, leaf
	// count and name, and whether it came from Known. It may be called
	// from several goroutines.
	Done func(dir string, n int, h plumbing.Hash, known bool)
}

// BuildTreeReusing is BuildTree taking what it can from reuse (nil:
// nothing).
func BuildTreeReusing(n int, path func(int) string, at func(int) (filemode.FileMode, plumbing.Hash), trees map[plumbing.Hash][]byte, reuse *TreeReuse) (plumbing.Hash, error) {
	b := &treeBuilder{path: path, at: at, trees: trees, reuse: reuse}
	if h, end, ok := b.knownEnd("", 0, n); ok && end == n {
		b.done("", n, h, true)
		return h, nil
	}
	if procs := runtime.GOMAXPROCS(0); procs > 1 && n >= 2*treeSplitMin {
		b.cores = make(chan struct{}, procs)
	}
	return b.level(0, n, 0, &coreHeld{})
}

// knownEnd asks reuse for the subtree of dir whose leaves begin at lo,
// and returns its name and the leaf after it when the count it gives ends
// where dir's leaves do (hi is the end of the enclosing tree's leaves).
func (b *treeBuilder) knownEnd(dir string, lo, hi int) (plumbing.Hash, int, bool) {
	if b.reuse == nil || b.reuse.Known == nil {
		return plumbing.ZeroHash, 0, false
	}
	h, count, ok := b.reuse.Known(dir, lo)
	end := lo + count
	if !ok || count <= 0 || end > hi || !strings.HasPrefix(b.path(end-1), dir) ||
		(end < hi && strings.HasPrefix(b.path(end), dir)) {
		return plumbing.ZeroHash, 0, false
	}
	return h, end, true
}

// done tells reuse of a subtree of the result.
func (b *treeBuilder) done(dir string, n int, h plumbing.Hash, known bool) {
	if b.reuse != nil && b.reuse.Done != nil {
		b.reuse.Done(dir, n, h, known)
	}
}

// treeSplitMin is the least number of leaves a subtree must hold to be
// built on a goroutine of its own (a variable for the tests).
var treeSplitMin = 4096

type treeBuilder struct {
	path func(int) string
	at   func(int) (filemode.FileMode, plumbing.Hash)
	// cores is held by each subtree goroutine while it computes (nil:
	// everything on the caller's goroutine). One gives its core back
	// before it waits for subtrees of its own, which need cores.
	cores chan struct{}
	mu    sync.Mutex // guards trees
	trees map[plumbing.Hash][]byte
	reuse *TreeReuse // nil: build every subtree
}

// coreHeld says whether a goroutine holds one of cores.
type coreHeld struct{ held bool }

func (b *treeBuilder) release(c *coreHeld) {
	if c.held {
		<-b.cores
		c.held = false
	}
}

// subtree is a subtree being built on another goroutine: its name goes
// at off in the parent's encoding once done is closed.
type subtree struct {
	off  int
	done chan struct{}
	hash plumbing.Hash
	err  error
}

// level builds the tree of leaves lo..hi, whose paths share their first
// prefix bytes (the tree's directory and a slash), on a goroutine whose
// core is c.
func (b *treeBuilder) level(lo, hi, prefix int, c *coreHeld) (plumbing.Hash, error) {
	buf := make([]byte, 0, 48*min(hi-lo, 256))
	var subs []*subtree
	wait := func() {
		if len(subs) > 0 {
			b.release(c)
		}
		for _, st := range subs {
			<-st.done
		}
	}
	// fail waits for the subtrees begun: an error in one of them (earlier
	// in path order) is the one a build on one goroutine would have met.
	fail := func(err error) (plumbing.Hash, error) {
		wait()
		for _, st := range subs {
			if st.err != nil {
				return plumbing.ZeroHash, st.err
			}
		}
		return plumbing.ZeroHash, err
	}
	last := ""
	for i := lo; i < hi; {
		p := b.path(i)
		rest := p[prefix:]
		var (
			name  = rest
			mode  filemode.FileMode
			hash  plumbing.Hash
			async *subtree
		)
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			name = rest[:j]
			group := p[:prefix+j+1]
			mode = filemode.Dir
			if h, end, ok := b.knownEnd(group, i, hi); ok {
				b.done(group, end-i, h, true)
				hash, i = h, end
			} else {
				// The leaves below group end where the first one without
				// it is: found by halving, so that a subtree taken from
				// reuse further down is not walked leaf by leaf here.
				k := i + 1 + sort.Search(hi-i-1, func(m int) bool { return !strings.HasPrefix(b.path(i+1+m), group) })
				if b.cores != nil && k-i >= treeSplitMin {
					async = &subtree{done: make(chan struct{})}
					subs = append(subs, async)
					go func(lo, hi, prefix int) {
						defer close(async.done)
						b.cores <- struct{}{}
						mine := &coreHeld{held: true}
						async.hash, async.err = b.level(lo, hi, prefix, mine)
						b.release(mine)
					}(i, k, prefix+j+1)
				} else {
					sub, err := b.level(i, k, prefix+j+1, c)
					if err != nil {
						return fail(err)
					}
					hash = sub
				}
				i = k
			}
		} else {
			mode, hash = b.at(i)
			i++
		}
		if name == "" {
			return fail(fmt.Errorf("invalid path %q", p))
		}
		if name == last {
			return fail(fmt.Errorf("path %q is both a file and a directory", p[:prefix+len(name)]))
		}
		last = name
		var err error
		if buf, err = appendTreeEntry(buf, name, mode, hash); err != nil {
			return fail(fmt.Errorf("path %q has unsupported mode %o", p, uint32(mode)))
		}
		if async != nil {
			async.off = len(buf) - len(hash)
		}
	}
	wait()
	for _, st := range subs {
		if st.err != nil {
			return plumbing.ZeroHash, st.err
		}
		copy(buf[st.off:], st.hash[:])
	}
	h := HashObject(plumbing.TreeObject, buf)
	b.mu.Lock()
	b.trees[h] = buf
	b.mu.Unlock()
	if b.reuse != nil && b.reuse.Done != nil {
		dir := ""
		if hi > lo {
			dir = b.path(lo)[:prefix]
		}
		b.done(dir, hi-lo, h, false)
	}
	return h, nil
}

// WriteTrees stores the trees built in memory that the repository does not
// have yet, reachable from root, every tree after all its missing subtrees
// (written in parallel, level by level). A tree the repository has already
// is freshened and skipped with everything below it: the object graph is
// closed, so it has all its subtrees, and a process killed midway leaves
// nothing that breaks that rule.
// lookup returns a tree built in memory (false for any other object).
func (o *Objects) WriteTrees(root plumbing.Hash, lookup func(plumbing.Hash) ([]byte, bool)) error {
	return o.writeTrees(root, lookup, func(level []Object) error { return o.writeAll(level, false) })
}

// writeTrees finds the trees to write as WriteTrees does and hands them
// to write a level at a time, the lowest first.
func (o *Objects) writeTrees(root plumbing.Hash, lookup func(plumbing.Hash) ([]byte, bool), write func([]Object) error) error {
	var levels [][]Object
	height := map[plumbing.Hash]int{}
	var walk func(h plumbing.Hash) (int, error)
	walk = func(h plumbing.Hash) (int, error) {
		if ht, ok := height[h]; ok {
			return ht, nil
		}
		// The write path's check (git's OBJECT_INFO_QUICK, decision 58):
		// the packs known, then the loose file; the pack directories are
		// not read again for each tree (right after a pack was written
		// they count as changed for a second, and were re-read for every
		// one of a thousand trees).
		data, ok := lookup(h)
		if !ok || o.freshenWrite(h) {
			return -1, nil
		}
		ents, err := ParseTree(data)
		if err != nil {
			return 0, err
		}
		ht := 0
		for _, e := range ents {
			if e.Mode == filemode.Dir {
				sub, err := walk(e.Hash)
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
		levels[ht] = append(levels[ht], Object{plumbing.TreeObject, h, data})
		return ht, nil
	}
	if _, err := walk(root); err != nil {
		return err
	}
	for _, level := range levels {
		if err := write(level); err != nil {
			return err
		}
	}
	return nil
}

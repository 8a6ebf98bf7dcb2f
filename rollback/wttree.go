package rollback

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	gitobjects "github.com/git-hegel/git-hegel/gitstore/objects"
)

// The working tree cache remembers the directories of the working tree
// that the last stored snapshot built, so that the next one builds only
// the directories where something changed. An agent's snapshots, one
// before every tool call, see the same 100,000 files but for the few the
// call changed; building every tree again was a tenth of each snapshot.
//
// A directory's tree is a function of the index entries below it and of
// what the scan found for them. With the same index (its checksum, as
// for the index tree cache), it depends only on the leaves that do not
// come straight from the index: entries found changed, deleted or left
// out, submodules at another commit, and untracked files. Each directory
// is recorded with a signature of those leaves below it (their paths,
// modes and objects, in path order): the same signature, the same tree.
// A directory none of whose leaves differ from the index has the zero
// signature.
//
// The cache is used only while the repository has the tree it recorded
// for the top directory (the snapshots that stored it may have been
// dropped and the tree pruned): the object graph is closed, so that tree
// stored means every directory's tree in the cache is, and only that one
// is looked up (and freshened). A tree taken, like a subtree git takes
// from its index's cache-tree, is not freshened itself.
//
// The file, hegel-wttree in the worktree's git directory: "HWTT", version
// (4 bytes), the index checksum (20), the number of directories (4), then
// per directory in path order: the length of its path (4), the path
// ("" for the top, otherwise ending in a slash), its tree (20), its
// signature (20) and its number of leaves (4); last, the SHA-1 of all
// that. It is only a cache: a missing, damaged or foreign file is ignored
// and rewritten.
const (
	wtTreeFile    = "hegel-wttree"
	wtTreeMagic   = "HWTT"
	wtTreeVersion = 1
	// wtTreeMaxDirs bounds the file: a working tree of more directories
	// is built whole each time rather than rewriting a cache of several
	// megabytes for every snapshot.
	wtTreeMaxDirs = 1 << 16
)

// wtTreeDir is one directory of a working tree built.
type wtTreeDir struct {
	dir   string
	tree  plumbing.Hash
	sig   plumbing.Hash
	count int
}

// Kinds of leaves that do not come from the index as it is.
const (
	specialChanged   byte = 'c' // a tracked file with new content or mode
	specialLeftOut   byte = 'o' // an index entry not in the working tree (deleted, intent-to-add)
	specialSubmodule byte = 's' // a submodule at the commit it has checked out
	specialUntracked byte = 'u'
)

// wtSpecial is a leaf of the working tree, or an index entry left out of
// it, that does not come straight from the index.
type wtSpecial struct {
	path string
	kind byte
	mode filemode.FileMode
	hash plumbing.Hash
}

// wtSignatures returns the signature of each directory that has special
// leaves below it. specials must be in path order (so those below a
// directory are consecutive).
func wtSignatures(specials []wtSpecial) map[string]plumbing.Hash {
	sigs := make(map[string]plumbing.Hash)
	if len(specials) == 0 {
		return sigs
	}
	type open struct {
		dir string
		h   hash.Hash
	}
	stack := []open{{"", sha1.New()}}
	done := func(o open) {
		var s plumbing.Hash
		copy(s[:], o.h.Sum(nil))
		sigs[o.dir] = s
	}
	var rec []byte
	for _, sp := range specials {
		for len(stack) > 1 && !strings.HasPrefix(sp.path, stack[len(stack)-1].dir) {
			done(stack[len(stack)-1])
			stack = stack[:len(stack)-1]
		}
		for {
			top := stack[len(stack)-1].dir
			j := strings.IndexByte(sp.path[len(top):], '/')
			if j < 0 {
				break
			}
			stack = append(stack, open{sp.path[:len(top)+j+1], sha1.New()})
		}
		rec = rec[:0]
		rec = binary.BigEndian.AppendUint32(rec, uint32(len(sp.path)))
		rec = append(rec, sp.path...)
		rec = append(rec, sp.kind)
		rec = binary.BigEndian.AppendUint32(rec, uint32(sp.mode))
		rec = append(rec, sp.hash[:]...)
		for _, o := range stack {
			o.h.Write(rec)
		}
	}
	for _, o := range stack {
		done(o)
	}
	return sigs
}

// wtTreeReuse is one build's use of the cache: what it may take, what it
// took, and what it built, to record for the next.
type wtTreeReuse struct {
	old   []wtTreeDir // the cache read (nil: none usable)
	byDir map[string]int
	sigs  map[string]plumbing.Hash

	mu    sync.Mutex
	taken []string    // directories taken from old (whole: with those below)
	built []wtTreeDir // directories built
}

// newWtTreeReuse reads the cache for an index with checksum sum.
func newWtTreeReuse(gitDir string, sum plumbing.Hash, specials []wtSpecial, stored func(plumbing.Hash) bool) *wtTreeReuse {
	r := &wtTreeReuse{sigs: wtSignatures(specials)}
	r.old = loadWtTree(gitDir, sum)
	if len(r.old) > 0 && (r.old[0].dir != "" || !stored(r.old[0].tree)) {
		r.old = nil
	}
	r.byDir = make(map[string]int, len(r.old))
	for i, d := range r.old {
		r.byDir[d.dir] = i
	}
	return r
}

// treeReuse is what BuildTreeReusing calls.
func (r *wtTreeReuse) treeReuse() *gitobjects.TreeReuse {
	return &gitobjects.TreeReuse{
		Known: func(dir string, lo int) (plumbing.Hash, int, bool) {
			i, ok := r.byDir[dir]
			if !ok || r.old[i].sig != r.sigs[dir] {
				return plumbing.ZeroHash, 0, false
			}
			return r.old[i].tree, r.old[i].count, true
		},
		Done: func(dir string, n int, h plumbing.Hash, known bool) {
			r.mu.Lock()
			defer r.mu.Unlock()
			if known {
				r.taken = append(r.taken, dir)
			} else {
				r.built = append(r.built, wtTreeDir{dir: dir, tree: h, sig: r.sigs[dir], count: n})
			}
		},
	}
}

// dirs is the new tree's directories: those built, and those taken with
// every directory below them.
func (r *wtTreeReuse) dirs() []wtTreeDir {
	out := append([]wtTreeDir(nil), r.built...)
	for _, dir := range r.taken {
		for i := r.byDir[dir]; i < len(r.old) && strings.HasPrefix(r.old[i].dir, dir); i++ {
			out = append(out, r.old[i])
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].dir < out[j].dir })
	return out
}

// loadWtTree reads the cache; nil unless it is whole and for sum.
func loadWtTree(gitDir string, sum plumbing.Hash) []wtTreeDir {
	if gitDir == "" || sum.IsZero() {
		return nil
	}
	f, err := os.Open(filepath.Join(gitDir, wtTreeFile))
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64<<20))
	if err != nil || len(b) < 32+sha1.Size {
		return nil
	}
	body, tail := b[:len(b)-sha1.Size], b[len(b)-sha1.Size:]
	if s := sha1.Sum(body); !bytes.Equal(s[:], tail) {
		return nil
	}
	if string(body[:4]) != wtTreeMagic || binary.BigEndian.Uint32(body[4:]) != wtTreeVersion ||
		!bytes.Equal(body[8:28], sum[:]) {
		return nil
	}
	n := int(binary.BigEndian.Uint32(body[28:]))
	if n > wtTreeMaxDirs {
		return nil
	}
	body = body[32:]
	out := make([]wtTreeDir, 0, n)
	for i := 0; i < n; i++ {
		if len(body) < 4 {
			return nil
		}
		l := int(binary.BigEndian.Uint32(body))
		if l > len(body)-4-44 {
			return nil
		}
		d := wtTreeDir{dir: string(body[4 : 4+l])}
		rest := body[4+l:]
		copy(d.tree[:], rest[:20])
		copy(d.sig[:], rest[20:40])
		d.count = int(binary.BigEndian.Uint32(rest[40:44]))
		body = rest[44:]
		if (d.dir != "" && !strings.HasSuffix(d.dir, "/")) || (i > 0 && d.dir <= out[i-1].dir) || d.count <= 0 {
			return nil
		}
		out = append(out, d)
	}
	if len(body) != 0 {
		return nil
	}
	return out
}

// saveWtTree records dirs (in path order) as the working tree built on an
// index with checksum sum (best effort: it is only a cache; too many
// directories remove it).
func saveWtTree(gitDir string, perm gitobjects.SharedPerm, sum plumbing.Hash, dirs []wtTreeDir) {
	if gitDir == "" || sum.IsZero() {
		return
	}
	path := filepath.Join(gitDir, wtTreeFile)
	if len(dirs) > wtTreeMaxDirs {
		os.Remove(path)
		return
	}
	b := make([]byte, 0, 32+len(dirs)*80+sha1.Size)
	b = append(b, wtTreeMagic...)
	b = binary.BigEndian.AppendUint32(b, wtTreeVersion)
	b = append(b, sum[:]...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(dirs)))
	for _, d := range dirs {
		b = binary.BigEndian.AppendUint32(b, uint32(len(d.dir)))
		b = append(b, d.dir...)
		b = append(b, d.tree[:]...)
		b = append(b, d.sig[:]...)
		b = binary.BigEndian.AppendUint32(b, uint32(d.count))
	}
	s := sha1.Sum(b)
	b = append(b, s[:]...)
	_ = perm.WriteFile(path, b, false)
}

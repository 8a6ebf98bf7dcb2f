package rollback

import (
	"crypto/sha1"
	"encoding/binary"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// The index's cache-tree (the TREE extension) records, for each directory,
// the tree object its index entries make. git uses it to skip unchanged
// directories when it compares the index with HEAD (git status, git diff
// --cached) and to write a commit's trees without hashing them again; an
// index written without it leaves every later git status comparing all
// entries against HEAD's trees until something rebuilds it.
//
// It is computed here from the entries being written, as git's
// write-tree computes it (cache-tree.c, update_one): the same tree bytes
// give the same hashes, so it is valid whatever the entries came from. A
// directory that holds a conflicted (stage 1-3) entry, an intent-to-add
// entry or an entry with no object id has no tree git could write; it and
// every directory above it are recorded as invalid (entry count -1), which
// git reads as "compute this one yourself". The tree objects themselves
// are not written: git checks that a tree exists before it trusts a
// cache-tree entry for a commit (cache_tree_fully_valid), and comparing
// with HEAD needs only the hash.

// cacheNode is one directory of the cache-tree.
type cacheNode struct {
	name  string // the path component; "" for the root
	count int    // index entries under it; -1 when invalid
	hash  plumbing.Hash
	subs  []*cacheNode
}

// buildCacheTree computes the cache-tree of entries sorted as the index
// keeps them.
func buildCacheTree(es []idxEntry) *cacheNode {
	var bufs [][]byte
	root, _ := buildCacheDir(es, 0, "", "", &bufs, 0)
	return root
}

// buildCacheDir builds the node of the directory prefix (with its trailing
// slash, "" for the root) from es[start:], and returns it with the index
// of the first entry past it. bufs holds a tree buffer per depth, reused
// from one directory to the next.
func buildCacheDir(es []idxEntry, start int, prefix, name string, bufs *[][]byte, depth int) (*cacheNode, int) {
	n := &cacheNode{name: name}
	valid := true
	if len(*bufs) <= depth {
		*bufs = append(*bufs, nil)
	}
	body := (*bufs)[depth][:0]
	defer func() { (*bufs)[depth] = body }()
	i := start
	for i < len(es) && strings.HasPrefix(es[i].Name, prefix) {
		e := &es[i]
		rest := e.Name[len(prefix):]
		if slash := strings.IndexByte(rest, '/'); slash >= 0 {
			sub, next := buildCacheDir(es, i, prefix+rest[:slash+1], rest[:slash], bufs, depth+1)
			n.subs = append(n.subs, sub)
			if sub.count < 0 {
				valid = false
			}
			body = append(body, "40000 "...)
			body = append(body, sub.name...)
			body = append(body, 0)
			body = append(body, sub.hash[:]...)
			i = next
			continue
		}
		i++
		if e.stage() != 0 || e.intentToAdd() || e.Hash.IsZero() {
			valid = false
			continue
		}
		body = strconv.AppendUint(body, uint64(e.Mode), 8)
		body = append(body, ' ')
		body = append(body, rest...)
		body = append(body, 0)
		body = append(body, e.Hash[:]...)
	}
	if !valid {
		n.count = -1
		return n, i
	}
	n.count = i - start
	var hdr [32]byte
	h := sha1.New()
	h.Write(strconv.AppendInt(append(hdr[:0], "tree "...), int64(len(body)), 10))
	h.Write([]byte{0})
	h.Write(body)
	h.Sum(n.hash[:0])
	return n, i
}

// appendCacheTree appends the TREE extension (signature, size and
// payload) for root to b.
func appendCacheTree(b []byte, root *cacheNode) []byte {
	start := len(b)
	b = append(b, "TREE\x00\x00\x00\x00"...)
	b = appendCacheNode(b, root)
	binary.BigEndian.PutUint32(b[start+4:], uint32(len(b)-start-8))
	return b
}

// appendCacheNode writes a node and its subtrees depth first, the
// subtrees in git's order (shorter names first, then bytewise), so the
// extension is byte for byte what git writes for the same index.
func appendCacheNode(b []byte, n *cacheNode) []byte {
	b = append(b, n.name...)
	b = append(b, 0)
	b = strconv.AppendInt(b, int64(n.count), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(n.subs)), 10)
	b = append(b, '\n')
	if n.count >= 0 {
		b = append(b, n.hash[:]...)
	}
	subs := n.subs
	if !subsInGitOrder(subs) {
		subs = append([]*cacheNode(nil), subs...)
		sortSubs(subs)
	}
	for _, s := range subs {
		b = appendCacheNode(b, s)
	}
	return b
}

func subtreeLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

func subsInGitOrder(s []*cacheNode) bool {
	for i := 1; i < len(s); i++ {
		if !subtreeLess(s[i-1].name, s[i].name) {
			return false
		}
	}
	return true
}

func sortSubs(s []*cacheNode) {
	sort.Slice(s, func(i, j int) bool { return subtreeLess(s[i].name, s[j].name) })
}

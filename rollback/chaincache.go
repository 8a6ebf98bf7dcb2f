package rollback

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/gitstore"
)

// The chain cache keeps, for a chain that is appended to often (the
// agent actions, one snapshot before and one after each tool call, up to
// 400 kept), the objects a read of the chain needs: each checkpoint's
// commit, root tree, checkpoint.json and version blob. Reading them from
// the object database is most of an append's cost on a long chain (some
// 1,200 objects at the default bound); the cache is one file read.
//
// It is a copy of objects, not a summary: every object in it is checked
// against its name (the SHA-1 of its type and content) as it is loaded,
// and the chain is then parsed by the same code as when it is read from
// the object database, so what a cache can hold is only what the
// repository holds. A cache that does not parse, or any object in it
// whose content does not match its name, is ignored whole and the chain
// is read from the object database. The file records the ref's tip it was
// written for; when the ref has moved since (another process appended),
// the objects it holds are still used, the others read from the object
// database, and the file is written again.
//
// The file is $GIT_COMMON_DIR/hegel/chain-cache/<SHA-1 of the ref name>:
//
//	hegel chain cache 1\n
//	<ref>\n
//	<tip>\n
//	then per object: <c|t|b> <hex name> <size>\n<content>

const (
	chainCacheHeader = "hegel chain cache 1\n"
	maxChainCache    = 64 << 20
)

// chainMemo is the verified objects of a chain cache, and the ones read
// or written since, by name.
type chainMemo struct {
	mu   sync.Mutex
	objs map[plumbing.Hash]memoObject
	tip  plumbing.Hash // the tip the file was written for
	ref  string
}

type memoObject struct {
	t    plumbing.ObjectType
	data []byte
}

var memoTypes = map[byte]plumbing.ObjectType{'c': plumbing.CommitObject, 't': plumbing.TreeObject, 'b': plumbing.BlobObject}

func memoTypeChar(t plumbing.ObjectType) byte {
	switch t {
	case plumbing.CommitObject:
		return 'c'
	case plumbing.TreeObject:
		return 't'
	}
	return 'b'
}

func (c *Chain) cachePath() string {
	return filepath.Join(c.m.r.CommonDir, filepath.FromSlash(gitstore.ChainCacheFile(c.ref)))
}

// loadCache reads the chain's cache file into the manager's memo, once;
// a missing or unusable file leaves an empty memo.
func (c *Chain) loadCache() {
	m := c.m
	if !m.ChainCache || m.w.memory || (m.memo != nil && m.memo.ref == c.ref) {
		return
	}
	m.memo = &chainMemo{objs: map[plumbing.Hash]memoObject{}, ref: c.ref}
	data, err := os.ReadFile(c.cachePath())
	if err != nil || len(data) > maxChainCache {
		return
	}
	if memo, err := parseChainCache(data, c.ref); err == nil {
		m.memo = memo
	}
}

var errChainCache = errors.New("unusable chain cache")

// parseChainCache parses and verifies a cache file for ref.
func parseChainCache(data []byte, ref string) (*chainMemo, error) {
	line := func() (string, bool) {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return "", false
		}
		l := string(data[:i])
		data = data[i+1:]
		return l, true
	}
	if !bytes.HasPrefix(data, []byte(chainCacheHeader)) {
		return nil, errChainCache
	}
	data = data[len(chainCacheHeader):]
	if r, ok := line(); !ok || r != ref {
		return nil, errChainCache
	}
	t, ok := line()
	if !ok || !plumbing.IsHash(t) {
		return nil, errChainCache
	}
	memo := &chainMemo{objs: map[plumbing.Hash]memoObject{}, tip: plumbing.NewHash(t), ref: ref}
	for len(data) > 0 {
		l, ok := line()
		if !ok || len(l) < 2+40+2 || l[1] != ' ' || l[42] != ' ' {
			return nil, errChainCache
		}
		typ, known := memoTypes[l[0]]
		name := l[2:42]
		size, err := strconv.Atoi(l[43:])
		if !known || !plumbing.IsHash(name) || err != nil || size < 0 || size > len(data) {
			return nil, errChainCache
		}
		h := plumbing.NewHash(name)
		content := data[:size:size]
		data = data[size:]
		if hashObject(typ, content) != h {
			return nil, errChainCache
		}
		memo.objs[h] = memoObject{t: typ, data: content}
	}
	return memo, nil
}

// readObject reads an object of the chain: from the memo when it holds
// it, else from the object database (kept in the memo for the next
// write of the cache).
func (m *Manager) readObject(t plumbing.ObjectType, h plumbing.Hash) ([]byte, error) {
	if o, ok := m.memoObject(h); ok && o.t == t {
		return o.data, nil
	}
	data, err := m.w.obj.read(t, h)
	if err == nil {
		m.remember(t, h, data)
	}
	return data, err
}

func (m *Manager) memoObject(h plumbing.Hash) (memoObject, bool) {
	if m.memo == nil {
		return memoObject{}, false
	}
	m.memo.mu.Lock()
	defer m.memo.mu.Unlock()
	o, ok := m.memo.objs[h]
	return o, ok
}

// remember keeps an object the chain names for the next write of the
// cache.
func (m *Manager) remember(t plumbing.ObjectType, h plumbing.Hash, data []byte) {
	if m.memo != nil {
		m.memo.mu.Lock()
		m.memo.objs[h] = memoObject{t: t, data: data}
		m.memo.mu.Unlock()
	}
}

// saveCache writes the cache for the chain at tip (oldest first). It is
// best effort: a cache that cannot be written only makes the next read
// slower, so failures are ignored. Objects the memo does not hold are
// read from the object database.
func (c *Chain) saveCache(tip plumbing.Hash, chain []*Checkpoint) {
	m := c.m
	if m.memo == nil || m.memo.ref != c.ref || m.w.memory {
		return
	}
	var b bytes.Buffer
	b.WriteString(chainCacheHeader)
	b.WriteString(c.ref + "\n" + tip.String() + "\n")
	seen := map[plumbing.Hash]bool{}
	put := func(t plumbing.ObjectType, h plumbing.Hash) ([]byte, bool) {
		data, err := m.readObject(t, h)
		if err != nil {
			return nil, false
		}
		if !seen[h] {
			seen[h] = true
			b.WriteByte(memoTypeChar(t))
			b.WriteString(" " + h.String() + " " + strconv.Itoa(len(data)) + "\n")
			b.Write(data)
		}
		return data, true
	}
	for _, cp := range chain {
		if cp.Commit.IsZero() || cp.Root.IsZero() {
			return
		}
		if _, ok := put(plumbing.CommitObject, cp.Commit); !ok {
			return
		}
		root, ok := put(plumbing.TreeObject, cp.Root)
		if !ok {
			return
		}
		ents, err := parseTree(root, true)
		if err != nil {
			return
		}
		for _, e := range ents {
			if (e.Name == metaFile || e.Name == versionFile) && e.Mode.IsFile() {
				if _, ok := put(plumbing.BlobObject, e.Hash); !ok {
					return
				}
			}
		}
	}
	p := c.cachePath()
	if err := m.r.Shared().MkdirAll(filepath.Dir(p)); err != nil {
		return
	}
	if err := m.r.Shared().WriteFile(p, b.Bytes(), false); err == nil {
		m.memo.tip = tip
	}
}

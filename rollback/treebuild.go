package rollback

import (
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	gitobjects "github.com/git-hegel/git-hegel/gitstore/objects"
)

// treeSplitMin is the least number of leaves a subtree must hold to be
// built on a goroutine of its own (a variable for the tests).
var treeSplitMin = 4096

// buildTreeOf is buildTree over n leaves produced by at (path gives just
// the path, cheaply: it is what the grouping asks for most), so that large
// trees need no slice of leaves of their own. It builds what
// gitobjects.BuildTree builds, with the same errors, but builds each
// subtree of treeSplitMin leaves or more on a goroutine of its own, as
// many at a time as there are cores: the working tree of a snapshot
// (100,000 files) was built on one core while the other idled, a sixth
// of the snapshot's time. path and at are called from several goroutines
// at once.
func buildTreeOf(n int, path func(int) string, at func(int) leaf, mem map[plumbing.Hash][]byte) (plumbing.Hash, error) {
	b := &treeBuild{path: path, at: at, mem: mem}
	if procs := runtime.GOMAXPROCS(0); procs > 1 && n >= 2*treeSplitMin {
		b.cores = make(chan struct{}, procs)
	}
	return b.level(0, n, 0, &coreHeld{})
}

type treeBuild struct {
	path func(int) string
	at   func(int) leaf
	// cores is held by each subtree goroutine while it computes (nil:
	// everything on the caller's goroutine). One gives its core back
	// before it waits for subtrees of its own, which need cores.
	cores chan struct{}
	mu    sync.Mutex // guards mem
	mem   map[plumbing.Hash][]byte
}

// coreHeld says whether a goroutine holds one of cores.
type coreHeld struct{ held bool }

func (b *treeBuild) release(c *coreHeld) {
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
func (b *treeBuild) level(lo, hi, prefix int, c *coreHeld) (plumbing.Hash, error) {
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
			k := i + 1
			for k < hi && strings.HasPrefix(b.path(k), group) {
				k++
			}
			mode = filemode.Dir
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
		} else {
			l := b.at(i)
			mode, hash = l.mode, l.hash
			i++
		}
		if name == "" {
			return fail(fmt.Errorf("invalid path %q", p))
		}
		if name == last {
			return fail(fmt.Errorf("path %q is both a file and a directory", p[:prefix+len(name)]))
		}
		last = name
		ms, ok := gitobjects.ModeString(mode)
		if !ok {
			return fail(fmt.Errorf("path %q has unsupported mode %o", p, uint32(mode)))
		}
		buf = append(buf, ms...)
		buf = append(buf, ' ')
		buf = append(buf, name...)
		buf = append(buf, 0)
		buf = append(buf, hash[:]...)
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
	h := hashObject(plumbing.TreeObject, buf)
	b.mu.Lock()
	b.mem[h] = buf
	b.mu.Unlock()
	return h, nil
}

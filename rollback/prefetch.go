package rollback

import (
	"runtime"
	"sync"

	gitobjects "github.com/git-hegel/git-hegel/gitstore/objects"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// prefetch reads, in parallel, the trees of b that a diff with a will
// read: those whose hash differs from a's tree at the same place. Only
// worth it when b is made of loose objects (a checkpoint not yet packed by
// git gc), each inflated on its own; a packed tree is usually a delta
// whose base the diff has just read, and for those the diff reads as it
// goes. Errors are left for the diff itself to report.
func prefetch(o *objects, a, b plumbing.Hash) error {
	if !o.db.OnDisk() || a == b || b.IsZero() || !o.db.IsLoose(b) {
		return nil
	}
	type pair struct{ a, b plumbing.Hash }
	var (
		mu      sync.Mutex
		cond    = sync.NewCond(&mu)
		queue   = []pair{{a, b}}
		active  int
		workers = 2 * runtime.GOMAXPROCS(0)
		wg      sync.WaitGroup
	)
	children := func(h plumbing.Hash) map[string]plumbing.Hash {
		if h.IsZero() {
			return nil
		}
		data, err := o.read(plumbing.TreeObject, h)
		if err != nil {
			return nil
		}
		ents, err := parseTree(data, false)
		if err != nil {
			return nil
		}
		m := make(map[string]plumbing.Hash)
		for _, e := range ents {
			if e.Mode == filemode.Dir {
				m[e.Name] = e.Hash
			}
		}
		return m
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				for len(queue) == 0 && active > 0 {
					cond.Wait()
				}
				if len(queue) == 0 {
					mu.Unlock()
					cond.Broadcast()
					return
				}
				p := queue[len(queue)-1]
				queue = queue[:len(queue)-1]
				active++
				mu.Unlock()
				ca, cb := children(p.a), children(p.b)
				var next []pair
				for name, hb := range cb {
					if ca[name] != hb {
						next = append(next, pair{ca[name], hb})
					}
				}
				mu.Lock()
				queue = append(queue, next...)
				active--
				mu.Unlock()
				cond.Broadcast()
			}
		}()
	}
	wg.Wait()
	return nil
}

// pendingObject is an object to store.
type pendingObject struct {
	t    plumbing.ObjectType
	h    plumbing.Hash
	data []byte
}

// writeAll stores objects the repository does not have yet (in parallel
// on disk), freshening those it has.
func (o *objects) writeAll(objs []pendingObject) error {
	all := make([]gitobjects.Object, len(objs))
	for i, p := range objs {
		all[i] = gitobjects.Object{Type: p.t, Hash: p.h, Data: p.data}
	}
	return o.db.WriteAll(all)
}

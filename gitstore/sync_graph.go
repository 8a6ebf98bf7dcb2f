package gitstore

import (
	"bytes"
	"container/heap"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	gitstorer "github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/git-hegel/git-hegel/gitstore/objects"
)

// graph reads commits (parents, time, tree) once each for the walks sync
// needs: merge bases, ancestry, and the commits one side has that the
// other lacks. Commits are immutable, so the cache never goes stale.
type graph struct {
	s     gitstorer.EncodedObjectStorer
	nodes map[plumbing.Hash]*gnode
	// maxCommit, if set, refuses commits larger than it before reading
	// them (validation of fetched data sets it).
	maxCommit int64
}

type gnode struct {
	hash    plumbing.Hash
	parents []plumbing.Hash
	tree    plumbing.Hash
	when    int64 // committer time, seconds
}

func newGraph(s gitstorer.EncodedObjectStorer) *graph {
	return &graph{s: s, nodes: map[plumbing.Hash]*gnode{}}
}

// errNotCommit marks an object that is missing or is not a commit where a
// commit was expected.
var errNotCommit = errors.New("not a commit")

func (g *graph) node(h plumbing.Hash) (*gnode, error) {
	if n, ok := g.nodes[h]; ok {
		return n, nil
	}
	if err := checkSize(g.s, h, "commit "+h.String(), g.maxCommit, "syncMaxCommitSize"); err != nil {
		return nil, err
	}
	o, err := g.s.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is missing", errNotCommit, h)
	}
	if o.Type() != plumbing.CommitObject {
		return nil, fmt.Errorf("%w: %s is a %s", errNotCommit, h, o.Type())
	}
	data, err := readCommitHeader(o)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %s", h, oneLine(err.Error()))
	}
	n, err := parseCommitHeader(h, data)
	if err != nil {
		return nil, err
	}
	g.nodes[h] = n
	return n, nil
}

// parseCommitHeader reads what the walks need from a raw commit
// (objects.ParseCommit).
func parseCommitHeader(h plumbing.Hash, data []byte) (*gnode, error) {
	c, err := objects.ParseCommit(h, data)
	if err != nil {
		return nil, err
	}
	return &gnode{hash: h, parents: c.Parents, tree: c.Tree, when: c.When}, nil
}

// readCommitHeader reads a commit's header, up to and including the blank
// line that ends it, and none of its message: a message may be of any
// size. A header over maxCommitHeader is an error.
func readCommitHeader(o plumbing.EncodedObject) ([]byte, error) {
	rd, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	buf := make([]byte, 0, 1024)
	chunk := make([]byte, 4096)
	for {
		n, err := rd.Read(chunk)
		from := max(0, len(buf)-1)
		buf = append(buf, chunk[:n]...)
		if i := bytes.Index(buf[from:], []byte("\n\n")); i >= 0 {
			return buf[:from+i+2], nil
		}
		if len(buf) > maxCommitHeader {
			return nil, fmt.Errorf("a header over %s", byteSize(maxCommitHeader))
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func readObject(o plumbing.EncodedObject) ([]byte, error) {
	rd, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}

// Walk flags.
const (
	flagOurs   uint8 = 1 << iota // reachable from the first set of tips
	flagTheirs                   // reachable from the second set
	flagStale                    // below a common ancestor: no longer interesting
	flagResult                   // recorded as a merge base
	flagQueued
)

// commitQueue orders commits newest first, like git's date-ordered walks.
type commitQueue []*gnode

func (q commitQueue) Len() int { return len(q) }
func (q commitQueue) Less(i, j int) bool {
	if q[i].when != q[j].when {
		return q[i].when > q[j].when
	}
	return bytes.Compare(q[i].hash[:], q[j].hash[:]) < 0
}
func (q commitQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *commitQueue) Push(x any)   { *q = append(*q, x.(*gnode)) }
func (q *commitQueue) Pop() any {
	old := *q
	n := old[len(old)-1]
	*q = old[:len(old)-1]
	return n
}

// mergeBases returns the best common ancestors of a and b (none when their
// histories are unrelated), with git's algorithm: walk both sides newest
// first, painting each commit with the sides that reach it; a commit both
// reach is a base, and everything below it is stale.
func (g *graph) mergeBases(a, b plumbing.Hash) ([]plumbing.Hash, error) {
	if a == b {
		return []plumbing.Hash{a}, nil
	}
	flags := map[plumbing.Hash]uint8{}
	var q commitQueue
	push := func(h plumbing.Hash, f uint8) error {
		n, err := g.node(h)
		if err != nil {
			return err
		}
		flags[h] |= f
		heap.Push(&q, n)
		return nil
	}
	if err := push(a, flagOurs); err != nil {
		return nil, err
	}
	if err := push(b, flagTheirs); err != nil {
		return nil, err
	}
	var out []plumbing.Hash
	for q.Len() > 0 {
		if allStale(q, flags) {
			break
		}
		n := heap.Pop(&q).(*gnode)
		f := flags[n.hash] & (flagOurs | flagTheirs | flagStale)
		if f == flagOurs|flagTheirs {
			if flags[n.hash]&flagResult == 0 {
				flags[n.hash] |= flagResult
				out = append(out, n.hash)
			}
			f |= flagStale
		}
		for _, p := range n.parents {
			if flags[p]&f == f {
				continue
			}
			if err := push(p, f); err != nil {
				return nil, err
			}
		}
	}
	// A base that is an ancestor of another base is not a best one. With
	// clock skew the walk can record both; drop the lower ones.
	if len(out) > 1 {
		var best []plumbing.Hash
		for i, x := range out {
			redundant := false
			for j, y := range out {
				if i != j && x != y {
					if anc, err := g.isAncestor(x, y); err == nil && anc {
						redundant = true
						break
					}
				}
			}
			if !redundant {
				best = append(best, x)
			}
		}
		out = best
	}
	return out, nil
}

func allStale(q commitQueue, flags map[plumbing.Hash]uint8) bool {
	for _, n := range q {
		if flags[n.hash]&flagStale == 0 {
			return false
		}
	}
	return true
}

// isAncestor reports whether a is reachable from b (a commit is its own
// ancestor).
func (g *graph) isAncestor(a, b plumbing.Hash) (bool, error) {
	if a == b {
		return true, nil
	}
	news, err := g.newCommits([]plumbing.Hash{a}, []plumbing.Hash{b})
	if err != nil {
		return false, err
	}
	return len(news) == 0, nil
}

// newCommits returns the commits reachable from tips but not from known,
// newest first. known tips that are missing locally are ignored; a missing
// commit below tips is an error. The walk stops as soon as every commit
// left to look at is known (plus a few steps of slack for clock skew), so
// its cost follows the new commits, not the length of the history.
func (g *graph) newCommits(tips, known []plumbing.Hash) ([]*gnode, error) {
	const (
		seenNew   = flagOurs
		uninter   = flagTheirs
		slackWalk = 8
	)
	flags := map[plumbing.Hash]uint8{}
	var q commitQueue
	interesting := 0 // queued commits not (yet) known to be uninteresting
	enqueue := func(n *gnode) {
		flags[n.hash] |= flagQueued
		if flags[n.hash]&uninter == 0 {
			interesting++
		}
		heap.Push(&q, n)
	}
	// markKnown makes h and everything below it that the walk has already
	// seen uninteresting.
	var markKnown func(h plumbing.Hash)
	markKnown = func(h plumbing.Hash) {
		stack := []plumbing.Hash{h}
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			f := flags[x]
			if f&uninter != 0 {
				continue
			}
			flags[x] = f | uninter
			if f&flagQueued != 0 {
				interesting--
			}
			if n, ok := g.nodes[x]; ok && f&seenNew != 0 && f&flagQueued == 0 {
				stack = append(stack, n.parents...) // already walked: push the mark down
			}
		}
	}
	for _, h := range known {
		n, err := g.node(h)
		if err != nil {
			continue // the other side has something we do not: irrelevant here
		}
		if flags[h]&uninter == 0 {
			flags[h] |= uninter
			if flags[h]&flagQueued == 0 {
				enqueue(n)
			}
		}
	}
	for _, h := range tips {
		if flags[h]&(seenNew|uninter) != 0 {
			continue
		}
		n, err := g.node(h)
		if err != nil {
			return nil, err
		}
		flags[h] |= seenNew
		enqueue(n)
	}
	var out []*gnode
	slack := slackWalk
	for q.Len() > 0 {
		if interesting == 0 {
			if slack == 0 {
				break
			}
			slack--
		}
		n := heap.Pop(&q).(*gnode)
		f := flags[n.hash]
		flags[n.hash] = f &^ flagQueued
		if f&uninter == 0 {
			interesting--
			out = append(out, n)
			for _, p := range n.parents {
				if flags[p]&(seenNew|uninter) != 0 {
					continue
				}
				pn, err := g.node(p)
				if err != nil {
					return nil, err
				}
				flags[p] |= seenNew
				enqueue(pn)
			}
			continue
		}
		for _, p := range n.parents {
			if flags[p]&uninter != 0 {
				continue
			}
			pf := flags[p]
			markKnown(p)
			if pf&flagQueued == 0 {
				if pn, err := g.node(p); err == nil {
					enqueue(pn)
				}
			}
		}
	}
	res := out[:0]
	for _, n := range out {
		if flags[n.hash]&uninter == 0 {
			res = append(res, n)
		}
	}
	return res, nil
}

// rawEntry is one tree entry as stored.
type rawEntry struct {
	mode string // as written: "100644", "40000", ...
	fm   filemode.FileMode
	name string
	hash plumbing.Hash
}

func (e *rawEntry) isDir() bool { return e.fm == filemode.Dir }

// parseTree parses a raw tree object. It checks only what it must to read
// it; checkTree applies git's fsck rules.
func parseTree(data []byte) ([]rawEntry, error) {
	// One string for the whole tree: entry names are slices of it.
	str := string(data)
	var out []rawEntry
	for i := 0; i < len(str); {
		sp := strings.IndexByte(str[i:], ' ')
		if sp <= 0 {
			return nil, errors.New("malformed tree entry (mode)")
		}
		mode := str[i : i+sp]
		i += sp + 1
		nul := strings.IndexByte(str[i:], 0)
		if nul < 0 || len(str) < i+nul+1+20 {
			return nil, errors.New("malformed tree entry (name)")
		}
		name := str[i : i+nul]
		i += nul + 1
		var h plumbing.Hash
		copy(h[:], str[i:i+20])
		i += 20
		fm, ok := treeModes[mode]
		if !ok {
			var err error
			if fm, err = filemode.New(mode); err != nil {
				return nil, fmt.Errorf("entry %q has a bad mode %q", name, mode)
			}
		}
		out = append(out, rawEntry{mode: mode, fm: fm, name: name, hash: h})
	}
	return out, nil
}

var treeModes = map[string]filemode.FileMode{
	"100644": filemode.Regular, "100755": filemode.Executable, "120000": filemode.Symlink,
	"40000": filemode.Dir, "160000": filemode.Submodule,
}

// readTree reads and parses the tree h.
func readTree(s gitstorer.EncodedObjectStorer, h plumbing.Hash) ([]rawEntry, error) {
	o, err := s.EncodedObject(plumbing.TreeObject, h)
	if err != nil {
		return nil, fmt.Errorf("tree %s is missing or not a tree", h)
	}
	data, err := readObject(o)
	if err != nil {
		return nil, err
	}
	ents, err := parseTree(data)
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", h, err)
	}
	return ents, nil
}

// objectWalk lists the objects that new commits bring: the commits, and
// the trees and blobs below them that the boundary commits' trees (those
// the other side has) do not already hold. Reading the boundary trees
// costs the size of one snapshot, never the length of the history.
type objectWalk struct {
	s     gitstorer.EncodedObjectStorer
	known map[plumbing.Hash]bool // objects the other side has
	seen  map[plumbing.Hash]bool
	// onTree, if set, sees every new tree with its path and entries;
	// onBlob every new blob with its path and mode. Either can stop the
	// walk with an error.
	onTree func(path string, h plumbing.Hash, ents []rawEntry) error
	onBlob func(path string, e *rawEntry) error
	out    []plumbing.Hash
}

func newObjectWalk(s gitstorer.EncodedObjectStorer) *objectWalk {
	return &objectWalk{s: s, known: map[plumbing.Hash]bool{}, seen: map[plumbing.Hash]bool{}}
}

// addKnownTree records tree h and everything below it as present on the
// other side.
func (w *objectWalk) addKnownTree(h plumbing.Hash) error {
	if w.known[h] {
		return nil
	}
	w.known[h] = true
	ents, err := readTree(w.s, h)
	if err != nil {
		return err
	}
	for i := range ents {
		e := &ents[i]
		switch {
		case e.isDir():
			if err := w.addKnownTree(e.hash); err != nil {
				return err
			}
		case e.fm != filemode.Submodule:
			w.known[e.hash] = true
		}
	}
	return nil
}

// addCommits walks the new commits; boundary are commits the other side
// has whose trees to subtract (typically the new commits' known parents).
func (w *objectWalk) addCommits(g *graph, news []*gnode, boundary []plumbing.Hash) error {
	for _, b := range boundary {
		n, err := g.node(b)
		if err != nil {
			continue
		}
		if err := w.addKnownTree(n.tree); err != nil {
			return err
		}
	}
	for _, n := range news {
		if !w.seen[n.hash] {
			w.seen[n.hash] = true
			w.out = append(w.out, n.hash)
		}
		if err := w.addTree("", n.tree); err != nil {
			return err
		}
	}
	return nil
}

func (w *objectWalk) addTree(path string, h plumbing.Hash) error {
	if w.known[h] || w.seen[h] {
		return nil
	}
	w.seen[h] = true
	w.out = append(w.out, h)
	ents, err := readTree(w.s, h)
	if err != nil {
		return err
	}
	if w.onTree != nil {
		if err := w.onTree(path, h, ents); err != nil {
			return err
		}
	}
	for i := range ents {
		e := &ents[i]
		p := e.name
		if path != "" {
			p = path + "/" + e.name
		}
		switch {
		case e.isDir():
			if err := w.addTree(p, e.hash); err != nil {
				return err
			}
		case e.fm == filemode.Submodule:
			// A commit of another repository: never transferred.
		default:
			if w.known[e.hash] || w.seen[e.hash] {
				continue
			}
			w.seen[e.hash] = true
			w.out = append(w.out, e.hash)
			if w.onBlob != nil {
				if err := w.onBlob(p, e); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// boundaryOf returns the parents of news that are not themselves new.
func boundaryOf(news []*gnode) []plumbing.Hash {
	isNew := make(map[plumbing.Hash]bool, len(news))
	for _, n := range news {
		isNew[n.hash] = true
	}
	var out []plumbing.Hash
	seen := map[plumbing.Hash]bool{}
	for _, n := range news {
		for _, p := range n.parents {
			if !isNew[p] && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

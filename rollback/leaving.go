package rollback

import (
	"container/heap"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// LeavingCommit is a commit a branch move leaves behind: reachable from
// where the branch is now, not from where it goes.
type LeavingCommit struct {
	Hash    plumbing.Hash
	Subject string
	When    time.Time // committer time
}

// Bounds of the walk that finds the commits a move leaves behind: the
// plan names the newest maxLeavingListed and counts the rest, and stops
// counting after maxLeavingWalk commits (a move across unrelated
// histories would otherwise read both).
const (
	maxLeavingListed = 10
	maxLeavingWalk   = 10000
)

// leaving finds the commits reachable from from and not from to, newest
// first: at most maxLeavingListed of count. more is set when the walk hit
// its bound (count is then a lower bound). Like git rev-list from ^to, it
// walks both sides by committer time and stops once only commits
// reachable from to are left; a commit it cannot read ends the walk
// (what it found so far is reported).
func (m *Manager) leaving(from, to plumbing.Hash) (list []LeavingCommit, count int, more bool) {
	if from.IsZero() || from == to {
		return nil, 0, false
	}
	const (
		mine   = 1 // reachable from from
		theirs = 2 // reachable from to
	)
	flags := map[plumbing.Hash]uint8{}
	q := &commitQueue{}
	live := 0 // queued entries not reachable from to
	push := func(h plumbing.Hash, f uint8, when time.Time) {
		old := flags[h]
		if old|f == old {
			return
		}
		flags[h] = old | f
		if f == mine {
			live++
		}
		heap.Push(q, queued{h: h, f: f, when: when})
	}
	var found []LeavingCommit
	push(from, mine, time.Time{})
	if !to.IsZero() {
		push(to, theirs, time.Time{})
	}
	cache := map[plumbing.Hash]*object.Commit{}
	read := func(h plumbing.Hash) (*object.Commit, error) {
		if c, ok := cache[h]; ok {
			return c, nil
		}
		c, err := m.commit(h)
		if err == nil {
			cache[h] = c
		}
		return c, err
	}
	walked := 0
	for q.Len() > 0 && live > 0 {
		e := heap.Pop(q).(queued)
		if e.f == mine {
			live--
		}
		c, err := read(e.h)
		if err != nil {
			break
		}
		f := flags[e.h]
		if f&theirs == 0 {
			walked++
			if walked > maxLeavingWalk {
				more = true
				break
			}
			subject, _, _ := strings.Cut(strings.TrimSpace(c.Message), "\n")
			found = append(found, LeavingCommit{Hash: e.h, Subject: printable(subject), When: c.Committer.When})
		}
		for _, p := range c.ParentHashes {
			pf := f
			if pf&theirs != 0 {
				pf = theirs
			}
			when := c.Committer.When
			if pc, err := read(p); err == nil {
				when = pc.Committer.When
			}
			push(p, pf, when)
		}
	}
	// A commit found early may turn out reachable from to (clock skew).
	for _, c := range found {
		if flags[c.Hash]&theirs != 0 {
			continue
		}
		count++
		if len(list) < maxLeavingListed {
			list = append(list, c)
		}
	}
	return list, count, more
}

type queued struct {
	h    plumbing.Hash
	f    uint8
	when time.Time
}

// commitQueue pops the newest commit first.
type commitQueue []queued

func (q commitQueue) Len() int           { return len(q) }
func (q commitQueue) Less(i, j int) bool { return q[i].when.After(q[j].when) }
func (q commitQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *commitQueue) Push(x any)        { *q = append(*q, x.(queued)) }
func (q *commitQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// printable replaces control characters in a commit's subject, which
// anyone who made the commit chose, so printing it cannot drive the
// terminal.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, s)
}

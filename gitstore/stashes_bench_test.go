package gitstore

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/engine"
)

// Benchmarks of the stash list on real repositories in b.TempDir(), with
// entries written as PushStash writes them (loose objects). Run:
//
//	go test -run '^$' -bench Stash -benchtime 200x ./gitstore/
//
// Push, pop and drop read the entries tree (names and hashes) and at most
// one entry blob, never every entry: with 1,000 stashes they cost only the
// larger tree more than with 10.

// benchSizes are the stash counts push, pop and drop run against.
var benchSizes = []int{10, 1000}

func forBenchSizes(b *testing.B, fn func(b *testing.B, n int)) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("stashes=%d", n), func(b *testing.B) { fn(b, n) })
	}
}

func benchRepo(b *testing.B, n int) (*Repo, string, *stashClock) {
	b.Helper()
	r, dir := stashDiskRepo(b)
	clock := newStashClock().use(r)
	if n > 0 {
		stashBulk(b, r, n, clock.now())
	}
	return r, dir, clock
}

func BenchmarkStashPush(b *testing.B) {
	forBenchSizes(b, func(b *testing.B, n int) {
		r, _, clock := benchRepo(b, n)
		s := r.Stashes()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := s.PushStash(testStash("bench", fmt.Sprint(i), clock.now()), "bench"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkStashPop is the store's part of a pop: resolve stash@{0} to its
// id, read that entry in full, remove it.
func BenchmarkStashPop(b *testing.B) {
	forBenchSizes(b, func(b *testing.B, n int) {
		r, _, clock := benchRepo(b, n)
		s := r.Stashes()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			if err := s.PushStash(testStash("bench", fmt.Sprint(i), clock.now()), "bench"); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			ids, err := s.StashIDs()
			if err != nil {
				b.Fatal(err)
			}
			st, err := s.LoadStash(ids[0])
			if err != nil || st.Damaged != "" {
				b.Fatal(err, st.Damaged)
			}
			if err := s.RemoveStash(ids[0], engine.StashOpPop, "bench"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkStashPopEngine is the whole `stash pop` but for opening the
// repository: the store's part, the task's commit and the session file.
func BenchmarkStashPopEngine(b *testing.B) {
	forBenchSizes(b, func(b *testing.B, n int) {
		r, dir, clock := benchRepo(b, n)
		e := stashEngine(r, dir, clock.now)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			if _, err := e.Start("discovery", "", fmt.Sprintf("bench-%d", i)); err != nil {
				b.Fatal(err)
			}
			if _, err := e.StashPush("bench"); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if _, _, err := e.StashPop("", false, false); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if _, err := e.Abort(engine.TaskOptions{}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
}

func BenchmarkStashDrop(b *testing.B) {
	forBenchSizes(b, func(b *testing.B, n int) {
		r, dir, clock := benchRepo(b, n)
		e := stashEngine(r, dir, clock.now)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			if err := r.Stashes().PushStash(testStash("bench", fmt.Sprint(i), clock.now()), "bench"); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			ent, err := e.StashFind("0", "drop")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := e.StashDrop(ent); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkStashList10000 lists 10,000 stashes as `stash list` does,
// lines and all; the budget is 100ms.
func BenchmarkStashList10000(b *testing.B) {
	r, dir, clock := benchRepo(b, 10000)
	benchList(b, r, dir, clock, 10000)
}

// BenchmarkStashList10000Cold is the first listing after the summary
// cache was lost (or the first ever): every blob is read.
func BenchmarkStashList10000Cold(b *testing.B) {
	r, dir, clock := benchRepo(b, 10000)
	cache := filepath.Join(dir, ".git", "hegel", "stash-summaries")
	benchListEach(b, r, dir, clock, 10000, func() { _ = os.Remove(cache) })
}

// BenchmarkStashList10000Packed is the same after `git gc`: the blobs are
// then read from a pack through go-git, one at a time.
func BenchmarkStashList10000Packed(b *testing.B) {
	r, dir, clock := benchRepo(b, 10000)
	stashGit(b, dir, "gc", "-q", "--prune=now")
	r, err := Open(dir, stashNoEnv)
	if err != nil {
		b.Fatal(err)
	}
	benchList(b, r, dir, clock, 10000)
}

func benchList(b *testing.B, r *Repo, dir string, clock *stashClock, n int) {
	benchListEach(b, r, dir, clock, n, nil)
}

// benchListEach runs before (untimed) ahead of each listing.
func benchListEach(b *testing.B, r *Repo, dir string, clock *stashClock, n int, before func()) {
	e := stashEngine(r, dir, clock.now)
	if _, err := e.StashList(); err != nil { // the steady state: cache written
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if before != nil {
			b.StopTimer()
			before()
			b.StartTimer()
		}
		list, err := e.StashList()
		if err != nil {
			b.Fatal(err)
		}
		if len(list) != n || list[0].Damaged != "" {
			b.Fatalf("%d stashes, first damaged: %q", len(list), list[0].Damaged)
		}
		now := clock.now().Add(time.Hour)
		for _, ent := range list {
			fmt.Fprintf(io.Discard, "%s: %s (%s)\n", ent.Ref(), ent.Label(), engine.RelativeTime(ent.Timestamp, now))
		}
	}
}

// BenchmarkStashLoad reads the stash list's tip (its entries tree) as push,
// pop and drop do first: with 1,000 stashes, the part of their CPU that
// grows with the list.
func BenchmarkStashLoad(b *testing.B) {
	forBenchSizes(b, func(b *testing.B, n int) {
		r, _, _ := benchRepo(b, n)
		s := r.Stashes()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			t, err := s.load()
			if err != nil {
				b.Fatal(err)
			}
			if len(t.entries) != n {
				b.Fatalf("%d entries, want %d", len(t.entries), n)
			}
		}
	})
}

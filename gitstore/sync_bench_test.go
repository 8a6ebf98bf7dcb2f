package gitstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Sync benchmarks (docs/sync.md, "Cost"):
//
//	go test -run '^$' -bench 'Sync|Merge' -benchtime 20x ./gitstore/
//
// BenchmarkSyncIncremental: with 1,000 stashes on both sides, one new
// stash synced from A to B; objects/push and objects/fetch count what
// crossed the wire. BenchmarkMergeDivergent: 1,000 + 1,000 stash entries
// pushed on each side since a common base, merged.

const benchStashes = 1000

func BenchmarkSyncIncremental(b *testing.B) {
	b.Run("memory", func(b *testing.B) {
		w := newSyncWorld(b)
		benchIncremental(b, w.a, w.b, w.rem)
	})
	b.Run("disk-file", func(b *testing.B) {
		root := b.TempDir()
		syncGit(b, root, "init", "-q", "--bare", "origin.git")
		rem := &Remote{Name: "origin", FetchURL: "file://" + filepath.Join(root, "origin.git")}
		rem.PushURL = rem.FetchURL
		benchIncremental(b, syncDiskRepo(b), syncDiskRepo(b), rem)
	})
}

func benchIncremental(b *testing.B, a, bb *Repo, rem *Remote) {
	ctx := context.Background()
	for i := 0; i < benchStashes; i++ {
		stash(b, a, fmt.Sprintf("s%d", i))
	}
	if _, err := a.Sync(ctx, rem, SyncOptions{}); err != nil {
		b.Fatal(err)
	}
	if _, err := bb.Sync(ctx, rem, SyncOptions{}); err != nil {
		b.Fatal(err)
	}
	sent, received := 0, 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		stash(b, a, fmt.Sprintf("new%d", i))
		b.StartTimer()
		rep, err := a.Push(ctx, rem, SyncOptions{})
		if err != nil {
			b.Fatal(err)
		}
		sent += rep.Sent
		rep, err = bb.Fetch(ctx, rem, SyncOptions{})
		if err != nil {
			b.Fatal(err)
		}
		received += rep.Received
		if rep.Stashes.Added != 1 {
			b.Fatalf("fetched %+v", rep.Stashes)
		}
	}
	b.ReportMetric(float64(sent)/float64(b.N), "objects/push")
	b.ReportMetric(float64(received)/float64(b.N), "objects/fetch")
}

func BenchmarkMergeDivergent(b *testing.B) {
	b.Run("memory", func(b *testing.B) {
		w := newSyncWorld(b)
		benchDivergent(b, w.a, w.b, w.rem)
	})
	b.Run("disk-file", func(b *testing.B) {
		root := b.TempDir()
		syncGit(b, root, "init", "-q", "--bare", "origin.git")
		rem := &Remote{Name: "origin", FetchURL: "file://" + filepath.Join(root, "origin.git")}
		rem.PushURL = rem.FetchURL
		benchDivergent(b, syncDiskRepo(b), syncDiskRepo(b), rem)
	})
}

// benchDivergent times the merge step alone (validation of B's 1,000 new
// commits included): the tracking refs are fetched once beforehand, and
// A's stash ref is put back before each round.
func benchDivergent(b *testing.B, a, bb *Repo, rem *Remote) {
	ctx := context.Background()
	for i := 0; i < 10; i++ {
		stash(b, a, fmt.Sprintf("base%d", i))
	}
	if _, err := a.Sync(ctx, rem, SyncOptions{}); err != nil {
		b.Fatal(err)
	}
	if _, err := bb.Sync(ctx, rem, SyncOptions{}); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < benchStashes; i++ {
		stash(b, a, fmt.Sprintf("a%d", i))
		stash(b, bb, fmt.Sprintf("b%d", i))
	}
	if _, err := bb.Push(ctx, rem, SyncOptions{}); err != nil {
		b.Fatal(err)
	}
	// The network step only: leave the merge to the loop.
	s := a.newSyncer(rem, SyncOptions{})
	if _, err := s.fetch(ctx); err != nil {
		b.Fatal(err)
	}
	before, err := a.refs.Read(StashRef)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		cur, _ := a.refs.Read(StashRef)
		if err := a.refs.Update(StashRef, cur, before); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		rep, err := a.MergeTracking(rem, SyncOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Stashes.Added != benchStashes {
			b.Fatalf("merged %+v", rep.Stashes)
		}
	}
	b.StopTimer()
	ids, _ := a.Stashes().StashIDs()
	if len(ids) != 2*benchStashes+10 {
		b.Fatalf("%d stashes after the merge", len(ids))
	}
}

// BenchmarkFetchAll: a fresh clone fetches 1,000 stashes (about 2,000
// objects, one pack): the cost of receiving, checking (git index-pack
// --strict, and git-hegel's own checks) and storing a large fetch.
func BenchmarkFetchAll(b *testing.B) {
	root := b.TempDir()
	syncGit(b, root, "init", "-q", "--bare", "origin.git")
	rem := &Remote{Name: "origin", FetchURL: "file://" + filepath.Join(root, "origin.git")}
	rem.PushURL = rem.FetchURL
	a := syncDiskRepo(b)
	for i := 0; i < benchStashes; i++ {
		stash(b, a, fmt.Sprintf("s%d", i))
	}
	if _, err := a.Sync(context.Background(), rem, SyncOptions{}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		fresh := syncDiskRepo(b)
		b.StartTimer()
		rep, err := fresh.Fetch(context.Background(), rem, SyncOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Stashes.Added != benchStashes {
			b.Fatalf("fetched %+v", rep.Stashes)
		}
	}
}

// BenchmarkObjectChecks: what receiving a pack costs with and without
// git's own checks, for the pack one new stash brings (4 objects, its
// entries tree naming 1,000 blobs) and the whole history of 1,000 stashes
// (4,001 objects, 19 MB without deltas):
//
//	go-checks                 git-hegel's own checks in Go, for comparison
//	go-git                    store it with go-git (the receive before git's checks)
//	index-pack                git index-pack --stdin: store it, no checks
//	index-pack--fsck-objects  and git's object checks (what fetch does)
//	index-pack--strict        and also git's link checks (what fetch does
//	                          when fsck.<msg-id> settings are given)
func BenchmarkObjectChecks(b *testing.B) {
	r := syncDiskRepo(b)
	for i := 0; i < benchStashes; i++ {
		stash(b, r, fmt.Sprintf("s%d", i))
	}
	tip, err := r.refs.Read(StashRef)
	if err != nil {
		b.Fatal(err)
	}
	g := newGraph(r.storage)
	all, err := g.newCommits([]plumbing.Hash{tip}, nil)
	if err != nil {
		b.Fatal(err)
	}
	w := newObjectWalk(r.storage)
	if err := w.addCommits(g, all, nil); err != nil {
		b.Fatal(err)
	}
	one, err := g.newCommits([]plumbing.Hash{tip}, []plumbing.Hash{all[1].hash})
	if err != nil {
		b.Fatal(err)
	}
	w1 := newObjectWalk(r.storage)
	if err := w1.addCommits(g, one, boundaryOf(one)); err != nil {
		b.Fatal(err)
	}
	// git-hegel's own checks in Go (a subset of git's rules plus its
	// own), on the same new stash: for comparison with running git's.
	b.Run("1-stash/go-checks", func(b *testing.B) {
		ref, _, _ := classify(relStashes)
		for i := 0; i < b.N; i++ {
			v := newValidator(r.storage, newGraph(r.storage), r.cfg)
			if _, err := v.validate(ref, tip, []plumbing.Hash{all[1].hash}); err != nil {
				b.Fatal(err)
			}
		}
	})
	dir := b.TempDir()
	// A repository that has none of these objects, as a fetch finds it
	// (index-pack compares an object it already has, byte for byte).
	c := syncDiskRepo(b).checker(func(string) {})
	for _, p := range []struct {
		name    string
		objects []plumbing.Hash
		alt     []string // where the objects the pack links to are
	}{{"1-stash", w1.out, []string{filepath.Join(r.CommonDir, "objects")}}, {"1000-stashes", w.out, nil}} {
		file := filepath.Join(dir, p.name+".pack")
		if err := writePack(file, r.storage, p.objects); err != nil {
			b.Fatal(err)
		}
		b.Run(p.name+"/go-git", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				q := filepath.Join(b.TempDir(), "q")
				st := filesystem.NewStorage(osfs.New(q), cache.NewObjectLRUDefault())
				f, _ := os.Open(file)
				if err := packfile.UpdateObjectStorage(st, f); err != nil {
					b.Fatal(err)
				}
				f.Close()
			}
		})
		for _, mode := range []string{"", "--fsck-objects", "--strict"} {
			name := p.name + "/index-pack" + mode
			b.Run(name, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					q := filepath.Join(b.TempDir(), "objects")
					if err := os.MkdirAll(filepath.Join(q, "pack"), 0o777); err != nil {
						b.Fatal(err)
					}
					c.mode = mode
					if f, err := c.indexPack(file, q, mode != "", p.alt...); err != nil || f != nil {
						b.Fatal(err, f)
					}
				}
			})
		}
	}
}

package gitstore

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
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

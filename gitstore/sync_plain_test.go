package gitstore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// After git hegel remote setup, a plain git fetch fills the tracking refs
// and the next command merges them. When nothing arrived, the check is a
// few stats (unchanged); when a fetch moved a tracking ref, a directory
// time moved with it and the refs are compared and merged.
func TestMergePlainFetched(t *testing.T) {
	root := t.TempDir()
	syncGit(t, root, "init", "-q", "--bare", "origin.git")
	u := "file://" + filepath.Join(root, "origin.git")
	a, b := syncDiskRepo(t), syncDiskRepo(t)
	for _, r := range []*Repo{a, b} {
		syncGit(t, r.WorkTree, "remote", "add", "origin", u)
		if _, err := reopen(t, r).SetupRemote("origin"); err != nil {
			t.Fatal(err)
		}
	}
	a, b = reopen(t, a), reopen(t, b)
	if got := b.PlainFetchedRemotes(); len(got) != 1 || got[0] != "origin" {
		t.Fatalf("remotes %v", got)
	}
	rem, _ := a.ResolveRemote("origin")
	stash(t, a, "one")
	if _, err := a.Push(context.Background(), rem, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	syncGit(t, b.WorkTree, "fetch", "-q")
	rep, err := b.MergePlainFetched("origin")
	if err != nil || rep == nil || rep.FetchSummary() != "1 stash added" {
		t.Fatalf("first merge: %+v %v", rep, err)
	}
	if rep, err := b.MergePlainFetched("origin"); rep != nil || err != nil {
		t.Fatalf("nothing new, but %+v %v", rep, err)
	}

	// Age every time the record holds, so it is not racy: the check is
	// then decided by the times alone.
	past := time.Now().Add(-time.Minute)
	age := func() {
		for _, line := range strings.Split(string(b.trackingStamp("origin")), "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[1] != "0" {
				if err := os.Chtimes(filepath.Join(b.CommonDir, f[0]), past, past); err != nil {
					t.Fatal(err)
				}
			}
		}
		b.writeMergedRecord("origin", b.trackingStamp("origin"), mustState(t, b))
	}
	age()
	if !b.unchanged("origin", b.readMergedRecord("origin")) {
		t.Fatal("aged record is not taken as unchanged")
	}
	stash(t, a, "two")
	if _, err := a.Push(context.Background(), rem, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	syncGit(t, b.WorkTree, "fetch", "-q")
	if b.unchanged("origin", b.readMergedRecord("origin")) {
		t.Fatal("a fetch that moved a tracking ref went unnoticed")
	}
	if rep, err := b.MergePlainFetched("origin"); err != nil || rep == nil || rep.FetchSummary() != "1 stash added" {
		t.Fatalf("second merge: %+v %v", rep, err)
	}
	// git pack-refs moves them into packed-refs: noticed too (and
	// nothing to merge).
	age()
	syncGit(t, b.WorkTree, "pack-refs", "--all")
	if b.unchanged("origin", b.readMergedRecord("origin")) {
		t.Fatal("pack-refs went unnoticed")
	}
	if rep, err := b.MergePlainFetched("origin"); rep != nil || err != nil {
		t.Fatalf("after pack-refs: %+v %v", rep, err)
	}
}

func reopen(t *testing.T, r *Repo) *Repo {
	t.Helper()
	r2, err := Open(r.WorkTree, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return r2
}

func mustState(t *testing.T, r *Repo) []byte {
	t.Helper()
	b, err := r.newSyncer(&Remote{Name: "origin"}, SyncOptions{}).trackingState()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

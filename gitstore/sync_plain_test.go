package gitstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
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

// TestMergePlainFetchedRemovesRefused: a tracking ref a plain git fetch
// wrote with data git-hegel refuses is removed (left, it would keep git
// fsck --strict failing), and the report says which; the local ref and
// the other tracking refs stay.
func TestMergePlainFetchedRemovesRefused(t *testing.T) {
	for name, newRepo := range storeBackends {
		t.Run(name, func(t *testing.T) {
			r := newRepo(t)
			good := saveTask(t, r, "good", "spec", "start")
			d, _ := r.readDocAt(TaskRef("good"), plumbing.NewHash(good))
			bad, err := r.writeCommit(d.Tree, nil, "no parent, and a tree whose state names another task")
			if err != nil {
				t.Fatal(err)
			}
			track := func(rel, h string) {
				if err := r.refs.Update(plumbing.ReferenceName(trackingRoot+"origin/"+rel), plumbing.ZeroHash, plumbing.NewHash(h)); err != nil {
					t.Fatal(err)
				}
			}
			track("tasks/good", good)
			track("tasks/evil", bad.String())
			rep, err := r.MergeTracking(&Remote{Name: "origin"}, SyncOptions{})
			var re *RefusedError
			if !errors.As(err, &re) || len(rep.Refused) != 1 || rep.Refused[0].Ref != "refs/hegel/tasks/evil" ||
				rep.Refused[0].RemovedTracking != "refs/hegel-remotes/origin/tasks/evil" {
				t.Fatalf("merge: %v %+v", err, rep)
			}
			if !strings.Contains(RefusedLine("origin", rep.Refused[0]), "; removed refs/hegel-remotes/origin/tasks/evil, which git fetch had written (the objects it brought stay until 'git prune --expire=now')") {
				t.Errorf("line: %s", RefusedLine("origin", rep.Refused[0]))
			}
			if _, err := r.refs.Read(plumbing.ReferenceName(trackingRoot + "origin/tasks/evil")); !errors.Is(err, ErrNotFound) {
				t.Errorf("the refused tracking ref stays: %v", err)
			}
			if h, err := r.refs.Read(plumbing.ReferenceName(trackingRoot + "origin/tasks/good")); err != nil || h.String() != good {
				t.Errorf("the good tracking ref: %v %v", h, err)
			}
			if _, err := r.refs.Read(TaskRef("evil")); !errors.Is(err, ErrNotFound) {
				t.Errorf("the refused data was merged: %v", err)
			}
		})
	}
}

// TestEnableFetchFsck: remote setup's fetch.fsckObjects is recorded with
// the remote's setup and removed by its undo; set already, nothing is
// written.
func TestEnableFetchFsck(t *testing.T) {
	r := syncDiskRepo(t)
	syncGit(t, r.WorkTree, "remote", "add", "origin", "file:///nowhere")
	r = reopen(t, r)
	if _, err := r.SetupRemote("origin"); err != nil {
		t.Fatal(err)
	}
	if r.FetchChecksObjects() {
		t.Fatal("checks objects before anything was set")
	}
	if did, err := r.EnableFetchFsck("origin"); err != nil || !did {
		t.Fatalf("enable: %v %v", did, err)
	}
	r = reopen(t, r)
	if !r.FetchChecksObjects() {
		t.Fatal("fetch.fsckObjects not set")
	}
	if did, err := r.EnableFetchFsck("origin"); err != nil || did {
		t.Fatalf("enable again: %v %v", did, err)
	}
	removed, err := r.UndoRemoteSetup("origin")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range removed {
		found = found || l == (ConfigLine{"fetch.fsckObjects", "true"})
	}
	if !found || reopen(t, r).FetchChecksObjects() {
		t.Errorf("undo removed %v", removed)
	}
	// transfer.fsckObjects counts too.
	syncGit(t, r.WorkTree, "config", "transfer.fsckObjects", "true")
	if !reopen(t, r).FetchChecksObjects() {
		t.Error("transfer.fsckObjects not taken")
	}
}

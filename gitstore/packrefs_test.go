package gitstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// A sync that wrote many refs leaves them packed, as git gc would; one
// that wrote a few leaves them loose. Packed refs read, update, delete
// and sync as loose ones do, and a ref git update-ref moved after the
// pack is pushed, not lost.
func TestSyncPacksRefsAfterManyWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("real git")
	}
	old := packRefsAfter
	packRefsAfter = 10
	defer func() { packRefsAfter = old }()
	root := t.TempDir()
	syncGit(t, root, "init", "-q", "--bare", "origin.git")
	u := "file://" + filepath.Join(root, "origin.git")
	rem := &Remote{Name: "origin", FetchURL: u, PushURL: u}
	a, b := syncDiskRepo(t), syncDiskRepo(t)
	for i := range 8 {
		saveTask(t, a, fmt.Sprintf("t%d", i), "spec", "start")
	}
	ctx := context.Background()
	if _, err := a.Sync(ctx, rem, SyncOptions{}); err != nil { // 8 tracking refs: below 10
		t.Fatal(err)
	}
	loose := func(r *Repo, rel string) bool {
		_, err := os.Stat(filepath.Join(r.CommonDir, filepath.FromSlash(rel)))
		return err == nil
	}
	packed := func(r *Repo) string {
		b, _ := os.ReadFile(filepath.Join(r.CommonDir, "packed-refs"))
		return string(b)
	}
	if !loose(a, "refs/hegel-remotes/origin/tasks/t0") || strings.Contains(packed(a), "refs/hegel") {
		t.Fatalf("a sync that wrote 8 refs packed them:\n%s", packed(a))
	}
	// b's fetch writes 8 tracking refs and 8 local ones: packed.
	if _, err := b.Sync(ctx, rem, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"refs/hegel/tasks/t3", "refs/hegel-remotes/origin/tasks/t3"} {
		if loose(b, rel) || !strings.Contains(packed(b), " "+rel+"\n") {
			t.Fatalf("after a sync that wrote 16 refs, %s is not packed:\n%s", rel, packed(b))
		}
	}
	before := localRefs(t, b)
	if len(before) != 8 {
		t.Fatalf("b holds %d tasks: %v", len(before), before)
	}
	// A packed task moves on both sides: a changes t1, and git
	// update-ref moves b's t2 to a new commit on top of it.
	saveTask(t, a, "t1", "plan", "a moves t1")
	if _, err := a.Sync(ctx, rem, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	t2 := "refs/hegel/tasks/t2"
	next := strings.TrimSpace(syncGit(t, b.WorkTree, "commit-tree", "-p", t2, "-m", "moved by git", t2+"^{tree}"))
	syncGit(t, b.WorkTree, "update-ref", t2, next, before["refs/hegel/tasks/t2"].String())
	saveTask(t, b, "t4", "plan", "b moves t4") // a CAS update of a packed ref
	// The delete of a packed ref (then brought back from the tracking
	// ref by the sync: a sync never loses a task).
	t5 := plumbing.ReferenceName("refs/hegel/tasks/t5")
	if err := b.refs.Update(t5, before[string(t5)], plumbing.ZeroHash); err != nil {
		t.Fatal(err)
	}
	if _, err := b.refs.Read(t5); !errors.Is(err, ErrNotFound) {
		t.Fatalf("packed t5 after its delete: %v", err)
	}
	if rep, err := b.Sync(ctx, rem, SyncOptions{}); err != nil {
		t.Fatal(err)
	} else {
		t.Logf("b: %+v", rep)
	}
	if rep, err := a.Sync(ctx, rem, SyncOptions{}); err != nil {
		t.Fatal(err)
	} else {
		t.Logf("a: %+v", rep)
	}
	if !loose(b, "refs/hegel-remotes/origin/tasks/t1") {
		t.Error("a sync that wrote a few refs packed them")
	}
	ra, rb := localRefs(t, a), localRefs(t, b)
	if got := ra["refs/hegel/tasks/t2"].String(); got != next {
		t.Errorf("git update-ref's move of a packed ref was lost: a has %s, want %s", got, next)
	}
	if ra["refs/hegel/tasks/t1"] != rb["refs/hegel/tasks/t1"] || ra["refs/hegel/tasks/t4"] != rb["refs/hegel/tasks/t4"] || ra["refs/hegel/tasks/t1"] == before["refs/hegel/tasks/t1"] || ra["refs/hegel/tasks/t4"] == before["refs/hegel/tasks/t4"] {
		t.Errorf("moves did not travel: a %v, b %v", ra, rb)
	}
	if rb[string(t5)] != before[string(t5)] {
		t.Errorf("t5 after the sync: %s, want %s back", rb[string(t5)], before[string(t5)])
	}
	for _, dir := range []string{a.CommonDir, b.CommonDir} {
		if out := syncGit(t, dir, "fsck", "--strict", "--no-dangling"); strings.Contains(out, "error") || strings.Contains(out, "warning") {
			t.Errorf("fsck %s: %s", dir, out)
		}
	}
}

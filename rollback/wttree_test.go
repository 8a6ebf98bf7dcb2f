package rollback

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestWorktreeTreeCacheMatchesFull: snapshot after snapshot, through
// random edits, deletions, new and removed untracked files, mode changes,
// files turned into directories, symbolic links, intent-to-add entries
// and index changes, the working tree a snapshot builds with the cache
// is the one it builds without.
func TestWorktreeTreeCacheMatchesFull(t *testing.T) {
	tr := newDiskRepo(t)
	var tracked []string
	for _, d := range []string{"a", "a/x", "a/y", "b", "b/z/w", "c"} {
		for k := 0; k < 4; k++ {
			p := fmt.Sprintf("%s/f%d", d, k)
			tr.write(p, p+"\n")
			tracked = append(tracked, p)
		}
	}
	tr.write("top", "top\n")
	tracked = append(tracked, "top")
	tr.add(".")
	tr.commit("c1")
	file := filepath.Join(tr.r.GitDir, wtTreeFile)
	take := func() plumbing.Hash { return tr.snapshot().worktree }
	rng := rand.New(rand.NewSource(7))
	pick := func() string { return tracked[rng.Intn(len(tracked))] }
	exists := func(p string) bool { _, err := os.Lstat(filepath.Join(tr.dir, p)); return err == nil }
	untracked := 0
	taken := 0
	for step := 0; step < 60; step++ {
		for n := rng.Intn(3) + 1; n > 0; n-- {
			switch p := pick(); rng.Intn(9) {
			case 0, 1:
				if exists(p) {
					tr.remove(p)
				}
				tr.write(p, fmt.Sprintf("step %d\n", step))
			case 2:
				if exists(p) {
					tr.remove(p)
				}
			case 3:
				untracked++
				tr.write(fmt.Sprintf("%s.new%d", p, untracked), "new\n")
			case 4:
				if fi, err := os.Lstat(filepath.Join(tr.dir, p)); err == nil && fi.Mode().IsRegular() {
					tr.chmod(p, 0o755)
				}
			case 5:
				if exists(p) {
					tr.remove(p)
				}
				tr.write(p+"/inside", "now a directory\n")
			case 6:
				if exists(p) {
					tr.remove(p)
				}
				tr.symlink("elsewhere", p)
			case 7:
				if exists(p) {
					tr.git("add", "-A", "--", p)
				}
			case 8:
				q := fmt.Sprintf("%s.n%d", p, step)
				tr.write(q, "intent\n")
				tr.git("add", "-N", "--", q)
			}
		}
		// Some steps take nothing new: the cache must give the same tree.
		for again := rng.Intn(2); again >= 0; again-- {
			got := take()
			rec, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("step %d: no working tree cache written: %v", step, err)
			}
			os.Remove(file)
			want := take()
			if got != want {
				t.Fatalf("step %d: with the cache %s, without %s", step, got, want)
			}
			// The next step starts from the cache the first build left.
			if err := os.WriteFile(file, rec, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		r := newWtTreeReuse(tr.r.GitDir, mustIndexSum(t, tr), nil, func(plumbing.Hash) bool { return true })
		taken += len(r.old)
	}
	if taken == 0 {
		t.Fatal("the cache was never usable")
	}
	tr.git("fsck", "--strict", "--no-dangling")
}

func mustIndexSum(t *testing.T, tr *testRepo) plumbing.Hash {
	t.Helper()
	idx, err := tr.m.w.readIndex()
	if err != nil {
		t.Fatal(err)
	}
	return idx.sum
}

// TestWorktreeTreeCacheTaken: the second snapshot of an unchanged working
// tree takes every directory from the cache, and one file changed makes
// it build only that file's directories; a cache for another index, a
// damaged one, or one whose top tree the repository lacks is not used.
func TestWorktreeTreeCacheTaken(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write("a/b/c", "c\n")
	tr.write("a/d", "d\n")
	tr.write("e/f", "f\n")
	tr.write("h/p", "p\n")
	tr.write("h/q", "q\n")
	// Older than the index, so not racily clean: unchanged, they are clean.
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{"h/p", "h/q"} {
		if err := os.Chtimes(filepath.Join(tr.dir, p), old, old); err != nil {
			t.Fatal(err)
		}
	}
	tr.add(".")
	tr.commit("c1")
	tr.write("e/f", "changed\n")
	tr.write("u/new", "untracked\n")
	tr.git("config", "core.trustctime", "false")
	tr.reopen()
	file := filepath.Join(tr.r.GitDir, wtTreeFile)
	taken := 0
	take := func() (plumbing.Hash, *wtTreeReuse) {
		t.Helper()
		snap := tr.snapshot()
		taken = snap.dirsTaken
		return snap.worktree, newWtTreeReuse(tr.r.GitDir, snap.idx.sum, nil, tr.m.snapshotter().obj.stored)
	}
	first, r := take()
	dirs := map[string]bool{}
	for _, d := range r.old {
		dirs[d.dir] = true
	}
	for _, want := range []string{"", "a/", "a/b/", "e/", "u/"} {
		if !dirs[want] {
			t.Fatalf("cache lacks %q: %v", want, dirs)
		}
	}
	if again, _ := take(); again != first || taken != 1 {
		t.Fatalf("unchanged: %s, want %s; %d directories taken, want 1 (the top)", again, first, taken)
	}

	// A corrupt cache naming wrong trees is not detectable, so every way
	// the file can be damaged must make it unusable: then the snapshot is
	// built whole, and right.
	good, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sum := mustIndexSum(t, tr)
	for name, bad := range map[string][]byte{
		"truncated":      good[:len(good)-1],
		"flipped byte":   append(append([]byte(nil), good[:40]...), append([]byte{good[40] ^ 1}, good[41:]...)...),
		"empty":          nil,
		"another header": append([]byte("XXXX"), good[4:]...),
	} {
		if err := os.WriteFile(file, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if old := loadWtTree(tr.r.GitDir, sum); old != nil {
			t.Fatalf("%s: cache read as %d directories", name, len(old))
		}
	}
	if err := os.WriteFile(file, good, 0o644); err != nil {
		t.Fatal(err)
	}
	if old := loadWtTree(tr.r.GitDir, plumbing.NewHash("1234567890123456789012345678901234567890")); old != nil {
		t.Fatal("cache used for another index")
	}
	missing := newWtTreeReuse(tr.r.GitDir, sum, nil, func(plumbing.Hash) bool { return false })
	if len(missing.old) != 0 {
		t.Fatal("cache used although its top tree is not stored")
	}
	// A signature differing below a directory makes it built again: new
	// content, and a changed file's mode alone.
	before := first
	// Changes that keep every directory's number of leaves are the ones
	// only the signature tells: a deleted file restored while another is
	// deleted, an untracked file renamed.
	for i, change := range []func(){
		func() { tr.write("a/b/c", "changed too\n") },
		func() { tr.chmod("e/f", 0o755) },
		func() { tr.remove("a/d") },
		func() { tr.write("a/d", "d\n"); tr.write("a/g", "untracked\n") },
		func() { tr.remove("a/g"); tr.remove("a/b/c") },
		func() { tr.write("a/b/c", "changed too\n"); tr.remove("a/d") },
		func() { os.Rename(filepath.Join(tr.dir, "u/new"), filepath.Join(tr.dir, "u/new2")) },
		// Moved away and back, h/p keeps its stat data but its ctime:
		// with core.trustctime off it is clean again.
		func() { os.Rename(filepath.Join(tr.dir, "h/p"), filepath.Join(tr.dir, "p.away")) },
		func() {
			os.Rename(filepath.Join(tr.dir, "p.away"), filepath.Join(tr.dir, "h/p"))
			os.Rename(filepath.Join(tr.dir, "h/q"), filepath.Join(tr.dir, "q.away"))
		},
	} {
		change()
		changed, _ := take()
		if taken == 0 {
			t.Fatalf("after change %d: nothing taken from the cache", i)
		}
		rec, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		os.Remove(file)
		if full, _ := take(); changed != full || changed == before {
			t.Fatalf("after change %d: %s, built whole %s (before %s)", i, changed, full, before)
		}
		os.WriteFile(file, rec, 0o644)
		before = changed
	}
}

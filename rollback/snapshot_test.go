package rollback

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestSnapshotMatchesGit compares both trees with what git itself builds:
// the index tree with `git write-tree`, the working tree with `git add -A`
// into a copy of the index.
func TestSnapshotMatchesGit(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write(".gitignore", "build/\n*.tmp\n!keep.tmp\n")
	tr.write("sub/.gitignore", "local-only\n")
	for _, p := range []string{"a", "b/c", "b/d/e", "x/y/z", "sub/k", "run"} {
		tr.write(p, "content of "+p+"\n")
	}
	tr.chmod("run", 0o755)
	tr.symlink("b/c", "link")
	tr.add(".")
	tr.commit("c1")
	// Every kind of change.
	tr.write("a", "edited\n")
	tr.write("b/c", "staged\n")
	tr.add("b/c")
	tr.write("b/c", "staged then edited\n")
	tr.remove("b/d/e")
	tr.chmod("run", 0o644)
	tr.remove("link")
	tr.symlink("a", "link")
	tr.write("new/file", "untracked\n")
	tr.write("build/out", "ignored dir\n")
	tr.write("x.tmp", "ignored\n")
	tr.write("keep.tmp", "negated\n")
	tr.write("sub/local-only", "ignored below\n")
	tr.write("sub/other", "untracked below\n")
	tr.remove("x/y")
	tr.write("x/y", "file where a directory was\n")
	// A file modified within the index's own timestamp tick is racily
	// clean: its stat data (same size, same mtime, same inode; ctime is
	// not trusted here) matches the entry, and only hashing sees the
	// change because the entry is not older than the index file.
	tr.git("config", "core.trustctime", "false")
	tr.git("update-index", "-q", "--refresh")
	tr.reopen()
	idx0, _ := tr.m.w.readIndex()
	var mt time.Time
	for _, e := range idx0.Entries {
		if e.Name == "sub/k" {
			mt = time.Unix(int64(e.Stat.MtimeSec), int64(e.Stat.MtimeNsec))
		}
	}
	tr.write("sub/k", "CONTENT of sub/k\n")
	os.Chtimes(filepath.Join(tr.dir, "sub/k"), mt, mt)
	os.Chtimes(filepath.Join(tr.dir, ".git", "index"), mt, mt)

	idx, err := tr.m.w.readIndex()
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tr.m.snapshotter().take(idx, true)
	if err != nil {
		t.Fatal(err)
	}
	wantIndex := strings.TrimSpace(tr.git("write-tree"))
	if snap.indexTree.String() != wantIndex {
		t.Errorf("index tree %s, git write-tree %s", snap.indexTree, wantIndex)
	}
	tmp := filepath.Join(t.TempDir(), "index")
	b, _ := os.ReadFile(filepath.Join(tr.dir, ".git", "index"))
	os.WriteFile(tmp, b, 0o644)
	os.Chtimes(tmp, mt, mt) // keep the entry racy for git too
	env := append(gitEnv(tr.home()), "GIT_INDEX_FILE="+tmp)
	runGit(t, tr.dir, env, "add", "-A")
	wantWT := strings.TrimSpace(runGit(t, tr.dir, env, "write-tree"))
	if snap.worktree.String() != wantWT {
		t.Errorf("worktree tree %s, git add -A + write-tree %s\nours:\n%s\ngit's:\n%s", snap.worktree, wantWT,
			tr.git("ls-tree", "-r", snap.worktree.String()), tr.git("ls-tree", "-r", wantWT))
	}
	tr.git("fsck", "--strict", "--no-dangling")
}

// TestSnapshotStatCache checks that unchanged files are not read: their
// blobs are not even needed in the object store.
func TestSnapshotStatCache(t *testing.T) {
	tr := newDiskRepo(t)
	for i := 0; i < 50; i++ {
		tr.write(filepath.Join("d", string(rune('a'+i%26))+string(rune('a'+i/26))), strings.Repeat("x", i))
	}
	tr.add(".")
	tr.commit("c1")
	time.Sleep(10 * time.Millisecond)
	tr.git("update-index", "-q", "--refresh") // index newer than every file: nothing racy
	idx, err := tr.m.w.readIndex()
	if err != nil {
		t.Fatal(err)
	}
	res, err := scan(tr.m.w.fs, idx, tr.m.w.rules, tr.m.w.cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range res.state {
		if s != entryClean {
			t.Errorf("%s: state %d, want clean (stat data matches)", idx.Entries[i].Name, s)
		}
	}
	tr.write("d/aa", "changed")
	res, _ = scan(tr.m.w.fs, idx, tr.m.w.rules, tr.m.w.cfg)
	dirty := 0
	for _, s := range res.state {
		if s == entryDirty {
			dirty++
		}
	}
	if dirty != 1 {
		t.Errorf("%d dirty entries, want 1", dirty)
	}
}

func TestCheckpointUnchangedIsNotStoredTwice(t *testing.T) {
	forBothRepos(t, func(t *testing.T, tr *testRepo) {
		tr.write("f", "1\n")
		tr.add("f")
		tr.commit("c1")
		tr.start("minimal")
		cp1, created, err := tr.take(KindManual, "")
		if err != nil || created {
			t.Fatalf("identical to the start checkpoint: created=%v err=%v", created, err)
		}
		tr.write("f", "2\n")
		tr.now = tr.now.Add(time.Second)
		cp2, created, err := tr.take(KindManual, "two")
		if err != nil || !created || cp2.ID == cp1.ID {
			t.Fatalf("changed: created=%v err=%v", created, err)
		}
		if cp2.FilesChangedCount != 1 || cp2.FilesChanged[0] != "f" {
			t.Errorf("files changed %v", cp2.FilesChanged)
		}
		if cp2.IndexTree != cp1.IndexTree {
			t.Error("index tree changed although the index did not")
		}
	})
}

func TestCheckpointLeavesOutLargeFiles(t *testing.T) {
	tr := newDiskRepo(t)
	tr.git("config", "hegel.checkpointMaxFileSize", "1k")
	tr.reopen()
	tr.write("small", "s\n")
	tr.write("big", strings.Repeat("b", 2000))
	tr.start("minimal")
	cps := tr.list()
	if len(cps) != 1 || len(cps[0].Skipped) != 1 || cps[0].Skipped[0].Path != "big" {
		t.Fatalf("checkpoints %+v", cps)
	}
	if len(tr.warned) != 1 || !strings.Contains(tr.warned[0], "big") || strings.Contains(tr.warned[0], "\n") {
		t.Errorf("warnings %q, want one line naming big", tr.warned)
	}
	// A rollback never removes what no checkpoint holds.
	tr.write("small", "changed\n")
	tr.mustRollback(Request{})
	if f := tr.files(); f["big"] != strings.Repeat("b", 2000) || f["small"] != "s\n" {
		t.Errorf("files after rollback: %v", f)
	}
}

func TestCheckpointTreeLayout(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write("f", "1\n")
	tr.add("f")
	tr.commit("c1")
	tr.start("minimal")
	tr.write("u", "untracked\n")
	tr.next()
	ref := RefPrefix + "t1"
	tip := strings.TrimSpace(tr.git("rev-parse", ref))
	ls := tr.git("ls-tree", tip)
	for _, want := range []string{"blob", "checkpoint.json", "tree", "index", "version", "worktree"} {
		if !strings.Contains(ls, want) {
			t.Errorf("root tree lacks %s:\n%s", want, ls)
		}
	}
	if v := tr.git("cat-file", "blob", tip+":version"); v != "1\n" {
		t.Errorf("version blob %q", v)
	}
	head := strings.TrimSpace(tr.git("rev-parse", "HEAD"))
	parents := strings.Fields(tr.git("rev-list", "--parents", "-n", "1", tip))
	if len(parents) != 3 || parents[2] != head {
		t.Errorf("parents %v, want previous checkpoint and HEAD %s", parents[1:], head)
	}
	if got := strings.TrimSpace(tr.git("rev-parse", tip+":worktree")); got == "" {
		t.Error("no worktree tree")
	}
	if !strings.Contains(tr.git("ls-tree", "-r", tip+":worktree"), "\tu\n") {
		t.Error("the untracked file is not in the worktree tree")
	}
	if strings.Contains(tr.git("ls-tree", "-r", tip+":worktree"), "state.json") {
		t.Error("the session file was snapshotted")
	}
	tr.git("fsck", "--strict", "--no-dangling")
	_ = plumbing.ZeroHash
}

// TestStatCache: the second snapshot reuses the hashes of files whose stat
// data did not change, and notices the ones that did, even at the same
// size and mtime (their ctime moved).
func TestStatCache(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write("f", "1\n")
	tr.add("f")
	tr.commit("c1")
	tr.start("minimal")
	tr.write("f", "tracked, modified\n")
	tr.write("u", "untracked one\n")
	tr.now = tr.now.Add(time.Second)
	cp1, _, err := tr.take(KindManual, "1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(tr.dir, ".git", statCacheFile)); err != nil {
		t.Fatalf("no stat cache: %v", err)
	}
	fi, _ := os.Stat(filepath.Join(tr.dir, "u"))
	time.Sleep(10 * time.Millisecond)
	tr.write("u", "untracked two\n") // same size
	os.Chtimes(filepath.Join(tr.dir, "u"), fi.ModTime(), fi.ModTime())
	tr.now = tr.now.Add(time.Second)
	cp2, created, err := tr.take(KindManual, "2")
	if err != nil || !created {
		t.Fatalf("created=%v err=%v", created, err)
	}
	if cp2.WorkTree == cp1.WorkTree {
		t.Fatal("the change to u went unnoticed")
	}
	want := hashObject(plumbing.BlobObject, []byte("untracked two\n")).String()
	if ls := tr.git("ls-tree", cp2.WorkTree.String(), "u"); !strings.Contains(ls, want) {
		t.Errorf("u in the checkpoint: %s, want blob %s", ls, want)
	}
	// A damaged cache is ignored.
	os.WriteFile(filepath.Join(tr.dir, ".git", statCacheFile), []byte("HGSC garbage"), 0o644)
	tr.write("u", "untracked three\n")
	tr.now = tr.now.Add(time.Second)
	if _, _, err := tr.take(KindManual, "3"); err != nil {
		t.Fatal(err)
	}
	tr.git("fsck", "--strict", "--no-dangling")
}

// TestStatCacheKeptWhenUnchanged: a snapshot that finds every file it
// hashes in the stat cache as it was leaves the file as it is (no write);
// one that hashes a changed file rewrites it.
func TestStatCacheKeptWhenUnchanged(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write("f", "1\n")
	tr.add("f")
	tr.commit("c1")
	tr.write("f", "tracked, modified\n")
	tr.write("u", "untracked\n")
	time.Sleep(20 * time.Millisecond) // the files older than the cache: not racy
	file := filepath.Join(tr.dir, ".git", statCacheFile)
	tr.snapshot()
	before, err := os.Stat(file)
	if err != nil {
		t.Fatalf("no stat cache: %v", err)
	}
	time.Sleep(20 * time.Millisecond)
	tr.snapshot()
	after, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Fatal("an unchanged working tree rewrote the stat cache")
	}
	tr.write("u", "untracked, changed\n")
	time.Sleep(20 * time.Millisecond)
	tr.snapshot()
	if again, err := os.Stat(file); err != nil || os.SameFile(after, again) {
		t.Fatalf("a changed file left the stat cache as it was (%v)", err)
	}
}

package rollback

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// parkedRepo is a repository with uncommitted work of every kind: a
// modified tracked file, a staged one, a deleted one, untracked files,
// an ignored one (never parked).
func parkedRepo(t *testing.T) *testRepo {
	tr := newDiskRepo(t)
	tr.write(".gitignore", "*.log\n")
	for _, f := range []string{"a.txt", "b.txt", "c.txt", "d/e.txt"} {
		tr.write(f, f+" at HEAD\n")
	}
	tr.add(".gitignore", "a.txt", "b.txt", "c.txt", "d")
	tr.commit("c1")
	tr.start("minimal")
	tr.write("a.txt", "a modified\n")
	tr.write("b.txt", "b staged\n")
	tr.add("b.txt")
	tr.remove("c.txt")
	tr.write("new/u1.txt", "untracked 1\n")
	tr.write("new/u2.txt", "untracked 2\n")
	tr.write("keep.log", "ignored\n")
	return tr
}

func (tr *testRepo) parkMeta() Meta {
	m := Meta{}
	m.Set("stash_id", "s1")
	return m
}

// dieWithLock leaves the repository as a process killed while holding the
// index lock would: the lock file with a marker naming a dead pid, and
// the journal naming it too.
func (tr *testRepo) dieWithLock() {
	tr.t.Helper()
	pid := deadPID(tr.t)
	if tr.m.w.lock == nil {
		if err := tr.m.w.lockIndex(); err != nil {
			tr.t.Fatal(err)
		}
	}
	tr.m.w.lock = nil
	if err := os.WriteFile(tr.m.w.lockPath(), markerFor(tr.t, tr.m.w.lockPath(), pid), 0o644); err != nil {
		tr.t.Fatal(err)
	}
	j, err := tr.m.loadParkJournal()
	if err != nil || j == nil {
		tr.t.Fatalf("no journal: %v", err)
	}
	b, _ := marshalFlat(j, j.Record)
	b = []byte(strings.Replace(string(b), `"pid": `+strconv.Itoa(j.PID), `"pid": `+strconv.Itoa(pid), 1))
	if err := tr.m.w.parkJournal.save(b); err != nil {
		tr.t.Fatal(err)
	}
	tr.m = newTestManager(tr) // the next command
}

// TestParkingCutShortIsFinished: the cleaning after stash push --files,
// killed halfway (some files deleted, the index not written yet), is
// finished from its journal; the parked files come back whole.
func TestParkingCutShortIsFinished(t *testing.T) {
	tr := parkedRepo(t)
	before := tr.fingerprint()
	pk, err := tr.m.Park(tr.template(KindStash, "", ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	if pk.Tree == "" || pk.Count != 5 {
		t.Fatalf("parked %+v", pk)
	}
	// What Clean does, cut short: the journal, then half the files.
	j := &ParkJournal{Op: ParkClean, Record: tr.parkMeta(), HeadRef: string(pk.head.Ref), Head: hexOf(pk.head.Commit),
		From: parkSide{WorkTree: hexOf(pk.worktree), IndexTree: hexOf(pk.indexTree), AssumeUnchanged: pk.assume, IntentToAdd: pk.ita},
		To:   parkSide{WorkTree: hexOf(pk.base), IndexTree: hexOf(pk.base), AssumeUnchanged: pk.assume}}
	if err := tr.m.saveParkJournal(j); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.m.w.applyWorktree(pk.wt[:len(pk.wt)/2]); err != nil {
		t.Fatal(err)
	}
	tr.dieWithLock()

	// Snapshots and restores wait for it.
	if _, _, err := tr.take(KindManual, "x"); !errors.Is(err, ErrInterrupted) {
		t.Errorf("checkpoint while cut short: %v", err)
	}
	got, err := tr.m.InterruptedParking()
	if err != nil || got == nil || got.Op != ParkClean || got.Record.String("stash_id") != "s1" {
		t.Fatalf("journal %+v %v", got, err)
	}
	if err := tr.m.FinishParking(got, "the stash push"); err != nil {
		t.Fatal(err)
	}
	if st := tr.status(); st != "!! keep.log\n" {
		t.Errorf("after finishing, git status:\n%s", st)
	}
	if j, _ := tr.m.InterruptedParking(); j != nil {
		t.Error("the journal is left")
	}
	if _, err := os.Stat(filepath.Join(tr.dir, ".git", "index.lock")); err == nil {
		t.Error("index.lock is left")
	}
	// The files come back whole from the parked tree.
	if _, err := tr.m.Unpark(pk.Tree, "stash@{0}", nil, tr.parkMeta()); err != nil {
		t.Fatal(err)
	}
	if got := tr.fingerprint(); got != before {
		t.Errorf("unparked:\n%s", diffLines(before, got))
	}
	tr.git("fsck", "--strict", "--no-dangling")
}

// TestUnparkingCutShortIsUndone: writing a stash's files back, killed
// halfway, is undone from its journal: the working tree and the index are
// as before the pop, and the parked tree can be written back again. A
// file changed since is never overwritten.
func TestUnparkingCutShortIsUndone(t *testing.T) {
	tr := parkedRepo(t)
	before := tr.fingerprint()
	pk, err := tr.m.Park(tr.template(KindStash, "", ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.m.Clean(pk, tr.parkMeta()); err != nil {
		t.Fatal(err)
	}
	tr.write("unrelated.txt", "a local change the pop leaves alone\n")
	popFrom := tr.fingerprint()
	pre := tr.snapshot()
	if _, err := tr.m.Unpark(pk.Tree, "stash@{0}", nil, tr.parkMeta()); err != nil {
		t.Fatal(err)
	}
	post := tr.snapshot()
	// Cut short: the journal Unpark writes, and only some of its files
	// written (the index is written last: still as before).
	tr.write("a.txt", "a.txt at HEAD\n")
	tr.remove("new/u1.txt")
	tr.git("reset", "-q")
	j := &ParkJournal{Op: ParkUnpark, Record: tr.parkMeta(), HeadRef: "refs/heads/main", Head: strings.TrimSpace(tr.git("rev-parse", "HEAD")),
		From: parkSide{WorkTree: hexOf(orEmpty(pre.worktree)), IndexTree: hexOf(orEmpty(pre.indexTree))},
		To:   parkSide{WorkTree: hexOf(orEmpty(post.worktree)), IndexTree: hexOf(orEmpty(post.indexTree))}}
	if err := tr.m.saveParkJournal(j); err != nil {
		t.Fatal(err)
	}
	tr.dieWithLock()

	// A file changed since stops it, with nothing changed.
	tr.write("b.txt", "edited after the crash\n")
	edited := tr.fingerprint()
	got, _ := tr.m.InterruptedParking()
	if err := tr.m.UndoParking(got, "the stash pop"); !errors.Is(err, ErrEditedSince) || !strings.Contains(err.Error(), "b.txt changed after the stash pop was interrupted") {
		t.Fatalf("edited: %v", err)
	}
	if got := tr.fingerprint(); got != edited {
		t.Fatalf("a refused recovery changed something:\n%s", diffLines(edited, got))
	}
	tr.write("b.txt", "b staged\n")
	tr.m = newTestManager(tr)
	got, _ = tr.m.InterruptedParking()
	if err := tr.m.UndoParking(got, "the stash pop"); err != nil {
		t.Fatal(err)
	}
	if got := tr.fingerprint(); got != popFrom {
		t.Fatalf("undone:\n%s", diffLines(popFrom, got))
	}
	// And popped again, whole.
	if _, err := tr.m.Unpark(pk.Tree, "stash@{0}", nil, tr.parkMeta()); err != nil {
		t.Fatal(err)
	}
	tr.remove("unrelated.txt")
	if got := tr.fingerprint(); got != before {
		t.Errorf("popped again:\n%s", diffLines(before, got))
	}
	tr.git("fsck", "--strict", "--no-dangling")
}

// snapshot stores the working tree and the index as they are.
func (tr *testRepo) snapshot() *snapshot {
	tr.t.Helper()
	idx, err := tr.m.w.readIndex()
	if err != nil {
		tr.t.Fatal(err)
	}
	snap, err := tr.m.snapshotter().take(idx, true)
	if err != nil {
		tr.t.Fatal(err)
	}
	return snap
}

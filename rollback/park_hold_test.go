package rollback

import (
	"strings"
	"testing"
)

// TestUnparkingCutShortSurvivesPrune: the trees an interrupted stash pop's
// journal names (the working tree before the pop, the one it was writing)
// are in no other ref; a `git gc --prune=now` after the crash must not
// take them, or the pop can be neither finished nor undone. The parking
// ref holds them while the journal exists, and goes with it.
func TestUnparkingCutShortSurvivesPrune(t *testing.T) {
	tr := parkedRepo(t)
	pk, err := tr.m.Park(tr.template(KindStash, "", ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.m.Clean(pk, tr.parkMeta()); err != nil {
		t.Fatal(err)
	}
	if out := tr.git("for-each-ref", ParkingRefPrefix); out != "" {
		t.Fatalf("a parking ref is left after the clean:\n%s", out)
	}
	tr.write("unrelated.txt", "a local change the pop leaves alone\n")
	popFrom := tr.fingerprint()
	pre := tr.snapshot()
	if _, err := tr.m.Unpark(pk.Tree, "stash@{0}", nil, tr.parkMeta()); err != nil {
		t.Fatal(err)
	}
	post := tr.snapshot()
	// Cut short: the journal Unpark writes, and only some of its files.
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

	tr.git("gc", "-q", "--prune=now")
	for _, h := range []string{j.From.WorkTree, j.To.WorkTree} {
		tr.git("cat-file", "-e", h)
	}
	got, err := tr.m.InterruptedParking()
	if err != nil || got == nil {
		t.Fatalf("journal %+v %v", got, err)
	}
	if err := tr.m.UndoParking(got, "the stash pop"); err != nil {
		t.Fatal(err)
	}
	if got := tr.fingerprint(); got != popFrom {
		t.Fatalf("undone:\n%s", diffLines(popFrom, got))
	}
	if out := tr.git("for-each-ref", ParkingRefPrefix); out != "" {
		t.Errorf("the parking ref is left after the undo:\n%s", out)
	}
	tr.git("fsck", "--strict", "--no-dangling")
}

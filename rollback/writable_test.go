package rollback

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRollbackChecksEveryPathBeforeChangingAnything: a file the rollback
// cannot replace (immutable, as root) or a directory it cannot write in
// (as another user) refuses the rollback before the first change, instead
// of stopping halfway with a put-back that fails on the same file.
func TestRollbackChecksEveryPathBeforeChangingAnything(t *testing.T) {
	tr := newDiskRepo(t)
	for _, p := range []string{"a.txt", "m/b.txt", "z/z.txt"} {
		tr.write(p, "1\n")
	}
	tr.add("a.txt", "m", "z")
	tr.commit("c1")
	tr.start("minimal")
	for _, p := range []string{"a.txt", "m/b.txt", "z/z.txt"} {
		tr.write(p, "2\n")
	}
	tr.write("z/new.txt", "new\n")
	full := filepath.Join(tr.dir, "z", "z.txt")
	var undo func()
	var want string
	if os.Geteuid() == 0 {
		if err := exec.Command("chattr", "+i", full).Run(); err != nil {
			t.Skipf("chattr +i is not available here: %v", err)
		}
		undo = func() { exec.Command("chattr", "-i", full).Run() }
		want = "z/z.txt is immutable (chattr +i), and the rollback must change it; nothing was changed"
	} else {
		dir := filepath.Join(tr.dir, "z")
		os.Chmod(dir, 0o555)
		undo = func() { os.Chmod(dir, 0o755) }
		want = "z is a directory you may not write in, and the rollback must change what is in it; nothing was changed"
	}
	defer undo()
	before := tr.fingerprint()
	_, err := tr.rollback(Request{Node: "spec"})
	if !errors.Is(err, ErrNotWritable) || err.Error() != want {
		t.Fatalf("err = %v", err)
	}
	if got := tr.fingerprint(); got != before {
		t.Fatalf("a refused rollback changed something:\n%s", diffLines(before, got))
	}
	if j, err := tr.m.Interrupted(); j != nil || err != nil {
		t.Fatalf("journal left: %v %v", j, err)
	}
	if _, err := os.Stat(filepath.Join(tr.dir, ".git", "index.lock")); err == nil {
		t.Fatal("index.lock left")
	}
	if list := tr.list(); len(list) != 1 {
		t.Errorf("%d checkpoints after a refused rollback, want 1", len(list))
	}
	undo()
	res := tr.mustRollback(Request{Node: "spec"})
	if strings.TrimSpace(tr.files()["z/z.txt"]) != "1" || res.Safety == nil {
		t.Errorf("after the file was made writable: z/z.txt = %q", tr.files()["z/z.txt"])
	}
}

// TestStashRefusalsSayStash: a file stash push --files or stash pop must
// change but cannot refuses in the words of that operation, not a
// rollback's.
func TestStashRefusalsSayStash(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs chattr +i, as root")
	}
	tr := parkedRepo(t)
	full := filepath.Join(tr.dir, "a.txt")
	immutable := func() func() {
		if err := exec.Command("chattr", "+i", full).Run(); err != nil {
			t.Skipf("chattr +i is not available here: %v", err)
		}
		return func() { exec.Command("chattr", "-i", full).Run() }
	}
	undo := immutable()
	_, err := tr.m.Park(tr.template(KindStash, "", ""), nil)
	undo()
	if want := "a.txt is immutable (chattr +i), and the stash push must change it; nothing was changed"; !errors.Is(err, ErrNotWritable) || err.Error() != want {
		t.Fatalf("park: err = %v", err)
	}
	pk, err := tr.m.Park(tr.template(KindStash, "", ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.m.Clean(pk, tr.parkMeta()); err != nil {
		t.Fatal(err)
	}
	undo = immutable()
	defer undo()
	before := tr.fingerprint()
	_, err = tr.m.Unpark(pk.Tree, "stash@{0}", nil, tr.parkMeta())
	if want := "a.txt is immutable (chattr +i), and the stash pop must change it; nothing was changed"; !errors.Is(err, ErrNotWritable) || err.Error() != want {
		t.Fatalf("unpark: err = %v", err)
	}
	if got := tr.fingerprint(); got != before {
		t.Fatalf("a refused pop changed something:\n%s", diffLines(before, got))
	}
}

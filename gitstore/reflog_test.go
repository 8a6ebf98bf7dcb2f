package gitstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

func reflogLines(t *testing.T, r *Repo, ref string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.CommonDir, "logs", filepath.FromSlash(ref)))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// Reflogs follow git: refs/hegel/ always, branches per
// core.logAllRefUpdates, other refs only when their log exists; a deleted
// refs/hegel ref keeps its log (with a last entry to the zero id), any
// other loses it as in git.
func TestReflogRules(t *testing.T) {
	r, dir := stashDiskRepo(t)
	head := plumbing.NewHash(strings.TrimSpace(stashGit(t, dir, "rev-parse", "HEAD")))
	z := plumbing.ZeroHash
	must(t, r.UpdateRefMsg("refs/hegel/tasks/x", z, head, "start:  one\n  two  "))
	must(t, r.UpdateRef("refs/hegel-remotes/o/tasks/x", z, head))
	must(t, r.UpdateRef("refs/heads/b", z, head))
	if l := reflogLines(t, r, "refs/hegel/tasks/x"); len(l) != 1 || !strings.HasSuffix(l[0], "\tstart: one two") || !strings.HasPrefix(l[0], z.String()+" "+head.String()+" ") {
		t.Errorf("refs/hegel log: %q", l)
	}
	if l := reflogLines(t, r, "refs/hegel-remotes/o/tasks/x"); l != nil {
		t.Errorf("a ref git would not log got a log: %q", l)
	}
	if l := reflogLines(t, r, "refs/heads/b"); len(l) != 1 || !strings.HasSuffix(l[0], "\tinit") {
		t.Errorf("branch log (message from the commit's subject): %q", l)
	}
	stashGit(t, dir, "reflog", "exists", "refs/hegel/tasks/x")

	must(t, r.UpdateRef("refs/hegel/tasks/x", head, z))
	if l := reflogLines(t, r, "refs/hegel/tasks/x"); len(l) != 2 || !strings.HasPrefix(l[1], head.String()+" "+z.String()+" ") || !strings.HasSuffix(l[1], "\tdelete") {
		t.Errorf("deleted refs/hegel ref's log: %q", l)
	}
	must(t, r.UpdateRef("refs/heads/b", head, z))
	if l := reflogLines(t, r, "refs/heads/b"); l != nil {
		t.Errorf("deleted branch's log kept: %q", l)
	}

	stashGit(t, dir, "config", "core.logAllRefUpdates", "false")
	r2, err := Open(dir, stashNoEnv)
	must(t, err)
	must(t, r2.UpdateRef("refs/heads/c", z, head))
	must(t, r2.UpdateRef("refs/hegel/tasks/y", z, head))
	if reflogLines(t, r2, "refs/heads/c") != nil || reflogLines(t, r2, "refs/hegel/tasks/y") == nil {
		t.Error("core.logAllRefUpdates=false: branches must not be logged, refs/hegel must")
	}
	stashGit(t, dir, "config", "core.logAllRefUpdates", "always")
	r3, err := Open(dir, stashNoEnv)
	must(t, err)
	must(t, r3.UpdateRef("refs/other/d", z, head))
	if reflogLines(t, r3, "refs/other/d") == nil {
		t.Error("core.logAllRefUpdates=always: every ref is logged")
	}
	stashGit(t, dir, "fsck", "--strict")
}

package rollback

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// indexDump describes the index without stat data: what must come back.
func (tr *testRepo) indexDump() []string {
	tr.t.Helper()
	idx, err := tr.m.w.readIndex()
	if err != nil {
		tr.t.Fatal(err)
	}
	var out []string
	for _, e := range idx.Entries {
		out = append(out, e.Name+" "+modeNames[normMode(e.mode())]+" "+e.Hash.String())
	}
	return out
}

func (tr *testRepo) headDump() string {
	tr.t.Helper()
	h, err := tr.m.w.readHead()
	if err != nil {
		tr.t.Fatal(err)
	}
	return string(h.Ref) + " " + h.Commit.String()
}

type repoState struct {
	files  map[string]string
	index  []string
	head   string
	status string
}

func (tr *testRepo) capture() repoState {
	s := repoState{files: tr.files(), index: tr.indexDump(), head: tr.headDump()}
	if tr.dir != "" {
		s.status = tr.git("status", "--porcelain=v1", "--untracked-files=all")
	}
	return s
}

func (tr *testRepo) expectState(want repoState, what string, ignoreFiles ...string) {
	tr.t.Helper()
	got := tr.capture()
	for _, p := range ignoreFiles {
		delete(got.files, p)
		delete(want.files, p)
	}
	if d := diffMaps(want.files, got.files); d != "" {
		tr.t.Errorf("%s: files differ (- missing, + extra, ~ changed):\n%s", what, d)
	}
	if !reflect.DeepEqual(want.index, got.index) {
		tr.t.Errorf("%s: index differs:\nwant %v\ngot  %v", what, want.index, got.index)
	}
	if want.head != got.head {
		tr.t.Errorf("%s: HEAD is %s, want %s", what, got.head, want.head)
	}
	if want.status != got.status {
		tr.t.Errorf("%s: git status differs:\nwant:\n%s\ngot:\n%s", what, want.status, got.status)
	}
}

func forBothRepos(t *testing.T, fn func(t *testing.T, tr *testRepo)) {
	t.Run("memfs", func(t *testing.T) { fn(t, newMemRepo(t)) })
	t.Run("disk", func(t *testing.T) { fn(t, newDiskRepo(t)) })
}

// TestRollbackRestoresEverything walks a task through checkpoints while
// editing, adding, deleting, chmodding, linking, staging and committing,
// then rolls back and undoes the rollback.
func TestRollbackRestoresEverything(t *testing.T) {
	forBothRepos(t, func(t *testing.T, tr *testRepo) {
		disk := tr.dir != ""
		tr.write(".gitignore", "build/\n")
		tr.write("a.txt", "a1\n")
		tr.write("dir/b.txt", "b1\n")
		tr.write("dir/sub/c.txt", "c1\n")
		tr.write("run.sh", "#!/bin/sh\n")
		tr.chmod("run.sh", 0o755)
		tr.symlink("a.txt", "link")
		tr.write("gone.txt", "gone\n")
		tr.add(".gitignore", "a.txt", "dir", "run.sh", "link", "gone.txt")
		tr.commit("initial")

		tr.start("minimal")
		// Work during "spec": some staged, some not, some untracked.
		tr.write("a.txt", "a2 staged\n")
		tr.add("a.txt")
		tr.write("a.txt", "a3 unstaged\n")
		tr.write("staged.txt", "new and staged\n")
		tr.add("staged.txt")
		tr.write("untracked.txt", "u1\n")
		tr.write("notes/deep/n.txt", "n1\n")
		tr.remove("dir/b.txt")
		tr.write("build/out.o", "object 1\n")
		tr.now = tr.now.Add(time.Minute)
		tr.next() // enters "plan": the checkpoint to come back to
		atPlan := tr.capture()
		if disk && !strings.Contains(atPlan.status, "?? untracked.txt") {
			t.Fatalf("setup: unexpected status:\n%s", atPlan.status)
		}

		// Work during "plan": everything changes.
		tr.write("a.txt", "a4\n")
		tr.add("a.txt")
		tr.commit("work in plan")
		tr.write("dir/sub/c.txt", "c2\n")
		tr.remove("dir/sub")
		tr.write("dir/sub", "now a file\n")
		tr.chmod("run.sh", 0o644)
		tr.remove("link")
		tr.write("link", "not a link any more\n")
		tr.symlink("../a.txt", "notes/alink")
		tr.remove("gone.txt")
		tr.write("gone.txt/inside", "gone became a directory\n")
		tr.remove("untracked.txt")
		tr.write("later.txt", "later\n")
		tr.add("later.txt")
		tr.write("build/out2.o", "object 2\n")
		tr.now = tr.now.Add(time.Minute)
		later := tr.capture()

		res := tr.mustRollback(Request{Node: "plan", Reason: "try again"})
		if res.Safety == nil || res.Safety.Kind != KindSafety {
			t.Fatalf("no safety checkpoint: %+v", res)
		}
		tr.expectState(atPlan, "after rollback", "build/out2.o")
		if got := tr.files()["build/out2.o"]; got != "object 2\n" {
			t.Errorf("ignored file build/out2.o = %q; rollback must not touch ignored files", got)
		}
		if st := tr.state(); st.CurrentNode != "plan" || res.Safety.Meta.String("rollback_to") != "plan" {
			t.Errorf("after rollback: node %s, safety %+v", st.CurrentNode, res.Safety.Meta)
		}

		tr.now = tr.now.Add(time.Minute)
		tr.mustRollback(Request{Undo: true})
		tr.expectState(later, "after undo")
		if disk {
			tr.git("fsck", "--strict", "--no-dangling")
		}
	})
}

// TestRollbackNoArgumentGoesToStartOfCurrentNode: the default target.
func TestRollbackNoArgumentGoesToStartOfCurrentNode(t *testing.T) {
	forBothRepos(t, func(t *testing.T, tr *testRepo) {
		tr.write("f", "1\n")
		tr.add("f")
		tr.commit("c1")
		tr.start("minimal")
		tr.next()
		start := tr.capture()
		tr.write("f", "2\n")
		tr.write("g", "new\n")
		res := tr.mustRollback(Request{})
		if nodeOf(res.Plan.Target) != "plan" {
			t.Errorf("target %s", nodeOf(res.Plan.Target))
		}
		tr.expectState(start, "rollback to the current node")
	})
}

func TestRollbackKeepsIgnoredAndRefusesToOverwriteThem(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write(".gitignore", "*.log\n")
	tr.write("f", "1\n")
	tr.add(".gitignore", "f")
	tr.commit("c1")
	tr.start("minimal")
	tr.write("x.log", "untracked but not yet ignored\n")
	tr.write(".gitignore", "")
	tr.next() // the plan checkpoint holds x.log as an untracked file
	tr.write(".gitignore", "*.log\n")
	tr.write("x.log", "now ignored, precious\n")
	before := tr.capture()
	_, err := tr.rollback(Request{Node: "plan"})
	if !errors.Is(err, ErrInTheWay) || !strings.Contains(err.Error(), "x.log") {
		t.Fatalf("err = %v, want the ignored x.log in the way", err)
	}
	tr.expectState(before, "after refused rollback")
	if j, _ := tr.m.Interrupted(); j != nil {
		t.Fatal("journal left behind")
	}
}

func TestRollbackDropsLaterCheckpoints(t *testing.T) {
	tr := newMemRepo(t)
	tr.write("f", "1\n")
	tr.add("f")
	tr.commit("c1")
	tr.start("discovery")
	for i := 0; i < 3; i++ {
		tr.write("f", strings.Repeat("x", i+1))
		tr.next()
	}
	before := tr.list()
	if len(before) != 4 {
		t.Fatalf("%d checkpoints, want 4", len(before))
	}
	node := tr.state().History[1]
	res := tr.mustRollback(Request{Node: node})
	after := tr.list()
	var kinds []string
	for _, c := range after {
		kinds = append(kinds, nodeOf(c)+"/"+c.Kind)
	}
	// before is newest first: [3] the start node, [2] the second node...
	want := []string{nodeOf(before[0]) + "/safety", node + "/enter", nodeOf(before[3]) + "/enter"}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("chain after rollback (newest first) = %v, want %v", kinds, want)
	}
	if got := res.Safety.Meta.String("rollback_to"); got != node {
		t.Errorf("the safety checkpoint's rollback_to = %q", got)
	}
	if !reflect.DeepEqual(historyOf(after[1]), historyOf(before[2])) {
		t.Errorf("history %v, want %v", historyOf(after[1]), historyOf(before[2]))
	}
}

func TestUndoWithoutRollback(t *testing.T) {
	tr := newMemRepo(t)
	tr.write("f", "1\n")
	tr.add("f")
	tr.commit("c1")
	tr.start("minimal")
	_, err := tr.rollback(Request{Undo: true})
	if !errors.Is(err, ErrNoCheckpoint) {
		t.Fatalf("err = %v", err)
	}
}

// TestRollbackToUnbornAndDetached: a checkpoint taken before the branch
// had a commit is not restored by deleting the branch (and its reflog):
// the rollback is refused, and goes through once the branch is renamed.
// A detached checkpoint detaches HEAD and moves no branch.
func TestRollbackToUnbornAndDetached(t *testing.T) {
	tr := newDiskRepo(t)
	tr.start("minimal") // unborn main
	tr.write("f", "1\n")
	tr.next()
	atPlan := tr.capture()
	tr.add("f")
	tr.commit("first")
	tr.write("g", "2\n")
	before := tr.fingerprint()
	reflog := tr.git("reflog", "show", "main")
	if _, err := tr.rollback(Request{Node: "plan"}); !errors.Is(err, ErrBranch) || !strings.Contains(err.Error(), "git branch -m main") {
		t.Fatalf("rollback to an unborn main that has commits now: %v", err)
	}
	if got := tr.fingerprint(); got != before {
		t.Fatalf("a refused rollback changed something:\n%s", diffLines(before, got))
	}
	if got := tr.git("reflog", "show", "main"); got != reflog {
		t.Errorf("main's reflog changed: %q, was %q", got, reflog)
	}
	tr.git("branch", "-m", "main", "kept")
	renamed := tr.fingerprint()
	tr.mustRollback(Request{Node: "plan"})
	tr.expectState(atPlan, "back to an unborn branch")
	if out := tr.git("branch", "--list", "--format=%(refname)"); strings.TrimSpace(out) != "refs/heads/kept" {
		t.Errorf("branches after rollback to unborn: %q", out)
	}
	tr.mustRollback(Request{Undo: true})
	if got := tr.fingerprint(); got != renamed {
		t.Errorf("undo:\n%s", diffLines(renamed, got))
	}
	if n := strings.Count(tr.git("reflog", "show", "kept"), "\n"); n < 2 {
		t.Errorf("the branch's reflog lost entries:\n%s", tr.git("reflog", "show", "kept"))
	}

	// Detached HEAD.
	tr.git("checkout", "-q", "--detach")
	tr.now = tr.now.Add(time.Minute)
	if _, _, err := tr.take(KindManual, "detached"); err != nil {
		t.Fatal(err)
	}
	cps := tr.list()
	detached := tr.capture()
	detachedPrint := tr.fingerprint()
	tr.write("f", "changed\n")
	tr.add("f")
	tr.commit("on detached head")
	tr.git("checkout", "-q", "kept")
	keptAt := tr.git("rev-parse", "kept")
	tr.now = tr.now.Add(time.Minute)
	tr.mustRollback(Request{To: cps[0].ID})
	tr.expectState(detached, "detached")
	if got := tr.fingerprint(); got != detachedPrint {
		t.Errorf("detached:\n%s", diffLines(detachedPrint, got))
	}
	if got := tr.git("rev-parse", "kept"); got != keptAt {
		t.Errorf("the branch checked out before the rollback moved: %s, was %s", got, keptAt)
	}
	tr.git("fsck", "--strict", "--no-dangling")
}

func TestRollbackAfterBranchRewrite(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write("f", "1\n")
	tr.add("f")
	tr.commit("c1")
	tr.start("minimal")
	tr.write("f", "2\n")
	tr.add("f")
	tr.commit("c2 soon rewritten away")
	tr.next()
	atPlan := tr.capture()
	tr.git("reset", "-q", "--hard", "HEAD~1")
	tr.git("commit", "-q", "--allow-empty", "-m", "other")
	tr.git("gc", "-q", "--prune=now")
	tr.reopen() // each command is a new process; go-git caches the pack list
	tr.mustRollback(Request{Node: "plan"})
	tr.expectState(atPlan, "after the branch was rewritten and gc ran")
}

func TestRollbackRefusesDuringMerge(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write("f", "1\n")
	tr.add("f")
	tr.commit("c1")
	tr.start("minimal")
	tr.next()
	os.WriteFile(filepath.Join(tr.dir, ".git", "MERGE_HEAD"), []byte(strings.Repeat("0", 40)+"\n"), 0o644)
	if _, err := tr.rollback(Request{}); err == nil || !strings.Contains(err.Error(), "merge") {
		t.Fatalf("err = %v", err)
	}
}

// TestRollbackInLinkedWorktree: index, HEAD and journal live in the
// worktree's own git directory, objects and refs in the common one.
func TestRollbackInLinkedWorktree(t *testing.T) {
	main := newDiskRepo(t)
	main.write("f", "1\n")
	main.add("f")
	main.commit("c1")
	wtDir := filepath.Join(filepath.Dir(main.dir), "linked")
	main.git("worktree", "add", "-q", "-b", "side", wtDir)
	tr := &testRepo{t: t, dir: wtDir, now: t0}
	tr.open(main.home())
	tr.start("minimal")
	tr.write("f", "2\n")
	tr.write("new", "n\n")
	tr.next()
	atPlan := tr.capture()
	tr.write("f", "3\n")
	tr.add("f")
	tr.commit("on side")
	tr.mustRollback(Request{Node: "plan"})
	tr.expectState(atPlan, "linked worktree")
	if got := main.files()["f"]; got != "1\n" {
		t.Errorf("the main worktree changed: f = %q", got)
	}
	if out := main.git("rev-parse", "side"); strings.TrimSpace(out) != strings.TrimSpace(tr.git("rev-parse", "HEAD")) {
		t.Error("branch side is not where the linked worktree's HEAD is")
	}
	tr.git("fsck", "--strict", "--no-dangling")
}

// TestSubmoduleEntriesAreLeftAlone: a gitlink is recorded as the index
// has it and restored in the index only; the submodule's files are never
// touched.
func TestSubmoduleEntriesAreLeftAlone(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write("f", "1\n")
	tr.add("f")
	tr.commit("c1")
	c1 := strings.TrimSpace(tr.git("rev-parse", "HEAD"))
	tr.write("sub/inside", "the submodule's own file\n")
	tr.git("update-index", "--add", "--cacheinfo", "160000,"+c1+",sub")
	tr.commit("add a submodule entry")
	tr.start("minimal")
	tr.next()
	atPlan := tr.capture()
	tr.git("update-index", "--cacheinfo", "160000,"+strings.Repeat("1", 40)+",sub")
	tr.write("sub/inside", "changed inside the submodule\n")
	tr.mustRollback(Request{Node: "plan"})
	if got := tr.indexDump(); !reflect.DeepEqual(got, atPlan.index) {
		t.Errorf("index %v, want %v", got, atPlan.index)
	}
	if got := tr.files()["sub/inside"]; got != "changed inside the submodule\n" {
		t.Errorf("the submodule's file was touched: %q", got)
	}
}

// TestSkipWorktreeFilesStayAbsent: a sparse checkout's files outside the
// cone are not written by a rollback, and keep their flag.
func TestSkipWorktreeFilesStayAbsent(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write("in", "1\n")
	tr.write("out", "1\n")
	tr.add("in", "out")
	tr.commit("c1")
	tr.start("minimal")
	tr.write("out", "2\n")
	tr.add("out")
	tr.commit("c2")
	tr.git("update-index", "--skip-worktree", "out")
	tr.remove("out")
	tr.write("in", "changed\n")
	tr.mustRollback(Request{Node: "spec"})
	if _, ok := tr.files()["out"]; ok {
		t.Error("a skip-worktree file was written")
	}
	if ls := tr.git("ls-files", "-v", "out"); !strings.HasPrefix(ls, "S ") {
		t.Errorf("skip-worktree flag lost: %q", ls)
	}
	if got := tr.files()["in"]; got != "1\n" {
		t.Errorf("in = %q", got)
	}
}

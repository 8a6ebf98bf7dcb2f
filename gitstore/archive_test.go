package gitstore

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

// finishedTask saves task name as completed (a chain of two commits) and
// returns it as loaded.
func finishedTask(t *testing.T, r *Repo, name string) *engine.Task {
	t.Helper()
	s := r.Tasks()
	task := sampleTask(name)
	rev, err := s.SaveTask(task, "start: minimal at spec")
	if err != nil {
		t.Fatal(err)
	}
	task.Rev = rev
	end := fixedNow
	task.State.Status, task.State.CurrentNode, task.State.EndedAt = engine.StatusCompleted, workflow.NodeDone, &end
	if task.Rev, err = s.SaveTask(task, "next: spec -> done"); err != nil {
		t.Fatal(err)
	}
	return task
}

func TestArchiveStoreContract(t *testing.T) {
	for name, newRepo := range storeBackends {
		t.Run(name, func(t *testing.T) {
			r := newRepo(t)
			s := r.Tasks()
			task := finishedTask(t, r, "t1")
			// A checkpoint chain to drop.
			cp, _ := r.writeCommit(plumbing.NewHash(emptyTreeHex(t, r)), nil, "checkpoint")
			if err := r.UpdateRef(CheckpointRefPrefix+"t1", plumbing.ZeroHash, cp); err != nil {
				t.Fatal(err)
			}
			files := []engine.ArchivedFile{{Path: "SPEC.md", Data: []byte("# spec\n")}, {Path: "docs/PLAN.md", Data: []byte("plan\n")}}
			rev, err := s.ArchiveTask(task, files, "archive: completed at done (2 artifacts)", true)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.LoadTask("t1"); !errors.Is(err, engine.ErrNotFound) {
				t.Errorf("task ref after archiving: %v", err)
			}
			if _, err := r.ReadRef(CheckpointRefPrefix + "t1"); !errors.Is(err, ErrNotFound) {
				t.Errorf("checkpoints after archiving: %v", err)
			}
			a, err := s.LoadArchived("t1")
			if err != nil || !a.Archived || a.Rev != rev || a.State.Status != engine.StatusCompleted || string(a.Definition) != string(task.Definition) {
				t.Fatalf("load archived: %+v %v", a, err)
			}
			got, err := s.ArchivedFiles("t1")
			if err != nil || len(got) != 2 || got[0].Path != "SPEC.md" || got[0].Size != 7 || got[1].Path != "docs/PLAN.md" {
				t.Errorf("archived files %+v %v", got, err)
			}
			doc, _ := r.ReadDoc(ArchiveRefPrefix + "t1")
			if string(doc.Files["artifacts/SPEC.md"]) != "# spec\n" {
				t.Errorf("artifact copy %q", doc.Files["artifacts/SPEC.md"])
			}
			// The archive commit continues the task's chain.
			c, _ := r.readDocAt(ArchiveRef("t1"), plumbing.NewHash(rev))
			if co, err := newGraph(r.storage).node(c.Commit); err != nil || len(co.parents) != 1 || co.parents[0].String() != task.Rev {
				t.Errorf("archive parents %v %v", co, err)
			}
			// Archiving what the archive holds writes nothing.
			if rev2, err := s.ArchiveTask(task, nil, "again", true); err != nil || rev2 != rev {
				t.Errorf("archive again: %s %v", rev2, err)
			}
			names, _ := s.ListArchived()
			if strings.Join(names, ",") != "t1" {
				t.Errorf("list archived %v", names)
			}
			// A finished archived task saved again stays in the archive,
			// with its artifacts.
			a.State.Description = "described"
			rev3, err := s.SaveTask(a, "describe: described")
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := s.ArchivedFiles("t1"); len(got) != 2 {
				t.Error("describe lost the artifacts")
			}
			a, _ = s.LoadArchived("t1")
			if a.Rev != rev3 || a.State.Description != "described" {
				t.Errorf("describe in the archive: %+v", a)
			}
			// An open state goes back to the task ref, continuing the chain.
			a.State.Status, a.State.CurrentNode, a.State.EndedAt = engine.StatusActive, "plan", nil
			live, err := s.SaveTask(a, "prev: done -> plan")
			if err != nil {
				t.Fatal(err)
			}
			if ok, _ := newGraph(r.storage).isAncestor(plumbing.NewHash(rev3), plumbing.NewHash(live)); !ok {
				t.Error("the reopened task does not continue the archive")
			}
			if _, err := s.SaveTask(a, "twice"); !errors.Is(err, engine.ErrConflict) {
				t.Errorf("reopening twice: %v", err)
			}
			// Listing: live tasks, then archived ones when asked.
			states, err := s.ListStates(false)
			if err != nil || len(states) != 1 || states[0].Name != "t1" || states[0].Archived || states[0].State.CurrentNode != "plan" {
				t.Errorf("ListStates(false) %+v %v", states, err)
			}
			states, _ = s.ListStates(true)
			if len(states) != 2 || !states[1].Archived || states[1].State.Description != "described" {
				t.Errorf("ListStates(true) %+v", states)
			}
		})
	}
}

func emptyTreeHex(t *testing.T, r *Repo) string {
	h, err := r.writeTreeOf(map[string]leaf{})
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

// TestArchiveAfterACrash: the archive was written but the task ref not
// removed (a crash in between). The next archiving only removes the ref.
func TestArchiveAfterACrash(t *testing.T) {
	for name, newRepo := range storeBackends {
		t.Run(name, func(t *testing.T) {
			r := newRepo(t)
			s := r.Tasks()
			task := finishedTask(t, r, "t")
			rev, err := s.ArchiveTask(task, nil, "archive", false)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.UpdateRef(TaskRefPrefix+"t", plumbing.ZeroHash, plumbing.NewHash(task.Rev)); err != nil {
				t.Fatal(err)
			}
			if rev2, err := s.ArchiveTask(task, nil, "archive", false); err != nil || rev2 != rev {
				t.Fatalf("second archive: %s %v", rev2, err)
			}
			if _, err := s.LoadTask("t"); !errors.Is(err, engine.ErrNotFound) {
				t.Errorf("task ref left: %v", err)
			}
		})
	}
}

func TestDeletedTaskContract(t *testing.T) {
	for name, newRepo := range storeBackends {
		t.Run(name, func(t *testing.T) {
			r := newRepo(t)
			s := r.Tasks()
			task := finishedTask(t, r, "t")
			cp, _ := r.writeCommit(plumbing.NewHash(emptyTreeHex(t, r)), nil, "checkpoint")
			r.UpdateRef(CheckpointRefPrefix+"t", plumbing.ZeroHash, cp)
			arev, err := s.ArchiveTask(task, []engine.ArchivedFile{{Path: "SPEC.md", Data: []byte("s")}}, "archive", false)
			if err != nil {
				t.Fatal(err)
			}
			d, err := s.DeleteTask("t", fixedNow)
			if err != nil || !d.Archived || d.Commit != arev || d.Checkpoints != cp.String() || d.Status != engine.StatusCompleted {
				t.Fatalf("delete: %+v %v", d, err)
			}
			for _, ref := range []string{ArchiveRefPrefix + "t", CheckpointRefPrefix + "t"} {
				if _, err := r.ReadRef(ref); !errors.Is(err, ErrNotFound) {
					t.Errorf("%s after delete: %v", ref, err)
				}
			}
			// The record keeps both reachable.
			dh, _ := r.ReadRef(DeletedRefPrefix + "t")
			for _, h := range []plumbing.Hash{plumbing.NewHash(arev), cp} {
				if ok, _ := newGraph(r.storage).isAncestor(h, dh); !ok {
					t.Errorf("%s not kept by the record", h)
				}
			}
			list, err := s.DeletedTasks()
			if err != nil || len(list) != 1 || list[0].Task != "t" || !list[0].DeletedAt.Equal(fixedNow) {
				t.Errorf("deleted list %+v %v", list, err)
			}
			if _, err := s.RestoreTask("t"); err != nil {
				t.Fatal(err)
			}
			if a, err := s.LoadArchived("t"); err != nil || a.Rev != arev {
				t.Errorf("restored archive: %v", err)
			}
			if h, _ := r.ReadRef(CheckpointRefPrefix + "t"); h != cp {
				t.Error("checkpoints not restored")
			}
			if files, _ := s.ArchivedFiles("t"); len(files) != 1 {
				t.Error("artifacts not restored")
			}
			if _, err := s.RestoreTask("t"); !errors.Is(err, engine.ErrNotFound) {
				t.Errorf("restore twice: %v", err)
			}
			// A live task of the same name blocks a restore.
			s.DeleteTask("t", fixedNow)
			s.SaveTask(sampleTask("t"), "start")
			if _, err := s.RestoreTask("t"); !errors.Is(err, engine.ErrExists) {
				t.Errorf("restore over a live task: %v", err)
			}
			// Expiry drops records older than the cut.
			if n, err := s.ExpireDeleted(fixedNow); err != nil || n != 0 {
				t.Errorf("expire nothing: %d %v", n, err)
			}
			if n, err := s.ExpireDeleted(fixedNow.Add(time.Second)); err != nil || n != 1 {
				t.Errorf("expire: %d %v", n, err)
			}
			if list, _ := s.DeletedTasks(); len(list) != 0 {
				t.Errorf("after expiry %+v", list)
			}
		})
	}
}

// TestArchiveOnDiskIsPlainGit: git reads the archive, its artifacts and
// the deleted-task record, and fsck --strict is clean.
func TestArchiveOnDiskIsPlainGit(t *testing.T) {
	r := newDiskRepo(t)
	s := r.Tasks()
	task := finishedTask(t, r, "t")
	if _, err := s.ArchiveTask(task, []engine.ArchivedFile{{Path: "SPEC.md", Data: []byte("# spec\n")}}, "archive: completed at done (1 artifact)", true); err != nil {
		t.Fatal(err)
	}
	dir := r.WorkTree
	if got := runGit(t, dir, "show", "refs/hegel/archive/t:artifacts/SPEC.md"); got != "# spec\n" {
		t.Errorf("git show artifact = %q", got)
	}
	if got := runGit(t, dir, "log", "--format=%s", "refs/hegel/archive/t"); got != "archive: completed at done (1 artifact)\nnext: spec -> done\nstart: minimal at spec\n" {
		t.Errorf("git log = %q", got)
	}
	runGit(t, dir, "fsck", "--strict", "--no-dangling")
	s.DeleteTask("t", fixedNow)
	runGit(t, dir, "fsck", "--strict", "--no-dangling")
	runGit(t, dir, "gc", "-q", "--prune=now")
	if _, err := s.RestoreTask("t"); err != nil {
		t.Fatalf("restore after gc: %v", err)
	}
	if got := runGit(t, dir, "show", "refs/hegel/archive/t:artifacts/SPEC.md"); got != "# spec\n" {
		t.Errorf("after gc and restore = %q", got)
	}
}

// TestTaskListCacheNeverServesStaleState: a listing after a task moved,
// was archived or deleted shows it as it is now, whatever the list cache
// holds.
func TestTaskListCacheNeverServesStaleState(t *testing.T) {
	for name, newRepo := range storeBackends {
		t.Run(name, func(t *testing.T) {
			r := newRepo(t)
			s := r.Tasks()
			task := sampleTask("a")
			rev, _ := s.SaveTask(task, "start")
			list := func(archived bool) string {
				states, err := s.ListStates(archived)
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, l := range states {
					out = append(out, l.Name+":"+l.State.CurrentNode)
				}
				return strings.Join(out, ",")
			}
			if got := list(true); got != "a:spec" {
				t.Fatalf("first listing %q", got)
			}
			task.Rev, task.State.CurrentNode = rev, "plan"
			s.SaveTask(task, "next")
			if got := list(true); got != "a:plan" {
				t.Errorf("after next %q", got)
			}
			done := finishedTask(t, r, "b")
			s.ArchiveTask(done, nil, "archive", false)
			if got := list(true); got != "a:plan,b:done" {
				t.Errorf("after archiving %q", got)
			}
			if got := list(false); got != "a:plan" {
				t.Errorf("live only %q", got)
			}
			s.DeleteTask("b", fixedNow)
			if got := list(true); got != "a:plan" {
				t.Errorf("after delete %q", got)
			}
			// A damaged cache file is a miss.
			f, _ := r.common.Create(taskListFile)
			f.Write([]byte("{not json"))
			f.Close()
			if got := list(true); got != "a:plan" {
				t.Errorf("damaged cache %q", got)
			}
		})
	}
}

package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/engine"
)

// Archive is a task store with its archive, as the engine uses them.
type Archive interface {
	engine.TaskStore
	engine.ArchiveStore
}

// archived saves a new task name, finishes it and archives it with
// files, returning the task as it was archived and the archive revision.
func archived(t *testing.T, s Archive, name string, files ...engine.ArchivedFile) (*engine.Task, string) {
	t.Helper()
	if _, err := s.SaveTask(task(name), "start"); err != nil {
		t.Fatal(err)
	}
	live, err := s.LoadTask(name)
	if err != nil {
		t.Fatal(err)
	}
	finish(live)
	rev, err := s.SaveTask(live, "next: spec -> done")
	if err != nil {
		t.Fatal(err)
	}
	live.Rev = rev
	arev, err := s.ArchiveTask(live, files, "archive: "+name, true)
	if err != nil {
		t.Fatal(err)
	}
	return live, arev
}

// RunArchiveStore checks the engine.ArchiveStore contract next to the
// task store it archives from: a finished task moves to the archive with
// copies of its artifacts (listed in path order, read within a limit);
// archiving again changes nothing; an archived task saved finished stays
// in the archive, saved open goes live again; states are listed live
// first, each part sorted; a deleted task leaves a record it can be
// restored from, unless its name is taken again, and records expire.
func RunArchiveStore(t *testing.T, newStore func(t *testing.T) Archive) {
	t.Run("archive", func(t *testing.T) {
		s := newStore(t)
		files := []engine.ArchivedFile{
			{Path: "spec.md", Data: []byte("# Spec\n")},
			{Path: "docs/plan.md", Data: []byte("the plan\n")},
			{Path: "a.txt", Data: []byte("a")},
		}
		live, arev := archived(t, s, "t1", files...)
		if arev == "" {
			t.Fatal("no archive revision")
		}
		if _, err := s.LoadTask("t1"); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("the live task after archiving: %v, want ErrNotFound", err)
		}
		if names, _ := s.ListTasks(); len(names) != 0 {
			t.Errorf("live tasks after archiving: %v", names)
		}
		got, err := s.LoadArchived("t1")
		if err != nil {
			t.Fatal(err)
		}
		if !got.Archived || got.Rev != arev || got.State.Status != engine.StatusCompleted ||
			got.State.CurrentNode != "done" || string(got.Definition) != string(definition) {
			t.Errorf("archived task = %+v (rev %s, want %s)", got, got.Rev, arev)
		}
		if names, err := s.ListArchived(); err != nil || strings.Join(names, ",") != "t1" {
			t.Errorf("archived names = %v, %v", names, err)
		}
		if rev, err := s.ArchiveTask(live, files, "archive again", true); err != nil || rev != arev {
			t.Errorf("archiving the same task again: rev %q, %v; want %q", rev, err, arev)
		}
		list, err := s.ArchivedFiles("t1")
		if err != nil {
			t.Fatal(err)
		}
		var listed []string
		for _, f := range list {
			listed = append(listed, fmt.Sprintf("%s:%d", f.Path, f.Size))
			if f.Data != nil {
				t.Errorf("ArchivedFiles gave the content of %s", f.Path)
			}
		}
		if strings.Join(listed, " ") != "a.txt:1 docs/plan.md:9 spec.md:7" {
			t.Errorf("archived files = %v, want them in path order with sizes", listed)
		}
		if b, err := s.ReadArchivedFile("t1", "docs/plan.md", 100); err != nil || string(b) != "the plan\n" {
			t.Errorf("read docs/plan.md: %q, %v", b, err)
		}
		if b, err := s.ReadArchivedFile("t1", "spec.md", 0); err != nil || string(b) != "# Spec\n" {
			t.Errorf("read with no limit: %q, %v", b, err)
		}
		if _, err := s.ReadArchivedFile("t1", "spec.md", 3); err == nil || errors.Is(err, engine.ErrNotFound) {
			t.Errorf("read over the limit: %v, want an error other than ErrNotFound", err)
		}
		for _, p := range []string{"missing.md", "docs", "docs/missing.md"} {
			if _, err := s.ReadArchivedFile("t1", p, 100); !errors.Is(err, engine.ErrNotFound) {
				t.Errorf("read %s: %v, want ErrNotFound", p, err)
			}
		}
	})
	t.Run("missing", func(t *testing.T) {
		s := newStore(t)
		if _, err := s.LoadArchived("t1"); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("load a task never archived: %v", err)
		}
		if _, err := s.ArchivedFiles("t1"); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("files of a task never archived: %v", err)
		}
		if _, err := s.ReadArchivedFile("t1", "spec.md", 100); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("read from a task never archived: %v", err)
		}
		if _, err := s.DeleteTask("t1", at); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("delete a task that does not exist: %v", err)
		}
		if _, err := s.RestoreTask("t1"); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("restore a task never deleted: %v", err)
		}
		if names, err := s.ListArchived(); err != nil || len(names) != 0 {
			t.Errorf("archived names of an empty store: %v %v", names, err)
		}
		if recs, err := s.DeletedTasks(); err != nil || len(recs) != 0 {
			t.Errorf("records of an empty store: %v %v", recs, err)
		}
	})
	t.Run("save archived", func(t *testing.T) {
		s := newStore(t)
		_, arev := archived(t, s, "t1", engine.ArchivedFile{Path: "spec.md", Data: []byte("kept")})
		got, _ := s.LoadArchived("t1")
		got.State.Description = "shipped"
		rev, err := s.SaveTask(got, "note on the finished task")
		if err != nil || rev == arev {
			t.Fatalf("save a finished archived task: rev %q, %v (was %q)", rev, err, arev)
		}
		if again, err := s.LoadArchived("t1"); err != nil || again.Rev != rev || again.State.Description != "shipped" {
			t.Errorf("archive after the save: %+v %v", again, err)
		}
		if _, err := s.LoadTask("t1"); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("a finished save made the task live: %v", err)
		}
		if b, err := s.ReadArchivedFile("t1", "spec.md", 100); err != nil || string(b) != "kept" {
			t.Errorf("artifact copy after the save: %q %v", b, err)
		}
		stale, _ := s.LoadArchived("t1")
		stale.Rev = arev
		stale.State.Description = "stale"
		if _, err := s.SaveTask(stale, "stale"); !errors.Is(err, engine.ErrConflict) {
			t.Errorf("a stale save to the archive: %v, want ErrConflict", err)
		}
		reopened, _ := s.LoadArchived("t1")
		reopened.State.Status, reopened.State.EndedAt, reopened.State.CurrentNode = engine.StatusActive, nil, "spec"
		if _, err := s.SaveTask(reopened, "prev: done -> spec"); err != nil {
			t.Fatalf("reopen an archived task: %v", err)
		}
		live, err := s.LoadTask("t1")
		if err != nil || live.Archived || live.State.CurrentNode != "spec" {
			t.Fatalf("the reopened task: %+v %v", live, err)
		}
		if kept, err := s.LoadArchived("t1"); err != nil || kept.State.Status != engine.StatusCompleted {
			t.Errorf("the archive after reopening: %+v %v", kept, err)
		}
		if _, err := s.SaveTask(reopened, "reopen twice"); !errors.Is(err, engine.ErrConflict) {
			t.Errorf("reopening over a live task: %v, want ErrConflict", err)
		}
	})
	t.Run("list states", func(t *testing.T) {
		s := newStore(t)
		archived(t, s, "b-done")
		archived(t, s, "a-done")
		for _, name := range []string{"z-live", "c-live"} {
			if _, err := s.SaveTask(task(name), "start"); err != nil {
				t.Fatal(err)
			}
		}
		var got []string
		list, err := s.ListStates(false)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range list {
			got = append(got, fmt.Sprintf("%s/%v/%s", l.Name, l.Archived, status(l)))
		}
		if want := "c-live/false/active z-live/false/active"; strings.Join(got, " ") != want {
			t.Errorf("live states = %v, want %s", got, want)
		}
		got = nil
		list, err = s.ListStates(true)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range list {
			got = append(got, fmt.Sprintf("%s/%v/%s", l.Name, l.Archived, status(l)))
		}
		if want := "c-live/false/active z-live/false/active a-done/true/completed b-done/true/completed"; strings.Join(got, " ") != want {
			t.Errorf("all states = %v, want %s", got, want)
		}
	})
	t.Run("delete and restore", func(t *testing.T) {
		s := newStore(t)
		_, arev := archived(t, s, "done1", engine.ArchivedFile{Path: "spec.md", Data: []byte("s")})
		liveRev, err := s.SaveTask(task("open1"), "start")
		if err != nil {
			t.Fatal(err)
		}
		d1, err := s.DeleteTask("done1", at)
		if err != nil {
			t.Fatal(err)
		}
		if d1.Task != "done1" || !d1.Archived || d1.Workflow != "contract" || d1.Status != engine.StatusCompleted ||
			d1.Commit != arev || !d1.DeletedAt.Equal(at) {
			t.Errorf("record of the archived task = %+v (commit want %s)", d1, arev)
		}
		d2, err := s.DeleteTask("open1", at.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if d2.Archived || d2.Commit != liveRev || d2.Status != engine.StatusActive {
			t.Errorf("record of the live task = %+v (commit want %s)", d2, liveRev)
		}
		if _, err := s.LoadArchived("done1"); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("the deleted archived task: %v", err)
		}
		if _, err := s.LoadTask("open1"); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("the deleted live task: %v", err)
		}
		recs, err := s.DeletedTasks()
		if err != nil || len(recs) != 2 || recs[0].Task != "open1" || recs[1].Task != "done1" {
			t.Fatalf("records = %+v %v, want open1 then done1 (newest first)", recs, err)
		}
		if _, err := s.SaveTask(task("open1"), "the name again"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RestoreTask("open1"); !errors.Is(err, engine.ErrExists) {
			t.Errorf("restore over a task of the same name: %v, want ErrExists", err)
		}
		r, err := s.RestoreTask("done1")
		if err != nil || r.Task != "done1" {
			t.Fatalf("restore: %+v %v", r, err)
		}
		back, err := s.LoadArchived("done1")
		if err != nil || back.Rev != arev || back.State.Status != engine.StatusCompleted {
			t.Errorf("the restored task: %+v %v", back, err)
		}
		if b, err := s.ReadArchivedFile("done1", "spec.md", 10); err != nil || string(b) != "s" {
			t.Errorf("the restored task's artifacts: %q %v", b, err)
		}
		if recs, _ := s.DeletedTasks(); len(recs) != 1 || recs[0].Task != "open1" {
			t.Errorf("records after the restore: %+v", recs)
		}
		if _, err := s.RestoreTask("done1"); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("restore twice: %v, want ErrNotFound", err)
		}
	})
	t.Run("expire", func(t *testing.T) {
		s := newStore(t)
		for i, name := range []string{"old1", "old2", "new1"} {
			archived(t, s, name)
			if _, err := s.DeleteTask(name, at.Add(time.Duration(i)*time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
		n, err := s.ExpireDeleted(at.Add(90 * time.Minute))
		if err != nil || n != 2 {
			t.Errorf("expired %d, %v; want 2", n, err)
		}
		recs, _ := s.DeletedTasks()
		if len(recs) != 1 || recs[0].Task != "new1" {
			t.Errorf("records left: %+v", recs)
		}
		if _, err := s.RestoreTask("old1"); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("restore an expired record: %v, want ErrNotFound", err)
		}
	})
}

func status(l engine.ListedTask) string {
	if l.Err != nil {
		return "error: " + l.Err.Error()
	}
	if l.State == nil {
		return "no state"
	}
	return l.State.Status
}

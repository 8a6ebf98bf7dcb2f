package storetest

import (
	"errors"
	"testing"

	"github.com/git-hegel/git-hegel/engine"
)

// TaskFiles is a task store that keeps entries beside a task's state
// (Task.Put) and reads them back, with its archive.
type TaskFiles interface {
	Archive
	engine.TaskFileReader
}

// RunTaskFiles checks what a store does with the entries a save puts in
// a task's tree (results/<node>, inputs/<name>): they read back with
// ReadTaskFile, a later save keeps them, another Put replaces them, they
// move to the archive with the task and away with a delete (and back
// with a restore); a new task of an archived task's name starts without
// them; a path outside results/ and inputs/ is refused and nothing saved.
func RunTaskFiles(t *testing.T, newStore func(t *testing.T) TaskFiles) {
	read := func(t *testing.T, s TaskFiles, task, path, want string) {
		t.Helper()
		b, err := s.ReadTaskFile(task, path)
		if want == "" {
			if !errors.Is(err, engine.ErrNotFound) {
				t.Errorf("%s:%s = %q, %v; want ErrNotFound", task, path, b, err)
			}
			return
		}
		if err != nil || string(b) != want {
			t.Errorf("%s:%s = %q, %v; want %q", task, path, b, err, want)
		}
	}
	t.Run("put and read", func(t *testing.T) {
		s := newStore(t)
		read(t, s, "t1", engine.ResultPath("spec"), "")
		first := task("t1")
		first.Put = map[string][]byte{engine.ResultPath("spec"): []byte("spec output"), "inputs/topic": []byte("auth")}
		if _, err := s.SaveTask(first, "run: spec"); err != nil {
			t.Fatal(err)
		}
		read(t, s, "t1", engine.ResultPath("spec"), "spec output")
		read(t, s, "t1", "inputs/topic", "auth")
		read(t, s, "t1", engine.ResultPath("plan"), "")
		cur, _ := s.LoadTask("t1")
		if cur.Put != nil {
			t.Errorf("a loaded task has Put %v", cur.Put)
		}
		cur.State.CurrentNode = "plan"
		if _, err := s.SaveTask(cur, "next: spec -> plan"); err != nil {
			t.Fatal(err)
		}
		read(t, s, "t1", engine.ResultPath("spec"), "spec output")
		cur, _ = s.LoadTask("t1")
		cur.State.Attempt = 2
		cur.Put = map[string][]byte{engine.ResultPath("spec"): []byte("second output")}
		if _, err := s.SaveTask(cur, "run: spec again"); err != nil {
			t.Fatal(err)
		}
		read(t, s, "t1", engine.ResultPath("spec"), "second output")
		read(t, s, "t1", "inputs/topic", "auth")
	})
	t.Run("submitted artifacts", func(t *testing.T) {
		// A node's folder under submitted/ holds what it submitted last,
		// nothing older; other nodes' folders stay.
		s := newStore(t)
		first := task("t1")
		first.Put = map[string][]byte{engine.SubmittedPath("spec", "SPEC.md"): []byte("v1"), engine.SubmittedPath("spec", "a.txt"): []byte("a")}
		if _, err := s.SaveTask(first, "next: spec ends"); err != nil {
			t.Fatal(err)
		}
		read(t, s, "t1", "submitted/spec/SPEC.md", "v1")
		read(t, s, "t1", "submitted/spec/a.txt", "a")
		cur, _ := s.LoadTask("t1")
		cur.State.CurrentNode = "plan"
		cur.Put = map[string][]byte{engine.SubmittedPath("plan", "PLAN.md"): []byte("p")}
		if _, err := s.SaveTask(cur, "next: plan ends"); err != nil {
			t.Fatal(err)
		}
		cur, _ = s.LoadTask("t1")
		cur.State.Attempt = 2
		cur.Put = map[string][]byte{engine.SubmittedPath("spec", "SPEC.md"): []byte("v2")}
		if _, err := s.SaveTask(cur, "next: spec ends again"); err != nil {
			t.Fatal(err)
		}
		read(t, s, "t1", "submitted/spec/SPEC.md", "v2")
		read(t, s, "t1", "submitted/spec/a.txt", "")
		read(t, s, "t1", "submitted/plan/PLAN.md", "p")
		read(t, s, "t1", "submitted/spec", "")
		for _, bad := range []string{"submitted/SPEC.md", "submitted/a/b/c", "submitted//x", "results/a/b"} {
			cur, _ = s.LoadTask("t1")
			cur.State.Attempt = 3
			cur.Put = map[string][]byte{bad: []byte("x")}
			if _, err := s.SaveTask(cur, "bad put"); err == nil {
				t.Errorf("Put %q was saved", bad)
			}
		}
	})
	t.Run("refused path", func(t *testing.T) {
		s := newStore(t)
		if _, err := s.SaveTask(task("t1"), "start"); err != nil {
			t.Fatal(err)
		}
		cur, _ := s.LoadTask("t1")
		cur.State.CurrentNode = "plan"
		cur.Put = map[string][]byte{"state.json": []byte("{}")}
		if _, err := s.SaveTask(cur, "bad put"); err == nil {
			t.Error("a Put outside results/ and inputs/ was saved")
		}
		if got, _ := s.LoadTask("t1"); got.Rev == "" || got.State.CurrentNode != "spec" {
			t.Errorf("the refused save changed the task: %+v", got.State)
		}
	})
	t.Run("archive, delete, restore", func(t *testing.T) {
		s := newStore(t)
		first := task("t1")
		first.Put = map[string][]byte{engine.ResultPath("spec"): []byte("first run")}
		if _, err := s.SaveTask(first, "start"); err != nil {
			t.Fatal(err)
		}
		live, _ := s.LoadTask("t1")
		finish(live)
		rev, err := s.SaveTask(live, "next: spec -> done")
		if err != nil {
			t.Fatal(err)
		}
		live.Rev = rev
		if _, err := s.ArchiveTask(live, nil, "archive", true); err != nil {
			t.Fatal(err)
		}
		read(t, s, "t1", engine.ResultPath("spec"), "first run")
		if _, err := s.DeleteTask("t1", at); err != nil {
			t.Fatal(err)
		}
		read(t, s, "t1", engine.ResultPath("spec"), "")
		if _, err := s.RestoreTask("t1"); err != nil {
			t.Fatal(err)
		}
		read(t, s, "t1", engine.ResultPath("spec"), "first run")
		if _, err := s.SaveTask(task("t1"), "start the name again"); err != nil {
			t.Fatal(err)
		}
		read(t, s, "t1", engine.ResultPath("spec"), "")
	})
}

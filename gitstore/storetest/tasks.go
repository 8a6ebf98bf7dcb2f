package storetest

import (
	"errors"
	"strings"
	"testing"

	"github.com/git-hegel/git-hegel/engine"
)

// RunTaskStore checks the engine.TaskStore contract: a task reads back as
// it was saved; saving is compare-and-swap on the revision (a new task
// must not exist, a stale revision conflicts and changes nothing); a
// save that changes nothing keeps the revision; names are listed sorted;
// what a caller holds is its own copy.
func RunTaskStore(t *testing.T, newStore func(t *testing.T) engine.TaskStore) {
	t.Run("missing", func(t *testing.T) {
		s := newStore(t)
		if _, err := s.LoadTask("t1"); !errors.Is(err, engine.ErrNotFound) {
			t.Fatalf("load of a task never saved: %v, want ErrNotFound", err)
		}
		if names, err := s.ListTasks(); err != nil || len(names) != 0 {
			t.Fatalf("list of an empty store: %v %v", names, err)
		}
	})
	t.Run("round trip", func(t *testing.T) {
		s := newStore(t)
		rev, err := s.SaveTask(task("t1"), "start: contract at spec")
		if err != nil || rev == "" {
			t.Fatalf("save a new task: rev %q, %v", rev, err)
		}
		got, err := s.LoadTask("t1")
		if err != nil {
			t.Fatal(err)
		}
		if got.Rev != rev {
			t.Errorf("loaded revision %q, saved %q", got.Rev, rev)
		}
		if got.Archived {
			t.Error("a live task loads as archived")
		}
		if string(got.Definition) != string(definition) {
			t.Errorf("definition = %q", got.Definition)
		}
		st := got.State
		if st.Task != "t1" || st.CurrentNode != "spec" || st.Status != engine.StatusActive ||
			strings.Join(st.History, ",") != "spec" || st.Attempt != 1 || st.Worktree != "/w" {
			t.Errorf("state = %+v", st)
		}
		if !st.StartedAt.Equal(at) || !st.PhaseStartTime.Equal(at) || !st.UpdatedAt.Equal(at) {
			t.Errorf("times: started %v, phase %v, updated %v; want %v", st.StartedAt, st.PhaseStartTime, st.UpdatedAt, at)
		}
	})
	t.Run("compare and swap", func(t *testing.T) {
		s := newStore(t)
		rev1, err := s.SaveTask(task("t1"), "start")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SaveTask(task("t1"), "start again"); !errors.Is(err, engine.ErrConflict) {
			t.Errorf("a new task over an existing one: %v, want ErrConflict", err)
		}
		cur, _ := s.LoadTask("t1")
		if rev, err := s.SaveTask(cur, "nothing changed"); err != nil || rev != rev1 {
			t.Errorf("a save that changes nothing: rev %q, %v; want %q", rev, err, rev1)
		}
		cur.State.CurrentNode = "plan"
		rev2, err := s.SaveTask(cur, "next: spec -> plan")
		if err != nil || rev2 == rev1 || rev2 == "" {
			t.Fatalf("update: rev %q, %v (was %q)", rev2, err, rev1)
		}
		stale := task("t1")
		stale.Rev, stale.State.CurrentNode = rev1, "done"
		if _, err := s.SaveTask(stale, "stale"); !errors.Is(err, engine.ErrConflict) {
			t.Errorf("a save from a stale revision: %v, want ErrConflict", err)
		}
		if got, err := s.LoadTask("t1"); err != nil || got.Rev != rev2 || got.State.CurrentNode != "plan" {
			t.Errorf("after the stale save: %+v %v", got, err)
		}
	})
	t.Run("list", func(t *testing.T) {
		s := newStore(t)
		for _, name := range []string{"t2", "a0", "t10"} {
			if _, err := s.SaveTask(task(name), "start"); err != nil {
				t.Fatal(err)
			}
		}
		names, err := s.ListTasks()
		if err != nil || strings.Join(names, ",") != "a0,t10,t2" {
			t.Errorf("list = %v, %v; want a0,t10,t2", names, err)
		}
	})
	t.Run("copies", func(t *testing.T) {
		s := newStore(t)
		saved := task("t1")
		if _, err := s.SaveTask(saved, "start"); err != nil {
			t.Fatal(err)
		}
		saved.State.CurrentNode, saved.State.History[0] = "changed after saving", "x"
		got, _ := s.LoadTask("t1")
		if got.State.CurrentNode != "spec" || got.State.History[0] != "spec" {
			t.Errorf("changing a saved task changed the store: %+v", got.State)
		}
		got.State.CurrentNode, got.State.History[0] = "changed after loading", "y"
		again, _ := s.LoadTask("t1")
		if again.State.CurrentNode != "spec" || again.State.History[0] != "spec" {
			t.Errorf("changing a loaded task changed the store: %+v", again.State)
		}
	})
}

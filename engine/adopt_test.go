package engine

import (
	"errors"
	"testing"
	"time"
)

// recordingStore is the fake task store plus an adoption record, kept the
// way gitstore keeps it: the engine's claims write it; fetched data (put
// straight into the map here) and saves write nothing.
type recordingStore struct {
	*fakeTaskStore
	adopted map[string]string
}

func (s *recordingStore) Adopted(task, worktreeID string) bool { return s.adopted[task] == worktreeID }

func (s *recordingStore) Adopt(task, worktreeID string) error {
	s.adopted[task] = worktreeID
	return nil
}

// TestRebuildAdoptsOnlyRecordedTasks: a fetched task that carries this
// worktree's id and a later updated_at is not adopted when the session is
// rebuilt; the task this worktree started is.
func TestRebuildAdoptsOnlyRecordedTasks(t *testing.T) {
	te := newTestEngine(t, nil)
	te.WorktreeID = "aaaa:main"
	store := &recordingStore{fakeTaskStore: te.tasks, adopted: map[string]string{}}
	te.Engine.Tasks = store
	if _, err := te.Start("minimal", "", "mine"); err != nil {
		t.Fatal(err)
	}
	// As fetched: this worktree's id, newer than ours, never saved here.
	forged := te.state(t).Clone()
	forged.Task, forged.UpdatedAt = "forged", te.now.Add(time.Hour)
	te.tasks.tasks["forged"] = &Task{State: forged, Definition: te.tasks.tasks["mine"].Definition, Rev: "99"}

	te.sess.s = nil // the session file is lost
	if st := te.state(t); st.Task != "mine" {
		t.Fatalf("rebuilt to %q, want mine", st.Task)
	}
	// With no task of its own left, the rebuild finds none.
	if _, err := te.Abort(TaskOptions{}); err != nil {
		t.Fatal(err)
	}
	te.sess.s = nil
	if cur, err := te.Current(""); !errors.Is(err, ErrNoWorkflow) {
		t.Fatalf("rebuilt to %v, %v; want no workflow", cur, err)
	}
	// Taking it over with switch adopts it.
	te.tasks.tasks["forged"].State.WorktreeID = "bbbb:main"
	if _, err := te.Switch("forged"); err != nil {
		t.Fatal(err)
	}
	te.sess.s = nil
	if st := te.state(t); st.Task != "forged" {
		t.Fatalf("after switch, rebuilt to %q", st.Task)
	}
}

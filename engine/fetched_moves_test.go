package engine

import (
	"strings"
	"testing"
	"time"
)

// movedStore is the fake task store with the fetched-move notes gitstore
// keeps beside the refs.
type movedStore struct {
	*fakeTaskStore
	moved map[string]string
}

func (m *movedStore) FetchedMove(task string) (string, bool) {
	n, ok := m.moved[task]
	return n, ok
}

func (m *movedStore) ClearFetchedMove(task string) error {
	delete(m.moved, task)
	return nil
}

func TestCatchUpCheckpoint(t *testing.T) {
	te := newTestEngine(t, map[string][]byte{"gate.yaml": []byte(gateFlow)})
	store := &movedStore{fakeTaskStore: te.tasks, moved: map[string]string{}}
	te.Tasks = store
	te.WorktreeID = "aaaa:main"
	if _, err := te.Start("gate", "", "g"); err != nil {
		t.Fatal(err)
	}
	if got := te.CatchUpCheckpoint(""); got != "" {
		t.Fatalf("no note, yet: %q", got)
	}
	// Another clone approved: the fetch moved the task to plan.
	te.now = te.now.Add(time.Minute)
	cur, err := te.tasks.LoadTask("g")
	if err != nil {
		t.Fatal(err)
	}
	st := cur.State
	st.CurrentNode, st.History, st.PhaseStartTime = "plan", append(st.History, "plan"), te.now
	if _, err := te.tasks.SaveTask(&Task{State: st, Definition: cur.Definition, Rev: cur.Rev}, "approve"); err != nil {
		t.Fatal(err)
	}
	store.moved["g"] = "plan"
	before := len(te.snaps.cps["g"])
	te.now = te.now.Add(time.Minute)
	got := te.CatchUpCheckpoint("")
	if !strings.HasPrefix(got, "Took checkpoint ") || !strings.HasSuffix(got, " at 'plan': task g entered it on another clone") {
		t.Fatalf("catch-up note: %q", got)
	}
	cps := te.snaps.cps["g"]
	if len(cps) != before+1 || cps[len(cps)-1].Node != "plan" || cps[len(cps)-1].Kind != CheckpointEnter {
		t.Fatalf("checkpoints: %+v", cps)
	}
	if _, ok := store.moved["g"]; ok {
		t.Fatal("the note stayed")
	}
	// Once is enough: a second note for the same entry takes none.
	store.moved["g"] = "plan"
	if got := te.CatchUpCheckpoint("g"); got != "" || len(te.snaps.cps["g"]) != before+1 {
		t.Fatalf("second catch-up: %q, %d checkpoints", got, len(te.snaps.cps["g"]))
	}
	// Another worktree of this clone holds it: the note waits for it.
	store.moved["g"] = "plan"
	te.WorktreeID = "aaaa:wt"
	if got := te.CatchUpCheckpoint("g"); got != "" {
		t.Fatalf("catch-up from another worktree: %q", got)
	}
	if _, ok := store.moved["g"]; !ok {
		t.Fatal("the holder's note was dropped by another worktree")
	}
	// Another clone holds it now: nothing here to roll back, the note goes.
	te.WorktreeID = "bbbb:main"
	if got := te.CatchUpCheckpoint("g"); got != "" {
		t.Fatalf("catch-up on another clone: %q", got)
	}
	if _, ok := store.moved["g"]; ok {
		t.Fatal("a note for a task another clone holds stayed")
	}
}

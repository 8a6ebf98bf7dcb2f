package gitstore

import (
	"testing"

	"github.com/git-hegel/git-hegel/engine"
)

// A fetch that moves a task a worktree of this clone holds (by the
// adoption record) leaves a note for that worktree's next command; a task
// the record does not give to it, or a fetch that leaves the node where
// it was, leaves none.
func TestSyncNotesAFetchedMove(t *testing.T) {
	w := newSyncWorld(t)
	self, err := w.b.WorktreeID()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"held", "claimed-in-state-only"} {
		saveTask(t, w.b, name, "spec", "start: minimal at spec")
		live, _ := w.b.Tasks().LoadTask(name)
		live.State.Worktree, live.State.WorktreeID = "/b", self
		if _, err := w.b.Tasks().SaveTask(live, "claim"); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.b.recordAdopted("held", self); err != nil {
		t.Fatal(err)
	}
	w.sync(w.b)
	w.sync(w.a)
	move := func(name, node string) {
		live, err := w.a.Tasks().LoadTask(name)
		if err != nil {
			t.Fatal(err)
		}
		live.State.CurrentNode, live.State.History = node, append(live.State.History, node)
		live.State.PhaseStartTime, live.State.UpdatedAt = w.clock, w.clock
		if _, err := w.a.Tasks().SaveTask(live, "approve: "+node); err != nil {
			t.Fatal(err)
		}
	}
	describe := func(name string) {
		live, _ := w.a.Tasks().LoadTask(name)
		live.State.Description, live.State.UpdatedAt = "edited at a", w.clock
		if _, err := w.a.Tasks().SaveTask(live, "describe"); err != nil {
			t.Fatal(err)
		}
	}
	describe("held")
	w.sync(w.a)
	w.sync(w.b)
	var moves engine.FetchedMoves = w.b.Tasks()
	if node, ok := moves.FetchedMove("held"); ok {
		t.Fatalf("a description edit left a note: %q", node)
	}
	move("held", "plan")
	move("claimed-in-state-only", "plan")
	w.sync(w.a)
	w.sync(w.b)
	if node, ok := moves.FetchedMove("held"); !ok || node != "plan" {
		t.Fatalf("fetched move of a held task: %q %v", node, ok)
	}
	if node, ok := moves.FetchedMove("claimed-in-state-only"); ok {
		t.Fatalf("a task only its state gives to this worktree left a note: %q", node)
	}
	if err := moves.ClearFetchedMove("held"); err != nil {
		t.Fatal(err)
	}
	if _, ok := moves.FetchedMove("held"); ok {
		t.Fatal("the note stayed after it was cleared")
	}
	if err := moves.ClearFetchedMove("held"); err != nil {
		t.Fatalf("clearing a note that is gone: %v", err)
	}
}

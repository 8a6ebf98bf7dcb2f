package engine

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// newStashTestEngine is the test engine (with an archive) plus a stash
// list.
func newStashTestEngine(t *testing.T) (*testEnv, *stashMemStore) {
	te := newTestEngine(t, nil)
	st := newStashMemStore(func() time.Time { return te.now })
	te.Stashes = st
	return te, st
}

// stashTask starts task name and stashes it.
func stashTask(t *testing.T, te *testEnv, name string) *StashEntry {
	t.Helper()
	if _, err := te.Start("discovery", "", name); err != nil {
		t.Fatal(err)
	}
	te.tasks.cps[name] = "cp-" + name
	ent, err := te.StashPush("")
	if err != nil {
		t.Fatal(err)
	}
	te.now = te.now.Add(time.Second)
	return ent
}

func TestStashDropEndsTask(t *testing.T) {
	te, _ := newStashTestEngine(t)
	ent := stashTask(t, te, "t1")
	if ends, err := te.StashDropEnds(ent); err != nil || ends != "t1" {
		t.Fatalf("StashDropEnds = %q, %v", ends, err)
	}
	ended, err := te.StashDrop(ent)
	if err != nil {
		t.Fatal(err)
	}
	if len(ended) != 1 || ended[0].Task != "t1" || ended[0].Node != "spec" || ended[0].Stash != ent.ID {
		t.Fatalf("ended = %+v", ended)
	}
	if _, err := te.Tasks.LoadTask("t1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("task ref still there: %v", err)
	}
	a, err := te.tasks.LoadArchived("t1")
	if err != nil {
		t.Fatal(err)
	}
	if a.State.Status != StatusAborted || a.State.EndedBy != "stash drop "+ent.ID || a.State.EndedAt == nil {
		t.Fatalf("archived as %s, ended by %q", a.State.Status, a.State.EndedBy)
	}
	if _, ok := te.tasks.cps["t1"]; !ok {
		t.Fatal("the checkpoints were dropped: stash restore could not bring them back")
	}
	if last := te.tasks.log[len(te.tasks.log)-1]; last != "abort: at spec (stash dropped: "+ent.ID+")" {
		t.Fatalf("task history says %q", last)
	}
	// The name is free again.
	if _, err := te.Start("discovery", "", "t1"); err != nil {
		t.Fatalf("start --task t1 after the drop: %v", err)
	}
}

func TestStashDropKeepsTaskHeldElsewhere(t *testing.T) {
	te, _ := newStashTestEngine(t)
	first := stashTask(t, te, "t1")
	// apply keeps the entry; the task is active again.
	if _, _, err := te.StashPop("", true, false); err != nil {
		t.Fatal(err)
	}
	if ends, _ := te.StashDropEnds(first); ends != "" {
		t.Fatalf("dropping an applied stash would end %q", ends)
	}
	ended, err := te.StashDrop(first)
	if err != nil || len(ended) != 0 {
		t.Fatalf("drop of an applied stash ended %+v (%v)", ended, err)
	}
	if te.state(t).Status != StatusActive {
		t.Fatal("the active task changed")
	}
	// Stashed twice (push, apply, push): dropping one entry leaves it to
	// the other.
	a, err := te.StashPush("a")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := te.StashPop(a.ID, true, false); err != nil {
		t.Fatal(err)
	}
	b, err := te.StashPush("b")
	if err != nil {
		t.Fatal(err)
	}
	a, _ = te.StashFind(a.ID, "drop")
	if ended, err := te.StashDrop(a); err != nil || len(ended) != 0 {
		t.Fatalf("drop with another entry holding the task ended %+v (%v)", ended, err)
	}
	if got, _ := te.Tasks.LoadTask("t1"); got.State.Status != StatusStashed {
		t.Fatalf("task is %s", got.State.Status)
	}
	b, _ = te.StashFind(b.ID, "drop")
	if ended, err := te.StashDrop(b); err != nil || len(ended) != 1 {
		t.Fatalf("drop of the last entry ended %+v (%v)", ended, err)
	}
}

func TestStashClearEndsTasks(t *testing.T) {
	te, _ := newStashTestEngine(t)
	stashTask(t, te, "t1")
	stashTask(t, te, "t2")
	var asked []string
	listed, removed, ended, err := te.StashClear(func(n int, ends []string) (bool, error) {
		asked = ends
		return false, nil
	})
	if err != nil || listed != 2 || removed != 0 || ended != nil {
		t.Fatalf("declined clear: %d %d %v %v", listed, removed, ended, err)
	}
	slices.Sort(asked)
	if !slices.Equal(asked, []string{"t1", "t2"}) {
		t.Fatalf("the question named %v", asked)
	}
	if got, _ := te.Tasks.LoadTask("t1"); got.State.Status != StatusStashed {
		t.Fatal("a declined clear ended a task")
	}
	_, removed, ended, err = te.StashClear(func(int, []string) (bool, error) { return true, nil })
	if err != nil || removed != 2 || len(ended) != 2 {
		t.Fatalf("clear: %d %+v %v", removed, ended, err)
	}
	for _, n := range []string{"t1", "t2"} {
		a, err := te.tasks.LoadArchived(n)
		if err != nil || a.State.Status != StatusAborted || !strings.HasPrefix(a.State.EndedBy, "stash clear ") {
			t.Fatalf("%s: %v %+v", n, err, a)
		}
	}
}

func TestStashRestoreStashesTheEndedTaskAgain(t *testing.T) {
	te, _ := newStashTestEngine(t)
	ent := stashTask(t, te, "t1")
	if _, err := te.StashDrop(ent); err != nil {
		t.Fatal(err)
	}
	back, unarchived, err := te.StashRestore(ent.ID)
	if err != nil || !unarchived || back.ID != ent.ID {
		t.Fatalf("restore: %v %v %v", back, unarchived, err)
	}
	got, err := te.Tasks.LoadTask("t1")
	if err != nil || got.State.Status != StatusStashed || got.State.EndedBy != "" || got.State.CurrentNode != "spec" {
		t.Fatalf("after restore: %v %+v", err, got)
	}
	// It pops like any stash.
	if _, _, err := te.StashPop("", false, false); err != nil {
		t.Fatal(err)
	}
	if te.state(t).Status != StatusActive {
		t.Fatal("pop after restore")
	}

	// A new run of the name since the drop: the stash comes back alone.
	again, err := te.StashPush("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := te.StashDrop(again); err != nil {
		t.Fatal(err)
	}
	if _, err := te.Start("discovery", "", "t1"); err != nil {
		t.Fatal(err)
	}
	run := te.state(t).WorkflowID
	_, unarchived, err = te.StashRestore(again.ID)
	if err != nil || unarchived {
		t.Fatalf("restore over a new run: %v %v", unarchived, err)
	}
	if st := te.state(t); st.Status != StatusActive || st.WorkflowID != run {
		t.Fatalf("the new run changed: %+v", st)
	}
}

func TestStashRestoreLeavesAUserAbortAlone(t *testing.T) {
	te, _ := newStashTestEngine(t)
	ent := stashTask(t, te, "t1")
	if _, _, err := te.StashPop("", true, false); err != nil { // apply: the entry stays
		t.Fatal(err)
	}
	if _, err := te.Abort(TaskOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := te.StashDrop(ent); err != nil {
		t.Fatal(err)
	}
	_, unarchived, err := te.StashRestore(ent.ID)
	if err != nil || unarchived {
		t.Fatalf("restore revived a run the user aborted: %v %v", unarchived, err)
	}
	if a, err := te.tasks.LoadArchived("t1"); err != nil || a.State.Status != StatusAborted {
		t.Fatalf("%v %+v", err, a)
	}
}

func TestStashOrphans(t *testing.T) {
	te, store := newStashTestEngine(t)
	ent := stashTask(t, te, "t1")
	stashTask(t, te, "t2")
	if o, err := te.StashOrphans(); err != nil || len(o) != 0 {
		t.Fatalf("orphans of a healthy list: %+v %v", o, err)
	}
	// The entry goes without the task ending (a fetched list, an older
	// version): nothing ends t1 by itself.
	if err := store.RemoveStash(ent.ID, StashOpDrop, "elsewhere"); err != nil {
		t.Fatal(err)
	}
	if got, _ := te.Tasks.LoadTask("t1"); got.State.Status != StatusStashed {
		t.Fatal("the task ended with no local command")
	}
	orphans, err := te.StashOrphans()
	if err != nil || len(orphans) != 1 || orphans[0].Task != "t1" || orphans[0].Dropped == nil || orphans[0].Dropped.ID != ent.ID {
		t.Fatalf("orphans: %+v %v", orphans, err)
	}
	want := "task t1 is stashed (at spec), but no stash entry holds it; 'git hegel stash restore " + ent.ID +
		"' brings its dropped stash back; 'git hegel doctor --fix' ends it (archived as aborted)"
	if got := orphans[0].Problem(); got != want {
		t.Fatalf("problem:\n%s\nwant\n%s", got, want)
	}
	if err := te.EndStashOrphan(orphans[0]); err != nil {
		t.Fatal(err)
	}
	a, err := te.tasks.LoadArchived("t1")
	if err != nil || a.State.Status != StatusAborted || a.State.EndedBy != "doctor" {
		t.Fatalf("%v %+v", err, a)
	}
	if got, _ := te.Tasks.LoadTask("t2"); got.State.Status != StatusStashed {
		t.Fatal("the held task ended too")
	}
	if err := te.EndStashOrphan(orphans[0]); err == nil || err.Error() != "task t1 is no longer stashed; left alone" {
		t.Fatalf("second fix: %v", err)
	}
}

func TestStashOrphanUnreadableEntry(t *testing.T) {
	te, store := newStashTestEngine(t)
	ent := stashTask(t, te, "t1")
	if err := store.RemoveStash(ent.ID, StashOpDrop, "elsewhere"); err != nil {
		t.Fatal(err)
	}
	bad := &Stash{ID: NextStashID(te.now, "20990101T000000.000000000Z-00000000"), Damaged: "invalid JSON"}
	store.live[bad.ID] = bad
	orphans, err := te.StashOrphans()
	if err != nil || len(orphans) != 1 || orphans[0].Unreadable != bad.ID {
		t.Fatalf("%+v %v", orphans, err)
	}
	err = te.EndStashOrphan(orphans[0])
	if err == nil || !strings.Contains(err.Error(), "cannot be read and may hold task t1") {
		t.Fatalf("fix with an unreadable entry: %v", err)
	}
	if got, _ := te.Tasks.LoadTask("t1"); got.State.Status != StatusStashed {
		t.Fatal("ended although an unreadable entry may hold it")
	}
}

// The question and the drop agree: with an unreadable entry in the list,
// neither says nor does that the task ends.
func TestStashDropEndsNothingBesideAnUnreadableEntry(t *testing.T) {
	te, store := newStashTestEngine(t)
	ent := stashTask(t, te, "t1")
	bad := &Stash{ID: NextStashID(te.now, "20990101T000000.000000000Z-00000000"), Damaged: "invalid JSON"}
	store.live[bad.ID] = bad
	ent, _ = te.StashFind(ent.ID, "drop")
	if ends, err := te.StashDropEnds(ent); err != nil || ends != "" {
		t.Fatalf("StashDropEnds = %q, %v", ends, err)
	}
	ended, err := te.StashDrop(ent)
	if err != nil || len(ended) != 0 {
		t.Fatalf("drop ended %+v (%v)", ended, err)
	}
	if got, _ := te.Tasks.LoadTask("t1"); got.State.Status != StatusStashed {
		t.Fatal("ended although an unreadable entry may hold it")
	}
	if len(te.warnings) == 0 || !strings.Contains(te.warnings[len(te.warnings)-1], "task t1 stays stashed: stash entry "+bad.ID+" cannot be read") {
		t.Fatalf("warnings: %q", te.warnings)
	}
}

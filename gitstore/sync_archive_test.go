package gitstore

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

// TestSyncArchive: archive refs travel like task refs, and a task that
// finished (or was deleted) on one side does not come back from the
// other's stale task ref.
func TestSyncArchive(t *testing.T) {
	w := newSyncWorld(t)
	saveTask(t, w.a, "t", "spec", "start: minimal at spec")
	w.sync(w.a)
	w.sync(w.b) // B has the live task
	if _, err := w.b.Tasks().LoadTask("t"); err != nil {
		t.Fatal(err)
	}
	// A finishes and archives it.
	saveTask(t, w.a, "t", "done", "next: spec -> done")
	live, _ := w.a.Tasks().LoadTask("t")
	if _, err := w.a.Tasks().ArchiveTask(live, []engine.ArchivedFile{{Path: "SPEC.md", Data: []byte("s\n")}}, "archive: completed at done", true); err != nil {
		t.Fatal(err)
	}
	rep := w.sync(w.a)
	if got := rep.FetchSummary(); got != "" {
		t.Errorf("A fetched %q: the remote's stale task ref came back", got)
	}
	if _, err := w.a.Tasks().LoadTask("t"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("A's task ref is back: %v", err)
	}
	// B gets the archive; its live ref (contained in it) goes.
	rep = w.sync(w.b)
	if got := rep.FetchSummary(); got != "archived task t added" {
		t.Errorf("B fetched %q", got)
	}
	if _, err := w.b.Tasks().LoadTask("t"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("B's stale task ref kept: %v", err)
	}
	if a, err := w.b.Tasks().LoadArchived("t"); err != nil || a.State.Status != engine.StatusCompleted {
		t.Fatalf("B's archive: %v", err)
	}
	if files, _ := w.b.Tasks().ArchivedFiles("t"); len(files) != 1 {
		t.Error("artifacts did not travel")
	}
	// A deletes it: neither the remote's archive nor its task ref comes
	// back.
	if _, err := w.a.Tasks().DeleteTask("t", w.clock); err != nil {
		t.Fatal(err)
	}
	if got := w.sync(w.a).FetchSummary(); got != "" {
		t.Errorf("A fetched %q after deleting", got)
	}
	if _, err := w.a.Tasks().LoadArchived("t"); !errors.Is(err, engine.ErrNotFound) {
		t.Error("the deleted archive came back")
	}
	// B runs it again from the archive (prev after done): that is new,
	// and A gets it.
	a, _ := w.b.Tasks().LoadArchived("t")
	a.State.Status, a.State.CurrentNode, a.State.EndedAt = engine.StatusActive, "plan", nil
	if _, err := w.b.Tasks().SaveTask(a, "prev: done -> plan"); err != nil {
		t.Fatal(err)
	}
	w.sync(w.b)
	if got := w.sync(w.a).FetchSummary(); got != "task t added" {
		t.Errorf("A fetched %q", got)
	}
}

// TestSyncArchiveDiverged: A finished the task, B moved it on meanwhile:
// the node conflicts and nothing changes; --ours keeps A's finish (a merge
// commit on the archive), --theirs makes B's version live again on top of
// the archive.
func TestSyncArchiveDiverged(t *testing.T) {
	for _, side := range []engine.Side{engine.SideOurs, engine.SideTheirs} {
		t.Run(string(side), func(t *testing.T) {
			w := newSyncWorld(t)
			saveTask(t, w.a, "t", "spec", "start")
			w.sync(w.a)
			w.sync(w.b)
			saveTask(t, w.b, "t", "plan", "next: spec -> plan (B)")
			w.sync(w.b)
			saveTask(t, w.a, "t", "done", "next: spec -> done (A)")
			live, _ := w.a.Tasks().LoadTask("t")
			w.a.Tasks().ArchiveTask(live, nil, "archive", true)
			before := localRefs(t, w.a)
			rep := w.sync(w.a)
			if len(rep.Tasks) != 1 || rep.Tasks[0].Change != engine.TaskConflicted {
				t.Fatalf("A: %+v", rep.Tasks)
			}
			if !reflect.DeepEqual(localRefs(t, w.a), before) {
				t.Fatal("a conflict changed a local ref")
			}
			rep, err := w.a.Sync(context.Background(), w.rem, SyncOptions{Resolve: map[string]engine.Side{"t": side}})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Tasks) != 1 || rep.Tasks[0].Change != engine.TaskMerged {
				t.Fatalf("A resolved: %+v", rep.Tasks)
			}
			if side == engine.SideOurs {
				if a, _ := w.a.Tasks().LoadArchived("t"); a.State.Status != engine.StatusCompleted || parents(t, w.a, ArchiveRef("t")) != 2 {
					t.Error("A's archive is not the merge of both")
				}
				if _, err := w.a.Tasks().LoadTask("t"); err == nil {
					t.Error("a live task came back")
				}
			} else {
				task, err := w.a.Tasks().LoadTask("t")
				if err != nil || task.State.CurrentNode != "plan" || parents(t, w.a, TaskRef("t")) != 2 {
					t.Fatalf("B's version is not live: %+v %v", task, err)
				}
			}
			// Merged once: the next sync finds nothing new.
			if got := w.sync(w.a).FetchSummary(); got != "" {
				t.Errorf("A again: %q", got)
			}
		})
	}
}

// TestSyncRejectsAnInvalidArchivedState: fetched states must pass the
// rules every write obeys.
func TestSyncRejectsAnInvalidArchivedState(t *testing.T) {
	w := newSyncWorld(t)
	task := sampleTask("t")
	task.State.Status, task.State.CurrentNode = engine.StatusCompleted, workflow.NodeDone // no ended_at
	state, _ := encodeJSON(task.State)
	if _, err := w.b.WriteDoc(ArchiveRefPrefix+"t", plumbing.ZeroHash, map[string][]byte{stateFile: state, workflowFile: task.Definition}, "bad"); err != nil {
		t.Fatal(err)
	}
	// git-hegel's push leaves it out (a local ref that fails validation
	// is damaged, and never pushed) ...
	rep, err := w.b.Push(context.Background(), w.rem, SyncOptions{})
	if err != nil || len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "refs/hegel/archive/t is damaged (Task 't' has an invalid state: completed status requires 'ended_at')") {
		t.Fatalf("push: %v %+v", err, rep)
	}
	// ... so another tool puts it there.
	k := &hostileKit{t: t, s: w.remote}
	bad := k.commit(k.rawTree([3]string{"100644", "state.json", k.blob(string(state)).String()},
		[3]string{"100644", "version", k.blob("1\n").String()},
		[3]string{"100644", "workflow.yaml", k.blob(string(task.Definition)).String()}))
	if err := w.remote.SetReference(plumbing.NewHashReference(ArchiveRefPrefix+"t", bad)); err != nil {
		t.Fatal(err)
	}
	_, err = w.a.Fetch(context.Background(), w.rem, SyncOptions{})
	var re *RefusedError
	if !errors.As(err, &re) || len(re.Refs) != 1 || re.Refs[0].Ref != "refs/hegel/archive/t" ||
		!strings.Contains(re.Refs[0].Reason, "completed status requires 'ended_at'") {
		t.Fatalf("fetch: %v", err)
	}
	if _, err := w.a.Tasks().LoadArchived("t"); !errors.Is(err, engine.ErrNotFound) {
		t.Error("the invalid archive was merged")
	}
}

// TestSyncArchiveOfATaskHeldHere: the remote archived a task a worktree
// of this clone holds (by its adoption record): the fetch says so, keeps
// this clone's state as a stash entry, and the chain stays reachable from
// the archive. A task the record does not give to this clone ends quietly.
func TestSyncArchiveOfATaskHeldHere(t *testing.T) {
	w := newSyncWorld(t)
	for _, name := range []string{"held", "other"} {
		saveTask(t, w.b, name, "spec", "start: minimal at spec")
		live, _ := w.b.Tasks().LoadTask(name)
		live.State.Worktree, live.State.WorktreeID = "/b", "bclone:main"
		if _, err := w.b.Tasks().SaveTask(live, "claim"); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.b.recordAdopted("held", "bclone:main"); err != nil {
		t.Fatal(err)
	}
	saveTask(t, w.b, "held", "plan", "next: spec -> plan")
	ours, _ := w.b.Tasks().LoadTask("held")
	ours.State.Worktree, ours.State.WorktreeID = "/b", "bclone:main"
	if _, err := w.b.Tasks().SaveTask(ours, "claim"); err != nil {
		t.Fatal(err)
	}
	ours, _ = w.b.Tasks().LoadTask("held")
	w.sync(w.b)
	w.sync(w.a)
	for _, name := range []string{"held", "other"} {
		live, _ := w.a.Tasks().LoadTask(name)
		end := w.clock
		live.State.Status, live.State.CurrentNode, live.State.EndedAt = engine.StatusAborted, workflow.NodeAborted, &end
		live.State.History = append(live.State.History, workflow.NodeAborted)
		if _, err := w.a.Tasks().ArchiveTask(live, nil, "archive: aborted", true); err != nil {
			t.Fatal(err)
		}
	}
	w.sync(w.a)
	rep := w.sync(w.b)
	var held *engine.TaskHeld
	for _, ts := range rep.Tasks {
		if ts.Task == "held" && ts.Archived {
			held = ts.Held
		}
		if ts.Task == "other" && ts.Held != nil {
			t.Errorf("a task this clone does not hold: %+v", ts.Held)
		}
	}
	if held == nil || held.WasNode != "plan" || held.Status != engine.StatusAborted || held.YoursStash == "" || held.Worktree != "/b" {
		t.Fatalf("held: %+v (tasks %+v)", held, rep.Tasks)
	}
	notes := rep.HeldNotes()
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "Task held, active in /b at plan, was aborted and archived at origin by ") ||
		!strings.Contains(notes[0], "'git hegel stash pop "+held.YoursStash+"'") {
		t.Errorf("notes: %q", notes)
	}
	st, err := w.b.Stashes().LoadStash(held.YoursStash)
	if err != nil || st.State.CurrentNode != "plan" || st.State.Status != engine.StatusActive || st.Task != "held" {
		t.Fatalf("the stash entry: %+v %v", st, err)
	}
	a, err := w.b.Tasks().LoadArchived("held")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := newGraph(w.b.storage).isAncestor(plumbing.NewHash(ours.Rev), plumbing.NewHash(a.Rev)); err != nil || !ok {
		t.Errorf("this clone's chain is not in the archive: %v", err)
	}
	if _, err := w.b.Tasks().LoadTask("held"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("the task ref stays: %v", err)
	}
}

// TestPrintable: a name from elsewhere reaches the terminal as one line
// without control characters.
func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"Ann <a@b>":                   "Ann <a@b>",
		"Evil\x1b[2J\x1b]0;x\x07 <e>": "Evil[2J]0;x <e>",
		"two\nlines":                  "twolines",
		strings.Repeat("é", 150):      strings.Repeat("é", 100) + "…",
	} {
		if got := printable(in, 200); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSyncArchiveOfATaskStashedHere: the remote archived a task stashed
// here, ended by its drop of the stash entry holding it: the fetch names
// the entry and says how to restore it. An ended_by that is not a drop of
// a valid stash id (someone else's text) names nothing.
func TestSyncArchiveOfATaskStashedHere(t *testing.T) {
	w := newSyncWorld(t)
	const id = "20260102T030405.000000000Z-d6f25d05"
	endedBy := map[string]string{
		"dropped": "stash drop " + id,
		"cleared": "stash clear " + id,
		"forged":  "stash drop \x1b[31mrm -rf",
		"popped":  "stash pop " + id,
		"doctor":  "doctor",
	}
	for name := range endedBy {
		saveTask(t, w.b, name, "spec", "start: minimal at spec")
		live, _ := w.b.Tasks().LoadTask(name)
		live.State.Status = engine.StatusStashed
		if _, err := w.b.Tasks().SaveTask(live, "stash"); err != nil {
			t.Fatal(err)
		}
	}
	w.sync(w.b)
	w.sync(w.a)
	for name, by := range endedBy {
		live, _ := w.a.Tasks().LoadTask(name)
		end := w.clock
		live.State.Status, live.State.CurrentNode, live.State.EndedAt, live.State.EndedBy = engine.StatusAborted, workflow.NodeAborted, &end, by
		live.State.History = append(live.State.History, workflow.NodeAborted)
		if _, err := w.a.Tasks().ArchiveTask(live, nil, "abort", true); err != nil {
			t.Fatal(err)
		}
	}
	w.sync(w.a)
	rep := w.sync(w.b)
	got := map[string]*engine.StashEnded{}
	for _, ts := range rep.Tasks {
		if ts.Archived {
			got[ts.Task] = ts.StashEnded
		}
	}
	if se := got["dropped"]; se == nil || se.Stash != id || se.Op != engine.StashOpDrop || se.Status != engine.StatusAborted || se.By == "" {
		t.Errorf("dropped: %+v", se)
	}
	if se := got["cleared"]; se == nil || se.Op != engine.StashOpClear {
		t.Errorf("cleared: %+v", se)
	}
	for _, name := range []string{"forged", "popped", "doctor"} {
		if got[name] != nil {
			t.Errorf("%s: %+v", name, got[name])
		}
	}
	var notes []string
	for _, n := range rep.HeldNotes() {
		if strings.Contains(n, "stashed here") {
			notes = append(notes, n)
		}
	}
	if len(notes) != 2 || !strings.Contains(strings.Join(notes, "\n"), "'git hegel stash restore "+id+"'") {
		t.Errorf("notes: %q", notes)
	}
}

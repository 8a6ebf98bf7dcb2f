package engine

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// fakeParking records the calls of a stash's file operations, as the
// git-backed Parking journals them.
type fakeParking struct {
	calls     []string
	files     *StashFiles // what Park finds uncommitted
	failClean error
	refuse    error           // Unpark refuses (a local change in the way)
	conflicts []StashConflict // Unpark's conflicts
	journal   *ParkingRecord
	failFix   error
}

// otherClones is a stash store whose every entry another clone pushed.
type otherClones struct{ StashStore }

func (otherClones) MadeHere(string) bool { return false }

func (f *fakeParking) Park(st *State) (*StashFiles, error) {
	f.calls = append(f.calls, "park "+st.Task)
	return f.files, nil
}

func (f *fakeParking) Clean(s *Stash) error {
	f.calls = append(f.calls, "clean "+s.ID)
	return f.failClean
}

func (f *fakeParking) Release() { f.calls = append(f.calls, "release") }

func (f *fakeParking) Unpark(s *StashEntry) (*StashUnparked, error) {
	f.calls = append(f.calls, "unpark "+s.ID)
	if f.refuse != nil {
		return nil, f.refuse
	}
	return &StashUnparked{Conflicts: f.conflicts}, nil
}

func (f *fakeParking) InterruptedParking() (*ParkingRecord, error) { return f.journal, nil }

func (f *fakeParking) FinishParking(rec *ParkingRecord) error {
	f.calls = append(f.calls, "finish "+rec.StashID)
	if f.failFix == nil {
		f.journal = nil
	}
	return f.failFix
}

func (f *fakeParking) UndoParking(rec *ParkingRecord) error {
	f.calls = append(f.calls, "undo "+rec.StashID)
	if f.failFix == nil {
		f.journal = nil
	}
	return f.failFix
}

// TestStashPushParkingOrder: the files are parked (nothing changed), the
// stash that holds them is stored, and only then is the working tree
// cleaned; with nothing uncommitted, or when the stash cannot be stored,
// the park is released and nothing is cleaned.
func TestStashPushParkingOrder(t *testing.T) {
	env := newStashEnv()
	e := env.engine("/wt/a")
	p := &fakeParking{files: &StashFiles{Tree: "abc", Count: 3}}
	e.Parking = p
	_, err := e.Start("discovery", "", "")
	mustOK(t, err)
	ent, files, err := e.StashPushParking("with files")
	mustOK(t, err)
	if files.Count != 3 || ent.Files != files {
		t.Fatalf("files %+v, stash %+v", files, ent.Files)
	}
	if got := strings.Join(p.calls, ", "); !strings.HasPrefix(got, "park ") || !strings.HasSuffix(got, ", clean "+ent.ID) {
		t.Errorf("calls: %s", got)
	}
	// The pop writes the files back before the workflow comes back.
	p.calls = nil
	_, _, err = env.engine("/wt/a").StashPop("", false, false)
	if err == nil {
		t.Fatal("popped files without Parking")
	}
	e2 := env.engine("/wt/a")
	e2.Parking = p
	p.refuse = errors.New("Cannot restore stash@{0}: a.txt has local changes")
	if _, _, err := e2.StashPop("", false, false); err == nil || func() bool { ids, _ := env.stashes.StashIDs(); return len(ids) != 1 }() {
		t.Fatalf("a refused unpark popped the stash: %v", err)
	}
	p.refuse = nil
	got, _, err := e2.StashPop("", false, false)
	mustOK(t, err)
	if strings.Join(p.calls, ", ") != "unpark "+got.ID+", unpark "+got.ID {
		t.Errorf("pop calls: %v", p.calls)
	}

	// Nothing uncommitted: released, not cleaned.
	env.tick(time.Minute)
	p.calls, p.files = nil, nil
	ent, files, err = e2.StashPushParking("")
	mustOK(t, err)
	if files != nil || ent.Files != nil || strings.Join(p.calls, ", ") != "park "+ent.Task+", release" {
		t.Errorf("nothing to park: %v %v", files, p.calls)
	}
	// A failed cleaning says where the files are.
	e3 := env.engine("/wt/c")
	e3.Parking = &fakeParking{files: &StashFiles{Tree: "def", Count: 1}, failClean: errors.New("disk full")}
	_, err = e3.Start("discovery", "", "")
	mustOK(t, err)
	ent, _, err = e3.StashPushParking("")
	if err == nil || !strings.Contains(err.Error(), "the files are parked in stash@{0}, but the working tree could not be cleaned: disk full") || ent == nil {
		t.Errorf("failed cleaning: %v", err)
	}
}

// TestRecoverParking: a push cut short is finished (its files are in its
// stash), a pop cut short is undone (the stash still holds its files);
// each says which in one line, and a recovery that fails says why.
func TestRecoverParking(t *testing.T) {
	e := newStashEnv().engine("/wt/a")
	if note, err := e.RecoverParking(); note != "" || err != nil {
		t.Errorf("without Parking: %q %v", note, err)
	}
	p := &fakeParking{}
	e.Parking = p
	if note, err := e.RecoverParking(); note != "" || err != nil || len(p.calls) != 0 {
		t.Errorf("nothing interrupted: %q %v %v", note, err, p.calls)
	}
	p.journal = &ParkingRecord{Push: true, StashID: "s1", Label: "stash s1, minimal/spec"}
	note, err := e.RecoverParking()
	if err != nil || note != "Finished the interrupted 'git hegel stash push --files' (stash s1, minimal/spec): the working tree and the index are as HEAD has them, the files are in the stash" {
		t.Errorf("push: %q %v", note, err)
	}
	p.journal = &ParkingRecord{StashID: "s2", Label: "stash s2, minimal/plan"}
	note, err = e.RecoverParking()
	if err != nil || note != "Undid the interrupted 'git hegel stash pop' of stash s2, minimal/plan: the files it had written back are as they were; the stash still holds them" {
		t.Errorf("pop: %q %v", note, err)
	}
	if strings.Join(p.calls, ", ") != "finish s1, undo s2" {
		t.Errorf("calls %v", p.calls)
	}
	p.journal, p.failFix = &ParkingRecord{Push: true, StashID: "s3", Label: "stash s3, x"}, errors.New("a.txt changed after the stash push was interrupted")
	if _, err := e.RecoverParking(); err == nil || err.Error() != "The 'git hegel stash push --files' of stash s3, x was interrupted, and could not be finished: a.txt changed after the stash push was interrupted" {
		t.Errorf("failed recovery: %v", err)
	}
}

// TestStashPopConflictKeepsStash: a pop whose files conflicted restores
// the workflow, keeps the stash (as git stash pop does) and says so in a
// StashConflictError carrying the entry and the view.
func TestStashPopConflictKeepsStash(t *testing.T) {
	env := newStashEnv()
	e := env.engine("/wt/a")
	p := &fakeParking{files: &StashFiles{Tree: "abc", Count: 1}}
	e.Parking = p
	_, err := e.Start("discovery", "", "")
	mustOK(t, err)
	_, _, err = e.StashPushParking("")
	mustOK(t, err)
	p.conflicts = []StashConflict{{Path: "a.txt", Kind: "content", What: "both modified"}}
	e2 := env.engine("/wt/a")
	e2.Parking = p
	_, _, err = e2.StashPop("", false, false)
	var ce *StashConflictError
	if !errors.As(err, &ce) || ce.Entry == nil || ce.View == nil || !ce.Pop || len(ce.Conflicts) != 1 {
		t.Fatalf("conflicted pop: %v", err)
	}
	if ids, _ := env.stashes.StashIDs(); len(ids) != 1 {
		t.Fatalf("the stash was removed: %v", ids)
	}
	if !strings.Contains(err.Error(), "the stash was kept: resolve them, then 'git hegel stash drop'") {
		t.Errorf("message: %v", err)
	}
	cur, err := e2.Current("")
	mustOK(t, err)
	if cur.State.Task != ce.Entry.Task || !cur.State.Active() {
		t.Errorf("the workflow was not restored: %+v", cur.State)
	}
}

// Files another clone parked are not written without force: the pop is
// refused before anything is unparked, the stash stays, and force
// restores it.
func TestStashPopRefusesFilesParkedElsewhere(t *testing.T) {
	env := newStashEnv()
	e := env.engine("/wt/a")
	p := &fakeParking{files: &StashFiles{Tree: "abc", Count: 2}}
	e.Parking = p
	_, err := e.Start("discovery", "", "")
	mustOK(t, err)
	_, _, err = e.StashPushParking("from the laptop")
	mustOK(t, err)
	p.calls = nil
	e2 := env.engine("/wt/a")
	e2.Parking = p
	e2.Stashes = otherClones{env.stashes}
	_, _, err = e2.StashPop("", false, false)
	if err == nil || !strings.Contains(err.Error(), "its 2 files were parked in another clone (stashed from /wt/a on ") ||
		!strings.Contains(err.Error(), "run 'git hegel stash pop --force stash@{0}'") {
		t.Fatalf("pop of another clone's files: %v", err)
	}
	if len(p.calls) != 0 {
		t.Fatalf("refused, and still called %v", p.calls)
	}
	if ids, _ := env.stashes.StashIDs(); len(ids) != 1 {
		t.Fatalf("the stash is gone: %v", ids)
	}
	if _, _, err := e2.StashPop("", true, false); err == nil || !strings.Contains(err.Error(), "'git hegel stash apply --force stash@{0}'") {
		t.Fatalf("apply: %v", err)
	}
	_, _, err = e2.StashPop("", false, true)
	mustOK(t, err)
	if len(p.calls) != 1 || !strings.HasPrefix(p.calls[0], "unpark ") {
		t.Fatalf("forced pop calls %v", p.calls)
	}
}

// The refusal of one file another clone parked says so in the singular.
func TestForeignStashOneFile(t *testing.T) {
	ent := &StashEntry{Stash: &Stash{Worktree: "/wt/b", Files: &StashFiles{Tree: "abc", Count: 1}}}
	if err := foreignStash(ent, "pop"); !strings.Contains(err.Error(), "its 1 file was parked in another clone (stashed from /wt/b on ") {
		t.Fatalf("refusal: %v", err)
	}
}

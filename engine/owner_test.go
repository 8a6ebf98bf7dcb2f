package engine

import (
	"strings"
	"testing"
)

// A task's owner is a person and a clone: the clone decides, the person
// (owner_email) is recorded where the clone takes the task, and shown.
func TestOwnerPersonClaimAndMine(t *testing.T) {
	te := newGateEngine(t) // started before the ids were set: parked-like, nobody's
	te.WorktreeID = "aaaa:main"
	te.Email = func() string { return " ann@example.com " }
	if _, err := te.Start("gate", "", "mine"); err != nil {
		t.Fatal(err)
	}
	st := te.stateOf(t, "mine")
	if st.OwnerEmail != "ann@example.com" || st.WorktreeID != "aaaa:main" {
		t.Fatalf("start records the person and the clone: %q %q", st.OwnerEmail, st.WorktreeID)
	}
	list, err := te.ListTasks(ListOptions{Mine: true})
	if err != nil || len(list) != 1 || list[0].Name != "mine" {
		t.Fatalf("--mine on ann's clone: %+v %v", list, err)
	}

	// Bob, on another clone, claims it and learns whose it was.
	te.WorktreeID, te.Worktree = "bbbb:main", "/bob/tree"
	te.Email = func() string { return "bob@example.com" }
	if list, _ := te.ListTasks(ListOptions{Mine: true}); len(list) != 0 {
		t.Fatalf("--mine on bob's clone before the claim: %+v", list)
	}
	v, prev, err := te.ClaimTask("mine")
	if err != nil || prev == nil || prev.OwnerEmail != "ann@example.com" || prev.WorktreeID != "aaaa:main" || v.Task != "mine" {
		t.Fatalf("claim: %+v %+v %v", v, prev, err)
	}
	if st := te.stateOf(t, "mine"); st.OwnerEmail != "bob@example.com" || st.WorktreeID != "bbbb:main" {
		t.Fatalf("after the claim: %q %q", st.OwnerEmail, st.WorktreeID)
	}
	if _, prev, err := te.ClaimTask("mine"); err != nil || prev != nil {
		t.Fatalf("claiming one's own task again: %+v %v", prev, err)
	}
	if list, _ := te.ListTasks(ListOptions{Mine: true}); len(list) != 1 || list[0].Name != "mine" {
		t.Fatalf("--mine after the claim: %+v", list)
	}
}

func TestApprovalOtherPerson(t *testing.T) {
	te := newTestEngine(t, map[string][]byte{"gate.yaml": []byte(gateFlow)})
	te.WorktreeID = "aaaa:main"
	te.Email = func() string { return "ann@example.com" }
	if _, err := te.Start("gate", "", "g"); err != nil {
		t.Fatal(err)
	}
	if _, err := te.Next("spec_complete"); err != nil {
		t.Fatal(err)
	}
	te.ApprovalOtherPerson = true
	for _, c := range []struct {
		clone, email, want string
		force              bool
	}{
		{"aaaa:main", "bob@example.com", "owned on this clone", false},
		{"aaaa:wt", "bob@example.com", "owned on this clone", true},
		{"bbbb:main", "ANN@example.com", "which is you (git config user.email)", true},
		{"bbbb:main", "", "Who is approving?", false},
	} {
		te.WorktreeID = c.clone
		email := c.email
		te.Email = func() string { return email }
		if _, err := te.Approve(ApproveOptions{TaskOptions: TaskOptions{Task: "g", Force: c.force}}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("approve on %s as %q: %v, want %q", c.clone, c.email, err, c.want)
		}
	}
	if st := te.stateOf(t, "g"); st.Status != StatusAwaitingApproval || len(st.Approvals) != 0 {
		t.Fatalf("a refused approval changed the task: %+v", st)
	}
	te.WorktreeID = "bbbb:main"
	te.Email = func() string { return "bob@example.com" }
	te.User = func() string { return "Bob" }
	if v, err := te.Approve(ApproveOptions{TaskOptions: TaskOptions{Task: "g"}}); err != nil || v.Node != "plan" {
		t.Fatalf("another person approves: %v", err)
	}
}

// Two worktrees of one clone switching to the same parked task at once:
// the one whose save comes second finds the task taken since it read it
// and refuses, instead of taking it over a second time with both saying
// they hold it.
func TestSwitchRaceLeavesTheTaskToOneWorktree(t *testing.T) {
	te := newTestEngine(t, nil)
	te.WorktreeID = "aaaa:main"
	if _, err := te.Start("minimal", "", "p"); err != nil {
		t.Fatal(err)
	}
	if _, err := te.Start("minimal", "", "q"); err != nil { // parks p
		t.Fatal(err)
	}
	other := &Engine{Tasks: te.tasks, Archive: te.tasks, Session: &fakeSessionStore{}, Worktree: "/work/other",
		WorktreeID: "aaaa:worktrees/other", Now: te.Now, Workflows: te.Workflows, Files: te.files}
	te.tasks.beforeSave = func() {
		te.tasks.beforeSave = nil
		if _, err := other.Switch("p"); err != nil {
			t.Errorf("racing switch: %v", err)
		}
	}
	_, err := te.Switch("p")
	if err == nil || !strings.Contains(err.Error(), "Task 'p' is active in another worktree (/work/other)") {
		t.Fatalf("the second switch: %v, want the other worktree's refusal", err)
	}
	if st := te.stateOf(t, "p"); st.WorktreeID != "aaaa:worktrees/other" {
		t.Errorf("task p is held by %q, want the worktree that switched first", st.WorktreeID)
	}
	if st := te.state(t); st.Task != "q" {
		t.Errorf("this worktree's task is %s, want q (nothing parked)", st.Task)
	}
}

// The other order of the same race: the other worktree claimed the task
// first, this worktree's claim wrote the adoption record over it, and
// the other's save landed first. The switch that lost refuses, and gives
// the record back to the worktree the state names.
func TestSwitchRaceGivesTheAdoptionRecordBack(t *testing.T) {
	te := newTestEngine(t, nil)
	te.WorktreeID = "aaaa:main"
	store := &recordingStore{fakeTaskStore: te.tasks, adopted: map[string]string{}}
	te.Engine.Tasks = store
	if _, err := te.Start("minimal", "", "p"); err != nil {
		t.Fatal(err)
	}
	if _, err := te.Start("minimal", "", "q"); err != nil { // parks p
		t.Fatal(err)
	}
	// The other worktree's claim was written before this one's, so only
	// its save is left to happen: it goes through the store directly.
	other := &Engine{Tasks: te.tasks, Archive: te.tasks, Session: &fakeSessionStore{}, Worktree: "/work/other",
		WorktreeID: "aaaa:worktrees/other", Now: te.Now, Workflows: te.Workflows, Files: te.files}
	te.tasks.beforeSave = func() {
		te.tasks.beforeSave = nil
		if _, err := other.Switch("p"); err != nil {
			t.Errorf("racing switch: %v", err)
		}
	}
	_, err := te.Switch("p")
	if err == nil || !strings.Contains(err.Error(), "Task 'p' is active in another worktree (/work/other)") {
		t.Fatalf("the second switch: %v, want the other worktree's refusal", err)
	}
	if st := te.stateOf(t, "p"); st.WorktreeID != "aaaa:worktrees/other" {
		t.Errorf("task p is held by %q, want the worktree that saved first", st.WorktreeID)
	}
	if got := store.adopted["p"]; got != "aaaa:worktrees/other" {
		t.Errorf("the adoption record gives p to %q, want the worktree that holds it", got)
	}
}

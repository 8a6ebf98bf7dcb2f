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

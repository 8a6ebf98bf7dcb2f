package engine

import (
	"errors"
	"strings"
	"testing"
)

// seenStore adds this clone's record of shown artifacts to the fake task
// store, as gitstore keeps it beside the refs.
type seenStore struct {
	*fakeTaskStore
	seen   map[string]map[string]bool
	writes int
}

func (s *seenStore) SeenArtifacts(task string) map[string]bool {
	out := map[string]bool{}
	for b := range s.seen[task] {
		out[b] = true
	}
	return out
}

func (s *seenStore) RecordSeen(task string, blobs []string) error {
	s.writes++
	if s.seen[task] == nil {
		s.seen[task] = map[string]bool{}
	}
	for _, b := range blobs {
		s.seen[task][b] = true
	}
	return nil
}

// newSeenEnv is the review workflow on a store with the record. asOther
// runs fn as another clone would: on the same refs, without this clone's
// record.
func newSeenEnv(t *testing.T) (te *testEnv, rec *seenStore, asOther func(fn func())) {
	te = newReviewEnv(t)
	rec = &seenStore{fakeTaskStore: te.tasks, seen: map[string]map[string]bool{}}
	te.Tasks = rec
	asOther = func(fn func()) {
		te.Tasks = te.tasks
		defer func() { te.Tasks = rec }()
		fn()
	}
	return te, rec, asOther
}

// submitSpec ends task a's spec node with spec as SPEC.md: it waits at
// the gate after.
func submitSpec(t *testing.T, te *testEnv, spec string) {
	t.Helper()
	te.files["hegel-tasks/a/SPEC.md"] = spec
	te.files["hegel-tasks/a/notes/a.txt"] = "notes\n"
	if v, err := te.Next(""); err != nil || v.Gate == nil {
		t.Fatalf("next: %+v %v", v, err)
	}
}

// A node that ended here submitted this clone's files: its author
// approves them without showing them first.
func TestApproveWhatThisCloneWrote(t *testing.T) {
	te, rec, _ := newSeenEnv(t)
	te.StartTask(StartOptions{Workflow: "r", Task: "a", Type: "bug_fix"})
	submitSpec(t, te, "v1\n")
	if !rec.seen["a"][BlobID([]byte("v1\n"))] || !rec.seen["a"][BlobID([]byte("notes\n"))] {
		t.Fatalf("submitted blobs not recorded: %v", rec.seen)
	}
	if _, err := te.Approve(ApproveOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A reviewer's approval covers only content this clone showed: a version
// that arrived after the reviewer looked is refused, naming the artifact
// and how to see it, and nothing is written; once shown, it is approved.
// --force (another permission) does not lift it; --unseen does.
func TestApproveRefusesUnseenArtifacts(t *testing.T) {
	te, rec, asOther := newSeenEnv(t)
	asOther(func() {
		te.StartTask(StartOptions{Workflow: "r", Task: "a", Type: "bug_fix"})
		submitSpec(t, te, "v1\n")
	})
	if len(rec.seen) != 0 {
		t.Fatalf("another clone's submission recorded here: %v", rec.seen)
	}
	// The reviewer looks: show lists both artifacts.
	d, err := te.Show("a")
	if err != nil {
		t.Fatal(err)
	}
	te.MarkSeen("a", d.ShownBlobs())
	// The author sends a new SPEC.md meanwhile.
	asOther(func() {
		if _, err := te.Reject(TaskOptions{Task: "a"}, "more", ""); err != nil {
			t.Fatal(err)
		}
		submitSpec(t, te, "v2\n")
	})
	v2 := BlobID([]byte("v2\n"))
	n := len(te.tasks.log)
	for _, o := range []ApproveOptions{{TaskOptions: TaskOptions{Task: "a"}}, {TaskOptions: TaskOptions{Task: "a", Force: true}}} {
		_, err = te.Approve(o)
		var ue *UnseenError
		if !errors.As(err, &ue) || ue.Path != "hegel-tasks/a/SPEC.md" || ue.Blob != v2 || ue.Node != "spec" {
			t.Fatalf("force %v: %v", o.Force, err)
		}
		want := "hegel-tasks/a/SPEC.md (node spec, blob " + ShortID(v2) + ") has not been shown on this clone: see it with 'git hegel artifact a hegel-tasks/a/SPEC.md' or 'git hegel show a', then approve; --unseen approves it anyway"
		if err.Error() != want {
			t.Errorf("message:\n%s\nwant\n%s", err, want)
		}
	}
	if len(te.tasks.log) != n {
		t.Fatal("a refused approval wrote")
	}
	// Shown now (git hegel artifact): approved, and the approval names v2.
	task, _ := te.Lookup("a")
	a, err := te.Artifact(task, "SPEC.md", "")
	if err != nil || a.Blob != v2 {
		t.Fatalf("artifact %+v %v", a, err)
	}
	te.MarkSeen("a", []string{a.Blob})
	v, err := te.Approve(ApproveOptions{TaskOptions: TaskOptions{Task: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	ap := v.State.Approvals[len(v.State.Approvals)-1]
	if len(ap.Artifacts) != 2 || ap.Artifacts[0].Blob != v2 {
		t.Errorf("approval %+v", ap)
	}
}

func TestApproveUnseen(t *testing.T) {
	te, _, asOther := newSeenEnv(t)
	asOther(func() {
		te.StartTask(StartOptions{Workflow: "r", Task: "a", Type: "bug_fix"})
		submitSpec(t, te, "v1\n")
	})
	if _, err := te.Approve(ApproveOptions{TaskOptions: TaskOptions{Task: "a"}, Unseen: true}); err != nil {
		t.Fatal(err)
	}
}

// A gate whose node keeps no artifacts approves with an empty record.
func TestApproveWithoutArtifacts(t *testing.T) {
	te := newGateEngine(t)
	rec := &seenStore{fakeTaskStore: te.tasks, seen: map[string]map[string]bool{}}
	te.Tasks = rec
	te.Next("")
	if _, err := te.Approve(ApproveOptions{}); err != nil {
		t.Fatal(err)
	}
}

// The web page's form says what it showed: the approval goes through
// only while the task holds exactly that, whatever the record says.
func TestApproveShownGate(t *testing.T) {
	te, _, asOther := newSeenEnv(t)
	asOther(func() {
		te.StartTask(StartOptions{Workflow: "r", Task: "a", Type: "bug_fix"})
		submitSpec(t, te, "v1\n")
	})
	d, _ := te.Show("a")
	shown := d.GateBlobs()
	if len(shown) != 2 {
		t.Fatalf("gate blobs %v", shown)
	}
	asOther(func() {
		te.Reject(TaskOptions{Task: "a"}, "more", "")
		submitSpec(t, te, "v2\n")
	})
	n := len(te.tasks.log)
	cases := []struct {
		shown ShownGate
		want  string
	}{
		{ShownGate{Node: "spec", Blobs: shown}, "hegel-tasks/a/SPEC.md (node spec) is at blob " + ShortID(BlobID([]byte("v2\n"))) + " now, which this page did not show"},
		{ShownGate{Node: "plan", Blobs: shown}, "Task a waits at 'spec' now, not at the gate this page showed"},
		{ShownGate{Node: "spec", Blobs: append(d2Blobs(t, te), BlobID([]byte("gone\n")))}, "The artifacts of task a at 'spec' changed since this page showed them"},
		{ShownGate{Node: "spec"}, "is at blob"},
	}
	for _, c := range cases {
		_, err := te.Approve(ApproveOptions{TaskOptions: TaskOptions{Task: "a"}, Shown: &c.shown})
		var se *StaleGateError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), c.want) || !strings.HasSuffix(err.Error(), "nothing changed: reload the page and look again") {
			t.Errorf("%+v: %v", c.shown, err)
		}
	}
	if len(te.tasks.log) != n {
		t.Fatal("a refused approval wrote")
	}
	// What the page shows now, with --unseen's record empty: approved.
	if _, err := te.Approve(ApproveOptions{TaskOptions: TaskOptions{Task: "a"}, Shown: &ShownGate{Node: "spec", Blobs: d2Blobs(t, te)}}); err != nil {
		t.Fatal(err)
	}
}

func d2Blobs(t *testing.T, te *testEnv) []string {
	t.Helper()
	d, err := te.Show("a")
	if err != nil {
		t.Fatal(err)
	}
	return d.GateBlobs()
}

// Blob ids come from task states, which may have been fetched: only
// object ids reach the record, so a crafted one cannot add lines to it.
func TestMarkSeenKeepsOnlyObjectIDs(t *testing.T) {
	te, rec, _ := newSeenEnv(t)
	good := BlobID([]byte("x"))
	te.MarkSeen("a", []string{"../../etc/passwd", good + "\n" + good + " other", strings.ToUpper(good), good, good})
	if rec.writes != 1 || len(rec.seen["a"]) != 1 || !rec.seen["a"][good] || len(rec.seen) != 1 {
		t.Errorf("record %v after %d writes", rec.seen, rec.writes)
	}
	te.MarkSeen("a", []string{"nothing"})
	te.MarkSeen("../x", []string{good})
	if rec.writes != 1 {
		t.Errorf("%d writes for nothing to record", rec.writes)
	}
}

func TestShellArg(t *testing.T) {
	for in, want := range map[string]string{
		"hegel-tasks/a/SPEC.md": "hegel-tasks/a/SPEC.md",
		"a b/it's.md":           `'a b/it'\''s.md'`,
		"a\x1b[2J.md":           `"a\033[2J.md"`,
	} {
		if got := shellArg(in); got != want {
			t.Errorf("shellArg(%q) = %s, want %s", in, got, want)
		}
	}
}

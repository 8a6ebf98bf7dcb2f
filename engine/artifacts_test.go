package engine

import (
	"errors"
	"strings"
	"testing"
)

// reviewFlow: a spec node with a gate whose artifacts live in the task's
// folder, a design node bug fixes skip, then a plan node.
var reviewFlow = y(
	"start_node: spec",
	"task_types: [feature, bug_fix]",
	"nodes:",
	"  spec:",
	`    artifact: ["{{task.dir}}/SPEC.md", "{{task.dir}}/notes/{{task.name}}.txt"]`,
	"    prompt: Write {{task.dir}}/SPEC.md",
	"    gate: approval",
	"    transitions: [{when: spec_complete, to: design}]",
	"  design:",
	`    artifact: "{{task.dir}}/DESIGN.md"`,
	"    prompt: design",
	"    skip_for: [bug_fix]",
	"    transitions: [{when: design_complete, to: plan}]",
	"  plan:",
	"    prompt: plan",
	"    transitions: [{when: plan_complete, to: done}]",
)

func newReviewEnv(t *testing.T) *testEnv {
	te := newTestEngine(t, map[string][]byte{"r.yaml": []byte(reviewFlow)})
	delete(te.files, anyTaskFile)
	return te
}

// Two tasks never share a file: each one's artifact is in its own
// folder, so one task's SPEC.md does not pass the other's gate.
func TestTasksHaveTheirOwnFolders(t *testing.T) {
	te := newReviewEnv(t)
	if _, err := te.StartTask(StartOptions{Workflow: "r", Task: "a", Type: "bug_fix"}); err != nil {
		t.Fatal(err)
	}
	te.files["hegel-tasks/a/SPEC.md"] = "spec of a\n"
	te.files["hegel-tasks/a/notes/a.txt"] = "notes\n"
	if _, err := te.Next(""); err != nil {
		t.Fatal(err)
	}
	if _, err := te.StartTask(StartOptions{Workflow: "r", Task: "b"}); err != nil {
		t.Fatal(err)
	}
	var ae *ArtifactError
	if _, err := te.Next(""); !errors.As(err, &ae) || ae.Path != "hegel-tasks/b/SPEC.md" {
		t.Fatalf("b passed its gate with a's files: %v", err)
	}
	if st := te.stateOf(t, "b"); st.ArtifactDir != "hegel-tasks/b" {
		t.Errorf("artifact_dir %q", st.ArtifactDir)
	}
}

// hegel.artifactDir moves the folder; a value that would share files or
// leave the worktree is refused before anything is written.
func TestArtifactDirSetting(t *testing.T) {
	te := newReviewEnv(t)
	te.ArtifactDir = "work/{{task.type}}/{{task.name}}"
	v, err := te.StartTask(StartOptions{Workflow: "r", Task: "a", Type: "feature"})
	if err != nil || TaskDir(v.State) != "work/feature/a" {
		t.Fatalf("start: %v", err)
	}
	for _, bad := range []string{"shared", "../{{task.name}}", "{{task.dir}}/x", "/abs/{{task.name}}", "x/{{task.owner}}/{{task.name}}"} {
		te.ArtifactDir = bad
		n := len(te.tasks.log)
		if _, err := te.StartTask(StartOptions{Workflow: "r", Task: "b"}); err == nil || !strings.Contains(err.Error(), "hegel.artifactDir") {
			t.Errorf("%q: %v", bad, err)
		}
		if len(te.tasks.log) != n {
			t.Errorf("%q: a refused start wrote", bad)
		}
	}
}

// When a node ends, its artifacts go into the task's tree and state;
// the approval records their blob ids; a later change shows in Show; a
// skipped node's artifacts are not missing; the gate names the node the
// task will really reach.
func TestSubmitApproveAndWarn(t *testing.T) {
	te := newReviewEnv(t)
	te.StartTask(StartOptions{Workflow: "r", Task: "a", Type: "bug_fix"})
	te.files["hegel-tasks/a/SPEC.md"] = "v1\n"
	te.files["hegel-tasks/a/notes/a.txt"] = "notes\n"
	v, err := te.Next("")
	if err != nil || v.Gate == nil || v.Gate.To != "plan" {
		t.Fatalf("gate %+v %v", v, err)
	}
	st := te.state(t)
	sub := st.Submitted["spec"]
	if len(sub) != 2 || sub[0].Path != "hegel-tasks/a/SPEC.md" || sub[0].Blob != BlobID([]byte("v1\n")) || sub[0].Size != 3 {
		t.Fatalf("submitted %+v", sub)
	}
	if b, err := te.tasks.ReadTaskFile("a", "submitted/spec/SPEC.md"); err != nil || string(b) != "v1\n" {
		t.Fatalf("tree entry %q %v", b, err)
	}
	if b, err := te.tasks.ReadTaskFile("a", "submitted/spec/a.txt"); err != nil || string(b) != "notes\n" {
		t.Fatalf("tree entry %q %v", b, err)
	}
	// The artifact comes from the ref, not the worktree.
	te.files["hegel-tasks/a/SPEC.md"] = "v2\n"
	task, _ := te.Lookup("a")
	a, err := te.Artifact(task, "SPEC.md", "")
	if err != nil || string(a.Data) != "v1\n" || a.From != "submitted" || a.Node != "spec" {
		t.Fatalf("artifact %+v %v", a, err)
	}
	if _, err := te.Artifact(task, "SPEC.md", "plan"); !errors.Is(err, ErrNotFound) {
		t.Errorf("--node plan: %v", err)
	}
	if _, err := te.Artifact(task, "SPEC.md", "nosuch"); err == nil {
		t.Error("--node nosuch")
	}
	te.files["hegel-tasks/a/SPEC.md"] = "v1\n"
	if _, err := te.Approve(ApproveOptions{Comment: "ok"}); err != nil {
		t.Fatal(err)
	}
	st = te.state(t)
	ap := st.Approvals[len(st.Approvals)-1]
	if len(ap.Artifacts) != 2 || ap.Artifacts[0].Blob != BlobID([]byte("v1\n")) {
		t.Fatalf("approval %+v", ap)
	}
	d, err := te.Show("a")
	if err != nil || len(d.Warnings) != 0 {
		t.Fatalf("warnings before a change: %q %v", d.Warnings, err)
	}
	for _, art := range d.Artifacts {
		if art.Node == "design" && (!art.Skipped || art.Pending) {
			t.Errorf("design's artifact: %+v", art)
		}
	}
	te.files["hegel-tasks/a/SPEC.md"] = "v3\n"
	d, _ = te.Show("a")
	if len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "hegel-tasks/a/SPEC.md in this worktree differs from what Ann approved at spec") {
		t.Errorf("warnings %q", d.Warnings)
	}
}

// A state whose submitted index names paths outside the worktree or
// bad ids is refused like any broken state.
func TestSubmittedIsValidated(t *testing.T) {
	te := newReviewEnv(t)
	te.StartTask(StartOptions{Workflow: "r", Task: "a"})
	st := te.state(t)
	wf, _ := definition(te.tasks.tasks["a"])
	for _, bad := range []Submitted{{Path: "../x", Blob: BlobID(nil)}, {Path: "x", Blob: "HEAD"}} {
		s := st.Clone()
		s.Submitted = map[string][]Submitted{"spec": {bad}}
		if ValidateState(s, wf) == nil {
			t.Errorf("accepted %+v", bad)
		}
	}
	s := st.Clone()
	s.ArtifactDir = "/etc"
	if ValidateState(s, wf) == nil {
		t.Error("accepted artifact_dir /etc")
	}
}

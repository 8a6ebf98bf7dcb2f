package engine

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// oneStep is a workflow of one node that leads to done.
func oneStep(name string) []byte {
	return []byte(y("mode: "+name, "start_node: one", "nodes:", "  one:", "    prompt: do "+name,
		"    transitions:", "      - when: one_complete", "        to: done"))
}

// newMetaEngine has workflows a, b and c, and meta-modes loop (a, then b
// or c; b back to a) and ends (a, then b, switching to loop).
func newMetaEngine(t *testing.T) *testEnv {
	te := newTestEngine(t, map[string][]byte{
		".hegel/workflows/a.yaml": oneStep("a"),
		".hegel/workflows/b.yaml": oneStep("b"),
		".hegel/workflows/c.yaml": oneStep("c"),
	})
	te.MetaModes = func() (*workflow.MetaRegistry, error) {
		return workflow.LoadMetaModes(map[string][]byte{
			".hegel/meta/loop.yaml": []byte(y("start: a", "transitions:", "  a: [b, c]", "  b: [a]")),
			".hegel/meta/ends.yaml": []byte(y("start: a", "transitions:", "  a: [b]", "switch:", "  b: loop")),
			".hegel/meta/gone.yaml": []byte(y("start: nosuch")),
		}, nil), nil
	}
	return te
}

func TestMetaDeclareAndNext(t *testing.T) {
	te := newMetaEngine(t)
	v, err := te.DeclareMeta("loop", StartOptions{Task: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	if v.State.Workflow != "a" || v.State.MetaMode != "loop" {
		t.Fatalf("declared: %+v", v.State)
	}
	mv, err := te.Meta(TaskOptions{})
	if err != nil || mv.Mode == nil || mv.Done || !slices.Equal(mv.Next, []string{"b", "c"}) {
		t.Fatalf("meta view = %+v, %v", mv, err)
	}
	// Mid-workflow: declaring another, or the next workflow, changes nothing.
	n := len(te.tasks.log)
	if _, err := te.DeclareMeta("ends", StartOptions{}); err == nil || !strings.Contains(err.Error(), "mid-workflow") {
		t.Errorf("declare mid-workflow: %v", err)
	}
	if _, err := te.NextWorkflow("b"); err == nil || !strings.Contains(err.Error(), "starts when it is done") {
		t.Errorf("next-workflow mid-workflow: %v", err)
	}
	if len(te.tasks.log) != n {
		t.Errorf("refusals wrote %d commits", len(te.tasks.log)-n)
	}
	if _, err := te.Next(""); err != nil {
		t.Fatal(err)
	}
	if mv, _ := te.Meta(TaskOptions{}); !mv.Done {
		t.Errorf("done task: %+v", mv)
	}
	// Two follow a: a name is needed, and must be one of them.
	for _, bad := range []string{"", "a", "../b"} {
		if _, err := te.NextWorkflow(bad); !errors.Is(err, ErrBadName) {
			t.Errorf("next-workflow %q: %v", bad, err)
		}
	}
	if len(te.tasks.log) != n+1 {
		t.Errorf("refusals wrote commits")
	}
	v, err = te.NextWorkflow("b")
	if err != nil || v.State.Workflow != "b" || v.State.MetaMode != "loop" || v.Task == "t1" {
		t.Fatalf("next-workflow b: %+v %v", v, err)
	}
	// b leads back to a only: with no name, a.
	if _, err := te.Next(""); err != nil {
		t.Fatal(err)
	}
	if v, err = te.NextWorkflow(""); err != nil || v.State.Workflow != "a" {
		t.Fatalf("next-workflow after b: %+v %v", v, err)
	}
}

func TestMetaSwitchAndEnd(t *testing.T) {
	te := newMetaEngine(t)
	if _, err := te.DeclareMeta("ends", StartOptions{}); err != nil {
		t.Fatal(err)
	}
	te.Next("")
	v, err := te.NextWorkflow("b")
	if err != nil || v.State.MetaMode != "loop" {
		t.Fatalf("switch: %+v %v", v, err)
	}
	te.Next("")
	if v, err = te.NextWorkflow(""); err != nil || v.State.Workflow != "a" || v.State.MetaMode != "loop" {
		t.Fatalf("after the switch: %+v %v", v, err)
	}
	// c ends loop: nothing follows it.
	te.Next("")
	te.NextWorkflow("c")
	te.Next("")
	if _, err := te.NextWorkflow(""); err == nil || !strings.Contains(err.Error(), "no workflow follows it") {
		t.Errorf("end of the sequence: %v", err)
	}
}

func TestMetaBadInput(t *testing.T) {
	te := newMetaEngine(t)
	_, err := te.DeclareMeta("nosuch", StartOptions{})
	if !errors.Is(err, ErrBadName) || !strings.Contains(err.Error(), "(meta-modes: 'ends', 'gone', 'learning', 'loop', 'standard')") {
		t.Errorf("unknown meta-mode: %v", err)
	}
	if _, err := te.DeclareMeta("gone", StartOptions{}); err == nil || !strings.Contains(err.Error(), "names the workflow 'nosuch', which is not defined") {
		t.Errorf("missing workflow: %v", err)
	}
	if len(te.tasks.log) != 0 {
		t.Errorf("refusals wrote %d commits", len(te.tasks.log))
	}
	te.Start("a", "", "plain")
	te.Next("")
	if _, err := te.NextWorkflow(""); err == nil || !strings.Contains(err.Error(), "was not started in a meta-mode") {
		t.Errorf("plain task: %v", err)
	}
}

func TestMetaAuto(t *testing.T) {
	te := newMetaEngine(t)
	te.DeclareMeta("ends", StartOptions{})
	v, _ := te.Next("")
	// Off by default.
	if got, err := te.AutoNextWorkflow(v.State); got != nil || err != nil {
		t.Fatalf("auto while off: %+v %v", got, err)
	}
	te.MetaAuto = true
	// A task this worktree does not own never starts anything.
	other := v.State.Clone()
	other.Worktree, other.WorktreeID = "/elsewhere", ""
	if got, _ := te.AutoNextWorkflow(other); got != nil {
		t.Fatalf("auto on another worktree's task: %+v", got)
	}
	// Nor does a hostile or unknown meta_mode.
	for _, m := range []string{"nosuch", "../../x", strings.Repeat("z", 70000)} {
		h := v.State.Clone()
		h.MetaMode = m
		if got, _ := te.AutoNextWorkflow(h); got != nil {
			t.Fatalf("auto with meta_mode %.20q: %+v", m, got)
		}
	}
	got, err := te.AutoNextWorkflow(v.State)
	if err != nil || got == nil || got.State.Workflow != "b" {
		t.Fatalf("auto: %+v %v", got, err)
	}
	// Two choices: nothing starts by itself.
	v, _ = te.Next("")
	te.NextWorkflow("")
	v, _ = te.Next("")
	if got, _ := te.AutoNextWorkflow(v.State); got != nil {
		t.Errorf("auto with two choices: %+v", got)
	}
}

package engine

import (
	"errors"
	"strings"
	"testing"
)

// upgradeEnv is a test engine whose worktree files are the map files.
func upgradeEnv(t *testing.T, files map[string][]byte) (*testEnv, *fakeTrust) {
	te := newTestEngine(t, files)
	tr := &fakeTrust{}
	te.Trust = tr
	te.WorkflowFile = func(name string) (string, []byte, error) {
		p := ".hegel/workflows/" + name + ".yaml"
		if b, ok := files[p]; ok {
			return p, b, nil
		}
		return "", nil, ErrNotFound
	}
	return te, tr
}

// TestUpgradeAdoptsTheWorktreeFile: a changed file is reported, planned
// with both versions, adopted in one commit and trusted as a start; the
// same file again is nothing to do.
func TestUpgradeAdoptsTheWorktreeFile(t *testing.T) {
	files := map[string][]byte{".hegel/workflows/w.yaml": []byte(localWF)}
	te, tr := upgradeEnv(t, files)
	if _, err := te.Start("w", "", "t"); err != nil {
		t.Fatal(err)
	}
	cur, _ := te.Current("")
	if _, changed := te.WorkflowFileChanged(cur); changed {
		t.Fatal("an unchanged file reported as changed")
	}
	changedWF := strings.Replace(localWF, "Write the code.", "Write the code, with tests.", 1)
	files[".hegel/workflows/w.yaml"] = []byte(changedWF)
	if src, changed := te.WorkflowFileChanged(cur); !changed || src != ".hegel/workflows/w.yaml" {
		t.Fatalf("changed file: %q %v", src, changed)
	}
	p, err := te.PlanUpgrade(TaskOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Same || string(p.Old) != localWF || string(p.New) != changedWF || p.Node != "code" {
		t.Fatalf("plan %+v", p)
	}
	if _, err := te.Upgrade(p, TaskOptions{}); err != nil {
		t.Fatal(err)
	}
	cur, _ = te.Current("")
	if string(cur.Definition) != changedWF {
		t.Fatal("the task does not hold the worktree's definition")
	}
	if log := te.tasks.log[len(te.tasks.log)-1]; !strings.HasPrefix(log, "upgrade: workflow w from .hegel/workflows/w.yaml") {
		t.Fatalf("commit message %q", log)
	}
	if !te.TrustOf([]byte(changedWF)).Trusted || tr.recs[len(tr.recs)-1].How != TrustStart {
		t.Fatalf("adopted definition not trusted as a start: %+v", tr.recs)
	}
	if p, err := te.PlanUpgrade(TaskOptions{}); err != nil || !p.Same {
		t.Fatalf("again: %+v %v", p, err)
	}
}

// TestUpgradeHostile: a fetched definition is never trusted or adopted
// by upgrade; a definition that changes after the plan, a broken file and
// a file without the task's node are refused with nothing changed.
func TestUpgradeHostile(t *testing.T) {
	files := map[string][]byte{".hegel/workflows/w.yaml": []byte(localWF)}
	te, _ := upgradeEnv(t, files)
	if _, err := te.Start("w", "", "t"); err != nil {
		t.Fatal(err)
	}
	// A fetch brings another definition: the worktree's file now differs
	// from the task's; the fetched one stays untrusted whatever happens.
	te.fetch(t, "t", fetchedWF)
	cur, _ := te.Current("")
	if _, changed := te.WorkflowFileChanged(cur); !changed {
		t.Fatal("a fetched definition that differs from the file is not reported")
	}
	p, err := te.PlanUpgrade(TaskOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Same || string(p.New) != localWF {
		t.Fatalf("plan %+v", p)
	}
	// Another fetch between the plan and the upgrade: refused.
	te.fetch(t, "t", fetchedWF+"# again\n")
	if _, err := te.Upgrade(p, TaskOptions{}); !errors.Is(err, ErrUpgradeChanged) {
		t.Fatalf("upgrade over a definition changed since the plan: %v", err)
	}
	if te.TrustOf([]byte(fetchedWF)).Trusted || te.TrustOf([]byte(fetchedWF+"# again\n")).Trusted {
		t.Fatal("a fetched definition became trusted")
	}
	files[".hegel/workflows/w.yaml"] = []byte("start_node: code\nnodes: [unclosed\n")
	if _, err := te.PlanUpgrade(TaskOptions{}); err == nil || !strings.Contains(err.Error(), "cannot be loaded") {
		t.Fatalf("broken file: %v", err)
	}
	files[".hegel/workflows/w.yaml"] = []byte(strings.ReplaceAll(localWF, "code", "build"))
	if _, err := te.PlanUpgrade(TaskOptions{}); err == nil || !strings.Contains(err.Error(), "has no node 'code'") || !strings.Contains(err.Error(), "'build'") {
		t.Fatalf("file without the task's node: %v", err)
	}
	cur, _ = te.Current("")
	if string(cur.Definition) != fetchedWF+"# again\n" {
		t.Fatal("a refused upgrade changed the task")
	}
}

package worktree

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/rollback"
)

// TestRollbackThroughTheEngine: checkpoints taken as nodes are entered,
// a rollback to one of them, its undo; the task's node and history and
// the files agree at each step, and the chain says who took what.
func TestRollbackThroughTheEngine(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write("a.txt", "a1\n")
	tr.commitAll("c1")
	tr.start("minimal")
	tr.write("a.txt", "a2\n")
	tr.now = tr.now.Add(time.Minute)
	tr.next()
	atPlan := tr.fingerprint()
	tr.write("a.txt", "a3\n")
	tr.write("new.txt", "new\n")
	later := tr.fingerprint()
	tr.now = tr.now.Add(time.Minute)
	res := tr.mustRollback(engine.RollbackOptions{Node: "plan", Reason: "try again"})
	if got := tr.fingerprint(); got != atPlan {
		t.Fatalf("after the rollback:\n%s", diffLines(atPlan, got))
	}
	st := tr.state()
	if st.CurrentNode != "plan" || st.Status != engine.StatusPaused || len(st.RollbackHistory) != 1 || st.RollbackHistory[0].Reason != "try again" {
		t.Errorf("state after the rollback: %+v", st)
	}
	if res.Safety.Kind != engine.CheckpointSafety || res.Safety.RollbackTo != "plan" || !res.Safety.Local {
		t.Errorf("safety checkpoint %+v", res.Safety)
	}
	_, cps, err := tr.e.Checkpoints("")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cps {
		if !c.Local || c.Task != "t1" || c.Node == "" || c.Author != "Test <test@example.com>" {
			t.Errorf("checkpoint %+v", c)
		}
	}
	tr.now = tr.now.Add(time.Minute)
	tr.mustRollback(engine.RollbackOptions{Undo: true})
	if got := tr.fingerprint(); got != later {
		t.Fatalf("after the undo:\n%s", diffLines(later, got))
	}
	if st := tr.state(); st.CurrentNode != "plan" || st.Status != engine.StatusActive {
		t.Errorf("state after the undo: %+v", st)
	}
	tr.git("fsck", "--strict", "--no-dangling")
}

func TestCheckpointsOff(t *testing.T) {
	tr := newDiskRepo(t)
	tr.e.NoAutoCheckpoints = true // hegel.checkpoints=off
	tr.start("minimal")
	tr.next()
	if _, cps, _ := tr.e.Checkpoints(""); len(cps) != 0 {
		t.Fatalf("%d checkpoints with hegel.checkpoints=off", len(cps))
	}
	if _, created, err := tr.e.TakeCheckpoint("", ""); err != nil || !created {
		t.Fatalf("manual checkpoint: %v", err)
	}
	_, err := tr.rollback(engine.RollbackOptions{Node: "spec"})
	if err == nil || !strings.Contains(err.Error(), "hegel.checkpoints is off") {
		t.Errorf("err = %v", err)
	}
}

// legacyCheckpoint is checkpoint.json as git-hegel wrote it before ids
// were derived from the content: its fields, in its order.
type legacyCheckpoint struct {
	ID                string   `json:"id"`
	Task              string   `json:"task"`
	WorkflowID        string   `json:"workflow_id"`
	Node              string   `json:"node"`
	Kind              string   `json:"kind"`
	Message           string   `json:"message,omitempty"`
	CreatedAt         string   `json:"created_at"`
	Branch            string   `json:"branch,omitempty"`
	Head              string   `json:"head,omitempty"`
	History           []string `json:"history"`
	FilesChanged      []string `json:"files_changed"`
	FilesChangedCount int      `json:"files_changed_count"`
	RollbackTo        string   `json:"rollback_to,omitempty"`
}

// plantLegacy appends to task t1's chain a checkpoint in the format and
// with the id scheme of the code before (the commit as that code wrote
// it: the previous checkpoint, then HEAD's commit), holding the working
// tree as it is now. It returns its id.
func (tr *testRepo) plantLegacy(id, node string, history []string) string {
	tr.t.Helper()
	tr.git("add", "-A")
	tree := strings.TrimSpace(tr.git("write-tree"))
	tr.git("reset", "-q")
	head := strings.TrimSpace(tr.git("rev-parse", "HEAD"))
	meta, _ := json.MarshalIndent(legacyCheckpoint{ID: id, Task: "t1", WorkflowID: tr.state().WorkflowID, Node: node, Kind: "enter",
		CreatedAt: tr.now.UTC().Format(time.RFC3339), Branch: "refs/heads/main", Head: head, History: history,
		FilesChanged: []string{}}, "", "  ")
	dir := tr.t.TempDir()
	os.WriteFile(filepath.Join(dir, "meta"), append(meta, '\n'), 0o644)
	os.WriteFile(filepath.Join(dir, "version"), []byte("1\n"), 0o644)
	metaBlob := strings.TrimSpace(tr.git("hash-object", "-w", filepath.Join(dir, "meta")))
	verBlob := strings.TrimSpace(tr.git("hash-object", "-w", filepath.Join(dir, "version")))
	os.WriteFile(filepath.Join(dir, "root"), []byte("100644 blob "+metaBlob+"\tcheckpoint.json\n040000 tree "+tree+"\tindex\n100644 blob "+verBlob+"\tversion\n040000 tree "+tree+"\tworktree\n"), 0o644)
	root := strings.TrimSpace(runGitIn(tr, filepath.Join(dir, "root"), "mktree"))
	args := []string{"commit-tree", root}
	if tip, err := tr.r.ReadRef(rollback.RefPrefix + "t1"); err == nil {
		args = append(args, "-p", tip.String())
	}
	args = append(args, "-p", head, "-m", "checkpoint "+id+": enter "+node)
	c := strings.TrimSpace(tr.git(args...))
	tr.git("update-ref", rollback.RefPrefix+"t1", c)
	return id
}

func runGitIn(tr *testRepo, stdin string, args ...string) string {
	tr.t.Helper()
	f, err := os.Open(stdin)
	if err != nil {
		tr.t.Fatal(err)
	}
	defer f.Close()
	cmd := gitCmd(tr, args...)
	cmd.Stdin = f
	out, err := cmd.Output()
	if err != nil {
		tr.t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

// TestLegacyChainStaysRestorable: a chain written in the format of the
// code before (ids not derived from the content, no record of who took
// them) is listed as it was and restored, and since this clone cannot
// tell it took those checkpoints, the rollback names that and needs
// --force. A journal of that code is finished the same way.
func TestLegacyChainStaysRestorable(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write("a.txt", "a1\n")
	tr.commitAll("c1")
	tr.e.NoAutoCheckpoints = true
	tr.start("minimal")
	tr.plantLegacy("188a2804", "spec", []string{"spec"})
	atSpec := tr.fingerprint()
	tr.write("a.txt", "a2\n")
	tr.now = tr.now.Add(time.Minute)
	tr.next()
	tr.plantLegacy("ab1dfdaa", "plan", []string{"spec", "plan"})
	tr.write("a.txt", "a3\n")
	_, cps, err := tr.e.Checkpoints("")
	if err != nil || len(cps) != 2 || cps[0].ID != "188a2804" || cps[1].Node != "plan" || cps[0].Local || cps[1].Local {
		t.Fatalf("legacy chain: %v %+v", err, cps)
	}
	p, err := tr.e.PlanRollback(engine.RollbackOptions{Node: "spec", Yes: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.NeedsForce, "Checkpoint 188a2804 was not taken in this clone") || !strings.Contains(p.NeedsForce, "Test <test@example.com>") {
		t.Errorf("needs force: %q", p.NeedsForce)
	}
	if _, err := tr.e.Rollback(p); err == nil {
		t.Fatal("restored without --force")
	}
	tr.mustRollback(engine.RollbackOptions{Node: "spec", Force: true})
	if got := tr.fingerprint(); got != atSpec {
		t.Fatalf("after the rollback:\n%s", diffLines(atSpec, got))
	}
	// Its undo restores a safety checkpoint this clone took: no --force.
	tr.mustRollback(engine.RollbackOptions{Undo: true})

	// A journal as the code before wrote it (no chain named), left by a
	// killed process, is finished.
	tr.interrupt(engine.RollbackOptions{Node: "spec", Force: true})
	tr.setJournal(func(j map[string]any) { delete(j, "chain") })
	rec, err := tr.e.InterruptedRollback()
	if err != nil || rec == nil || rec.Node != "spec" || rec.Task != "t1" {
		t.Fatalf("legacy journal: %v %+v", err, rec)
	}
	if _, _, err := tr.e.FinishRollback(engine.TaskOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := tr.fingerprint(); got != atSpec {
		t.Fatalf("after finishing:\n%s", diffLines(atSpec, got))
	}
	tr.git("fsck", "--strict", "--no-dangling")
}

// TestForgedCheckpointIsNotLocal: a checkpoint that copies the id of one
// this clone took, but holds other files and names another commit, is
// not taken for it: its id does not match its content.
func TestForgedCheckpointIsNotLocal(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write("a.txt", "a1\n")
	tr.commitAll("c1")
	tr.start("minimal")
	_, cps, _ := tr.e.Checkpoints("")
	mine := cps[0]
	if !mine.Local {
		t.Fatal("this clone's checkpoint is not Local")
	}
	// The forger's commit, on a branch of its own.
	tr.git("checkout", "-q", "-b", "evil")
	tr.write("Makefile", "all:\n\ttouch pwned\n")
	tr.commitAll("evil")
	tr.git("checkout", "-q", "main")
	tr.git("branch", "-D", "-q", "evil") // only the checkpoint reaches it
	tr.plantForged(mine)
	_, cps, _ = tr.e.Checkpoints("")
	var forged *engine.Checkpoint
	for _, c := range cps {
		if c.ID == mine.ID && c.Commit != mine.Commit {
			forged = c
		}
	}
	if forged == nil || forged.Local {
		t.Fatalf("forged checkpoint: %+v", forged)
	}
	// Back to the start of spec: the newest checkpoint there is the
	// forged one. The plan says so, and -y alone does not restore it.
	before := tr.fingerprint()
	p, err := tr.e.PlanRollback(engine.RollbackOptions{Node: "spec", Yes: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Target != forged && p.Target.Commit != forged.Commit || p.NeedsForce == "" || len(p.Restore.Files) == 0 {
		t.Fatalf("plan: target %+v, needs force %q", p.Target, p.NeedsForce)
	}
	if _, err := tr.e.Rollback(p); err == nil {
		t.Fatal("the forged checkpoint was restored without --force")
	}
	if got := tr.fingerprint(); got != before {
		t.Fatalf("a refused rollback changed something:\n%s", diffLines(before, got))
	}
	if _, err := os.Stat(filepath.Join(tr.dir, "Makefile")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the forged checkpoint's file was written: %v", err)
	}
}

// plantForged appends a copy of mine's metadata (same id, same node) to
// the chain, holding the files of HEAD@{1}'s commit, as a remote could.
func (tr *testRepo) plantForged(mine *engine.Checkpoint) {
	tr.t.Helper()
	cp := mine.Handle.(*rollback.Checkpoint)
	evil := strings.TrimSpace(tr.git("rev-parse", "HEAD@{1}"))
	tree := strings.TrimSpace(tr.git("rev-parse", evil+"^{tree}"))
	var meta map[string]any
	data := tr.git("cat-file", "blob", cp.Root.String()+":checkpoint.json")
	json.Unmarshal([]byte(data), &meta)
	meta["head"], meta["branch"] = evil, "refs/heads/main"
	b, _ := json.MarshalIndent(meta, "", "  ")
	dir := tr.t.TempDir()
	os.WriteFile(filepath.Join(dir, "meta"), append(b, '\n'), 0o644)
	metaBlob := strings.TrimSpace(tr.git("hash-object", "-w", filepath.Join(dir, "meta")))
	verBlob := strings.TrimSpace(tr.git("rev-parse", cp.Root.String()+":version"))
	os.WriteFile(filepath.Join(dir, "root"), []byte("100644 blob "+metaBlob+"\tcheckpoint.json\n040000 tree "+tree+"\tindex\n100644 blob "+verBlob+"\tversion\n040000 tree "+tree+"\tworktree\n"), 0o644)
	root := strings.TrimSpace(runGitIn(tr, filepath.Join(dir, "root"), "mktree"))
	tip, _ := tr.r.ReadRef(rollback.RefPrefix + "t1")
	c := strings.TrimSpace(tr.git("commit-tree", root, "-p", tip.String(), "-p", evil, "-m", "checkpoint "+mine.ID+": enter spec"))
	tr.git("update-ref", rollback.RefPrefix+"t1", c)
	if h := plumbing.NewHash(c); h.IsZero() {
		tr.t.Fatal("no commit")
	}
}

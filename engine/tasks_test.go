package engine

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// pipelineArtifacts writes every artifact the pipeline names, in the
// folder of task p.
func (te *testEnv) pipelineArtifacts() {
	for _, p := range []string{"SPEC.md", "PLAN.md", "DESIGN.md", "PREFLIGHT_REPORT.md", "DEVELOPMENT.md", "MIGRATION_REPORT.md",
		"TEST_PLAN.md", "CONTRACT_REPORT.md", "QA_REPORT.md", "BENCHMARK_REPORT.md", "SECURITY_CHECKLIST.md",
		"REVIEW_NOTES.md", "DOCS_REPORT.md"} {
		te.files["hegel-tasks/p/"+p] = "# " + p + "\n"
	}
}

// walkPipeline starts a pipeline task of type typ and walks it to done,
// approving at pm, and returns the nodes it stopped at.
func (te *testEnv) walkPipeline(t *testing.T, task, typ string) []string {
	t.Helper()
	v, err := te.StartTask(StartOptions{Workflow: "pipeline", Task: task, Type: typ})
	if err != nil {
		t.Fatal(err)
	}
	seen := []string{v.Node}
	for i := 0; i < 20; i++ {
		te.now = te.now.Add(time.Minute)
		st := te.state(t)
		if st.Finished() {
			return seen
		}
		if st.Status == StatusAwaitingApproval {
			v, err = te.Approve(ApproveOptions{Comment: "ok"})
		} else {
			v, err = te.Next("")
		}
		if err != nil {
			t.Fatal(err)
		}
		if v.Gate == nil {
			seen = append(seen, v.Node)
		}
	}
	t.Fatal("the pipeline did not finish")
	return nil
}

func TestPipelineWalksPerTaskType(t *testing.T) {
	cases := map[string][]string{
		"feature": {"pm", "design", "preflight", "dev", "migration", "test", "contract", "qa", "benchmark", "security", "review", "docs", "done"},
		"bug_fix": {"pm", "preflight", "dev", "migration", "test", "contract", "qa", "security", "review", "docs", "done"},
		"docs":    {"pm", "dev", "review", "docs", "done"},
	}
	for typ, want := range cases {
		t.Run(typ, func(t *testing.T) {
			te := newTestEngine(t, nil)
			te.pipelineArtifacts()
			got := te.walkPipeline(t, "p", typ)
			if !slices.Equal(got, want) {
				t.Fatalf("walked %v\nwant   %v", got, want)
			}
			a, err := te.Lookup("p")
			if err != nil {
				t.Fatal(err)
			}
			st := a.State
			if !a.Archived || st.Status != StatusCompleted || st.TaskType != typ {
				t.Errorf("at the end: archived %v, %s, type %s", a.Archived, st.Status, st.TaskType)
			}
			wf := builtin(t, "pipeline")
			var skipped []string
			for _, s := range st.SkippedNodes {
				skipped = append(skipped, s.Node)
				if s.Reason != "skipped for task type "+typ {
					t.Errorf("skip reason %q", s.Reason)
				}
			}
			if !slices.Equal(skipped, wf.Skips()[typ]) {
				t.Errorf("skipped %v, want %v", skipped, wf.Skips()[typ])
			}
			if len(st.Approvals) != 1 || st.Approvals[0].Node != "pm" || st.Approvals[0].By != "Ann" {
				t.Errorf("approvals %+v", st.Approvals)
			}
			// The history records the skips.
			if typ != "feature" && !strings.Contains(strings.Join(te.tasks.log, "\n"), "; skipped design") {
				t.Errorf("no skip in the history:\n%s", strings.Join(te.tasks.log, "\n"))
			}
			// Skipped stages' inputs are not expected: no warning names
			// DESIGN.md for a type that skips design.
			for _, w := range te.warnings {
				if typ != "feature" && strings.Contains(w, "DESIGN.md") {
					t.Errorf("warning about a skipped stage's file: %s", w)
				}
			}
		})
	}
}

func TestStartOptions(t *testing.T) {
	te := newTestEngine(t, nil)
	v, err := te.StartTask(StartOptions{Workflow: "pipeline", Task: "p", Description: "Fix login", Priority: "urgent"})
	if err != nil {
		t.Fatal(err)
	}
	st := v.State
	if st.TaskType != "feature" || st.Description != "Fix login" || st.Priority != "urgent" || v.Task != "p" {
		t.Errorf("start options: %+v", st)
	}
	var last error
	for _, o := range []StartOptions{
		{Workflow: "pipeline", Task: "q", Type: "epic"},
		{Workflow: "minimal", Task: "q", Type: "feature"},
		{Workflow: "pipeline", Task: "q", Priority: "asap"},
	} {
		if _, last = te.StartTask(o); !errors.Is(last, ErrBadName) {
			t.Errorf("%+v: %v", o, last)
		}
	}
	if _, err := te.tasks.LoadTask("q"); err == nil {
		t.Error("a refused start left a task")
	}
	if got := last.Error(); got != "Unknown priority 'asap' (use 'low', 'normal', 'high', 'urgent')" {
		t.Errorf("priority message %q", got)
	}
}

func TestArtifactBlocksNext(t *testing.T) {
	te := newTestEngine(t, nil)
	delete(te.files, anyTaskFile)
	te.StartTask(StartOptions{Workflow: "pipeline", Task: "p"})
	n := len(te.tasks.log)
	var ae *ArtifactError
	if _, err := te.Next(""); !errors.As(err, &ae) || ae.Path != "hegel-tasks/p/SPEC.md" || ae.Empty ||
		err.Error() != "Cannot leave 'pm': its artifact hegel-tasks/p/SPEC.md is missing (write it, or run 'git hegel next --force' to move on without it)" {
		t.Fatalf("missing artifact: %v", err)
	}
	te.files["hegel-tasks/p/SPEC.md"] = ""
	if _, err := te.Next(""); !errors.As(err, &ae) || !ae.Empty {
		t.Fatalf("empty artifact: %v", err)
	}
	if len(te.tasks.log) != n {
		t.Fatal("a refused next wrote")
	}
	// --force goes on (to the gate here) and says so in the task.
	if _, err := te.NextWith(NextOptions{Force: Force{All: true}}); err != nil {
		t.Fatal(err)
	}
	st := te.state(t)
	if len(st.Overrides) != 1 || st.Overrides[0].What != "artifact" || st.Overrides[0].Node != "pm" {
		t.Errorf("overrides %+v", st.Overrides)
	}
}

func TestRequiresWarnOnEntry(t *testing.T) {
	te := newTestEngine(t, nil)
	delete(te.files, anyTaskFile)
	te.StartTask(StartOptions{Workflow: "pipeline", Task: "p"})
	te.files["hegel-tasks/p/SPEC.md"] = "spec"
	te.NextWith(NextOptions{Force: Force{All: true}})
	te.Approve(ApproveOptions{})
	if len(te.warnings) != 1 || te.warnings[0] != "'design' reads hegel-tasks/p/PLAN.md, which is missing" {
		t.Errorf("warnings %q", te.warnings)
	}
}

func TestQAFailedIsARollbackEvent(t *testing.T) {
	te := newTestEngine(t, nil)
	te.pipelineArtifacts()
	te.StartTask(StartOptions{Workflow: "pipeline", Task: "p", Type: "bug_fix"})
	te.Next("")
	te.Approve(ApproveOptions{})
	for te.state(t).CurrentNode != "qa" {
		if _, err := te.Next(""); err != nil {
			t.Fatal(err)
		}
	}
	te.now = te.now.Add(time.Hour)
	v, err := te.Next("qa_failed")
	if err != nil || v.Node != "dev" {
		t.Fatalf("qa_failed: %v %v", v, err)
	}
	st := v.State
	ev := st.RollbackHistory[len(st.RollbackHistory)-1]
	if ev.From != "qa" || ev.To != "dev" || ev.Reason != "qa_failed" || !ev.Timestamp.Equal(te.now) {
		t.Errorf("event %+v", ev)
	}
	if slices.Contains(st.CompletedNodes, "dev") || !slices.Contains(st.CompletedNodes, "qa") {
		t.Errorf("completed %v", st.CompletedNodes)
	}
}

func TestTaskOptionActsOnAnInactiveTask(t *testing.T) {
	te := newTestEngine(t, nil)
	te.Start("minimal", "", "a")
	te.Start("minimal", "", "b") // parks a
	other := newTestEngine(t, nil)
	other.Engine.Tasks, other.Engine.Archive, other.tasks = te.tasks, te.tasks, te.tasks
	other.Worktree = "/other"
	other.Start("minimal", "", "c")

	// Read: status of a parked task and of another worktree's.
	for _, name := range []string{"a", "c"} {
		if cur, err := te.Current(name); err != nil || cur.State.Task != name {
			t.Fatalf("--task %s: %v", name, err)
		}
	}
	// A parked task belongs to nobody: it can be moved from here.
	if v, err := te.NextWith(NextOptions{Task: "a"}); err != nil || v.Node != "plan" {
		t.Fatalf("next --task a: %v", err)
	}
	// Another worktree's needs --force, which is recorded.
	var oe *OwnerError
	if _, err := te.NextWith(NextOptions{Task: "c"}); !errors.As(err, &oe) || oe.Owner != "/other" {
		t.Fatalf("next on another worktree's task: %v", err)
	}
	if _, err := te.NextWith(NextOptions{Task: "c", Force: Force{All: true}}); err != nil {
		t.Fatal(err)
	}
	c, _ := te.tasks.LoadTask("c")
	if c.State.CurrentNode != "plan" || len(c.State.Overrides) != 1 || c.State.Overrides[0].What != "owner" {
		t.Errorf("forced: %+v", c.State)
	}
	// This worktree's own task was not touched, nor its session.
	if st := te.state(t); st.Task != "b" || st.CurrentNode != "spec" {
		t.Errorf("own task %s at %s", st.Task, st.CurrentNode)
	}
	if _, err := te.Current("nope"); !errors.Is(err, ErrNotFound) || err.Error() != "No task named 'nope' (see 'git hegel tasks --all --archived')" {
		t.Errorf("unknown task: %v", err)
	}
}

func TestSwitchParksAndRefusesFinished(t *testing.T) {
	te := newTestEngine(t, nil)
	te.Start("minimal", "", "a")
	te.Start("minimal", "", "b") // parks a
	v, err := te.Switch("a")
	if err != nil || v.Parked == nil || v.Parked.Task != "b" {
		t.Fatalf("switch: %+v %v", v, err)
	}
	b, _ := te.tasks.LoadTask("b")
	if !b.State.Active() || !ownedByNobody(b.State) {
		t.Errorf("b not parked: %+v", b.State)
	}
	te.Next("")
	te.Next("") // a is done, archived
	if _, err := te.Switch("a"); err == nil || err.Error() != "Task 'a' has finished (completed at 'done'); start it again with 'git hegel start minimal --task a'" {
		t.Errorf("switch to a finished task: %v", err)
	}
	// An unknown task is named before anything about the active one.
	te.Switch("b")
	if _, err := te.Switch("zz"); err == nil || !strings.HasPrefix(err.Error(), "No task named 'zz'") {
		t.Errorf("unknown: %v", err)
	}
}

func TestListTasksOrderAndArchive(t *testing.T) {
	te := newTestEngine(t, nil)
	te.StartTask(StartOptions{Workflow: "minimal", Task: "low", Priority: "low"})
	te.now = te.now.Add(time.Minute)
	te.StartTask(StartOptions{Workflow: "minimal", Task: "urgent", Priority: "urgent"})
	te.now = te.now.Add(time.Minute)
	te.StartTask(StartOptions{Workflow: "minimal", Task: "done"})
	te.Next("")
	te.Next("")
	te.now = te.now.Add(time.Minute)
	te.StartTask(StartOptions{Workflow: "minimal", Task: "paused"})
	te.Pause(TaskOptions{}, "")
	// A task that finished before archiving existed, still in tasks/.
	old := &State{Task: "old", Workflow: "minimal", Mode: "minimal", CurrentNode: workflow.NodeDone, History: []string{"spec", "plan", "done"},
		Status: StatusCompleted, StartedAt: t0, EndedAt: &t0, UpdatedAt: t0, Attempt: 1, Worktree: "/elsewhere"}
	te.put(t, string(builtin(t, "minimal").Raw), old)

	names := func(list []TaskInfo) string {
		var s []string
		for _, x := range list {
			s = append(s, x.Name)
		}
		return strings.Join(s, " ")
	}
	list, err := te.ListTasks(ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(list); got != "urgent low paused" {
		t.Errorf("tasks = %q", got)
	}
	// Listing archived the old finished task, without artifacts.
	if _, err := te.tasks.LoadTask("old"); !errors.Is(err, ErrNotFound) {
		t.Errorf("old not archived: %v", err)
	}
	if a, err := te.tasks.LoadArchived("old"); err != nil || a.State.Status != StatusCompleted {
		t.Fatalf("old in the archive: %v", err)
	}
	list, _ = te.ListTasks(ListOptions{All: true, Archived: true})
	if got := names(list); got != "urgent low paused done old" {
		t.Errorf("tasks --all --archived = %q", got)
	}
	for _, x := range list {
		if x.Current != (x.Name == "paused") || (x.Archived != (x.Name == "done" || x.Name == "old")) {
			t.Errorf("%s: current %v archived %v", x.Name, x.Current, x.Archived)
		}
	}
}

func TestArchiveOnFinish(t *testing.T) {
	te := newTestEngine(t, nil)
	te.pipelineArtifacts()
	var finished []string
	te.OnFinish = func(st *State) error { finished = append(finished, st.Task+":"+st.Status); return nil }
	te.tasks.cps["p"] = "cp1"
	te.walkPipeline(t, "p", "docs")
	a, err := te.tasks.LoadArchived("p")
	if err != nil {
		t.Fatal(err)
	}
	if a.State.Status != StatusCompleted {
		t.Errorf("archived %s", a.State.Status)
	}
	// Listed in path order, as the git store lists a tree.
	files, _ := te.tasks.ArchivedFiles("p")
	if len(files) != 13 || files[11].Path != "hegel-tasks/p/SPEC.md" || files[11].Size != int64(len("# SPEC.md\n")) {
		t.Errorf("artifact copies %+v", files)
	}
	if _, ok := te.tasks.cps["p"]; ok {
		t.Error("checkpoints kept after done")
	}
	if last := te.tasks.archived[len(te.tasks.archived)-1]; last != "archive: completed at done (13 artifacts: hegel-tasks/p/SPEC.md, hegel-tasks/p/PLAN.md, hegel-tasks/p/DESIGN.md, hegel-tasks/p/PREFLIGHT_REPORT.md, hegel-tasks/p/DEVELOPMENT.md, hegel-tasks/p/MIGRATION_REPORT.md, hegel-tasks/p/TEST_PLAN.md, hegel-tasks/p/CONTRACT_REPORT.md, hegel-tasks/p/QA_REPORT.md, hegel-tasks/p/BENCHMARK_REPORT.md, and 3 more)" {
		t.Errorf("archive message %q", last)
	}
	// status still shows the finished task.
	if st := te.state(t); st.Status != StatusCompleted || st.Task != "p" {
		t.Errorf("status after done: %+v", st)
	}
	// Abort archives too; hegel.keepCheckpointsOnDone keeps checkpoints.
	te.KeepCheckpoints = true
	te.Start("minimal", "", "m")
	te.tasks.cps["m"] = "cp2"
	te.Abort(TaskOptions{})
	if a, err := te.tasks.LoadArchived("m"); err != nil || a.State.Status != StatusAborted || te.tasks.cps["m"] != "cp2" {
		t.Errorf("aborted: %v %v", err, te.tasks.cps)
	}
	if !slices.Equal(finished, []string{"p:completed", "m:aborted"}) {
		t.Errorf("OnFinish ran for %v", finished)
	}
}

func TestArchivedTaskContinuesItsChain(t *testing.T) {
	te := newTestEngine(t, nil)
	te.Start("minimal", "", "t")
	te.Next("")
	te.Next("")
	first, _ := te.tasks.LoadArchived("t")
	// prev out of done reopens it: back at the task ref, from the archive.
	if v, err := te.Prev(TaskOptions{}); err != nil || v.Node != "plan" {
		t.Fatalf("prev after done: %v", err)
	}
	live, err := te.tasks.LoadTask("t")
	if err != nil || !te.tasks.contains(live.Rev, first.Rev) {
		t.Fatalf("reopened task does not continue the archive: %v", err)
	}
	te.Next("")
	second, _ := te.tasks.LoadArchived("t")
	if second.Rev == first.Rev || !te.tasks.contains(second.Rev, first.Rev) {
		t.Error("the second archive does not contain the first")
	}
	// Reusing the name continues the chain too.
	te.Start("discovery", "", "t")
	live, _ = te.tasks.LoadTask("t")
	if !te.tasks.contains(live.Rev, second.Rev) || live.State.Workflow != "discovery" {
		t.Error("a reused name does not continue the archived chain")
	}
	// Describing an archived task keeps it in the archive.
	te.Abort(TaskOptions{})
	if _, err := te.Describe("the third run", TaskOptions{Task: "t"}); err != nil {
		t.Fatal(err)
	}
	if a, _ := te.tasks.LoadArchived("t"); a.State.Description != "the third run" {
		t.Error("describe of an archived task")
	}
	if _, err := te.tasks.LoadTask("t"); !errors.Is(err, ErrNotFound) {
		t.Error("describe brought the task back")
	}
}

func TestDeleteAndRestore(t *testing.T) {
	te := newTestEngine(t, nil)
	te.Start("minimal", "", "t")
	if _, err := te.Delete("t"); err == nil || err.Error() != "Task 't' is active; abort it first with 'git hegel abort --task t'" {
		t.Fatalf("delete of an active task: %v", err)
	}
	te.tasks.cps["t"] = "cps"
	te.Abort(TaskOptions{})
	te.KeepCheckpoints = false
	d, err := te.Delete("t")
	if err != nil || d.Status != StatusAborted || !d.Archived {
		t.Fatalf("delete: %+v %v", d, err)
	}
	if _, err := te.Lookup("t"); !errors.Is(err, ErrNotFound) {
		t.Error("deleted task still there")
	}
	if list, _ := te.DeletedTasks(); len(list) != 1 || list[0].Task != "t" {
		t.Errorf("deleted list %+v", list)
	}
	if _, err := te.RestoreTask("t"); err != nil {
		t.Fatal(err)
	}
	if a, err := te.Lookup("t"); err != nil || !a.Archived || a.State.Status != StatusAborted {
		t.Errorf("restored: %v", err)
	}
	if _, err := te.RestoreTask("t"); err == nil || !strings.HasPrefix(err.Error(), "No deleted task named 't'") {
		t.Errorf("restore twice: %v", err)
	}
	// A name used again blocks the restore of the deleted one.
	te.Delete("t")
	te.Start("minimal", "", "t")
	if _, err := te.RestoreTask("t"); err == nil || !strings.HasPrefix(err.Error(), "A task named 't' exists again") {
		t.Errorf("restore over a new task: %v", err)
	}
	// Records older than the window are dropped by the next delete.
	te.Abort(TaskOptions{})
	te.now = te.now.Add(DeletedTaskWindow + time.Hour)
	te.Start("minimal", "", "u")
	te.Abort(TaskOptions{})
	te.Delete("u")
	if list, _ := te.DeletedTasks(); len(list) != 1 || list[0].Task != "u" {
		t.Errorf("after the window: %+v", list)
	}
}

func TestStartIsAtomic(t *testing.T) {
	// The session is locked: nothing is created.
	te := newTestEngine(t, nil)
	te.sess.s = &Session{SessionID: "s"}
	te.sess.locked = true
	if _, err := te.Start("minimal", "", "t"); err == nil {
		t.Fatal("start with the session locked")
	}
	if _, err := te.tasks.LoadTask("t"); !errors.Is(err, ErrNotFound) {
		t.Fatal("a failed start left the task ref")
	}
	te.sess.locked = false
	if _, err := te.Start("minimal", "", "t"); err != nil {
		t.Fatalf("retry: %v", err)
	}
	// The ref was written, then the session write failed: the retry
	// adopts the task instead of calling it someone else's.
	te2 := newTestEngine(t, nil)
	te2.sess.s = &Session{SessionID: "s"}
	te2.sess.failWrite = true
	if _, err := te2.Start("minimal", "", "t"); err == nil {
		t.Fatal("start with a failing session write")
	}
	if _, err := te2.tasks.LoadTask("t"); err != nil {
		t.Fatal("expected the ref to exist (written before the session)")
	}
	v, err := te2.Start("minimal", "", "t")
	if err != nil || v.Task != "t" {
		t.Fatalf("retry after a failed session write: %v", err)
	}
	if te2.sess.s.ActiveTask != "t" {
		t.Error("the retry did not point the session at the task")
	}
	// Adopting is only for that case: a moved task is not adopted.
	te2.Next("")
	te2.sess.s.ActiveTask = ""
	if _, err := te2.Start("minimal", "", "t"); err == nil {
		t.Error("adopted a task that had moved on")
	}
}

package gitstore

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/agent"
)

// eventsRepo is a disk repository with task "t" started on the minimal
// workflow, and its event store.
func eventsRepo(t *testing.T) (*Repo, *engine.Engine, *Events) {
	t.Helper()
	r := newDiskRepo(t)
	e := stashEngine(r, r.WorkTree, r.Now)
	e.Events = r.Events()
	if _, err := e.Start("minimal", "", "t"); err != nil {
		t.Fatal(err)
	}
	return r, e, r.Events()
}

func ev(sec int, cmd string) agent.Event {
	return agent.Event{Time: fixedNow.Add(time.Duration(sec) * time.Second), Kind: agent.EventPostTool,
		Tool: "Bash", Action: agent.ActionCommand, Command: cmd, Task: "t"}
}

func taskSubjects(t *testing.T, r *Repo, task string) []string {
	t.Helper()
	return strings.Split(strings.TrimSpace(runGit(t, r.WorkTree, "log", "--format=%s", TaskRef(task).String())), "\n")
}

func TestJournalAppendAndTail(t *testing.T) {
	r := newDiskRepo(t)
	j := r.Journal()
	if evs, err := j.Tail(fixedNow); err != nil || evs != nil {
		t.Fatalf("missing journal: %v %v", evs, err)
	}
	var all []agent.Event
	for i := 0; i < 3000; i++ {
		all = append(all, ev(i, fmt.Sprintf("cmd %d", i)))
	}
	if err := j.Append(all...); err != nil {
		t.Fatal(err)
	}
	// A crash mid-append leaves a torn line: it is skipped.
	f, _ := os.OpenFile(j.Path(), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"time":"2026-01-02T04:00:00Z","kind":"post_t`)
	f.Close()
	got, err := j.Tail(fixedNow.Add(2990 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 10 || got[0].Command != "cmd 2990" || got[9].Command != "cmd 2999" {
		t.Fatalf("tail = %d events, first %+v", len(got), got[0])
	}
	// The torn line is also skipped by a full read, and a later append is
	// read after it.
	j.Append(ev(5000, "after"))
	pending, _ := j.Pending()
	if len(pending) != 3001 || pending[2999].Command != "cmd 2999" || pending[3000].Command != "after" {
		t.Errorf("pending %d, last %+v", len(pending), pending[len(pending)-1])
	}
	if fi, err := os.Stat(j.Path()); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("journal mode: %v %v", fi.Mode(), err)
	}
}

func TestJournalSharedRepositoryMode(t *testing.T) {
	r := newDiskRepo(t)
	runGit(t, r.WorkTree, "config", "core.sharedRepository", "group")
	r2, err := Open(r.WorkTree, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if err := r2.Journal().Append(ev(0, "x")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(r2.Journal().Path()); fi.Mode().Perm() != 0o664 {
		t.Errorf("shared journal mode %v", fi.Mode().Perm())
	}
}

func TestFoldCommitsOncePerTask(t *testing.T) {
	r, e, s := eventsRepo(t)
	before := len(taskSubjects(t, r, "t"))
	if err := s.Record(ev(1, "go test"), ev(2, "go vet"), ev(3, "go test")); err != nil {
		t.Fatal(err)
	}
	if err := s.Fold(); err != nil {
		t.Fatal(err)
	}
	subj := taskSubjects(t, r, "t")
	if len(subj) != before+1 || subj[0] != "events: 3 events from spec" {
		t.Fatalf("subjects %v", subj)
	}
	if _, err := os.Stat(r.Journal().Path()); !os.IsNotExist(err) {
		t.Errorf("journal left after the fold: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(r.GitDir, foldingPrefix+"*"))
	if len(files) != 0 {
		t.Errorf("folding files left: %v", files)
	}
	// Nothing to fold: no commit.
	if err := s.Fold(); err != nil || len(taskSubjects(t, r, "t")) != before+1 {
		t.Errorf("empty fold committed: %v", err)
	}
	cur, _ := e.Current("")
	run := engine.RunKey(cur.State)
	tree := runGit(t, r.WorkTree, "ls-tree", "-r", "--name-only", TaskRef("t").String())
	if !strings.Contains(tree, "events/"+run+"/000001.spec.") {
		t.Errorf("tree:\n%s", tree)
	}
	got, err := s.Events("t", run, fixedNow)
	if err != nil || len(got) != 3 || got[0].Node != "spec" || got[2].Command != "go test" {
		t.Fatalf("events %+v %v", got, err)
	}
	// A transition keeps the events; the next fold adds a segment at the
	// new node; events of another run are not mixed in.
	if _, err := e.Next(""); err != nil {
		t.Fatal(err)
	}
	s.Record(ev(10, "make"))
	if _, err := e.Next(""); err != nil { // folds first
		t.Fatal(err)
	}
	tree = runGit(t, r.WorkTree, "ls-tree", "-r", "--name-only", TaskRef("t").String())
	if !strings.Contains(tree, "000002.plan.") || !strings.Contains(tree, "000001.spec.") {
		t.Errorf("after next:\n%s", tree)
	}
	got, _ = s.Events("t", run, fixedNow)
	if len(got) != 4 || got[3].Node != "plan" {
		t.Errorf("events after next: %+v", got)
	}
	if other, _ := s.Events("t", "20991231T000000Z", fixedNow); len(other) != 0 {
		t.Errorf("another run sees %d events", len(other))
	}
	// Since filters by time, and skips segments folded earlier.
	if late, _ := s.Events("t", run, fixedNow.Add(5*time.Second)); len(late) != 1 || late[0].Command != "make" {
		t.Errorf("since: %+v", late)
	}
	runGit(t, r.WorkTree, "fsck", "--strict")
}

func TestFoldRecoversFromACrash(t *testing.T) {
	r, e, s := eventsRepo(t)
	cur, _ := e.Current("")
	run := engine.RunKey(cur.State)
	// A fold that crashed before its commit left its file: folded now.
	s.Record(ev(1, "one"))
	j := r.Journal()
	crashed, err := j.rotate(fixedNow)
	if err != nil || crashed == "" {
		t.Fatalf("rotate: %q %v", crashed, err)
	}
	s.Record(ev(2, "two"))
	b, _ := os.ReadFile(crashed)
	if err := s.Fold(); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Events("t", run, fixedNow)
	if len(got) != 2 || got[0].Command != "one" || got[1].Command != "two" {
		t.Fatalf("events %+v", got)
	}
	n := len(taskSubjects(t, r, "t"))
	// A fold that crashed after its commit left its file too: it is
	// recognised by its id and removed, not applied twice.
	if len(b) == 0 {
		t.Fatal("crashed file empty")
	}
	if err := os.WriteFile(crashed, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Fold(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(crashed); !os.IsNotExist(err) {
		t.Errorf("stale folding file kept")
	}
	if got, _ := s.Events("t", run, fixedNow); len(got) != 2 || len(taskSubjects(t, r, "t")) != n {
		t.Errorf("applied twice: %d events, %d commits (was %d)", len(got), len(taskSubjects(t, r, "t")), n)
	}
}

func TestFoldDropsEventsOfDeletedTasks(t *testing.T) {
	r, _, s := eventsRepo(t)
	x := ev(1, "x")
	x.Task = "gone"
	s.Record(x, ev(2, "kept"))
	if err := s.Fold(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(r.Journal().Path()); !os.IsNotExist(err) {
		t.Error("journal kept")
	}
}

// Concurrent hooks append while folds run: every event ends up folded
// exactly once.
func TestJournalConcurrentAppendsAndFolds(t *testing.T) {
	r, e, s := eventsRepo(t)
	const writers, each = 8, 60
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			j := OpenJournal(r.GitDir, r.cfg) // each hook opens its own
			for i := 0; i < each; i++ {
				if err := j.Append(ev(i, fmt.Sprintf("w%d-%d", w, i))); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 20; i++ {
			// Another process folding: its own Repo and store.
			r2, err := Open(r.WorkTree, func(string) string { return "" })
			if err != nil {
				t.Error(err)
				return
			}
			r2.Now = func() time.Time { return fixedNow.Add(time.Duration(i) * time.Millisecond) }
			if err := r2.Events().Fold(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	wg.Wait()
	<-done
	if err := s.Fold(); err != nil {
		t.Fatal(err)
	}
	cur, _ := e.Current("")
	got, err := s.Events("t", engine.RunKey(cur.State), fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, x := range got {
		cmds = append(cmds, x.Command)
	}
	slices.Sort(cmds)
	if len(cmds) != writers*each || len(slices.Compact(slices.Clone(cmds))) != writers*each {
		t.Fatalf("%d events folded (%d unique), want %d", len(cmds), len(slices.Compact(cmds)), writers*each)
	}
}

func TestTaskSaveCarriesEventsWithoutReadingThem(t *testing.T) {
	r, e, s := eventsRepo(t)
	s.Record(ev(1, "a"))
	s.Fold()
	// A fresh process loads the task and saves it: the events subtree is
	// carried over by hash, from the root tree the load read.
	r2, err := Open(r.WorkTree, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	r2.Now = r.Now
	if _, err := r2.Tasks().LoadTask("t"); err != nil {
		t.Fatal(err)
	}
	tip, err := r2.refs.Read(TaskRef("t"))
	if err != nil {
		t.Fatal(err)
	}
	if ex, ok := r2.extras.m[tip]; !ok || ex["events"].mode != filemode.Dir {
		t.Fatalf("the load did not remember the events subtree: %v", r2.extras.m)
	}
	e2 := stashEngine(r2, r2.WorkTree, r2.Now)
	if _, err := e2.Next(""); err != nil {
		t.Fatal(err)
	}
	tree := runGit(t, r.WorkTree, "ls-tree", "-r", "--name-only", TaskRef("t").String())
	if !strings.Contains(tree, ".spec.") {
		t.Errorf("events lost by a save:\n%s", tree)
	}
	_ = e
}

func TestFoldSplitsLargeSegments(t *testing.T) {
	r, e, s := eventsRepo(t)
	var evs []agent.Event
	for i := 0; i < 12000; i++ { // about 1.9 MB of journal
		evs = append(evs, ev(i, fmt.Sprintf("go test ./pkg%d/... -run TestSomethingFairlyLong", i)))
	}
	s.Record(evs...)
	if err := s.Fold(); err != nil {
		t.Fatal(err)
	}
	out := runGit(t, r.WorkTree, "ls-tree", "-r", "-l", TaskRef("t").String(), "events/")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 {
		t.Fatalf("one fold of 1.9 MB in %d segments:\n%s", len(lines), out)
	}
	for _, l := range lines {
		var size int
		fmt.Sscan(strings.Fields(l)[3], &size)
		if size > maxSegment {
			t.Errorf("segment of %d bytes: %s", size, l)
		}
	}
	if subj := taskSubjects(t, r, "t"); subj[0] != "events: 12000 events from spec" {
		t.Errorf("one commit: %v", subj[:2])
	}
	cur, _ := e.Current("")
	got, _ := s.Events("t", engine.RunKey(cur.State), fixedNow)
	if len(got) != 12000 || got[11999].Command != "go test ./pkg11999/... -run TestSomethingFairlyLong" {
		t.Errorf("%d events back", len(got))
	}
}

// TestArchiveKeepsEvents: a finished task's events go with it into the
// archive, are read from there (metrics of an archived task), and come
// back with it when the task is reopened.
func TestArchiveKeepsEvents(t *testing.T) {
	r, e, s := eventsRepo(t)
	e.Archive = r.Tasks()
	e.Files = r.Files()
	cur, _ := e.Current("")
	run := engine.RunKey(cur.State)
	s.Record(ev(1, "go test"))
	if _, err := e.Next(""); err != nil { // folds first
		t.Fatal(err)
	}
	s.Record(ev(2, "go vet"))
	v, err := e.Next("") // to done: folded, then archived
	if err != nil || v.State.Status != engine.StatusCompleted {
		t.Fatalf("next: %v %+v", err, v)
	}
	if _, err := r.refs.Read(TaskRef("t")); err == nil {
		t.Fatal("task ref left after archiving")
	}
	tree := runGit(t, r.WorkTree, "ls-tree", "-r", "--name-only", ArchiveRef("t").String())
	if !strings.Contains(tree, "000001.spec.") || !strings.Contains(tree, "000002.plan.") {
		t.Fatalf("archive tree lacks the events:\n%s", tree)
	}
	got, err := s.Events("t", run, fixedNow)
	if err != nil || len(got) != 2 || got[1].Command != "go vet" {
		t.Fatalf("events of the archived task: %+v %v", got, err)
	}
	// prev reopens it: the events come back to the task ref.
	if _, err := e.Prev(engine.TaskOptions{}); err != nil {
		t.Fatal(err)
	}
	tree = runGit(t, r.WorkTree, "ls-tree", "-r", "--name-only", TaskRef("t").String())
	if !strings.Contains(tree, "000002.plan.") || strings.Contains(tree, "artifacts/") {
		t.Errorf("reopened task tree:\n%s", tree)
	}
	runGit(t, r.WorkTree, "fsck", "--strict")
}

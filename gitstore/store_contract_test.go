package gitstore

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/engine"
)

var fixedNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// gitEnv isolates real git from the developer's configuration.
func gitEnv(t *testing.T) []string {
	home := t.TempDir()
	return append(os.Environ(),
		"HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+filepath.Join(home, ".gitconfig"),
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com",
	)
}

func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func needGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
}

// newDiskRepo makes a real repository with one commit and opens it.
func newDiskRepo(t *testing.T) *Repo {
	t.Helper()
	needGit(t)
	dir := t.TempDir()
	runGit(t, dir, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(dir, "README"), []byte("hi\n"), 0o644)
	runGit(t, dir, "add", "README")
	runGit(t, dir, "commit", "-qm", "init")
	r, err := Open(dir, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	r.Now = func() time.Time { return fixedNow }
	return r
}

func newMemRepo(t *testing.T) *Repo {
	t.Helper()
	r, err := NewMemory()
	if err != nil {
		t.Fatal(err)
	}
	r.Now = func() time.Time { return fixedNow }
	return r
}

// storeBackends runs a test on every implementation: in memory (go-git
// memory storage, memfs) and on a real repository on disk. They differ in
// ways that matter (see DESIGN.md), so every contract runs on both.
var storeBackends = map[string]func(*testing.T) *Repo{
	"memory": newMemRepo,
	"disk":   newDiskRepo,
}

func sampleTask(name string) *engine.Task {
	return &engine.Task{
		State: &engine.State{
			Task: name, Workflow: "minimal", Mode: "minimal", CurrentNode: "spec",
			History: []string{"spec"}, Status: engine.StatusActive, StartedAt: fixedNow,
			PhaseStartTime: fixedNow, UpdatedAt: fixedNow, Worktree: "/w", Attempt: 1,
			RollbackHistory: []engine.RollbackEvent{},
		},
		Definition: engine.Builtins()[0].Raw,
	}
}

func TestTaskStoreContract(t *testing.T) {
	for name, newRepo := range storeBackends {
		t.Run(name, func(t *testing.T) {
			r := newRepo(t)
			s := r.Tasks()
			if _, err := s.LoadTask("t1"); !errors.Is(err, engine.ErrNotFound) {
				t.Fatalf("load missing: %v", err)
			}
			task := sampleTask("t1")
			rev1, err := s.SaveTask(task, "start: minimal at spec")
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.LoadTask("t1")
			if err != nil {
				t.Fatal(err)
			}
			if got.Rev != rev1 || got.State.CurrentNode != "spec" || string(got.Definition) != string(task.Definition) {
				t.Fatalf("round trip: %+v", got)
			}
			if !got.State.StartedAt.Equal(fixedNow) {
				t.Errorf("started_at = %v", got.State.StartedAt)
			}
			// Creating it again must conflict, not overwrite.
			if _, err := s.SaveTask(sampleTask("t1"), "again"); !errors.Is(err, engine.ErrConflict) {
				t.Errorf("create over existing: %v", err)
			}
			// An unchanged tree writes nothing.
			if rev, err := s.SaveTask(got, "noop"); err != nil || rev != rev1 {
				t.Errorf("unchanged save: rev %s err %v, want %s", rev, err, rev1)
			}
			got.State.CurrentNode = "plan"
			rev2, err := s.SaveTask(got, "next: spec -> plan")
			if err != nil || rev2 == rev1 {
				t.Fatalf("update: %s %v", rev2, err)
			}
			// A stale revision conflicts and changes nothing.
			got.State.CurrentNode = "done"
			if _, err := s.SaveTask(got, "stale"); !errors.Is(err, engine.ErrConflict) {
				t.Errorf("stale save: %v", err)
			}
			if cur, _ := s.LoadTask("t1"); cur.State.CurrentNode != "plan" {
				t.Errorf("stale save changed the task to %s", cur.State.CurrentNode)
			}
			s.SaveTask(sampleTask("a0"), "start")
			names, err := s.ListTasks()
			if err != nil || strings.Join(names, ",") != "a0,t1" {
				t.Errorf("list = %v %v", names, err)
			}
		})
	}
}

func TestTaskRefOnDiskIsPlainGit(t *testing.T) {
	r := newDiskRepo(t)
	s := r.Tasks()
	task := sampleTask("t1")
	rev, _ := s.SaveTask(task, "start: minimal at spec")
	task.Rev = rev
	task.State.CurrentNode = "plan"
	if _, err := s.SaveTask(task, "next: spec -> plan (spec_complete)"); err != nil {
		t.Fatal(err)
	}
	dir := r.WorkTree
	if got := runGit(t, dir, "log", "--format=%s", "refs/hegel/tasks/t1"); got != "next: spec -> plan (spec_complete)\nstart: minimal at spec\n" {
		t.Errorf("git log = %q", got)
	}
	if got := runGit(t, dir, "cat-file", "-p", "refs/hegel/tasks/t1:version"); got != "1\n" {
		t.Errorf("version blob = %q", got)
	}
	runGit(t, dir, "fsck", "--strict", "--no-dangling")
	runGit(t, dir, "gc", "-q", "--prune=now")
	if got, err := s.LoadTask("t1"); err != nil || got.State.CurrentNode != "plan" {
		t.Errorf("after gc: %v %v", got, err)
	}
}

func TestUnknownVersionRefused(t *testing.T) {
	for name, newRepo := range storeBackends {
		t.Run(name, func(t *testing.T) {
			r := newRepo(t)
			tree, err := r.writeTree(map[string][]byte{"version": []byte("2\n"), "state.json": []byte("{}")})
			if err != nil {
				t.Fatal(err)
			}
			c, _ := r.writeCommit(tree, nil, "from the future")
			if err := r.UpdateRef("refs/hegel/tasks/future", plumbing.ZeroHash, c); err != nil {
				t.Fatal(err)
			}
			_, err = r.Tasks().LoadTask("future")
			if !errors.Is(err, ErrUnknownVersion) || !strings.Contains(err.Error(), "upgrade") {
				t.Errorf("load future version: %v", err)
			}
		})
	}
}

func TestSessionContract(t *testing.T) {
	for name, newRepo := range storeBackends {
		t.Run(name, func(t *testing.T) {
			r := newRepo(t)
			s := r.Sessions()
			if _, err := s.LoadSession(); !errors.Is(err, engine.ErrNotFound) {
				t.Fatalf("missing session: %v", err)
			}
			sess, err := s.UpdateSession(func(s *engine.Session) error { s.ActiveTask = "t1"; return nil })
			if err != nil || sess.SessionID == "" || !sess.StartedAt.Equal(fixedNow) {
				t.Fatalf("create: %+v %v", sess, err)
			}
			got, err := s.LoadSession()
			if err != nil || got.ActiveTask != "t1" || got.SessionID != sess.SessionID {
				t.Fatalf("load: %+v %v", got, err)
			}
			exclude, _ := readFile(r.common, "info/exclude")
			if strings.Count(string(exclude), excludePattern) != 1 {
				t.Errorf("info/exclude = %q", exclude)
			}
			// A failing update writes nothing.
			boom := errors.New("boom")
			if _, err := s.UpdateSession(func(s *engine.Session) error { s.ActiveTask = "x"; return boom }); err != boom {
				t.Errorf("failing update: %v", err)
			}
			if got, _ := s.LoadSession(); got.ActiveTask != "t1" {
				t.Errorf("failing update changed the file")
			}
			f, _ := r.worktree.Create(".hegel/state.json")
			f.Write([]byte("{garbage"))
			f.Close()
			if _, err := s.LoadSession(); !errors.Is(err, engine.ErrCorruptSession) {
				t.Errorf("corrupt session: %v", err)
			}
			var warned []string
			r.Warn = func(m string) { warned = append(warned, m) }
			sess2, err := s.UpdateSession(func(s *engine.Session) error { return nil })
			if err != nil || sess2.SessionID == sess.SessionID {
				t.Errorf("update over corrupt file: %+v %v", sess2, err)
			}
			// The damaged file is kept beside the fresh one, with a warning.
			const damaged = ".hegel/state.json.damaged-20260102T030405Z"
			if b, err := readFile(r.worktree, damaged); err != nil || string(b) != "{garbage" {
				t.Errorf("damaged copy: %q %v", b, err)
			}
			if len(warned) != 1 || !strings.Contains(warned[0], "it is kept as "+damaged) {
				t.Errorf("warnings: %q", warned)
			}
			// No lock or temporary file is left behind.
			infos, _ := r.worktree.ReadDir(".hegel")
			for _, fi := range infos {
				if fi.Name() != "state.json" && ".hegel/"+fi.Name() != damaged {
					t.Errorf("left behind: .hegel/%s", fi.Name())
				}
			}
		})
	}
}

func TestSessionFoundByWalkingUp(t *testing.T) {
	r := newDiskRepo(t)
	os.MkdirAll(filepath.Join(r.WorkTree, "a", "b", "c"), 0o755)
	os.MkdirAll(filepath.Join(r.WorkTree, "a", HegelDir), 0o755)
	sub, err := Open(filepath.Join(r.WorkTree, "a", "b", "c"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if sub.Subdir != "a/b/c" {
		t.Errorf("Subdir = %q", sub.Subdir)
	}
	if got := sub.Sessions().Dir(); got != "a/.hegel" {
		t.Errorf("from a/b/c found %q, want a/.hegel", got)
	}
	top, _ := Open(r.WorkTree, func(string) string { return "" })
	if got := top.Sessions().Dir(); got != ".hegel" {
		t.Errorf("from the top found %q", got)
	}
}

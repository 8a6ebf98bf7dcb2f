package gitstore

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/util"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/workflow"
	"github.com/git-hegel/git-hegel/gitstore/storetest"
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
		Definition: workflow.Builtins()[0].Raw,
	}
}

// The engine's storage contract (gitstore/storetest), on every backend:
// the same suites run on the engine's in-memory stores (engine/memstore).
func TestStoreContracts(t *testing.T) {
	for name, newRepo := range storeBackends {
		t.Run(name, func(t *testing.T) {
			t.Run("TaskStore", func(t *testing.T) {
				storetest.RunTaskStore(t, func(t *testing.T) engine.TaskStore { return newRepo(t).Tasks() })
			})
			t.Run("ArchiveStore", func(t *testing.T) {
				storetest.RunArchiveStore(t, func(t *testing.T) storetest.Archive { return newRepo(t).Tasks() })
			})
			t.Run("TaskFiles", func(t *testing.T) {
				storetest.RunTaskFiles(t, func(t *testing.T) storetest.TaskFiles { return newRepo(t).Tasks() })
			})
			t.Run("Files", func(t *testing.T) {
				storetest.RunFiles(t, func(t *testing.T) storetest.Worktree {
					r := newRepo(t)
					return storetest.Worktree{Files: r.Files(), Write: func(t *testing.T, p string, b []byte) {
						if err := util.WriteFile(r.worktree, p, b, 0o644); err != nil {
							t.Fatal(err)
						}
					}}
				})
			})
			t.Run("SessionStore", func(t *testing.T) {
				storetest.RunSessionStore(t, func(t *testing.T) storetest.Sessions {
					r := newRepo(t)
					return storetest.Sessions{SessionStore: r.Sessions(), Corrupt: func(t *testing.T) {
						f, err := r.worktree.Create(".hegel/state.json")
						if err != nil {
							t.Fatal(err)
						}
						f.Write([]byte("{garbage"))
						f.Close()
					}}
				})
			})
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

// What the session store leaves in the repository beyond the contract:
// one exclude line for the file; a damaged file kept beside the fresh
// one, with a warning; no lock or temporary file.
func TestSessionFiles(t *testing.T) {
	for name, newRepo := range storeBackends {
		t.Run(name, func(t *testing.T) {
			r := newRepo(t)
			s := r.Sessions()
			if _, err := s.UpdateSession(func(s *engine.Session) error { s.ActiveTask = "t1"; return nil }); err != nil {
				t.Fatal(err)
			}
			if _, err := s.UpdateSession(func(s *engine.Session) error { return errors.New("boom") }); err == nil {
				t.Fatal("a failing update succeeded")
			}
			exclude, _ := readFile(r.common, "info/exclude")
			if strings.Count(string(exclude), excludePattern) != 1 {
				t.Errorf("info/exclude = %q", exclude)
			}
			f, _ := r.worktree.Create(".hegel/state.json")
			f.Write([]byte("{garbage"))
			f.Close()
			var warned []string
			r.Warn = func(m string) { warned = append(warned, m) }
			if _, err := s.UpdateSession(func(s *engine.Session) error { return nil }); err != nil {
				t.Fatal(err)
			}
			const damaged = ".hegel/state.json.damaged-20260102T030405Z"
			if b, err := readFile(r.worktree, damaged); err != nil || string(b) != "{garbage" {
				t.Errorf("damaged copy: %q %v", b, err)
			}
			if len(warned) != 1 || !strings.Contains(warned[0], "it is kept as "+damaged) {
				t.Errorf("warnings: %q", warned)
			}
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

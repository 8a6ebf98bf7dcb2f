package gitstore_test

// Benchmarks of the task store: what one SaveTask or LoadTask costs, and
// allocates, on a real on-disk repository and on the in-memory one. A
// command opens the repository and loads its task once per process, so
// BenchmarkOpenLoadTask (a fresh Open every iteration, cold object cache)
// is closest to what `git hegel status` pays; the plain LoadTask benchmarks
// show the store's own cost with warm caches.
//
//	go test -run '^$' -bench . -benchmem ./gitstore/

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore"
)

// benchGetenv is a hermetic environment: no system or global git config.
func benchGetenv(k string) string {
	if k == "GIT_CONFIG_NOSYSTEM" {
		return "1"
	}
	return ""
}

// benchGit runs git in dir with a hermetic environment.
func benchGit(b *testing.B, dir string, args ...string) {
	b.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=Bench", "GIT_AUTHOR_EMAIL=bench@example.com",
		"GIT_COMMITTER_NAME=Bench", "GIT_COMMITTER_EMAIL=bench@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func benchGitStdin(b *testing.B, dir, stdin string, args ...string) {
	b.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	cmd.Stdin = strings.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// benchDiskRepo makes a real repository with one commit in b.TempDir().
func benchDiskRepo(b *testing.B) string {
	b.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git not found")
	}
	dir := b.TempDir()
	benchGit(b, dir, "init", "-q", "-b", "main")
	benchGit(b, dir, "commit", "-q", "--allow-empty", "-m", "init")
	return dir
}

func benchOpen(b *testing.B, dir string) *gitstore.Repo {
	b.Helper()
	r, err := gitstore.Open(dir, benchGetenv)
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// benchRepos are the stores benchmarked: a fresh repository each.
func benchRepos(b *testing.B) map[string]func() *gitstore.Repo {
	return map[string]func() *gitstore.Repo{
		"memory": func() *gitstore.Repo {
			r, err := gitstore.NewMemory()
			if err != nil {
				b.Fatal(err)
			}
			return r
		},
		"disk": func() *gitstore.Repo { return benchOpen(b, benchDiskRepo(b)) },
	}
}

var benchT0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// benchDefinition is a small workflow, stored with every task as it would be.
var benchDefinition = []byte(`start_node: a
nodes:
  a:
    prompt: |
      Run git hegel next again to come back here.
    transitions:
      - when: again
        to: a
      - when: finish
        to: done
`)

// benchTask returns a task whose history holds n nodes, like a workflow a
// few transitions in.
func benchTask(name string, n int) *engine.Task {
	st := &engine.State{
		Task: name, Workflow: "loop", Mode: "loop", CurrentNode: "a",
		WorkflowID: benchT0.Format(time.RFC3339), Status: engine.StatusActive,
		StartedAt: benchT0, PhaseStartTime: benchT0, UpdatedAt: benchT0,
		Worktree: "/tmp/bench", Attempt: 1, RollbackHistory: []engine.RollbackEvent{},
	}
	for i := 0; i < n; i++ {
		st.History = append(st.History, "a")
	}
	return &engine.Task{State: st, Definition: benchDefinition}
}

// BenchmarkSaveTask saves a new state of one task per iteration, each on
// top of the last (a commit with a new state.json; the tree always changes).
func BenchmarkSaveTask(b *testing.B) {
	for _, name := range []string{"memory", "disk"} {
		b.Run(name, func(b *testing.B) {
			r := benchRepos(b)[name]()
			r.Now = func() time.Time { return benchT0 }
			s := r.Tasks()
			t := benchTask("bench", 10)
			rev, err := s.SaveTask(t, "start")
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t.Rev = rev
				t.State.UpdatedAt = benchT0.Add(time.Duration(i+1) * time.Second)
				if rev, err = s.SaveTask(t, "next: a -> a (again)"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLoadTask loads the same task repeatedly from one opened
// repository (warm object cache).
func BenchmarkLoadTask(b *testing.B) {
	for _, name := range []string{"memory", "disk"} {
		b.Run(name, func(b *testing.B) {
			r := benchRepos(b)[name]()
			s := r.Tasks()
			if _, err := s.SaveTask(benchTask("bench", 10), "start"); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := s.LoadTask("bench"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOpenLoadTask opens the repository and loads the task, as every
// command does once: loose objects and refs as git-hegel wrote them, and
// packed (after git gc: packed-refs and a pack with its index).
func BenchmarkOpenLoadTask(b *testing.B) {
	for _, packed := range []bool{false, true} {
		name := "loose"
		if packed {
			name = "packed"
		}
		// check: and validate the loaded task as status does (the rules,
		// and its current node against the definition's shape, remembered
		// in hegel/workflow-shapes/).
		for _, check := range []bool{false, true} {
			sub := name
			if check {
				sub += "/check"
			}
			b.Run(sub, func(b *testing.B) {
				dir := benchDiskRepo(b)
				if _, err := benchOpen(b, dir).Tasks().SaveTask(benchTask("bench", 10), "start"); err != nil {
					b.Fatal(err)
				}
				if packed {
					benchGit(b, dir, "gc", "-q")
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					r, err := gitstore.Open(dir, benchGetenv)
					if err != nil {
						b.Fatal(err)
					}
					t, err := r.Tasks().LoadTask("bench")
					if err != nil {
						b.Fatal(err)
					}
					if check {
						if err := engine.CheckStored(t.State, t.Definition, r); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}

// BenchmarkListTasks lists 1,000 task refs (the engine lists them to
// rebuild a lost session).
func BenchmarkListTasks(b *testing.B) {
	for _, name := range []string{"memory", "disk"} {
		b.Run(name, func(b *testing.B) {
			r := benchRepos(b)[name]()
			s := r.Tasks()
			rev, err := s.SaveTask(benchTask("t0000", 1), "start")
			if err != nil {
				b.Fatal(err)
			}
			// The other 999 point at the same commit: listing reads refs
			// only. On disk git writes them in one process (1,000 fsynced
			// SaveTasks would take seconds).
			var stdin strings.Builder
			for i := 1; i < 1000; i++ {
				if name == "memory" {
					if _, err := s.SaveTask(benchTask(fmt.Sprintf("t%04d", i), 1), "start"); err != nil {
						b.Fatal(err)
					}
					continue
				}
				fmt.Fprintf(&stdin, "create %st%04d %s\n", gitstore.TaskRefPrefix, i, rev)
			}
			if name == "disk" {
				benchGitStdin(b, r.WorkTree, stdin.String(), "update-ref", "--stdin")
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				names, err := s.ListTasks()
				if err != nil || len(names) != 1000 {
					b.Fatal(len(names), err)
				}
			}
		})
	}
}

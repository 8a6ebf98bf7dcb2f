package engine_test

// Benchmarks of the engine alone, on in-memory stores: the decision logic
// and the parsing every command repeats (the task's stored workflow
// definition is parsed on each command), without any I/O.
//
//	go test -run '^$' -bench . -benchmem ./engine/

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

// benchTasks is a minimal in-memory engine.TaskStore with the
// compare-and-swap semantics the engine relies on. It stores clones so
// callers cannot alias stored state.
type benchTasks struct {
	mu    sync.Mutex
	tasks map[string]*engine.Task
	rev   int
}

func (s *benchTasks) LoadTask(name string) (*engine.Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[name]
	if !ok {
		return nil, fmt.Errorf("task %s: %w", name, engine.ErrNotFound)
	}
	return &engine.Task{State: t.State.Clone(), Definition: t.Definition, Rev: t.Rev}, nil
}

func (s *benchTasks) SaveTask(t *engine.Task, msg string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := t.State.Task
	cur, ok := s.tasks[name]
	if (ok && cur.Rev != t.Rev) || (!ok && t.Rev != "") {
		return "", fmt.Errorf("task %s: %w", name, engine.ErrConflict)
	}
	s.rev++
	rev := fmt.Sprint(s.rev)
	s.tasks[name] = &engine.Task{State: t.State.Clone(), Definition: t.Definition, Rev: rev}
	return rev, nil
}

func (s *benchTasks) ListTasks() ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.tasks))
	for n := range s.tasks {
		names = append(names, n)
	}
	return names, nil
}

// benchSession is a minimal in-memory engine.SessionStore.
type benchSession struct {
	mu   sync.Mutex
	sess *engine.Session
}

func (s *benchSession) LoadSession() (*engine.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess == nil {
		return nil, engine.ErrNotFound
	}
	c := *s.sess
	return &c, nil
}

func (s *benchSession) UpdateSession(fn func(*engine.Session) error) (*engine.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := engine.Session{SessionID: "bench"}
	if s.sess != nil {
		c = *s.sess
	}
	if err := fn(&c); err != nil {
		return nil, err
	}
	s.sess = &c
	out := c
	return &out, nil
}

// benchLoop is the workflow the whole-command benchmark loops on
// (testdata/bench): node a goes back to a on "again".
var benchLoop = []byte(`start_node: a
nodes:
  a:
    summary: Loop
    prompt: |
      Run git hegel next again to come back here.
    transitions:
      - when: again
        to: a
      - when: finish
        to: done
`)

func benchEngine(b *testing.B, wfName string) *engine.Engine {
	b.Helper()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	n := 0
	e := &engine.Engine{
		Tasks:   &benchTasks{tasks: map[string]*engine.Task{}},
		Session: &benchSession{},
		Workflows: func() (*workflow.Registry, error) {
			return workflow.NewRegistry(map[string][]byte{".hegel/workflows/loop.yaml": benchLoop})
		},
		Worktree: "/tmp/bench",
		Now: func() time.Time {
			n++
			return t0.Add(time.Duration(n) * time.Second)
		},
		Git: func() *engine.GitInfo {
			return &engine.GitInfo{Branch: "main", Head: "0123456789abcdef0123456789abcdef01234567"}
		},
	}
	if _, err := e.Start(wfName, "", "bench"); err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkNext is one `git hegel next` without I/O: load session and task,
// parse the stored definition, transition, save, update the session. The
// self-looping workflow's history grows by one node per iteration, as it
// does for the whole-command benchmark.
func BenchmarkNext(b *testing.B) {
	e := benchEngine(b, "loop")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.Next("again"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNextPrev alternates through a built-in workflow (execution, one
// of the larger definitions), so the parsed definition is realistic and the
// history stays short.
func BenchmarkNextPrev(b *testing.B) {
	e := benchEngine(b, "execution")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var err error
		if i%2 == 0 {
			_, err = e.Next("")
		} else {
			_, err = e.Prev(engine.TaskOptions{})
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStatus is `git hegel status` without I/O: the current task.
func BenchmarkStatus(b *testing.B) {
	e := benchEngine(b, "loop")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.Status(""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseWorkflow is the definition parse every command that moves a
// task repeats, for the loop workflow and for each built-in.
func BenchmarkParseWorkflow(b *testing.B) {
	defs := map[string][]byte{"loop": benchLoop}
	for _, w := range workflow.Builtins() {
		defs[w.Name] = w.Raw
	}
	for _, name := range []string{"loop", "minimal", "discovery", "execution", "refactor", "research"} {
		raw, ok := defs[name]
		if !ok {
			continue
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for i := 0; i < b.N; i++ {
				if _, err := workflow.Parse(name, name+".yaml", raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNewRegistry is what start and workflows pay to load the
// built-ins and user files (the built-ins are parsed once per process).
func BenchmarkNewRegistry(b *testing.B) {
	files := map[string][]byte{".hegel/workflows/loop.yaml": benchLoop}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := workflow.NewRegistry(files); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStatusValidate is what `git hegel status` adds to check the
// task it loaded, against BenchmarkStatus: "shape" is what it does
// (engine.CheckStored: the rules, and the current node against the
// definition's shape remembered in a file), "rules" ValidateState alone
// (what it did before), "workflow" the full parse every changing command
// does on load; for the loop workflow and the largest built-in. status's
// check is to stay under 5% of the command (docs/benchmarks.md).
func BenchmarkStatusValidate(b *testing.B) {
	for _, w := range []string{"loop", "pipeline"} {
		e := benchEngine(b, w)
		t, err := e.Status("")
		if err != nil {
			b.Fatal(err)
		}
		b.Run(w+"/rules", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if err := engine.ValidateState(t.State, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		// What status does now: the rules and the current node against the
		// definition's remembered shape, read from a file as gitstore keeps
		// it (the first call parses and writes it).
		shapes := fileShapes(b.TempDir())
		if err := engine.CheckStored(t.State, t.Definition, shapes); err != nil {
			b.Fatal(err)
		}
		b.Run(w+"/shape", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if err := engine.CheckStored(t.State, t.Definition, shapes); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(w+"/workflow", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				wf, err := workflow.Parse(t.State.Workflow, "bench.yaml", t.Definition)
				if err != nil {
					b.Fatal(err)
				}
				if err := engine.ValidateState(t.State, wf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// fileShapes is a workflow.ShapeStore keeping one file per key in dir, as
// gitstore does in hegel/workflow-shapes/.
type fileShapes string

func (d fileShapes) LoadShape(key string) []byte {
	b, err := os.ReadFile(filepath.Join(string(d), key+".json"))
	if err != nil {
		return nil
	}
	return b
}

func (d fileShapes) SaveShape(key string, data []byte) {
	_ = os.WriteFile(filepath.Join(string(d), key+".json"), data, 0o666)
}

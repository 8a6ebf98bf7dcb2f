package gitstore

import (
	"errors"
	"strings"
	"testing"

	"github.com/git-hegel/git-hegel/engine"
)

// TestTaskLogAndArchivedFiles: the log lists a task's commits newest
// first with their subjects, authors and times, and stops at the limit;
// an archived task's artifact copies read back by path, and nothing else
// does.
func TestTaskLogAndArchivedFiles(t *testing.T) {
	for name, newRepo := range storeBackends {
		t.Run(name, func(t *testing.T) {
			r := newRepo(t)
			s := r.Tasks()
			task := finishedTask(t, r, "t1")
			ops, more, err := r.TaskLog("t1", false, 0)
			if err != nil || more || len(ops) != 2 {
				t.Fatalf("log: %+v %v %v", ops, more, err)
			}
			if ops[0].Subject != "next: spec -> done" || ops[1].Subject != "start: minimal at spec" || ops[0].Commit != task.Rev {
				t.Errorf("log order or subjects: %+v", ops)
			}
			if ops[0].Author == "" || ops[0].Time.IsZero() || ops[0].Merge {
				t.Errorf("log fields: %+v", ops[0])
			}
			if ops, more, err := r.TaskLog("t1", false, 1); err != nil || !more || len(ops) != 1 {
				t.Errorf("limited log: %+v %v %v", ops, more, err)
			}
			if _, _, err := r.TaskLog("nope", false, 0); !errors.Is(err, engine.ErrNotFound) {
				t.Errorf("log of a missing task: %v", err)
			}
			files := []engine.ArchivedFile{{Path: "SPEC.md", Data: []byte("# spec\n")}, {Path: "docs/PLAN.md", Data: []byte("plan\n")}}
			if _, err := s.ArchiveTask(task, files, "archive: completed at done (2 artifacts)", true); err != nil {
				t.Fatal(err)
			}
			if ops, _, err := r.TaskLog("t1", true, 0); err != nil || len(ops) != 3 || !strings.HasPrefix(ops[0].Subject, "archive: ") {
				t.Errorf("archive log: %+v %v", ops, err)
			}
			if b, err := s.ReadArchivedFile("t1", "docs/PLAN.md", 100); err != nil || string(b) != "plan\n" {
				t.Errorf("read docs/PLAN.md: %q %v", b, err)
			}
			for _, p := range []string{"docs", "PLAN.md", "docs/PLAN.md/x", "../state.json"} {
				if _, err := s.ReadArchivedFile("t1", p, 100); !errors.Is(err, engine.ErrNotFound) {
					t.Errorf("read %s: %v, want not found", p, err)
				}
			}
			if _, err := s.ReadArchivedFile("t1", "SPEC.md", 3); err == nil || !strings.Contains(err.Error(), "more than") {
				t.Errorf("over the limit: %v", err)
			}
		})
	}
}

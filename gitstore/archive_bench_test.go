package gitstore_test

import (
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/workflow"
	"github.com/git-hegel/git-hegel/gitstore"
)

// BenchmarkListStates lists 1,000 tasks, 500 of them archived, on disk:
// what `git hegel tasks --archived` reads. Each iteration opens the
// repository afresh, as a command does; the task cache is warm (the first
// listing fills it), as after any command read the tasks once.
//
//	go test -run '^$' -bench ListStates -benchmem ./gitstore/
func BenchmarkListStates(b *testing.B) {
	dir := benchDiskRepo(b)
	r := benchOpen(b, dir)
	wf := workflow.Builtins()[0]
	for i := 0; i < 1000; i++ {
		now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		st := &engine.State{Task: taskName(i), Workflow: wf.Name, Mode: wf.Mode, CurrentNode: wf.StartNode,
			History: []string{wf.StartNode}, Status: engine.StatusActive, StartedAt: now, UpdatedAt: now, Attempt: 1}
		rev, err := r.Tasks().SaveTask(&engine.Task{State: st, Definition: wf.Raw}, "start")
		if err != nil {
			b.Fatal(err)
		}
		if i%2 == 1 {
			st.Status, st.CurrentNode, st.EndedAt = engine.StatusCompleted, workflow.NodeDone, &now
			t := &engine.Task{State: st, Definition: wf.Raw}
			if t.Rev, err = r.Tasks().SaveTask(&engine.Task{State: st, Definition: wf.Raw, Rev: rev}, "done"); err != nil {
				b.Fatal(err)
			}
			if _, err := r.Tasks().ArchiveTask(t, nil, "archive", true); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, archived := range []bool{false, true} {
		name := "open"
		if archived {
			name = "all"
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				list, err := benchOpen(b, dir).Tasks().ListStates(archived)
				if err != nil || (archived && len(list) != 1000) {
					b.Fatal(len(list), err)
				}
			}
		})
	}
	_ = gitstore.ArchiveRefPrefix
}

func taskName(i int) string {
	const digits = "0123456789"
	return "t" + string(digits[i/100%10]) + string(digits[i/10%10]) + string(digits[i%10]) + string(digits[i/1000%10])
}

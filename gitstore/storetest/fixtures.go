package storetest

import (
	"time"

	"github.com/git-hegel/git-hegel/engine"
)

// at is the time the tasks of the suites start; stores must give it back
// as it was saved.
var at = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// definition is a task's workflow as the stores see it: bytes kept as
// they are, never parsed.
var definition = []byte("name: contract\nmode: contract\nstart_node: spec\nnodes:\n  spec:\n    prompt: Write the spec.\n    transitions:\n      - when: spec_complete\n        to: done\n  done: {}\n")

// task returns a new task named name at node spec, as `git hegel start`
// saves it.
func task(name string) *engine.Task {
	return &engine.Task{
		State: &engine.State{
			Task: name, Workflow: "contract", Mode: "contract", CurrentNode: "spec",
			History: []string{"spec"}, Status: engine.StatusActive, StartedAt: at,
			PhaseStartTime: at, UpdatedAt: at, Worktree: "/w", Attempt: 1,
			RollbackHistory: []engine.RollbackEvent{},
		},
		Definition: append([]byte(nil), definition...),
	}
}

// finish marks t's state completed at node done, as `git hegel next`
// leaves it before the task is archived.
func finish(t *engine.Task) {
	ended := at.Add(time.Hour)
	t.State.CurrentNode = "done"
	t.State.History = append(t.State.History, "done")
	t.State.Status = engine.StatusCompleted
	t.State.EndedAt = &ended
	t.State.UpdatedAt = ended
}

package worktree

import (
	"testing"

	"github.com/git-hegel/git-hegel/engine/workflow"
	"github.com/git-hegel/git-hegel/rollback"
)

// TestDefaultBoundCoversBuiltins: one pass through any built-in workflow
// keeps a checkpoint for every node it enters, under the default bound.
func TestDefaultBoundCoversBuiltins(t *testing.T) {
	for _, d := range workflow.Builtins() {
		n := 0
		for _, node := range d.Order {
			if !d.IsTerminal(node) {
				n++
			}
		}
		if n > rollback.DefaultMaxCheckpoints {
			t.Errorf("workflow %s takes %d checkpoints in one pass; hegel.maxCheckpoints defaults to %d", d.Name, n, rollback.DefaultMaxCheckpoints)
		}
	}
}

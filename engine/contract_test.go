package engine_test

import (
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore/storetest"
)

// The fakes the engine's internal tests run on keep the contract of the
// git-backed stores: gitstore and engine/memstore run the same suites, so
// a behaviour a test relies on is one the real store has.
func TestFakesKeepTheStoreContracts(t *testing.T) {
	t.Run("TaskStore", func(t *testing.T) {
		storetest.RunTaskStore(t, func(*testing.T) engine.TaskStore { return engine.NewFakeTaskStore() })
	})
	t.Run("ArchiveStore", func(t *testing.T) {
		storetest.RunArchiveStore(t, func(*testing.T) storetest.Archive { return engine.NewFakeTaskStore() })
	})
	t.Run("TaskFiles", func(t *testing.T) {
		storetest.RunTaskFiles(t, func(*testing.T) storetest.TaskFiles { return engine.NewFakeTaskStore() })
	})
	t.Run("SessionStore", func(t *testing.T) {
		storetest.RunSessionStore(t, func(*testing.T) storetest.Sessions {
			s, corrupt := engine.NewFakeSessionStore(func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) })
			return storetest.Sessions{SessionStore: s, Corrupt: func(*testing.T) { corrupt() }}
		})
	})
	t.Run("Files", func(t *testing.T) {
		storetest.RunFiles(t, func(*testing.T) storetest.Worktree {
			f, write := engine.NewFakeFiles()
			return storetest.Worktree{Files: f, Write: func(_ *testing.T, p string, b []byte) { write(p, b) }}
		})
	})
}

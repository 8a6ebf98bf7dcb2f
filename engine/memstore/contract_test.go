package memstore_test

import (
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/memstore"
	"github.com/git-hegel/git-hegel/gitstore/storetest"
)

// The stores the engine's tests run on keep the contract of the
// git-backed ones (gitstore runs the same suites).
func TestContracts(t *testing.T) {
	t.Run("TaskStore", func(t *testing.T) {
		storetest.RunTaskStore(t, func(*testing.T) engine.TaskStore { return memstore.NewTasks() })
	})
	t.Run("ArchiveStore", func(t *testing.T) {
		storetest.RunArchiveStore(t, func(*testing.T) storetest.Archive { return memstore.NewTasks() })
	})
	t.Run("TaskFiles", func(t *testing.T) {
		storetest.RunTaskFiles(t, func(*testing.T) storetest.TaskFiles { return memstore.NewTasks() })
	})
	t.Run("SessionStore", func(t *testing.T) {
		storetest.RunSessionStore(t, func(*testing.T) storetest.Sessions {
			s := &memstore.Sessions{Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }}
			return storetest.Sessions{SessionStore: s, Corrupt: func(*testing.T) { s.Corrupt = true }}
		})
	})
	t.Run("Files", func(t *testing.T) {
		storetest.RunFiles(t, func(*testing.T) storetest.Worktree {
			f := memstore.Files{}
			return storetest.Worktree{Files: f, Write: func(_ *testing.T, p string, b []byte) { f[p] = string(b) }}
		})
	})
}

package gitstore

import (
	"strings"
	"testing"
)

// TestExistingWorktreeID: reading the id never creates it; once a writing
// command made it, both readers agree.
func TestExistingWorktreeID(t *testing.T) {
	for name, newRepo := range storeBackends {
		t.Run(name, func(t *testing.T) {
			r := newRepo(t)
			id, err := r.ExistingWorktreeID()
			if err != nil || id != "" {
				t.Fatalf("before any write: %q, %v", id, err)
			}
			if _, err := r.common.Stat(instanceFile); err == nil {
				t.Fatal("reading the id created it")
			}
			made, err := r.WorktreeID()
			if err != nil || !strings.HasSuffix(made, ":main") {
				t.Fatalf("WorktreeID: %q, %v", made, err)
			}
			r.instance = "" // as a later process that has not read it yet
			if got, err := r.ExistingWorktreeID(); err != nil || got != made {
				t.Errorf("after the write: %q, %v; want %q", got, err, made)
			}
		})
	}
}

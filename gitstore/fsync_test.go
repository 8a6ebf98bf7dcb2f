package gitstore

import (
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/engine"
)

// A task save hardens what git would harden for the same files: nothing
// by default (git fsyncs neither loose objects nor refs), the ref and the
// session with core.fsync=reference, and under core.fsyncMethod=batch the
// objects are written out one by one and flushed once, before the ref.
func TestTaskSaveFollowsCoreFsync(t *testing.T) {
	for _, tc := range []struct {
		config          []string
		synced, flushes int64
	}{
		{nil, 0, 0},
		{[]string{"core.fsync", "reference"}, 1, 0},
		{[]string{"core.fsync", "none"}, 0, 0},
		{[]string{"core.fsync", "committed"}, 6, 0}, // three blobs, tree, commit; the ref
		{[]string{"core.fsyncObjectFiles", "true"}, 5, 0},
		{[]string{"core.fsync", "committed", "core.fsyncMethod", "batch"}, 6, 1},
		{[]string{"core.fsync", "committed", "core.fsyncMethod", "writeout-only"}, 6, 0},
	} {
		r := newDiskRepo(t)
		for i := 0; i+1 < len(tc.config); i += 2 {
			runGit(t, r.WorkTree, "config", tc.config[i], tc.config[i+1])
		}
		r, err := Open(r.WorkTree, noEnv)
		if err != nil {
			t.Fatal(err)
		}
		r.Now = func() time.Time { return fixedNow }
		if _, err := r.Tasks().SaveTask(sampleTask("t"), "start"); err != nil {
			t.Fatal(err)
		}
		if got := synced(r); got != tc.synced {
			t.Errorf("%v: %d files hardened, want %d", tc.config, got, tc.synced)
		}
		if got := flushes(r); got != tc.flushes {
			t.Errorf("%v: %d batch flushes, want %d", tc.config, got, tc.flushes)
		}
	}
}

func TestGitTestFsyncTurnsItAllOff(t *testing.T) {
	r := newDiskRepo(t)
	runGit(t, r.WorkTree, "config", "core.fsync", "all")
	r, err := Open(r.WorkTree, func(k string) string {
		if k == "GIT_TEST_FSYNC" {
			return "false"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Tasks().SaveTask(sampleTask("t"), "start"); err != nil {
		t.Fatal(err)
	}
	if got := synced(r); got != 0 {
		t.Errorf("GIT_TEST_FSYNC=false: %d files hardened", got)
	}
}

// The session file names the worktree's active task as HEAD names its
// branch: it is hardened with references.
func TestSessionFollowsCoreFsyncReference(t *testing.T) {
	for _, value := range []string{"", "reference"} {
		r := newDiskRepo(t)
		if value != "" {
			runGit(t, r.WorkTree, "config", "core.fsync", value)
		}
		r, err := Open(r.WorkTree, noEnv)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Sessions().UpdateSession(func(s *engine.Session) error { s.ActiveTask = "t"; return nil }); err != nil {
			t.Fatal(err)
		}
		// The first session also adds .hegel/state.json to info/exclude.
		want := map[string]int64{"": 0, "reference": 2}[value]
		if got := synced(r); got != want {
			t.Errorf("core.fsync=%q: %d files hardened, want %d", value, got, want)
		}
	}
}

func synced(r *Repo) int64  { n, _ := r.Durability().Counts(); return n }
func flushes(r *Repo) int64 { _, n := r.Durability().Counts(); return n }

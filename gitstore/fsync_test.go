package gitstore

import (
	"strings"
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/engine"
)

// What git 2.39's parse_fsync_components makes of core.fsync values
// (config.c): each value starts from the default, names add, "-name"
// removes, a name matches every component it is a prefix of, and "none"
// counts only as the whole rest of the value.
func TestFsyncComponentsAsGitParsesThem(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  FsyncComponent
		warn  string
	}{
		{"", fsyncDefault, ""},
		{"reference", fsyncDefault | FsyncReference, ""},
		{"none", 0, ""},
		{"none,reference", fsyncDefault | FsyncReference, "unknown core.fsync component 'none'"},
		{"reference,none", FsyncReference, ""}, // none resets the base, not what was named
		{"committed", fsyncDefault | FsyncLooseObject | FsyncReference, ""},
		{"added", fsyncAdded | fsyncDefault, ""},
		{"all", fsyncAll, ""},
		{"-pack", FsyncCommitGraph, ""}, // "pack" is a prefix of pack-metadata too
		{"pack", fsyncDefault | FsyncPack | FsyncPackMetadata, ""},
		{"ref", fsyncDefault | FsyncReference, ""},
		{"loose-object, -loose-object", fsyncDefault | FsyncLooseObject, ""},
		{"objects,index", fsyncDefault | FsyncLooseObject | FsyncIndex, ""},
		{"bogus", fsyncDefault, "unknown core.fsync component 'bogus'"},
		{"-", fsyncDefault, "invalid value for variable core.fsync"},
	} {
		d := &Durability{}
		got := d.parseComponents(tc.value)
		if got != tc.want {
			t.Errorf("core.fsync=%q: %06b, want %06b", tc.value, got, tc.want)
		}
		warned := strings.Join(d.warnings, "; ")
		if (tc.warn == "") != (warned == "") || !strings.Contains(warned, tc.warn) {
			t.Errorf("core.fsync=%q: warnings %q, want %q", tc.value, warned, tc.warn)
		}
	}
}

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
		if got := r.dur.synced.Load(); got != tc.synced {
			t.Errorf("%v: %d files hardened, want %d", tc.config, got, tc.synced)
		}
		if got := r.dur.flushes.Load(); got != tc.flushes {
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
	if got := r.dur.synced.Load(); got != 0 {
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
		if got := r.dur.synced.Load(); got != want {
			t.Errorf("core.fsync=%q: %d files hardened, want %d", value, got, want)
		}
	}
}

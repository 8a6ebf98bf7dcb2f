//go:build linux

package rollback

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// honestHook is an fsmonitor hook (protocol version 2) that reports every
// path appended to its log since the token, a line number in the log; a
// token it did not give (git's first one, a timestamp) gets "/".
const honestHook = `#!/bin/sh
log=%q
n=$(wc -l < "$log" | tr -d ' ')
printf 'log:%%s\0' "$n"
case "$2" in
log:*) from=${2#log:} ;;
*) printf '/\0'; exit 0 ;;
esac
tail -n +$((from+1)) "$log" | tr '\n' '\0'
`

// fsmonRepo is dirCacheRepo with the hook configured (script: the hook's
// body, %%q the log's path) and a log it reads.
func fsmonRepo(t *testing.T, script string) (*testRepo, string) {
	t.Helper()
	tr := dirCacheRepo(t)
	base := filepath.Dir(tr.dir)
	log := filepath.Join(base, "fsmon.log")
	os.WriteFile(log, nil, 0o644)
	hook := filepath.Join(base, "fsmon-hook")
	if strings.Contains(script, "%q") {
		script = fmt.Sprintf(script, log)
	}
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	tr.git("config", "core.fsmonitor", hook)
	tr.reopen()
	tr.m.DirCache = true
	return tr, log
}

// logged appends paths to the honest hook's log.
func logged(t *testing.T, log string, paths ...string) {
	t.Helper()
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range paths {
		fmt.Fprintln(f, p)
	}
}

// fsmonSnap takes a stored action snapshot (directory cache, fsmonitor)
// and a full scan's preview (which writes no cache), requires the same
// work tree, and returns the number of files the fsmonitor spared (-1:
// it was not used).
func fsmonSnap(tr *testRepo, what string) int {
	tr.t.Helper()
	idx, err := tr.m.w.readIndex()
	if err != nil {
		tr.t.Fatal(err)
	}
	sn := tr.m.snapshotter()
	if sn.fsmon == nil {
		tr.t.Fatal("core.fsmonitor not read")
	}
	spared := -1
	sn.trace = func(step string) {
		if rest, ok := strings.CutPrefix(step, "fsmonitor ("); ok {
			fmt.Sscanf(rest[strings.Index(rest, ", ")+2:], "%d", &spared)
		}
	}
	got, err := sn.take(idx, true)
	if err != nil {
		tr.t.Fatal(err)
	}
	full := tr.m.snapshotter()
	full.dirCache, full.fsmon = false, nil
	want, err := full.take(idx, false)
	if err != nil {
		tr.t.Fatal(err)
	}
	if got.worktree != want.worktree {
		// The full scan's trees were only hashed: only the other lists.
		tr.t.Fatalf("%s: work tree with the fsmonitor %s, full scan %s:\n%s", what, got.worktree, want.worktree,
			tr.git("ls-tree", "-r", got.worktree.String()))
	}
	return spared
}

// primeFsmon takes the snapshots that leave a token the hook gave.
func primeFsmon(tr *testRepo) {
	tr.t.Helper()
	settle()
	fsmonSnap(tr, "first")  // no token: full scan, a timestamp kept
	fsmonSnap(tr, "second") // the hook says "/" to a timestamp
	if n := fsmonSnap(tr, "unchanged"); n <= 0 {
		tr.t.Fatalf("nothing changed, the fsmonitor spared %d lstat calls", n)
	}
}

// With a hook that reports every change, each snapshot is the full
// scan's, through edits, creations, deletions, renames, new directories
// and git add.
func TestFsmonitorHonestHook(t *testing.T) {
	tr, log := fsmonRepo(t, honestHook)
	primeFsmon(tr)
	steps := []struct {
		name   string
		change func()
		// used: the fsmonitor answers this snapshot (false: the index
		// changed, everything is scanned).
		used bool
	}{
		{"tracked file edited, same size", func() { tr.write("a/one", "ONE\n"); logged(t, log, "a/one") }, true},
		{"tracked file edited again", func() { tr.write("a/one", "one, longer\n"); logged(t, log, "a/one") }, true},
		{"untracked file created", func() { tr.write("a/b/created", "new\n"); logged(t, log, "a/b/created") }, true},
		{"untracked file edited", func() { tr.write("a/untracked", "U\n"); logged(t, log, "a/untracked") }, true},
		{"files deleted", func() { tr.remove("a/two"); tr.remove("d/new"); logged(t, log, "a/two", "d/new") }, true},
		{"file renamed", func() {
			os.Rename(filepath.Join(tr.dir, "a/b/created"), filepath.Join(tr.dir, "c/moved"))
			logged(t, log, "a/b/created", "c/moved")
		}, true},
		{"new directories", func() {
			tr.write("c/sub/deeper/x", "x\n")
			tr.write("c/sub/y", "y\n")
			logged(t, log, "c/sub/")
		}, true},
		{"made executable", func() { tr.chmod("c/four", 0o755); logged(t, log, "c/four") }, true},
		{"git add", func() { tr.add("a/untracked", "c/sub") }, false},
		{"after git add", func() { tr.write("c/sub/y", "Y\n"); logged(t, log, "c/sub/y") }, true},
		{"unchanged", func() {}, true},
	}
	for _, st := range steps {
		settle()
		st.change()
		n := fsmonSnap(tr, st.name)
		if st.used && n <= 0 {
			t.Errorf("%s: the fsmonitor was not used (%d)", st.name, n)
		}
		if !st.used && n >= 0 {
			t.Errorf("%s: the fsmonitor was used", st.name)
		}
	}
	if _, err := os.Stat(filepath.Join(tr.dir, ".git", fsmonFile)); err != nil {
		t.Errorf("no token kept: %v", err)
	}
}

// A hook that cannot be trusted this time means a full scan: a change it
// did not report is in the snapshot all the same.
func TestFsmonitorFallback(t *testing.T) {
	old := fsmonTimeout
	fsmonTimeout = 300 * time.Millisecond
	t.Cleanup(func() { fsmonTimeout = old })
	for _, tc := range []struct{ name, body string }{
		{"everything", `printf 'tok\0/\0'`},
		{"fails", `printf 'tok\0'; exit 1`},
		{"no token", `printf 'garbage'`},
		{"empty output", `:`},
		{"path outside", `printf 'tok\0../outside\0'`},
		{"absolute path", `printf 'tok\0/etc/passwd\0'`},
		{"slow", `exec sleep 5`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Honest until the log holds "lie": then the case's body.
			tr, log := fsmonRepo(t, strings.Replace(honestHook, "n=$(", "grep -q '^lie$' \"$log\" && { "+strings.ReplaceAll(tc.body, "%", "%%")+"; exit; }\nn=$(", 1))
			primeFsmon(tr)
			logged(t, log, "lie")
			settle()
			tr.write("a/one", "ONE\n") // not reported
			tr.write("a/b/unreported", "u\n")
			start := time.Now()
			if n := fsmonSnap(tr, tc.name); n >= 0 {
				t.Errorf("the fsmonitor was used (%d)", n)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("the hook was waited for %s", d)
			}
		})
	}
}

// A token saved with other settings, or a stat cache another snapshot
// rewrote, is not used.
func TestFsmonitorRecordInvalid(t *testing.T) {
	tr, _ := fsmonRepo(t, honestHook)
	primeFsmon(tr)
	// A snapshot without the fsmonitor rewrites the stat cache.
	settle()
	tr.write("a/one", "ONE\n")
	dirSnap(tr, false)
	if n := fsmonSnap(tr, "stat cache rewritten"); n >= 0 {
		t.Errorf("the fsmonitor was used with another snapshot's stat cache (%d)", n)
	}
	if n := fsmonSnap(tr, "again"); n <= 0 {
		t.Errorf("the fsmonitor was not used again (%d)", n)
	}
	tr.m.MaxFileSize = 1
	if n := fsmonSnap(tr, "other settings"); n >= 0 {
		t.Errorf("the fsmonitor was used with other settings (%d)", n)
	}
	os.WriteFile(filepath.Join(tr.dir, ".git", fsmonFile), []byte("hegel-fsmonitor 1\nzz\n"), 0o644)
	if n := fsmonSnap(tr, "damaged record"); n >= 0 {
		t.Errorf("the fsmonitor was used with a damaged record (%d)", n)
	}
}

// core.fsmonitor=true (git's builtin daemon) and false name no hook.
func TestFsmonitorConfig(t *testing.T) {
	get := func(v string) func(string, string) (string, bool) {
		return func(s, k string) (string, bool) {
			if k == "fsmonitor" {
				return v, true
			}
			return "", false
		}
	}
	for _, v := range []string{"true", "false", "", "yes", "0"} {
		if f := fsmonitorFor(get(v), "/wt"); f != nil {
			t.Errorf("core.fsmonitor=%q: hook %q", v, f.hook)
		}
	}
	if f := fsmonitorFor(get(".git/hooks/query-watchman"), "/wt"); f == nil || f.hook != ".git/hooks/query-watchman" || f.version != 0 {
		t.Errorf("a hook path: %+v", f)
	}
}

// Version 1 (core.fsmonitorHookVersion=1, or a hook that fails version 2
// when it is unset): the token is a timestamp taken before the hook runs.
func TestFsmonitorVersion1(t *testing.T) {
	// Reports every logged path, whatever the timestamp (an honest
	// superset); exits 1 when asked for version 2.
	v1 := `#!/bin/sh
log=%q
[ "$1" = 1 ] || exit 1
case "$2" in *[!0-9]*|'') exit 1 ;; esac
tr '\n' '\0' < "$log"
`
	for _, set := range []bool{true, false} {
		t.Run(fmt.Sprint("configured ", set), func(t *testing.T) {
			tr, log := fsmonRepo(t, v1)
			if set {
				tr.git("config", "core.fsmonitorHookVersion", "1")
				tr.reopen()
				tr.m.DirCache = true
			}
			settle()
			fsmonSnap(tr, "first")
			if n := fsmonSnap(tr, "unchanged"); n <= 0 {
				t.Fatalf("the fsmonitor was not used (%d)", n)
			}
			settle()
			tr.write("a/one", "ONE\n")
			tr.write("a/b/new", "n\n")
			logged(t, log, "a/one", "a/b/new")
			if n := fsmonSnap(tr, "changed"); n <= 0 {
				t.Fatalf("the fsmonitor was not used (%d)", n)
			}
		})
	}
}

// The hook run is the one configured now, never the one a token file
// names.
func TestFsmonitorRecordNamesAnotherHook(t *testing.T) {
	tr, _ := fsmonRepo(t, honestHook)
	primeFsmon(tr)
	gitDir := filepath.Join(tr.dir, ".git")
	rec, ok := loadFsmonRecord(gitDir)
	if !ok {
		t.Fatal("no token kept")
	}
	ran := filepath.Join(t.TempDir(), "ran")
	other := filepath.Join(t.TempDir(), "other-hook")
	os.WriteFile(other, []byte("#!/bin/sh\ntouch "+ran+"\nprintf 'x\\0'\n"), 0o755)
	rec.hook = other
	ident, err := os.Stat(filepath.Join(gitDir, statCacheFile))
	if err != nil {
		t.Fatal(err)
	}
	rec.statCache = fileIdent(ident)
	saveFsmonRecord(gitDir, tr.m.w.r.Shared(), rec)
	if n := fsmonSnap(tr, "another hook recorded"); n >= 0 {
		t.Errorf("a token kept for another hook was used (%d)", n)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the hook named in the token file ran")
	}
}

// With core.ignoreCase the hook is not asked.
func TestFsmonitorIgnoreCase(t *testing.T) {
	tr, _ := fsmonRepo(t, honestHook)
	tr.git("config", "core.ignoreCase", "true")
	tr.reopen()
	tr.m.DirCache = true
	if sn := tr.m.snapshotter(); sn.fsmon != nil {
		t.Errorf("core.ignoreCase: hook %q asked", sn.fsmon.hook)
	}
}

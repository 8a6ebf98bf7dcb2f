package rollback

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/gitstore"
)

// TestCrashDuringRollback kills `git hegel rollback` with SIGKILL at random
// moments (real signals, no hooks in the code) and checks that the
// repository is fsck-clean and that running the command again, or
// `rollback --undo`, always ends in exactly the state before or after.
func TestCrashDuringRollback(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: 200 killed rollbacks (skipped with -short)")
	}
	needGit(t)
	runs := 200
	if v := os.Getenv("GIT_HEGEL_CRASH_RUNS"); v != "" {
		fmt.Sscan(v, &runs)
	}
	base := t.TempDir()
	bin := filepath.Join(base, "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "git-hegel"), "github.com/git-hegel/git-hegel/cmd/git-hegel")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	home := filepath.Join(base, "home")
	os.MkdirAll(home, 0o755)
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = T\n\temail = t@example.com\n[init]\n\tdefaultBranch = main\n[gc]\n\tauto = 0\n"), 0o644)
	env := append(gitEnv(home), "GIT_HEGEL_DATE=2026-01-02T03:04:05Z")
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=" + bin + string(os.PathListSeparator) + kv[5:]
		}
	}
	tmpl := filepath.Join(base, "template")
	makeCrashTemplate(t, tmpl, env)

	// Runs to completion give the two states and the typical duration.
	var before, after dirState
	var times []time.Duration
	for k := 0; k < 3; k++ {
		ref := filepath.Join(base, fmt.Sprint("ref", k))
		copyTree(t, tmpl, ref)
		runGit(t, ref, env, "update-index", "-q", "--refresh")
		before = captureDir(t, ref, env)
		start := time.Now()
		hegel(t, ref, env, "rollback", "spec", "-y")
		times = append(times, time.Since(start))
		after = captureDir(t, ref, env)
		os.RemoveAll(ref)
	}
	if before.equal(after) {
		t.Fatal("setup: the rollback changes nothing")
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	took := times[1]
	t.Logf("an uninterrupted rollback takes %v (median of 3)", took)

	outcomes := map[string]int{}
	window := took * 3 / 2
	for i := 0; i < runs; i++ {
		dir := filepath.Join(base, fmt.Sprintf("run%03d", i))
		copyTree(t, tmpl, dir)
		runGit(t, dir, env, "update-index", "-q", "--refresh") // new inodes: refresh the stat data
		// The git-hegel process itself, not "git hegel": killing git
		// would leave git-hegel running (docs/rollback.md).
		cmd := exec.Command(filepath.Join(bin, "git-hegel"), "rollback", "spec", "-y")
		cmd.Dir, cmd.Env = dir, env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Most kills land after process start-up and the scan, where the
		// rollback writes; some land before and after. The window follows
		// the outcomes (a kill after the end shrinks it, one before any
		// change widens it): on a busy machine a rollback's time moves
		// during the test, and a fixed window misses the middle.
		delay := time.Duration(rand.Int64N(int64(window)))
		time.Sleep(delay)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()

		fsck(t, dir, env, i, "after the kill")
		// What a user does first: look. git hegel status also clears what
		// a rollback killed before its first change left (its first
		// journal and its index.lock).
		status := hegelOut(t, dir, env, "status")
		_, journalErr := os.Stat(filepath.Join(dir, ".git", journalFile))
		interrupted := journalErr == nil
		if interrupted != strings.Contains(status, "was interrupted") {
			t.Errorf("run %d: journal %v, but status says:\n%s", i, interrupted, status)
		}
		undo := i%2 == 1
		var now dirState
		if !interrupted {
			now = captureDir(t, dir, env)
		}
		switch {
		case interrupted:
			if undo {
				outcomes["interrupted, undone"]++
				hegel(t, dir, env, "rollback", "--undo")
			} else {
				outcomes["interrupted, finished"]++
				hegel(t, dir, env, "rollback")
			}
		case now.equal(before):
			outcomes["killed before any change"]++
			window = window * 11 / 10
			if !undo {
				hegel(t, dir, env, "rollback", "spec", "-y")
			}
		case now.equal(after):
			outcomes["killed after the end"]++
			window = max(window*9/10, 10*time.Millisecond)
			if undo {
				hegel(t, dir, env, "rollback", "--undo", "-y")
			}
		default:
			t.Fatalf("run %d (killed after %v): no journal, yet the state is neither before nor after:\n%s", i, delay, now.diff(after))
		}
		want := after
		if undo {
			want = before
		}
		got := captureDir(t, dir, env)
		if !got.equal(want) {
			t.Fatalf("run %d (killed after %v, undo=%v): recovered state differs:\n%s", i, delay, undo, got.diff(want))
		}
		fsck(t, dir, env, i, "after recovery")
		for _, leftover := range []string{journalFile, "index.lock", "HEAD.lock"} {
			if _, err := os.Stat(filepath.Join(dir, ".git", leftover)); err == nil {
				t.Fatalf("run %d: .git/%s left behind", i, leftover)
			}
		}
		os.RemoveAll(dir)
	}
	t.Logf("outcomes: %v", outcomes)
	if outcomes["interrupted, finished"]+outcomes["interrupted, undone"] < runs/10 {
		t.Errorf("only %v runs were killed midway; the test does not exercise recovery", outcomes)
	}
}

// makeCrashTemplate builds a repository where `rollback spec` changes
// about 200 paths: modified, deleted, created, staged, chmodded, linked,
// committed.
func makeCrashTemplate(t *testing.T, dir string, env []string) {
	runGit(t, filepath.Dir(dir), env, "init", "-q", dir)
	w := func(p, s string) {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w(".gitignore", "build/\n")
	for i := 0; i < 120; i++ {
		w(fmt.Sprintf("src/d%02d/f%03d.txt", i%20, i), fmt.Sprintf("file %d\n%s", i, strings.Repeat("x", i)))
	}
	runGit(t, dir, env, "add", "-A")
	runGit(t, dir, env, "commit", "-qm", "base")
	hegel(t, dir, env, "start", "minimal", "--task", "t")
	for i := 0; i < 30; i++ {
		w(fmt.Sprintf("spec-untracked/u%02d", i), "untracked at spec\n")
	}
	w("build/keep.o", "ignored, never touched\n")
	// Work during spec, then next: the rollback under test goes back to
	// the start of spec, from the state below.
	for i := 0; i < 120; i += 2 {
		w(fmt.Sprintf("src/d%02d/f%03d.txt", i%20, i), fmt.Sprintf("changed %d\n", i))
	}
	for i := 1; i < 100; i += 4 {
		os.Remove(filepath.Join(dir, fmt.Sprintf("src/d%02d/f%03d.txt", i%20, i)))
	}
	for i := 0; i < 60; i++ {
		w(fmt.Sprintf("new/n%03d.txt", i), "new\n")
	}
	runGit(t, dir, env, "add", "-A", "src", "new")
	runGit(t, dir, env, "commit", "-qm", "work")
	os.Chmod(filepath.Join(dir, "src/d03/f003.txt"), 0o755)
	os.Symlink("../src/d05/f005.txt", filepath.Join(dir, "new/link"))
	w("src/d07/f007.txt", "uncommitted\n")
	hegel(t, dir, env, "next")
	w("src/d09/f009.txt", "later, uncommitted\n")
	w("build/later.o", "ignored too\n")
}

func hegel(t *testing.T, dir string, env []string, args ...string) {
	t.Helper()
	if out, err := hegelRun(dir, env, args...); err != nil {
		t.Fatalf("git hegel %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func hegelOut(t *testing.T, dir string, env []string, args ...string) string {
	out, _ := hegelRun(dir, env, args...)
	return out
}

func hegelRun(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"hegel"}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func fsck(t *testing.T, dir string, env []string, run int, when string) {
	t.Helper()
	cmd := exec.Command("git", "fsck", "--strict", "--no-dangling", "--no-progress")
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("run %d: git fsck %s: %v\n%s", run, when, err, out)
	}
}

// dirState is what a rollback must restore exactly: every file (content,
// executable bit, link target), git status with HEAD's commit, and the
// task's node.
type dirState struct {
	files  map[string]string
	status string
	node   string
}

func (a dirState) equal(b dirState) bool {
	return a.status == b.status && a.node == b.node && diffMaps(a.files, b.files) == ""
}

func (a dirState) diff(b dirState) string {
	return fmt.Sprintf("files (- missing, + extra, ~ changed vs want):\n%s\nstatus:\n%s\nwant status:\n%s\nnode %s want %s",
		diffMaps(b.files, a.files), a.status, b.status, a.node, b.node)
}

func captureDir(t *testing.T, dir string, env []string) dirState {
	t.Helper()
	s := dirState{files: map[string]string{}}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == ".git" || reservedPath(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			s.files[rel] = "-> " + target
		case d.Type().IsRegular():
			b, _ := os.ReadFile(p)
			fi, _ := d.Info()
			s.files[rel] = fmt.Sprintf("%o %s", fi.Mode().Perm()&0o100, b)
		}
		return nil
	})
	cmd := exec.Command("git", "status", "--porcelain=v2", "--branch", "--untracked-files=all", "--no-optional-locks")
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Run()
	s.status = out.String() // includes "# branch.oid <HEAD>"
	if r, err := gitstore.Open(dir, func(string) string { return "" }); err == nil {
		if task, err := r.Tasks().LoadTask("t"); err == nil {
			s.node = task.State.CurrentNode
		}
	}
	return s
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	var paths []string
	filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		paths = append(paths, p)
		return nil
	})
	sort.Strings(paths)
	for _, p := range paths {
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case fi.IsDir():
			os.MkdirAll(dst, fi.Mode().Perm())
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			os.Symlink(target, dst)
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, b, fi.Mode().Perm()); err != nil {
				t.Fatal(err)
			}
			os.Chtimes(dst, fi.ModTime(), fi.ModTime())
		}
	}
}

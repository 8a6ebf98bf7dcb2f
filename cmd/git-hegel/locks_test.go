package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// gitTransaction is a real `git update-ref --stdin` that has prepared a
// transaction: git holds the locks of every ref in it (and packed-refs.lock
// for a delete) until commit is sent.
type gitTransaction struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func prepareGitTransaction(t *testing.T, env []string, dir string, lines ...string) *gitTransaction {
	t.Helper()
	cmd := exec.Command("git", "update-ref", "--stdin")
	cmd.Dir, cmd.Env = dir, env
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tx := &gitTransaction{cmd: cmd, in: in, out: bufio.NewReader(out)}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	fmt.Fprintln(in, "start")
	tx.expect(t, "start: ok")
	for _, l := range lines {
		fmt.Fprintln(in, l)
	}
	fmt.Fprintln(in, "prepare")
	tx.expect(t, "prepare: ok")
	return tx
}

func (tx *gitTransaction) expect(t *testing.T, want string) {
	t.Helper()
	line, err := tx.out.ReadString('\n')
	if strings.TrimSpace(line) != want {
		t.Fatalf("git update-ref --stdin said %q (%v), want %q", line, err, want)
	}
}

// TestInterruptedRollbackLeavesGitsLocks: the stale-lock cleanup of a
// rollback killed before its first change runs from `git hegel status`.
// It must remove only the locks git-hegel can prove it created (its owner
// marker, owner dead), never one that a running git holds: here a real
// `git update-ref --stdin` transaction holds HEAD.lock, the task's ref
// lock, a branch lock and packed-refs.lock, and a `git commit` waiting for
// its editor holds index.lock. git must then commit both as if git-hegel
// had not run.
func TestInterruptedRollbackLeavesGitsLocks(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("dead-owner markers are checked through /proc")
	}
	dir, env := loopRepo(t)
	gd := filepath.Join(dir, ".git")
	mustSh(t, env, dir, "git", "branch", "other")
	task := strings.TrimSpace(mustSh(t, env, dir, "git", "rev-parse", "refs/hegel/tasks/race"))

	// git commit -a holds index.lock while its editor runs.
	release := filepath.Join(t.TempDir(), "release")
	editor := filepath.Join(t.TempDir(), "editor.sh")
	os.WriteFile(editor, []byte("#!/bin/sh\nwhile [ ! -e '"+release+"' ]; do sleep 0.05; done\necho 'committed by git' > \"$1\"\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "f.txt"), []byte("x\n"), 0o644)
	mustSh(t, env, dir, "git", "add", "f.txt")
	mustSh(t, env, dir, "git", "commit", "-q", "-m", "f")
	os.WriteFile(filepath.Join(dir, "f.txt"), []byte("y\n"), 0o644)
	commit := exec.Command("git", "commit", "-q", "-a")
	commit.Dir, commit.Env = dir, append(env, "GIT_EDITOR="+editor)
	var commitOut strings.Builder
	commit.Stdout, commit.Stderr = &commitOut, &commitOut
	if err := commit.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.WriteFile(release, nil, 0o644); commit.Wait() })
	for i := 0; ; i++ {
		if _, err := os.Stat(filepath.Join(gd, "index.lock")); err == nil {
			break
		}
		if i > 200 {
			t.Fatal("git commit never took index.lock")
		}
		time.Sleep(20 * time.Millisecond)
	}
	head := strings.TrimSpace(mustSh(t, env, dir, "git", "rev-parse", "HEAD"))
	tx := prepareGitTransaction(t, env, dir,
		"option no-deref", "update HEAD "+head+" "+head,
		"update refs/hegel/tasks/race "+task+" "+task,
		"delete refs/heads/other")
	gitLocks := []string{"HEAD.lock", "index.lock", "packed-refs.lock", "refs/hegel/tasks/race.lock", "refs/heads/other.lock"}
	for _, l := range gitLocks {
		if _, err := os.Stat(filepath.Join(gd, l)); err != nil {
			t.Fatalf("setup: git does not hold %s", l)
		}
	}

	// A rollback killed while preparing left its journal (newer than every
	// lock above) and, on the checkpoints ref, a lock of its own.
	marker, err := deadMarker()
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	fmt.Sscanf(marker, "git-hegel lock pid=%d", &pid)
	ours := filepath.Join(gd, "refs", "hegel", "checkpoints", "race.lock")
	os.MkdirAll(filepath.Dir(ours), 0o755)
	os.WriteFile(ours, []byte(marker), 0o644)
	journal := fmt.Sprintf(`{"version": 1, "task": "race", "node": "a", "from": "a", "history": ["a"], "at": "2026-01-02T03:04:05Z", "pid": %d, "step": "preparing", "head_ref": "refs/heads/main"}`, pid)
	os.WriteFile(filepath.Join(gd, "hegel-rollback.json"), []byte(journal), 0o644)

	out, err := sh(t, env, dir, "git", "hegel", "status")
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	if !strings.Contains(out, "warning: removed "+ours+", left by git-hegel process ") {
		t.Errorf("status did not say it removed the dead rollback's own lock:\n%s", out)
	}
	if _, err := os.Stat(ours); err == nil {
		t.Errorf("the dead rollback's own lock is still there")
	}
	if _, err := os.Stat(filepath.Join(gd, "hegel-rollback.json")); err == nil {
		t.Errorf("the journal of a rollback that changed nothing is still there")
	}
	for _, l := range gitLocks {
		if _, err := os.Stat(filepath.Join(gd, l)); err != nil {
			t.Errorf("git's %s was removed by git hegel status", l)
		}
	}

	// git finishes what it was doing.
	fmt.Fprintln(tx.in, "commit")
	tx.expect(t, "commit: ok")
	tx.in.Close()
	if err := tx.cmd.Wait(); err != nil {
		t.Errorf("git update-ref --stdin: %v", err)
	}
	os.WriteFile(release, nil, 0o644)
	if err := commit.Wait(); err != nil {
		t.Errorf("git commit failed: %v\n%s", err, commitOut.String())
	}
	if _, err := sh(t, env, dir, "git", "rev-parse", "--verify", "-q", "refs/heads/other"); err == nil {
		t.Errorf("git's delete of refs/heads/other was lost")
	}
	if got := mustSh(t, env, dir, "git", "log", "-1", "--format=%s"); strings.TrimSpace(got) != "committed by git" {
		t.Errorf("git commit's commit is missing: %q", got)
	}
	mustSh(t, env, dir, "git", "fsck", "--strict")
}

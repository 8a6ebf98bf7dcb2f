package refs

import (
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// refsTestHash returns a distinct, deterministic object name for tests that
// do not need the object to exist.
func refsTestHash(i int) plumbing.Hash {
	return plumbing.Hash(sha1.Sum([]byte(fmt.Sprintf("refs-test-%d", i))))
}

// refsCounterHash encodes n in an object name, so concurrent tests (and
// other processes) can tell which increment a ref value is.
func refsCounterHash(n int) plumbing.Hash {
	var h plumbing.Hash
	copy(h[:], "hegelctr")
	binary.BigEndian.PutUint64(h[8:], uint64(n))
	return h
}

// refsCounterOf decodes refsCounterHash.
func refsCounterOf(h plumbing.Hash) (int, bool) {
	if string(h[:8]) != "hegelctr" {
		return 0, false
	}
	return int(binary.BigEndian.Uint64(h[8:16])), true
}

// refsGitEnv is the environment for running real git in tests: no user or
// system configuration, and none of the GIT_* variables a hook might set.
func refsGitEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	return append(env,
		"HOME="+home,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com",
		"GIT_AUTHOR_DATE=2024-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2024-01-01T00:00:00Z",
	)
}

// refsHaveGit reports whether real git is on PATH.
func refsHaveGit() bool {
	_, err := exec.LookPath("git")
	return err == nil
}

// refsNewGitDir makes a repository in a temporary directory and returns its
// git dir: with real git when it is available, else just the directories.
func refsNewGitDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if refsHaveGit() {
		refsGit(t, dir, "init", "-q", "-b", "main")
		return filepath.Join(dir, ".git")
	}
	gitDir := filepath.Join(dir, ".git")
	if err := os.MkdirAll(filepath.Join(gitDir, "refs", "heads"), 0o777); err != nil {
		t.Fatal(err)
	}
	return gitDir
}

// refsGit runs git in dir and returns its trimmed stdout, failing the test
// on error.
func refsGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := refsGitErr(dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func refsGitErr(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = refsGitEnv(dir)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

package refs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/git-hegel/git-hegel/gitstore/refs"
	"github.com/git-hegel/git-hegel/gitstore/refs/refstest"
)

// gitDir makes a repository in a temporary directory and returns its git
// dir: with real git when it is available, else just the directories.
func gitDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := exec.LookPath("git"); err == nil {
		cmd := exec.Command("git", "init", "-q", "-b", "main", dir)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
		return filepath.Join(dir, ".git")
	}
	gd := filepath.Join(dir, ".git")
	if err := os.MkdirAll(filepath.Join(gd, "refs", "heads"), 0o777); err != nil {
		t.Fatal(err)
	}
	return gd
}

// The contract on every backend: git's files backend on a real git dir
// (through both kinds of OS filesystem go-billy has) and on memfs, and
// go-git's in-memory storage.
func TestRefsContract(t *testing.T) {
	quick := refs.Options{LockTimeout: 200 * time.Millisecond}
	for name, newBackend := range map[string]func(t *testing.T) refs.Backend{
		"Files/osfs-bound":  func(t *testing.T) refs.Backend { return refs.NewFiles(osfs.New(gitDir(t), osfs.WithBoundOS()), quick) },
		"Files/osfs-chroot": func(t *testing.T) refs.Backend { return refs.NewFiles(osfs.New(gitDir(t)), quick) },
		"Files/memfs":       func(t *testing.T) refs.Backend { return refs.NewFiles(memfs.New(), quick) },
		"Memory/memory":     func(t *testing.T) refs.Backend { return refs.NewMemory(memory.NewStorage()) },
	} {
		t.Run(name, func(t *testing.T) { refstest.Run(t, newBackend) })
	}
}

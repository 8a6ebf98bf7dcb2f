package gitstore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/gitstore/refs"
)

func TestUpdateDetachedHead(t *testing.T) {
	r := newDiskRepo(t)
	dir := r.WorkTree
	first := plumbing.NewHash(strings.TrimSpace(runGit(t, dir, "rev-parse", "HEAD")))
	runGit(t, dir, "commit", "-q", "--allow-empty", "-m", "two")
	second := plumbing.NewHash(strings.TrimSpace(runGit(t, dir, "rev-parse", "HEAD")))
	// On a branch, HEAD is symbolic: refused, nothing written.
	if err := r.UpdateDetachedHead(second, first); err == nil {
		t.Fatal("moved a HEAD that is on a branch")
	}
	runGit(t, dir, "checkout", "-q", "--detach")
	if err := r.UpdateDetachedHead(first, second); !errors.Is(err, ErrConflict) {
		t.Errorf("stale old value: %v", err)
	}
	if err := r.UpdateDetachedHead(second, first); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(runGit(t, dir, "rev-parse", "HEAD")); got != first.String() {
		t.Errorf("HEAD = %s, want %s", got, first)
	}
	if _, err := os.Stat(filepath.Join(r.GitDir, "HEAD.lock")); !os.IsNotExist(err) {
		t.Errorf("HEAD.lock left behind: %v", err)
	}
	// git's own lock on HEAD is respected.
	os.WriteFile(filepath.Join(r.GitDir, "HEAD.lock"), nil, 0o644)
	if err := r.UpdateDetachedHead(first, second); !errors.Is(err, refs.ErrLocked) {
		t.Errorf("with HEAD.lock held: %v", err)
	}
}

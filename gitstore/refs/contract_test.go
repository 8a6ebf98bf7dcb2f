package refs

import (
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/git-hegel/git-hegel/engine"
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

// refsContractBackends are the backends the contract runs on.
func refsContractBackends() map[string]func(t *testing.T) Backend {
	return map[string]func(t *testing.T) Backend{
		"Files/osfs-bound": func(t *testing.T) Backend {
			return &Files{fs: osfs.New(refsNewGitDir(t), osfs.WithBoundOS()), lockTimeout: 200 * time.Millisecond}
		},
		"Files/osfs-chroot": func(t *testing.T) Backend {
			return &Files{fs: osfs.New(refsNewGitDir(t)), lockTimeout: 200 * time.Millisecond}
		},
		"Files/memfs": func(t *testing.T) Backend {
			return &Files{fs: memfs.New(), lockTimeout: 200 * time.Millisecond}
		},
		"Memory/memory": func(t *testing.T) Backend {
			return &Memory{s: memory.NewStorage()}
		},
	}
}

func TestRefsContract(t *testing.T) {
	for name, newBackend := range refsContractBackends() {
		t.Run(name, func(t *testing.T) { runRefContract(t, newBackend) })
	}
}

// runRefContract checks the behaviour every Backend must share.
func runRefContract(t *testing.T, newBackend func(t *testing.T) Backend) {
	h1, h2, h3 := refsTestHash(1), refsTestHash(2), refsTestHash(3)
	const name = plumbing.ReferenceName("refs/hegel/doc")

	mustRead := func(t *testing.T, b Backend, name plumbing.ReferenceName, want plumbing.Hash) {
		t.Helper()
		got, err := b.Read(name)
		if err != nil {
			t.Fatalf("Read(%s): %v", name, err)
		}
		if got != want {
			t.Fatalf("Read(%s) = %s, want %s", name, got, want)
		}
	}
	mustMissing := func(t *testing.T, b Backend, name plumbing.ReferenceName) {
		t.Helper()
		_, err := b.Read(name)
		if !errors.Is(err, engine.ErrNotFound) {
			t.Fatalf("Read(%s) error = %v, want engine.ErrNotFound", name, err)
		}
		if !strings.Contains(err.Error(), string(name)) {
			t.Errorf("error %q does not name the ref", err)
		}
	}
	mustUpdate := func(t *testing.T, b Backend, name plumbing.ReferenceName, old, new plumbing.Hash) {
		t.Helper()
		if err := b.Update(name, old, new); err != nil {
			t.Fatalf("Update(%s, %s, %s): %v", name, old, new, err)
		}
	}
	mustConflict := func(t *testing.T, b Backend, name plumbing.ReferenceName, old, new plumbing.Hash) {
		t.Helper()
		before, err := b.List("")
		if err != nil {
			t.Fatal(err)
		}
		err = b.Update(name, old, new)
		if !errors.Is(err, engine.ErrConflict) {
			t.Fatalf("Update(%s, %s, %s) error = %v, want engine.ErrConflict", name, old, new, err)
		}
		if !strings.Contains(err.Error(), string(name)) {
			t.Errorf("error %q does not name the ref", err)
		}
		after, err := b.List("")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("a conflicting update changed the refs:\nbefore %v\nafter  %v", before, after)
		}
	}

	t.Run("ReadMissing", func(t *testing.T) {
		b := newBackend(t)
		mustMissing(t, b, name)
		mustMissing(t, b, "refs/hegel/deep/er/name")
	})

	t.Run("Create", func(t *testing.T) {
		b := newBackend(t)
		mustUpdate(t, b, name, plumbing.ZeroHash, h1)
		mustRead(t, b, name, h1)
		mustUpdate(t, b, "refs/hegel/a/b/c", plumbing.ZeroHash, h2)
		mustRead(t, b, "refs/hegel/a/b/c", h2)
	})

	t.Run("CreateWhenExists", func(t *testing.T) {
		b := newBackend(t)
		mustUpdate(t, b, name, plumbing.ZeroHash, h1)
		mustConflict(t, b, name, plumbing.ZeroHash, h2)
		mustRead(t, b, name, h1)
	})

	t.Run("UpdateRightOld", func(t *testing.T) {
		b := newBackend(t)
		mustUpdate(t, b, name, plumbing.ZeroHash, h1)
		mustUpdate(t, b, name, h1, h2)
		mustRead(t, b, name, h2)
		mustUpdate(t, b, name, h2, h2) // a no-op move is fine
		mustRead(t, b, name, h2)
	})

	t.Run("UpdateWrongOld", func(t *testing.T) {
		b := newBackend(t)
		mustUpdate(t, b, name, plumbing.ZeroHash, h1)
		mustConflict(t, b, name, h2, h3)
		mustRead(t, b, name, h1)
	})

	t.Run("UpdateMissing", func(t *testing.T) {
		b := newBackend(t)
		mustConflict(t, b, name, h1, h2)
		mustMissing(t, b, name)
	})

	t.Run("Delete", func(t *testing.T) {
		b := newBackend(t)
		mustUpdate(t, b, name, plumbing.ZeroHash, h1)
		mustUpdate(t, b, "refs/hegel/keep", plumbing.ZeroHash, h3)
		mustConflict(t, b, name, h2, plumbing.ZeroHash) // wrong old
		mustRead(t, b, name, h1)
		mustUpdate(t, b, name, h1, plumbing.ZeroHash)
		mustMissing(t, b, name)
		mustRead(t, b, "refs/hegel/keep", h3)
		// It can be created again.
		mustUpdate(t, b, name, plumbing.ZeroHash, h2)
		mustRead(t, b, name, h2)
	})

	t.Run("DeleteMissing", func(t *testing.T) {
		b := newBackend(t)
		mustConflict(t, b, name, h1, plumbing.ZeroHash)
		mustMissing(t, b, name)
		// old == new == zero asserts absence.
		mustUpdate(t, b, name, plumbing.ZeroHash, plumbing.ZeroHash)
		mustMissing(t, b, name)
		mustUpdate(t, b, name, plumbing.ZeroHash, h1)
		mustConflict(t, b, name, plumbing.ZeroHash, plumbing.ZeroHash)
		mustRead(t, b, name, h1)
	})

	t.Run("DeleteNested", func(t *testing.T) {
		b := newBackend(t)
		mustUpdate(t, b, "refs/hegel/x/y/z", plumbing.ZeroHash, h1)
		mustUpdate(t, b, "refs/hegel/x/y/z", h1, plumbing.ZeroHash)
		mustMissing(t, b, "refs/hegel/x/y/z")
		// With the directories gone (or empty), refs/hegel/x is free again.
		mustUpdate(t, b, "refs/hegel/x", plumbing.ZeroHash, h2)
		mustRead(t, b, "refs/hegel/x", h2)
	})

	t.Run("List", func(t *testing.T) {
		b := newBackend(t)
		refs := map[plumbing.ReferenceName]plumbing.Hash{
			"refs/hegel/c":     refsTestHash(10),
			"refs/hegel/a/y":   refsTestHash(11),
			"refs/hegel/b":     refsTestHash(12),
			"refs/hegel/a/x":   refsTestHash(13),
			"refs/hegel/ab":    refsTestHash(14),
			"refs/hegel/a-b":   refsTestHash(15),
			"refs/other/z":     refsTestHash(16),
			"refs/hegel/c.txt": refsTestHash(17),
		}
		for n, h := range refs {
			mustUpdate(t, b, n, plumbing.ZeroHash, h)
		}
		list := func(prefix string) []string {
			t.Helper()
			got, err := b.List(prefix)
			if err != nil {
				t.Fatalf("List(%q): %v", prefix, err)
			}
			var names []string
			for _, r := range got {
				if refs[r.Name] != r.Hash {
					t.Errorf("List(%q): %s = %s, want %s", prefix, r.Name, r.Hash, refs[r.Name])
				}
				names = append(names, string(r.Name))
			}
			return names
		}
		check := func(prefix string, want ...string) {
			t.Helper()
			if got := list(prefix); !reflect.DeepEqual(got, want) {
				t.Errorf("List(%q) = %q, want %q", prefix, got, want)
			}
		}
		check("refs/hegel/", "refs/hegel/a-b", "refs/hegel/a/x", "refs/hegel/a/y",
			"refs/hegel/ab", "refs/hegel/b", "refs/hegel/c", "refs/hegel/c.txt")
		check("refs/hegel/a/", "refs/hegel/a/x", "refs/hegel/a/y")
		check("refs/hegel/a", "refs/hegel/a-b", "refs/hegel/a/x", "refs/hegel/a/y", "refs/hegel/ab")
		check("refs/hegel/c", "refs/hegel/c", "refs/hegel/c.txt")
		check("refs/hegel/b", "refs/hegel/b")
		check("refs/other/", "refs/other/z")
		check("refs/nope/")
		check("refs/hegel/c/")
		check("refs/hegel/zz")
		check("HEAD")
		if got := list("refs/"); len(got) != len(refs) {
			t.Errorf("List(refs/) = %q, want all %d refs", got, len(refs))
		}
		if got := list(""); len(got) != len(refs) {
			t.Errorf("List(\"\") = %q, want all %d refs", got, len(refs))
		}
	})

	t.Run("BadNames", func(t *testing.T) {
		b := newBackend(t)
		bad := []string{
			"refs/hegel/a..b", "refs/hegel/x.lock", "refs/hegel/x.lock/y", "refs/hegel/.x",
			"refs/hegel/a/.b", "HEAD", "refs/hegel/a b", "refs/hegel/a/", "refs/hegel//a",
			"refs/hegel/a@{1}", "refs/hegel/a~1", "refs/hegel/a^", "refs/hegel/a:b",
			"refs/hegel/a?", "refs/hegel/a*", "refs/hegel/a[b", `refs/hegel/a\b`,
			"refs/hegel/a\x01b", "refs/hegel/a\x7fb", "refs/hegel/a\tb", "refs/hegel/a\nb",
			"refs/hegel/a.", "refs/", "refs", "", "heads/main", "hegel/x", "/refs/hegel/x",
			"@",
		}
		for _, n := range bad {
			name := plumbing.ReferenceName(n)
			if err := b.Update(name, plumbing.ZeroHash, h1); !errors.Is(err, ErrBadRefName) {
				t.Errorf("Update(%q) error = %v, want ErrBadRefName", n, err)
			} else if !strings.Contains(err.Error(), fmt.Sprintf("%q", n)) {
				t.Errorf("Update(%q) error %q does not name the ref", n, err)
			}
			if _, err := b.Read(name); !errors.Is(err, ErrBadRefName) {
				t.Errorf("Read(%q) error = %v, want ErrBadRefName", n, err)
			}
		}
		if got, err := b.List(""); err != nil || len(got) != 0 {
			t.Errorf("after bad names, List = %v, %v; want nothing written", got, err)
		}
		// Names close to the bad ones are fine.
		for _, n := range []string{"refs/hegel/a.b", "refs/hegel/x.locked", "refs/hegel/a@b", "refs/hegel/x-y_z", "refs/hegel/ünï"} {
			mustUpdate(t, b, plumbing.ReferenceName(n), plumbing.ZeroHash, h1)
			mustRead(t, b, plumbing.ReferenceName(n), h1)
		}
	})

	t.Run("DirectoryFileConflict", func(t *testing.T) {
		b := newBackend(t)
		mustUpdate(t, b, "refs/hegel/d", plumbing.ZeroHash, h1)
		if err := b.Update("refs/hegel/d/e", plumbing.ZeroHash, h2); err == nil {
			t.Fatal("created refs/hegel/d/e below the ref refs/hegel/d")
		}
		mustUpdate(t, b, "refs/hegel/f/g", plumbing.ZeroHash, h1)
		if err := b.Update("refs/hegel/f", plumbing.ZeroHash, h2); err == nil {
			t.Fatal("created refs/hegel/f above the ref refs/hegel/f/g")
		}
		mustRead(t, b, "refs/hegel/d", h1)
		mustRead(t, b, "refs/hegel/f/g", h1)
		mustMissing(t, b, "refs/hegel/d/e")
		mustMissing(t, b, "refs/hegel/f")
		// Deleting or asserting the absence of an impossible ref is fine.
		mustConflict(t, b, "refs/hegel/d/e", h1, plumbing.ZeroHash)
		mustUpdate(t, b, "refs/hegel/d/e", plumbing.ZeroHash, plumbing.ZeroHash)
	})

	t.Run("SimilarNames", func(t *testing.T) {
		// memfs's Rename moves every path that merely starts with the
		// source: renaming refs/hegel/a.lock used to delete refs/hegel/a.lockX.
		b := newBackend(t)
		mustUpdate(t, b, "refs/hegel/a.lockX", plumbing.ZeroHash, h1)
		mustUpdate(t, b, "refs/hegel/a.lock2/b", plumbing.ZeroHash, h2)
		mustUpdate(t, b, "refs/hegel/a", plumbing.ZeroHash, h3)
		mustUpdate(t, b, "refs/hegel/a", h3, h1)
		mustRead(t, b, "refs/hegel/a.lockX", h1)
		mustRead(t, b, "refs/hegel/a.lock2/b", h2)
		mustRead(t, b, "refs/hegel/a", h1)
	})
}

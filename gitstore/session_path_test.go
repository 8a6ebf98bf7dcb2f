package gitstore

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/git-hegel/git-hegel/engine"
)

func setActive(s *Sessions) error {
	_, err := s.UpdateSession(func(s *engine.Session) error { s.ActiveTask = "t"; return nil })
	return err
}

// TestSessionRefusesLinks: a .hegel or state.json that is a symbolic link
// (as a cloned repository can commit it) is neither read nor written, and
// what it points at is left as it was.
func TestSessionRefusesLinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links")
	}
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, top string) (victim string)
		want  string
	}{
		{"state.json to a tracked file", func(t *testing.T, top string) string {
			os.Mkdir(filepath.Join(top, ".hegel"), 0o755)
			must(t, os.Symlink("../README", filepath.Join(top, ".hegel", "state.json")))
			return filepath.Join(top, "README")
		}, ".hegel/state.json is a symbolic link (to ../README)"},
		{"state.json to .git/config", func(t *testing.T, top string) string {
			os.Mkdir(filepath.Join(top, ".hegel"), 0o755)
			must(t, os.Symlink("../.git/config", filepath.Join(top, ".hegel", "state.json")))
			return filepath.Join(top, ".git", "config")
		}, ".hegel/state.json is a symbolic link"},
		{".hegel into .git/refs/heads", func(t *testing.T, top string) string {
			must(t, os.Symlink(".git/refs/heads", filepath.Join(top, ".hegel")))
			return filepath.Join(top, ".git", "refs", "heads", "main")
		}, ".hegel is a symbolic link (to .git/refs/heads)"},
		{".hegel outside the work tree", func(t *testing.T, top string) string {
			out := t.TempDir()
			must(t, os.WriteFile(filepath.Join(out, "state.json"), []byte("theirs"), 0o644))
			must(t, os.Symlink(out, filepath.Join(top, ".hegel")))
			return filepath.Join(out, "state.json")
		}, ".hegel is a symbolic link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newDiskRepo(t)
			victim := tc.plant(t, r.WorkTree)
			before, _ := os.ReadFile(victim)
			s := r.Sessions()
			var unsafe *UnsafeSessionError
			if err := setActive(s); !errors.As(err, &unsafe) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("update: %v, want an UnsafeSessionError saying %q", err, tc.want)
			}
			if _, err := s.LoadSession(); !errors.As(err, &unsafe) {
				t.Errorf("load: %v", err)
			}
			if _, err := s.MoveAside(fixedNow); !errors.As(err, &unsafe) {
				t.Errorf("move aside: %v", err)
			}
			if _, err := r.Init(); !errors.As(err, &unsafe) {
				t.Errorf("init: %v", err)
			}
			if got, _ := os.ReadFile(victim); !bytes.Equal(got, before) {
				t.Errorf("%s changed: %q", victim, got)
			}
			if r.SessionLockPath() != "" {
				t.Errorf("a lock path through a link: %q", r.SessionLockPath())
			}
			ents, _ := os.ReadDir(filepath.Dir(victim))
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), "state.json") && filepath.Base(victim) != e.Name() {
					t.Errorf("written through the link: %s", e.Name())
				}
			}
		})
	}
}

// TestSessionBeyondLinkedDirectory: a .hegel reached through a linked
// directory is not this worktree's; the one at the top is used.
func TestSessionBeyondLinkedDirectory(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links")
	}
	r := newDiskRepo(t)
	elsewhere := t.TempDir()
	must(t, os.Mkdir(filepath.Join(elsewhere, ".hegel"), 0o755))
	must(t, os.Symlink(elsewhere, filepath.Join(r.WorkTree, "sub")))
	sub, err := Open(filepath.Join(r.WorkTree, "sub"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if got := sub.Sessions().Dir(); got != ".hegel" {
		t.Errorf("from a linked directory found %q, want .hegel", got)
	}
}

// TestSessionRefusesTracked: a committed state.json (a plain file) is not
// taken as this worktree's session, nor rewritten.
func TestSessionRefusesTracked(t *testing.T) {
	r := newDiskRepo(t)
	top := r.WorkTree
	os.Mkdir(filepath.Join(top, ".hegel"), 0o755)
	planted := []byte(`{"session_id": "planted", "active_task": "theirs"}`)
	must(t, os.WriteFile(filepath.Join(top, ".hegel", "state.json"), planted, 0o644))
	runGit(t, top, "add", "-f", ".hegel/state.json")
	var unsafe *UnsafeSessionError
	err := setActive(r.Sessions())
	if !errors.As(err, &unsafe) || !strings.Contains(err.Error(), "tracked by git") || !strings.Contains(err.Error(), "git rm -r --cached .hegel/state.json") {
		t.Fatalf("update: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(top, ".hegel", "state.json")); !bytes.Equal(got, planted) {
		t.Errorf("rewritten: %q", got)
	}
	// Untracked, the same file is a session like any other.
	runGit(t, top, "rm", "-q", "--cached", ".hegel/state.json")
	r2, _ := Open(top, noEnv)
	if got, err := r2.Sessions().LoadSession(); err != nil || got.ActiveTask != "theirs" {
		t.Errorf("untracked: %+v %v", got, err)
	}
}

// TestSessionRefusesTrackedInMemory: the same check on go-git's index.
func TestSessionRefusesTrackedInMemory(t *testing.T) {
	r := newMemRepo(t)
	must(t, r.storage.SetIndex(&index.Index{Version: 2, Entries: []*index.Entry{{Name: ".hegel/state.json"}}}))
	var unsafe *UnsafeSessionError
	if err := setActive(r.Sessions()); !errors.As(err, &unsafe) {
		t.Fatalf("update: %v", err)
	}
}

// TestScanIndexNames reads real indexes of every version git writes and
// finds exactly the tracked names, however far in the file they are.
func TestScanIndexNames(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	runGit(t, dir, "init", "-q", "-b", "main")
	must(t, os.WriteFile(filepath.Join(dir, "README"), []byte("hi\n"), 0o644))
	var names []string
	for i := range 300 {
		names = append(names, fmt.Sprintf("d%02d/file-%03d.txt", i%17, i))
	}
	names = append(names, ".a", ".hegel/guides/x.md", ".hegel/state.json", "sub/.hegel/state.jsonx")
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(n), 0o644))
	}
	runGit(t, dir, "add", "-f", ".")
	// A name longer than the 12 bits of an entry's length field (no file
	// system would hold it: the index does).
	long := strings.Repeat("long/", 900) + "f"
	blob := strings.TrimSpace(runGit(t, dir, "hash-object", "-w", "README"))
	runGit(t, dir, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+long)
	// An extended entry (intent to add) in version 3 and up.
	must(t, os.WriteFile(filepath.Join(dir, "zz-new"), nil, 0o644))
	runGit(t, dir, "add", "-N", "zz-new")
	for _, v := range []string{"2", "3", "4"} {
		runGit(t, dir, "update-index", "--index-version", v)
		scan := func(want ...string) string {
			f, err := os.Open(filepath.Join(dir, ".git", "index"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, err := scanIndexNames(bufio.NewReader(f), want)
			if err != nil {
				t.Fatalf("v%s: %v", v, err)
			}
			return got
		}
		for _, n := range []string{".hegel/state.json", "d16/file-288.txt", "zz-new", long} {
			if got := scan(".hegel", n); got != n {
				t.Errorf("v%s: %q not found (%q)", v, n, got)
			}
		}
		for _, n := range []string{".hegel", "sub/.hegel/state.json", "d16/file-289.txt", "zzz"} {
			if got := scan(n); got != "" {
				t.Errorf("v%s: %q found as %q", v, n, got)
			}
		}
	}
	if _, err := scanIndexNames(bufio.NewReader(bytes.NewReader([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x05"))), []string{"x"}); err == nil {
		t.Error("a truncated index: no error")
	}
}

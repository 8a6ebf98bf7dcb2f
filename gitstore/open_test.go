package gitstore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/gitstore/gitdir"
)

func noEnv(string) string { return "" }

func TestOpenFindsRepositoryLikeGit(t *testing.T) {
	r := newDiskRepo(t)
	top := r.WorkTree
	os.MkdirAll(filepath.Join(top, "x", "y"), 0o755)
	sub, err := Open(filepath.Join(top, "x", "y"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if sub.WorkTree != top || sub.GitDir != filepath.Join(top, ".git") || sub.CommonDir != sub.GitDir {
		t.Errorf("layout from subdir: %+v", sub.Layout)
	}
	if _, err := Open(t.TempDir(), noEnv); !errors.Is(err, gitdir.ErrNotRepo) {
		t.Errorf("outside a repo: %v", err)
	}
	if _, err := Open(filepath.Join(top, ".git"), noEnv); !errors.Is(err, ErrNoWorkTree) {
		t.Errorf("inside .git: %v", err)
	}
}

func TestOpenLinkedWorktreeSharesRefs(t *testing.T) {
	r := newDiskRepo(t)
	wt := filepath.Join(t.TempDir(), "wt2")
	runGit(t, r.WorkTree, "worktree", "add", "-q", wt)
	// Per-worktree config is common for sparse checkouts and agent
	// worktrees; go-git refuses it unless we hide the extension.
	runGit(t, r.WorkTree, "config", "extensions.worktreeConfig", "true")
	l, err := Open(wt, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if l.CommonDir != r.GitDir || l.WorkTree != wt || !strings.HasPrefix(l.GitDir, filepath.Join(r.GitDir, "worktrees")) {
		t.Errorf("linked layout: %+v", l.Layout)
	}
	task := sampleTask("shared")
	if _, err := l.Tasks().SaveTask(task, "start"); err != nil {
		t.Fatal(err)
	}
	main, err := Open(r.WorkTree, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := main.Tasks().LoadTask("shared"); err != nil {
		t.Errorf("task written in the linked worktree not visible in main: %v", err)
	}
	if h, err := l.Head(); err != nil || h.Branch != "wt2" {
		t.Errorf("linked worktree HEAD: %+v %v", h, err)
	}
	if _, err := git.Open(l.Storage(), l.WorkTreeFS()); err != nil {
		t.Errorf("go-git open with worktreeConfig: %v", err)
	}
}

func TestOpenHonoursGitDirAndWorkTree(t *testing.T) {
	r := newDiskRepo(t)
	elsewhere := t.TempDir()
	env := map[string]string{"GIT_DIR": r.GitDir, "GIT_WORK_TREE": r.WorkTree}
	got, err := Open(elsewhere, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if got.WorkTree != r.WorkTree || got.GitDir != r.GitDir {
		t.Errorf("GIT_DIR layout: %+v", got.Layout)
	}
	// GIT_DIR alone: the current directory is the top of the work tree.
	delete(env, "GIT_WORK_TREE")
	got, err = Open(elsewhere, func(k string) string { return env[k] })
	if err != nil || got.WorkTree != elsewhere {
		t.Errorf("GIT_DIR without GIT_WORK_TREE: %+v %v", got, err)
	}
}

func TestOpenRefusesUnsupportedRepositories(t *testing.T) {
	needGit(t)
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string
	}{
		{"bare", func(t *testing.T, dir string) { runGit(t, dir, "init", "-q", "--bare") }, "must be run in a work tree"},
		{"sha256", func(t *testing.T, dir string) { runGit(t, dir, "init", "-q", "--object-format=sha256") }, "sha256"},
		{"split index", func(t *testing.T, dir string) {
			runGit(t, dir, "init", "-q")
			runGit(t, dir, "config", "core.splitIndex", "true")
		}, "split index"},
		{"sparse index", func(t *testing.T, dir string) {
			runGit(t, dir, "init", "-q")
			runGit(t, dir, "config", "index.sparse", "true")
		}, "sparse index"},
		{"skipHash", func(t *testing.T, dir string) {
			runGit(t, dir, "init", "-q")
			runGit(t, dir, "config", "index.skipHash", "true")
		}, "index.skipHash"},
		{"skipHash trailer", func(t *testing.T, dir string) {
			runGit(t, dir, "init", "-q")
			// git 2.40+ writes this with index.skipHash; older git cannot, so
			// forge an empty version-2 index whose trailer is all zeros.
			idx := append([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x00"), make([]byte, 20)...)
			os.WriteFile(filepath.Join(dir, ".git", "index"), idx, 0o644)
		}, "index.skipHash"},
		{"reftable", func(t *testing.T, dir string) {
			runGit(t, dir, "init", "-q")
			runGit(t, dir, "config", "core.repositoryformatversion", "1")
			runGit(t, dir, "config", "extensions.refStorage", "reftable")
		}, "reftable"},
		{"unknown extension", func(t *testing.T, dir string) {
			runGit(t, dir, "init", "-q")
			runGit(t, dir, "config", "core.repositoryformatversion", "1")
			runGit(t, dir, "config", "extensions.frobnicate", "yes")
		}, "extension 'frobnicate'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.setup(t, dir)
			_, err := Open(dir, noEnv)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Open = %v, want an error mentioning %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestHeadStates(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	runGit(t, dir, "init", "-q", "-b", "trunk")
	r, err := Open(dir, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if h, err := r.Head(); err != nil || h.Branch != "trunk" || !h.Commit.IsZero() {
		t.Errorf("unborn: %+v %v", h, err)
	}
	runGit(t, dir, "commit", "-q", "--allow-empty", "-m", "one")
	runGit(t, dir, "checkout", "-q", "--detach")
	h, err := r.Head()
	if err != nil || h.Branch != "" || h.Commit.IsZero() {
		t.Errorf("detached: %+v %v", h, err)
	}
}

// GIT_OBJECT_DIRECTORY takes the writes; GIT_ALTERNATE_OBJECT_DIRECTORIES
// and the object directory's info/alternates are read. (As git does, the
// alternates file read is the one in GIT_OBJECT_DIRECTORY: the test had
// it in .git/objects, and passed only when the three repositories' empty
// commits were made in the same second and so were one object.)
func TestObjectsEnvironment(t *testing.T) {
	_, src := stashDiskRepo(t)
	stashGit(t, src, "commit", "-q", "--allow-empty", "-m", "only in src")
	h1 := strings.TrimSpace(stashGit(t, src, "rev-parse", "HEAD"))
	_, alt2 := stashDiskRepo(t)
	stashGit(t, alt2, "commit", "-q", "--allow-empty", "-m", "only in alt2")
	h2 := strings.TrimSpace(stashGit(t, alt2, "rev-parse", "HEAD"))
	_, dir := stashDiskRepo(t)
	objdir := t.TempDir()
	os.MkdirAll(filepath.Join(objdir, "info"), 0o755)
	os.WriteFile(filepath.Join(objdir, "info", "alternates"), []byte(filepath.Join(src, ".git", "objects")+"\n"), 0o644)
	env := map[string]string{
		"GIT_OBJECT_DIRECTORY":             objdir,
		"GIT_ALTERNATE_OBJECT_DIRECTORIES": filepath.Join(alt2, ".git", "objects"),
	}
	r, err := Open(dir, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	defer r.Objects().Close()
	for _, h := range []string{h1, h2} {
		if _, err := r.Objects().Read(plumbing.CommitObject, plumbing.NewHash(h)); err != nil {
			t.Errorf("alternate object %s: %v", h, err)
		}
	}
	h, err := r.Objects().Write(plumbing.BlobObject, []byte("goes to GIT_OBJECT_DIRECTORY\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(looseObjectPath(objdir, h)); err != nil {
		t.Errorf("not written to GIT_OBJECT_DIRECTORY: %v", err)
	}
	if _, err := os.Stat(looseObjectPath(filepath.Join(dir, ".git", "objects"), h)); err == nil {
		t.Errorf("written to the repository's own objects")
	}
}

// looseObjectPath is where git keeps loose object h in the object
// directory dir.
func looseObjectPath(dir string, h plumbing.Hash) string {
	return filepath.Join(dir, h.String()[:2], h.String()[2:])
}

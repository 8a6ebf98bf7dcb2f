package rollback

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The benchmark fixture: a repository of 100,000 committed files (1,000
// directories of 100), kept between runs because building it takes a
// minute or more. GIT_HEGEL_BENCH_DIR says where (default: the system's
// temporary directory); GIT_HEGEL_BENCH_FILES makes it smaller.
//
// Branches: base (the 100,000 files) and work (base with 1,000 files
// changed: every 100th). dirtyWorktree adds the working-tree state the
// checkpoint benchmarks measure: 1% of the files modified, 0.5% untracked
// and an ignored build/ folder of 2,000 files.

type benchFixture struct {
	dir   string
	home  string
	files int
}

func benchFileCount() int {
	n := 100000
	if v := os.Getenv("GIT_HEGEL_BENCH_FILES"); v != "" {
		fmt.Sscan(v, &n)
	}
	return n
}

func fixturePath(i int) string {
	return fmt.Sprintf("d%02d/s%02d/f%05d.txt", i/1000%100, i/100%10, i)
}

func fixtureContent(i int, variant string) string {
	return fmt.Sprintf("file %d%s\n%s\n", i, variant, strings.Repeat(fmt.Sprintf("line of file %d ", i), 6))
}

func openFixture(b *testing.B) *benchFixture {
	b.Helper()
	needGit(b)
	n := benchFileCount()
	root := os.Getenv("GIT_HEGEL_BENCH_DIR")
	if root == "" {
		root = filepath.Join(os.TempDir(), "git-hegel-bench")
	}
	f := &benchFixture{dir: filepath.Join(root, fmt.Sprintf("repo-%d", n)), home: filepath.Join(root, "home"), files: n}
	if _, err := os.Stat(filepath.Join(f.dir, ".git", "hegel-bench-ready")); err == nil {
		return f
	}
	b.Logf("building the %d-file fixture in %s (once)", n, f.dir)
	os.RemoveAll(f.dir)
	os.MkdirAll(f.home, 0o755)
	os.WriteFile(filepath.Join(f.home, ".gitconfig"), []byte("[user]\n\tname = Bench\n\temail = bench@example.com\n[init]\n\tdefaultBranch = base\n[gc]\n\tauto = 0\n"), 0o644)
	env := gitEnv(f.home)
	runGit(b, root, env, "init", "-q", f.dir)
	for i := 0; i < n; i++ {
		p := filepath.Join(f.dir, fixturePath(i))
		if i%100 == 0 {
			os.MkdirAll(filepath.Dir(p), 0o755)
		}
		if err := os.WriteFile(p, []byte(fixtureContent(i, "")), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(f.dir, ".gitignore"), []byte("build/\n*.o\n"), 0o644)
	runGit(b, f.dir, env, "add", "-A")
	runGit(b, f.dir, env, "commit", "-q", "-m", "base")
	runGit(b, f.dir, env, "checkout", "-q", "-b", "work")
	for i := 0; i < n; i += 100 {
		os.WriteFile(filepath.Join(f.dir, fixturePath(i)), []byte(fixtureContent(i, " (work)")), 0o644)
	}
	runGit(b, f.dir, env, "commit", "-q", "-a", "-m", "work: 1% of the files changed")
	runGit(b, f.dir, env, "checkout", "-q", "base")
	runGit(b, f.dir, env, "gc", "-q")
	os.WriteFile(filepath.Join(f.dir, ".git", "hegel-bench-ready"), nil, 0o644)
	return f
}

func (f *benchFixture) git(b *testing.B, args ...string) string {
	b.Helper()
	return runGit(b, f.dir, gitEnv(f.home), args...)
}

// clean puts the fixture on branch bench at rev, with nothing uncommitted,
// no untracked files, no checkpoints and no task.
func (f *benchFixture) clean(b *testing.B, rev string) {
	b.Helper()
	os.Remove(filepath.Join(f.dir, ".git", "index.lock"))
	os.Remove(filepath.Join(f.dir, ".git", journalFile))
	f.git(b, "checkout", "-q", "-f", "-B", "bench", rev)
	f.git(b, "clean", "-q", "-fdx", "-e", ".hegel")
	os.RemoveAll(filepath.Join(f.dir, ".hegel"))
	for _, ref := range strings.Fields(f.git(b, "for-each-ref", "--format=%(refname)", "refs/hegel/")) {
		f.git(b, "update-ref", "-d", ref)
	}
	f.git(b, "update-index", "-q", "--refresh")
}

// dirtyWorktree: 1% modified, 0.5% untracked, 2,000 ignored files.
func (f *benchFixture) dirtyWorktree(b *testing.B) {
	b.Helper()
	for i := 50; i < f.files; i += 100 {
		os.WriteFile(filepath.Join(f.dir, fixturePath(i)), []byte(fixtureContent(i, " (modified)")), 0o644)
	}
	for i := 25; i < f.files; i += 200 {
		p := filepath.Join(f.dir, fixturePath(i)+".new")
		os.WriteFile(p, []byte(fixtureContent(i, " (untracked)")), 0o644)
	}
	for i := 0; i < 2000; i++ {
		p := filepath.Join(f.dir, "build", fmt.Sprintf("o%02d", i/100), fmt.Sprintf("x%04d.o", i))
		if i%100 == 0 {
			os.MkdirAll(filepath.Dir(p), 0o755)
		}
		os.WriteFile(p, []byte("object\n"), 0o644)
	}
}

// repo opens the fixture.
func (f *benchFixture) repo(b *testing.B) *testRepo {
	b.Helper()
	tr := &testRepo{t: b, dir: f.dir, now: t0}
	tr.open(f.home)
	return tr
}

package rollback

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// BenchmarkRollback rolls the fixture back across 1,000 changed files:
// between a checkpoint taken on base and the work branch (every 100th file
// differs), alternately forwards (rollback) and back (--undo), each with
// its safety checkpoint. Compare with BenchmarkGitResetHard.
func BenchmarkRollback(b *testing.B) {
	f := openFixture(b)
	f.clean(b, "base")
	tr := f.repo(b)
	tr.start("minimal") // checkpoint at base
	f.git(b, "reset", "-q", "--hard", "work")
	f.git(b, "update-index", "-q", "--refresh")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tr.now = tr.now.Add(time.Second)
		tr.m = New(tr.r, Options{Now: func() time.Time { return tr.now }}) // nothing cached between commands
		req := Request{Node: "spec"}
		if i%2 == 1 {
			req = Request{Undo: true}
		}
		res, err := tr.rollback(req)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Plan.Files) != f.files/100 {
			b.Fatalf("%d files change, want %d", len(res.Plan.Files), f.files/100)
		}
	}
}

// BenchmarkGitResetHard moves between the same two states with
// `git reset --hard`.
func BenchmarkGitResetHard(b *testing.B) {
	f := openFixture(b)
	f.clean(b, "work")
	env := gitEnv(f.home)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rev := "base"
		if i%2 == 1 {
			rev = "work"
		}
		cmd := exec.Command("git", "reset", "-q", "--hard", rev)
		cmd.Dir, cmd.Env = f.dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
}

// BenchmarkGoGitReset is the alternative not taken: go-git's
// Worktree.Reset(HardReset) limited with Files to the changed paths,
// between the same two states (see docs/rollback.md).
func BenchmarkGoGitReset(b *testing.B) {
	f := openFixture(b)
	f.clean(b, "work")
	tr := f.repo(b)
	g, err := git.PlainOpen(f.dir)
	if err != nil {
		b.Fatal(err)
	}
	w, err := g.Worktree()
	if err != nil {
		b.Fatal(err)
	}
	var files []string
	for i := 0; i < f.files; i += 100 {
		files = append(files, fixturePath(i))
	}
	base := plumbing.NewHash(strings.TrimSpace(tr.git("rev-parse", "base")))
	work := plumbing.NewHash(strings.TrimSpace(tr.git("rev-parse", "work")))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		to := base
		if i%2 == 1 {
			to = work
		}
		if err := w.Reset(&git.ResetOptions{Commit: to, Mode: git.HardReset, Files: files}); err != nil {
			b.Fatal(err)
		}
	}
}

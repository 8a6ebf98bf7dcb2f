package rollback

import (
	"os/exec"
	"testing"
	"time"
)

// BenchmarkCheckpoint takes a checkpoint of the fixture's dirty working
// tree (1% modified, 0.5% untracked, 2,000 ignored files) through the
// Manager, as `git hegel checkpoint` does. Compare with
// BenchmarkGitStashCreate on the same state.
func BenchmarkCheckpoint(b *testing.B) {
	f := openFixture(b)
	f.clean(b, "base")
	f.dirtyWorktree(b)
	tr := f.repo(b)
	tr.git("config", "hegel.checkpoints", "off")
	defer tr.git("config", "--unset", "hegel.checkpoints")
	tr.reopen()
	tr.start("minimal")
	t := tr.template(KindManual, "", "")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// A new manager each time: nothing cached between commands.
		m := New(tr.r, Options{Now: func() time.Time { return t0 }})
		if _, _, err := m.Chain(RefPrefix+"t1", "task t1").Take(t); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGitStashCreate runs `git stash create -u`, the git command that
// snapshots the same things (it writes a stash commit, moves no ref).
func BenchmarkGitStashCreate(b *testing.B) {
	f := openFixture(b)
	f.clean(b, "base")
	f.dirtyWorktree(b)
	env := gitEnv(f.home)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command("git", "stash", "create", "-u")
		cmd.Dir, cmd.Env = f.dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
}

// BenchmarkScan is the stat pass alone (index decode, lstat, untracked
// walk), without hashing.
func BenchmarkScan(b *testing.B) {
	f := openFixture(b)
	f.clean(b, "base")
	f.dirtyWorktree(b)
	tr := f.repo(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		idx, err := tr.m.w.readIndex()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := scan(tr.m.w.fs, idx, tr.m.w.rules, tr.m.w.cfg); err != nil {
			b.Fatal(err)
		}
	}
}

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCheckpointsBesideGitMaintenance runs `git hegel checkpoint` and
// `git hegel next` (which takes a checkpoint too) as real processes while
// `git repack -d -l -A --unpack-unreachable=1.hour.ago` and `git prune
// --expire=1.hour.ago` loop beside them, as `git gc` runs them in a busy
// repository. (Not `git repack -a -d`: it deletes unreachable packed
// objects at once, whatever their pack's mtime, so a writer that reuses
// one instead of writing it again, as git's own do, can lose it; git's
// documentation of -A says so, and gc never runs it that way.) None may fail, nor
// warn that its checkpoint was skipped (before git-hegel re-read the pack
// directory, recreated pruned object directories and freshened objects it
// reused, 158 of 1,714 checkpoints failed this way), and every object the
// checkpoints need must survive: some of their blobs exist beforehand as
// old unreachable loose objects, which the prune removes unless a
// checkpoint that reuses them freshens them.
func TestCheckpointsBesideGitMaintenance(t *testing.T) {
	if testing.Short() {
		t.Skip("git repack and prune loops beside git-hegel for ~30 s (skipped with -short)")
	}
	dir, env := loopRepo(t)
	for d := 0; d < 20; d++ {
		os.MkdirAll(filepath.Join(dir, "src", fmt.Sprintf("d%02d", d)), 0o755)
		for f := 0; f < 10; f++ {
			os.WriteFile(filepath.Join(dir, "src", fmt.Sprintf("d%02d", d), fmt.Sprintf("f%d.txt", f)),
				[]byte(fmt.Sprintf("file %d/%d\n", d, f)), 0o644)
		}
	}
	mustSh(t, env, dir, "git", "add", "-A")
	mustSh(t, env, dir, "git", "commit", "-q", "-m", "tree")
	mustSh(t, env, dir, "git", "config", "gc.auto", "0")
	// Contents the checkpoints will store again, already present as old,
	// unreachable loose objects.
	old := time.Now().Add(-3 * time.Hour)
	revisit := func(i int) string { return fmt.Sprintf("revisited %d\n", i) }
	for i := 0; i < 400; i += 3 {
		h := strings.TrimSpace(mustShIn(t, env, dir, revisit(i), "git", "hash-object", "-w", "--stdin"))
		p := filepath.Join(dir, ".git", "objects", h[:2], h[2:])
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	mustSh(t, env, dir, "git", "repack", "-a", "-d", "-q")

	deadline := time.Now().Add(25 * time.Second)
	var stop atomic.Bool
	var wg sync.WaitGroup
	var repacks, prunes atomic.Int64
	for _, m := range [][]string{
		{"git", "repack", "-d", "-l", "-A", "--unpack-unreachable=1.hour.ago", "-q"},
		{"git", "prune", "--expire=1.hour.ago"},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				cmd := exec.Command(m[0], m[1:]...)
				cmd.Dir, cmd.Env = dir, env
				if cmd.Run() == nil {
					if m[1] == "repack" {
						repacks.Add(1)
					} else {
						prunes.Add(1)
					}
				}
			}
		}()
	}
	var runs, failures int
	for i := 0; time.Now().Before(deadline); i++ {
		content := fmt.Sprintf("unique %d\n", i)
		if i%3 == 0 {
			content = revisit(i)
		}
		os.WriteFile(filepath.Join(dir, "src", fmt.Sprintf("d%02d", i%20), fmt.Sprintf("f%d.txt", i%10)), []byte(content), 0o644)
		args := []string{"git", "hegel", "checkpoint", "-m", fmt.Sprint("run ", i)}
		if i%4 == 3 {
			args = []string{"git", "hegel", "next", "again"}
		}
		out, err := sh(t, env, dir, args...)
		runs++
		if err != nil || strings.Contains(out, "warning:") || strings.Contains(out, "error:") {
			failures++
			t.Errorf("run %d, %s: %v\n%s", i, strings.Join(args[1:3], " "), err, out)
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d checkpoint and next commands beside %d repacks and %d prunes: %d failed", runs, repacks.Load(), prunes.Load(), failures)
	if repacks.Load() < 5 || prunes.Load() < 5 {
		t.Errorf("maintenance barely ran (%d repacks, %d prunes): the test proves nothing", repacks.Load(), prunes.Load())
	}
	// Every checkpoint kept is complete.
	mustSh(t, env, dir, "git", "fsck", "--strict", "--no-dangling")
	mustSh(t, env, dir, "git", "hegel", "checkpoint", "list")
}

// mustShIn runs a command with stdin.
func mustShIn(t *testing.T, env []string, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

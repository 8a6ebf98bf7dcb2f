package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/git-hegel/git-hegel/gitstore"
)

// TestGCForSnapshot: the snapshot of a small working tree (a small index)
// runs with the lazier collector and a memory limit; a large index, a
// missing one, or GOGC/GOMEMLIMIT in the environment leave the runtime's
// settings as they are.
func TestGCForSnapshot(t *testing.T) {
	dir := t.TempDir()
	small, large := filepath.Join(dir, "small"), filepath.Join(dir, "large")
	if err := os.WriteFile(small, make([]byte, 90<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(large, make([]byte, smallSnapshotIndex+1), 0o644); err != nil {
		t.Fatal(err)
	}
	noEnv := func(string) string { return "" }
	cases := []struct {
		name   string
		index  string
		getenv func(string) string
		lazier bool
	}{
		{"small index", small, noEnv, true},
		{"large index", large, noEnv, false},
		{"no index", filepath.Join(dir, "none"), noEnv, false},
		{"GOGC set", small, func(k string) string { return map[string]string{"GOGC": "100"}[k] }, false},
		{"GOMEMLIMIT set", small, func(k string) string { return map[string]string{"GOMEMLIMIT": "1GiB"}[k] }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gc, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
			t.Cleanup(func() { debug.SetGCPercent(gc); debug.SetMemoryLimit(limit) })
			debug.SetMemoryLimit(1 << 62)
			gcForSnapshot(c.index, c.getenv)
			gotGC, gotLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(1<<62)
			if c.lazier && (gotGC != 400 || gotLimit != 64<<20) {
				t.Errorf("GOGC %d, memory limit %d; want 400 and 64 MiB", gotGC, gotLimit)
			}
			if !c.lazier && (gotGC != 100 || gotLimit != 1<<62) {
				t.Errorf("GOGC %d, memory limit %d; want them unchanged", gotGC, gotLimit)
			}
		})
	}
}

// TestGCForSnapshotOpenRepo: the index the hook passes is the open
// repository's (the layout a hook locates has no index path yet), so a
// small repository's snapshot does get the lazier collector.
func TestGCForSnapshotOpenRepo(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}} {
		if args[0] == "add" {
			if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	env := map[string]string{"HOME": dir}
	r, err := gitstore.Open(dir, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	gc, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(1<<62)
	t.Cleanup(func() { debug.SetGCPercent(gc); debug.SetMemoryLimit(limit) })
	gcForSnapshot(r.Layout.IndexFile, func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != 400 {
		t.Errorf("GOGC %d after the snapshot's setting on %s, want 400", got, r.Layout.IndexFile)
	}
}

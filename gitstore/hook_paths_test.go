package gitstore

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// A link whose target does not exist yet names its target: writing
// through it creates the target, so a lock on the target must hold
// against the link. A loop of links ends and names the link itself.
func TestWorktreeRelDanglingLinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links")
	}
	top := t.TempDir()
	real, err := filepath.EvalSymlinks(top)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(top, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"cur.go":    "src/z.go", // a file not written yet
		"genl":      "gen",      // a directory not made yet
		"chain":     "cur.go",   // a link to a dangling link
		"abs.go":    filepath.Join(top, "src", "a.go"),
		"src/up.go": "../gen/up.go", // relative to the link's own directory
		"loop1":     "loop2",
		"loop2":     "loop1",
		"out.go":    filepath.Join(t.TempDir(), "out.go"), // outside the worktree
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(top, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ path, want string }{
		{"cur.go", "src/z.go"},
		{"genl/new/y.go", "gen/new/y.go"},
		{"chain", "src/z.go"},
		{"abs.go", "src/a.go"},
		{"src/up.go", "gen/up.go"},
		{"loop1/x.go", "loop1/x.go"},
		{"out.go", "out.go"},
		{"src/new/n.go", "src/new/n.go"},
	} {
		got, ok := WorktreeRel(filepath.Join(top, c.path), top, real)
		if !ok || got != c.want {
			t.Errorf("WorktreeRel(%s) = %q, %v; want %q", c.path, got, ok, c.want)
		}
	}
}

package gitstore

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-billy/v5/util"
)

// TestIgnoredArtifacts: the same answers in memory and on disk for the
// ignore rules both read (.gitignore files on the path, info/exclude);
// on disk git's own rules decide the rest (a tracked file is never
// ignored, a path beyond a symbolic link is left out rather than failing
// the list).
func TestIgnoredArtifacts(t *testing.T) {
	files := map[string]string{
		".gitignore":        ".env\n*.pem\n!public.pem\n",
		"sub/.gitignore":    "local/\n",
		".env":              "TOKEN=x\n",
		"SPEC.md":           "spec\n",
		"key.pem":           "k\n",
		"public.pem":        "p\n",
		"sub/local/out.txt": "o\n",
		"sub/kept.txt":      "k\n",
		"excluded.txt":      "e\n",
	}
	paths := []string{".env", "SPEC.md", "key.pem", "public.pem", "sub/local/out.txt", "sub/kept.txt", "excluded.txt", "missing.md"}
	want := map[string]bool{".env": true, "key.pem": true, "sub/local/out.txt": true, "excluded.txt": true}
	check := func(t *testing.T, r *Repo) {
		got, err := r.Files().Ignored(paths)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			if got[p] != want[p] {
				t.Errorf("%s: ignored %v, want %v", p, got[p], want[p])
			}
		}
	}
	t.Run("memory", func(t *testing.T) {
		r := newMemRepo(t)
		for p, d := range files {
			if err := util.WriteFile(r.worktree, p, []byte(d), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := util.WriteFile(r.common, "info/exclude", []byte("excluded.txt\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		check(t, r)
	})
	t.Run("disk", func(t *testing.T) {
		r := newDiskRepo(t)
		for p, d := range files {
			os.MkdirAll(filepath.Dir(filepath.Join(r.WorkTree, p)), 0o755)
			os.WriteFile(filepath.Join(r.WorkTree, p), []byte(d), 0o644)
		}
		os.WriteFile(filepath.Join(r.CommonDir, "info", "exclude"), []byte("excluded.txt\n"), 0o644)
		check(t, r)
		// A tracked file is not ignored, whatever the patterns say.
		runGit(t, r.WorkTree, "add", "-f", "key.pem")
		delete(want, "key.pem")
		check(t, r)
		// core.excludesFile is one of git's rules too.
		os.WriteFile(filepath.Join(r.WorkTree, "global.txt"), []byte("g\n"), 0o644)
		excludes := filepath.Join(t.TempDir(), "excludes")
		os.WriteFile(excludes, []byte("global.txt\n"), 0o644)
		runGit(t, r.WorkTree, "config", "core.excludesFile", excludes)
		if got, err := r.Files().Ignored([]string{"global.txt", "SPEC.md"}); err != nil || !got["global.txt"] || got["SPEC.md"] {
			t.Errorf("core.excludesFile: %v %v", got, err)
		}
		// A path through a symbolic link is left out, the rest answered.
		os.Symlink(filepath.Join(r.WorkTree, "sub"), filepath.Join(r.WorkTree, "link"))
		got, err := r.Files().Ignored([]string{"link/local/out.txt", ".env"})
		if err != nil || got["link/local/out.txt"] || !got[".env"] {
			t.Errorf("through a link: %v %v", got, err)
		}
	})
}

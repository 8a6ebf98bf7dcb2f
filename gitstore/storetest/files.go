package storetest

import (
	"errors"
	"testing"

	"github.com/git-hegel/git-hegel/engine"
)

// Worktree is a worktree's files under test and a way to write one.
type Worktree struct {
	engine.Files
	// Write puts data at path (slash-separated, below the top of the
	// worktree), creating its directories.
	Write func(t *testing.T, path string, data []byte)
}

// RunFiles checks the engine.Files contract: a regular file reads back
// and has its size; a limit refuses a larger file (with an error that is
// not ErrNotFound) and 0 sets none; a missing file, or one below a file,
// is ErrNotFound; a directory is an error, not ErrNotFound; a file the
// top-level .gitignore names is ignored, others (missing ones too) are not.
func RunFiles(t *testing.T, newFiles func(t *testing.T) Worktree) {
	w := newFiles(t)
	w.Write(t, "SPEC.md", []byte("# Spec\n"))
	w.Write(t, "docs/plan.md", []byte("the plan\n"))
	w.Write(t, "empty.md", nil)
	for path, want := range map[string]string{"SPEC.md": "# Spec\n", "docs/plan.md": "the plan\n", "empty.md": ""} {
		if n, err := w.Size(path); err != nil || n != int64(len(want)) {
			t.Errorf("Size(%s) = %d, %v; want %d", path, n, err, len(want))
		}
		if b, err := w.ReadFile(path, 100); err != nil || string(b) != want {
			t.Errorf("ReadFile(%s) = %q, %v", path, b, err)
		}
		if b, err := w.ReadFile(path, 0); err != nil || string(b) != want {
			t.Errorf("ReadFile(%s) with no limit = %q, %v", path, b, err)
		}
	}
	if _, err := w.ReadFile("SPEC.md", 3); err == nil || errors.Is(err, engine.ErrNotFound) {
		t.Errorf("ReadFile over the limit: %v, want an error other than ErrNotFound", err)
	}
	for _, path := range []string{"missing.md", "docs/missing.md", "nodir/x.md", "SPEC.md/below"} {
		if _, err := w.Size(path); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("Size(%s): %v, want ErrNotFound", path, err)
		}
		if _, err := w.ReadFile(path, 100); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("ReadFile(%s): %v, want ErrNotFound", path, err)
		}
	}
	if _, err := w.ReadFile("docs", 100); err == nil || errors.Is(err, engine.ErrNotFound) {
		t.Errorf("ReadFile of a directory: %v, want an error other than ErrNotFound", err)
	}
	if _, err := w.Size("docs"); err == nil || errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Size of a directory: %v, want an error other than ErrNotFound", err)
	}
	w.Write(t, ".gitignore", []byte(".env\n"))
	w.Write(t, ".env", []byte("TOKEN=x\n"))
	ign, err := w.Ignored([]string{".env", "SPEC.md", "missing.md"})
	if err != nil || !ign[".env"] || ign["SPEC.md"] || ign["missing.md"] {
		t.Errorf("Ignored = %v, %v; want .env alone", ign, err)
	}
}

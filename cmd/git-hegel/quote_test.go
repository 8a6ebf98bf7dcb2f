package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-hegel/git-hegel/engine/text"
)

// TestQuotePathMatchesGit names files with every kind of byte git quotes
// and compares text.QuotePath with git ls-files, under core.quotePath
// on (the default) and off.
func TestQuotePathMatchesGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	env := isolatedEnv(t)
	dir := t.TempDir()
	mustSh(t, env, dir, "git", "init", "-q")
	var names []string
	for _, n := range []string{"plain.txt", "with space", "tab\there", "new\nline", `q"uote`, `back\slash`,
		"ctl\x01\x1b\x7f", "ümlaut", "bell\a\b\v\f\r", "日本語", "mixed ü\tx"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Skipf("this filesystem refuses %q: %v", n, err)
		}
		names = append(names, n)
	}
	mustSh(t, env, dir, "git", "add", ".")
	raw := strings.Split(strings.TrimSuffix(mustSh(t, env, dir, "git", "ls-files", "-z"), "\x00"), "\x00")
	for _, full := range []bool{true, false} {
		args := []string{"git", "-c", "core.quotePath=" + map[bool]string{true: "true", false: "false"}[full], "ls-files"}
		quoted := strings.Split(strings.TrimSuffix(mustSh(t, env, dir, args...), "\n"), "\n")
		if len(quoted) != len(raw) || len(raw) != len(names) {
			t.Fatalf("%d names, git lists %d and %d", len(names), len(raw), len(quoted))
		}
		for i, p := range raw {
			if got := text.QuotePath(p, full); got != quoted[i] {
				t.Errorf("core.quotePath=%v: QuotePath(%q) = %s, git prints %s", full, p, got, quoted[i])
			}
		}
	}
}

package gitstore

import (
	"os"
	"path/filepath"
	"strings"
)

// WorktreePath names the file an agent's tool call names as locks and
// events name files: relative to the top of the worktree,
// slash-separated. The agent may name it by another way to the same
// file (a path through a symbolic link to the worktree, as a temporary
// directory often is; a link inside it; "./" or ".." steps), and a lock
// compared by its text alone would let such an edit through: so the
// path is read the way the file system reads it. A relative path is
// relative to the top of the worktree. A path that stays outside the
// worktree either way is returned cleaned, slash-separated.
func (t *HookTarget) WorktreePath(p string) string {
	top := t.Layout.WorkTree
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(top, abs)
	}
	abs = filepath.Clean(abs)
	if t.realTop == "" {
		t.realTop = resolveExisting(top)
	}
	if rel, ok := inside(resolveExisting(abs), t.realTop); ok {
		return rel
	}
	if rel, ok := inside(abs, top); ok {
		return rel // a link inside the worktree to a file outside it
	}
	if filepath.IsAbs(p) {
		return filepath.ToSlash(abs)
	}
	return filepath.ToSlash(filepath.Clean(p))
}

// resolveExisting resolves the symbolic links of the longest part of p
// that exists (a file about to be written may not exist yet, nor its
// directory) and keeps the rest as it is.
func resolveExisting(p string) string {
	rest := ""
	for dir := p; ; {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// inside makes p relative to top when it is below it.
func inside(p, top string) (string, bool) {
	rel, err := filepath.Rel(top, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(os.PathSeparator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

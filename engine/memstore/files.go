package memstore

import (
	"fmt"
	"strings"

	"github.com/git-hegel/git-hegel/engine"
)

// Files is an engine.Files in memory: a worktree of regular files by
// slash-separated path. A path some file lies below is a directory.
type Files map[string]string

var _ engine.Files = Files{}

// stat returns the file at p: ErrNotFound when nothing is there, an
// error when p is a directory.
func (f Files) stat(p string) (string, error) {
	if d, ok := f[p]; ok {
		return d, nil
	}
	for q := range f {
		if strings.HasPrefix(q, p+"/") {
			return "", fmt.Errorf("%s is not a regular file", p)
		}
	}
	return "", fmt.Errorf("%s: %w", p, engine.ErrNotFound)
}

// Size implements engine.Files.
func (f Files) Size(p string) (int64, error) {
	d, err := f.stat(p)
	if err != nil {
		return 0, err
	}
	return int64(len(d)), nil
}

// ReadFile implements engine.Files (a limit of 0 reads the whole file).
func (f Files) ReadFile(p string, limit int64) ([]byte, error) {
	d, err := f.stat(p)
	if err != nil {
		return nil, err
	}
	if limit > 0 && int64(len(d)) > limit {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d an archived artifact may hold", p, len(d), limit)
	}
	return []byte(d), nil
}

// Ignored implements engine.Files with the simplest of git's rules: a
// path is ignored when the top-level .gitignore names it exactly on a
// line of its own (no patterns, no other ignore files).
func (f Files) Ignored(paths []string) (map[string]bool, error) {
	names := map[string]bool{}
	for _, line := range strings.Split(f[".gitignore"], "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			names[strings.TrimPrefix(line, "/")] = true
		}
	}
	out := map[string]bool{}
	for _, p := range paths {
		if names[p] {
			out[p] = true
		}
	}
	return out, nil
}

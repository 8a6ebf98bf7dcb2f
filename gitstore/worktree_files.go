package gitstore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/git-hegel/git-hegel/engine"
)

// WorktreeFiles is engine.Files on this worktree: how the engine checks
// and archives artifacts. Only regular files are read, and never through a
// symbolic link (a link could point anywhere, including outside the
// worktree).
type WorktreeFiles struct{ r *Repo }

var _ engine.Files = WorktreeFiles{}

// Files returns the worktree's files for the engine.
func (r *Repo) Files() WorktreeFiles { return WorktreeFiles{r} }

// Size implements engine.Files.
func (f WorktreeFiles) Size(p string) (int64, error) {
	fi, err := f.stat(p)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// ReadFile implements engine.Files.
func (f WorktreeFiles) ReadFile(p string, limit int64) ([]byte, error) {
	fi, err := f.stat(p)
	if err != nil {
		return nil, err
	}
	if limit > 0 && fi.Size() > limit {
		return nil, fmt.Errorf("%s is %s, more than the %s an archived artifact may hold", p, byteSize(fi.Size()), byteSize(limit))
	}
	file, err := f.r.worktree.Open(p)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %s", p, oneLine(err.Error()))
	}
	defer file.Close()
	b, err := io.ReadAll(io.LimitReader(file, fi.Size()+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %s", p, oneLine(err.Error()))
	}
	return b, nil
}

// stat returns the file p names, checking every part of the path with
// lstat: a missing part is ErrNotFound, a symbolic link or a non-regular
// file an error.
func (f WorktreeFiles) stat(p string) (os.FileInfo, error) {
	parts := strings.Split(p, "/")
	for i := range parts {
		sub := strings.Join(parts[:i+1], "/")
		fi, err := f.r.worktree.Lstat(sub)
		if errors.Is(err, os.ErrNotExist) || isNotDir(err) {
			return nil, fmt.Errorf("%s: %w", p, engine.ErrNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %s", p, oneLine(err.Error()))
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s is reached through a symbolic link (%s); artifacts must be plain files", p, sub)
		}
		if i == len(parts)-1 {
			if !fi.Mode().IsRegular() {
				return nil, fmt.Errorf("%s is not a regular file", p)
			}
			return fi, nil
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("%s: %w", p, engine.ErrNotFound)
		}
	}
	return nil, fmt.Errorf("%s: %w", p, engine.ErrNotFound)
}

package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

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

// Ignored implements engine.Files with git's own ignore rules: in a
// repository on disk `git check-ignore` answers (every .gitignore on the
// way, info/exclude, core.excludesFile, negations, core.ignoreCase, and a
// tracked file never ignored, exactly as git add sees them); in memory the
// .gitignore files of the path's directories and info/exclude are read.
func (f WorktreeFiles) Ignored(paths []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(paths) == 0 {
		return out, nil
	}
	if f.r.GitDir == "" {
		return f.ignoredInMemory(paths), nil
	}
	var in bytes.Buffer
	for _, p := range paths {
		// git refuses the whole list for a path beyond a symbolic link;
		// such a path is never read anyway (stat).
		if !f.throughLink(p) {
			in.WriteString(p)
			in.WriteByte(0)
		}
	}
	cmd := exec.Command("git", "--git-dir", f.r.GitDir, "--work-tree", f.r.WorkTree, "check-ignore", "-z", "--stdin")
	cmd.Dir = f.r.WorkTree
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	res, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		return out, nil // none is ignored
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("git check-ignore failed: %s", oneLine(msg))
	}
	for _, p := range bytes.Split(res, []byte{0}) {
		if len(p) > 0 {
			out[string(p)] = true
		}
	}
	return out, nil
}

// throughLink reports whether a directory on the way to p is a symbolic
// link.
func (f WorktreeFiles) throughLink(p string) bool {
	parts := strings.Split(p, "/")
	for i := 1; i < len(parts); i++ {
		fi, err := f.r.worktree.Lstat(strings.Join(parts[:i], "/"))
		if err != nil {
			return false
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return true
		}
	}
	return false
}

// ignoredInMemory applies the .gitignore files of each path's directories
// and info/exclude (a repository in memory has no global excludes file).
func (f WorktreeFiles) ignoredInMemory(paths []string) map[string]bool {
	out := map[string]bool{}
	read := func(name string, domain []string) []gitignore.Pattern {
		b, err := readFile(f.r.worktree, name)
		if err != nil {
			return nil
		}
		var ps []gitignore.Pattern
		for _, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSuffix(line, "\r")
			if strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "#") {
				ps = append(ps, gitignore.ParsePattern(line, domain))
			}
		}
		return ps
	}
	var base []gitignore.Pattern
	if b, err := readFile(f.r.common, "info/exclude"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "#") {
				base = append(base, gitignore.ParsePattern(strings.TrimSuffix(line, "\r"), nil))
			}
		}
	}
	for _, p := range paths {
		parts := strings.Split(p, "/")
		ps := append([]gitignore.Pattern(nil), base...)
		for i := 0; i < len(parts); i++ {
			ps = append(ps, read(strings.Join(append(parts[:i:i], ".gitignore"), "/"), parts[:i])...)
		}
		if gitignore.NewMatcher(ps).Match(parts, false) {
			out[p] = true
		}
	}
	return out
}

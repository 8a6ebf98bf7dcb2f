package gitdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotRepo is returned when no repository encloses the directory. The
// command maps it to exit code 128, as git does.
var ErrNotRepo = errors.New("not a git repository (or any of the parent directories): .git")

// notRepoError is a more specific "not a git repository" (a bad GIT_DIR or
// .git file); it matches ErrNotRepo so it exits 128 like git.
type notRepoError struct{ msg string }

func (e *notRepoError) Error() string        { return e.msg }
func (e *notRepoError) Is(target error) bool { return target == ErrNotRepo }

// UnsupportedError reports a repository git-hegel refuses to work in. Its
// message is one line a user can act on.
type UnsupportedError struct{ Reason string }

func (e *UnsupportedError) Error() string { return e.Reason }

// Layout is where a repository's parts live on disk.
type Layout struct {
	GitDir    string // this worktree's git dir (.git, or .git/worktrees/<name>)
	CommonDir string // shared by all worktrees: objects, refs, config
	WorkTree  string // top of the working tree
	// ObjectDir is where objects are read and written: GIT_OBJECT_DIRECTORY,
	// else <CommonDir>/objects.
	ObjectDir string
	// IndexFile is the index: GIT_INDEX_FILE, else <GitDir>/index.
	IndexFile string
}

// Resolve completes a discovered layout the way git does once it has read
// the repository's configuration cfg: a work tree discovery did not find
// comes from core.worktree or, under GIT_DIR in a repository that is not
// bare, is dir itself (git's rule); the object directory and the index
// come from GIT_OBJECT_DIRECTORY and GIT_INDEX_FILE (relative values are
// relative to dir, where the command runs). A layout still without a work
// tree is a bare repository or the inside of a git dir.
func Resolve(l *Layout, cfg *Config, dir string, getenv func(string) string) {
	if l.WorkTree == "" {
		if wt, ok := cfg.Get("core", "", "worktree"); ok && wt != "" {
			l.WorkTree = absFrom(l.GitDir, wt)
		} else if getenv("GIT_DIR") != "" && !cfg.Bool("core", "bare", false) {
			// git's rule: GIT_DIR without a work tree makes the current
			// directory the top of the work tree.
			l.WorkTree, _ = filepath.Abs(dir)
		}
	}
	l.setEnvPaths(dir, getenv)
}

// setEnvPaths applies GIT_OBJECT_DIRECTORY and GIT_INDEX_FILE as git does
// (relative values are relative to the directory the command runs in).
func (l *Layout) setEnvPaths(dir string, getenv func(string) string) {
	l.ObjectDir = filepath.Join(l.CommonDir, "objects")
	if od := getenv("GIT_OBJECT_DIRECTORY"); od != "" {
		l.ObjectDir = absFrom(dir, od)
	}
	l.IndexFile = filepath.Join(l.GitDir, "index")
	if ix := getenv("GIT_INDEX_FILE"); ix != "" {
		l.IndexFile = absFrom(dir, ix)
	}
}

// Discover finds the repository enclosing dir the way git does, honouring
// GIT_DIR, GIT_WORK_TREE and GIT_COMMON_DIR (go-git ignores them).
func Discover(dir string, getenv func(string) string) (*Layout, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	var l Layout
	if gd := getenv("GIT_DIR"); gd != "" {
		l.GitDir = absFrom(dir, gd)
		if !isGitDir(l.GitDir) {
			return nil, &notRepoError{fmt.Sprintf("not a git repository: '%s'", gd)}
		}
		if wt := getenv("GIT_WORK_TREE"); wt != "" {
			l.WorkTree = absFrom(dir, wt)
		}
	} else {
		if err := l.walkUp(dir, ceilings(getenv("GIT_CEILING_DIRECTORIES"))); err != nil {
			return nil, err
		}
		if wt := getenv("GIT_WORK_TREE"); wt != "" {
			l.WorkTree = absFrom(dir, wt)
		}
	}
	l.CommonDir = l.GitDir
	if cd := getenv("GIT_COMMON_DIR"); cd != "" {
		l.CommonDir = absFrom(dir, cd)
	} else if cd, ok := commonDirOf(l.GitDir); ok {
		l.CommonDir = cd
	}
	return &l, nil
}

// commonDirOf reads gitDir/commondir, as git's setup does: a relative
// value is taken from gitDir and the result resolved to a real path, so a
// git dir reached through a symbolic link finds the common dir the link
// points into (a lexical "../.." would leave it).
func commonDirOf(gitDir string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if err != nil {
		return "", false
	}
	v := strings.TrimRight(string(b), "\r\n")
	p := v
	if !filepath.IsAbs(v) {
		// Not filepath.Join, which would apply ".." lexically.
		p = gitDir + string(filepath.Separator) + v
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real, true
	}
	return filepath.Clean(p), true
}

// walkUp looks for .git (a directory, or a file naming one) from dir up to
// the filesystem root, never entering a ceiling directory (as git honours
// GIT_CEILING_DIRECTORIES). Inside a git dir itself there is no work tree.
func (l *Layout) walkUp(dir string, ceil map[string]bool) error {
	for d := dir; ; {
		dotgit := filepath.Join(d, ".git")
		if fi, err := os.Stat(dotgit); err == nil {
			if fi.IsDir() {
				if isGitDir(dotgit) {
					l.GitDir, l.WorkTree = dotgit, d
					return nil
				}
			} else {
				gd, err := readGitFile(dotgit)
				if err != nil {
					return err
				}
				l.GitDir, l.WorkTree = gd, d
				return nil
			}
		}
		if isGitDir(d) {
			// A bare repository, or the inside of a .git directory.
			l.GitDir = d
			return nil
		}
		parent := filepath.Dir(d)
		if parent == d || ceil[parent] {
			return ErrNotRepo
		}
		d = parent
	}
}

// readGitFile resolves a "gitdir: <path>" file, as linked worktrees and
// submodules use.
func readGitFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	line := strings.TrimSpace(string(b))
	rest, ok := strings.CutPrefix(line, "gitdir:")
	if !ok {
		return "", &notRepoError{fmt.Sprintf("invalid gitfile format: %s", path)}
	}
	gd := absFrom(filepath.Dir(path), strings.TrimSpace(rest))
	if !isGitDir(gd) {
		return "", &notRepoError{fmt.Sprintf("not a git repository: %s", gd)}
	}
	// git uses the real path of the git dir the file names.
	if real, err := filepath.EvalSymlinks(gd); err == nil {
		gd = real
	}
	return gd, nil
}

// isGitDir applies git's own test: HEAD, plus objects/ and refs/ either here
// or in the common dir a linked worktree's git dir points to.
func isGitDir(d string) bool {
	if _, err := os.Stat(filepath.Join(d, "HEAD")); err != nil {
		return false
	}
	common := d
	if cd, ok := commonDirOf(d); ok {
		common = cd
	}
	for _, sub := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(common, sub)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

func absFrom(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// ceilings parses GIT_CEILING_DIRECTORIES (colon-separated absolute paths;
// git ignores relative ones).
func ceilings(v string) map[string]bool {
	m := map[string]bool{}
	for _, p := range filepath.SplitList(v) {
		if filepath.IsAbs(p) {
			m[filepath.Clean(p)] = true
		}
	}
	return m
}

// WorktreeName names the worktree within its repository in a way that
// survives moving it: "main" for the main worktree, "worktrees/<name>" for
// a linked one (the name git keeps under the common dir, which
// 'git worktree move' preserves).
func (l *Layout) WorktreeName() string {
	if l.GitDir == l.CommonDir {
		return "main"
	}
	return "worktrees/" + filepath.Base(l.GitDir)
}

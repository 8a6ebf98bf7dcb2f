package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore"
)

// `git hegel lock <path>...` and `git hegel unlock <path>... | --all`:
// the files a task owns (engine/locks.go).

func lockFlags(fs *pflag.FlagSet) {
	fs.Bool("force", false, "take over a lock another task holds (recorded in that task), or lock for a task another worktree owns (recorded in it)")
}

func unlockFlags(fs *pflag.FlagSet) {
	fs.Bool("all", false, "remove every lock of the task")
}

func runLock(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 1, math.MaxInt); err != nil {
		return err
	}
	e, r, err := c.engine()
	if err != nil {
		return err
	}
	paths, err := c.lockPaths(r, e, args, engine.CheckNewLockPath)
	if err != nil {
		return err
	}
	force := c.boolFlag("force")
	res, err := e.Lock(engine.TaskOptions{Task: c.selected(), Force: force}, paths, force)
	var le *engine.LockError
	if errors.As(err, &le) {
		// The hint repeats the path as typed: the stored one is relative
		// to the top of the worktree, not to where the command ran.
		for i, p := range paths {
			if p == le.Path {
				le.Arg = shellWord(args[i])
				break
			}
		}
	}
	if err != nil {
		return err
	}
	for _, p := range res.Added {
		line := fmt.Sprintf("Locked '%s' for task %s", p, res.State.Task)
		if from := res.TakenFrom[p]; len(from) > 0 {
			line += fmt.Sprintf(" (taken over from task %s)", strings.Join(from, ", "))
		}
		fmt.Fprintln(c.Stdout, line)
	}
	for _, p := range res.Held {
		line := fmt.Sprintf("Task %s holds '%s' already", res.State.Task, p)
		if from := res.TakenFrom[p]; len(from) > 0 {
			// --force took another task's overlapping lock all the same.
			line += fmt.Sprintf(" (taken over from task %s)", strings.Join(from, ", "))
		}
		fmt.Fprintln(c.Stdout, line)
	}
	return nil
}

func runUnlock(c *cmdCtx, args []string) error {
	all := c.boolFlag("all")
	switch {
	case all && len(args) > 0:
		return usagef(c.name, "--all takes no paths")
	case !all:
		// No paths: the usage line shows both forms.
		if err := c.wantArgs(args, 1, math.MaxInt); err != nil {
			return err
		}
	}
	e, r, err := c.engine()
	if err != nil {
		return err
	}
	paths, err := c.lockPaths(r, e, args, engine.CheckLockPath)
	if err != nil {
		return err
	}
	st, removed, err := e.Unlock(engine.TaskOptions{Task: c.selected(), Force: c.boolFlag("force")}, paths, all)
	if err != nil {
		return err
	}
	for _, p := range removed {
		// With --all the paths are the state's, perhaps another clone's.
		fmt.Fprintf(c.Stdout, "Unlocked '%s' for task %s\n", c.quotePath(p), st.Task)
	}
	return nil
}

// lockPaths makes the command line's paths relative to the top of the
// worktree, as locks store them: a path is read from the current
// directory as git reads pathspecs, a directory (one that exists, or one
// typed with a trailing slash) gets a trailing slash (it locks what is
// under it), and a path check refuses (outside
// the worktree; for a new lock, inside .git) is refused (exit 2) before
// anything changes. With core.ignorecase, the top spelled in another
// case is the worktree, as the agent hook reads it.
func (c *cmdCtx) lockPaths(r *gitstore.Repo, e *engine.Engine, args []string, check func(string) error) ([]string, error) {
	top := r.WorkTree
	realTop := gitstore.ResolveExisting(top)
	dir := gitstore.ResolveExisting(c.Dir)
	out := make([]string, 0, len(args))
	for _, a := range args {
		if a == "" {
			return nil, usagef(c.name, "an empty path names no file")
		}
		p := a
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		// Named as the agent hook names the file an edit writes: through
		// the links of the part that exists.
		rel, ok := gitstore.WorktreeRel(p, top, realTop)
		if !ok && e.FoldCase {
			rel, ok = gitstore.WorktreeRelFold(p, top, realTop)
		}
		if !ok {
			return nil, usagef(c.name, "'%s' is outside the worktree", a)
		}
		if rel == "." {
			// Named as typed: ".." in a subdirectory is the top too.
			return nil, usagef(c.name, "'%s' is the whole worktree; lock the files or directories in it", a)
		}
		// A directory locks what is under it: one that exists, or one
		// named with a trailing slash before it does. A pattern keeps no
		// slash: it covers what it matches and what is under that, and
		// "gen/*/" would match no file.
		if fi, err := os.Stat(filepath.Join(realTop, rel)); (err == nil && fi.IsDir()) || endsInSeparator(a) && !engine.IsGlob(rel) {
			rel += "/"
		}
		if err := check(rel); err != nil {
			return nil, usagef(c.name, "%v", err)
		}
		out = append(out, rel)
	}
	return out, nil
}

// endsInSeparator reports whether a path as typed names a directory.
func endsInSeparator(p string) bool {
	return strings.HasSuffix(p, "/") || strings.HasSuffix(p, string(filepath.Separator))
}

// printLocks lists a task's locks in status and show.
func (c *cmdCtx) printLocks(st *engine.State) {
	if len(st.FilesLocked) == 0 || !st.Active() {
		return
	}
	// A lock may come from another clone: its path is quoted as git
	// quotes file names, so no control character reaches the terminal.
	paths := make([]string, len(st.FilesLocked))
	for i, l := range st.FilesLocked {
		paths[i] = c.quotePath(l.Path)
	}
	fmt.Fprintf(c.Stdout, "Locked files: %s\n", strings.Join(paths, ", "))
}

// shellWord is s as one word for a POSIX shell: as it is when no
// character of it is special, else in single quotes (a glob such as d/*
// must reach the command, not be expanded).
func shellWord(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./,:@%+=", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

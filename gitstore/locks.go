package gitstore

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// Locks lists the lock files of the repository, for `git hegel doctor`:
// every "*.lock" below refs/, logs/ and hegel/ of the common git dir and
// at the top of it (packed-refs.lock, config.lock, HEAD.lock, index.lock…),
// the same at the top of each worktree's git dir (HEAD.lock, index.lock),
// GIT_INDEX_FILE's lock, and the session lock in this work tree's .hegel/.
// Each comes with its owner (nil without a git-hegel marker) and whether
// that owner is alive, dead or cannot be checked; Temporary marks the
// short-lived files git-hegel writes beside a lock, which a killed process
// can leave (harmless: git skips every "*.lock" name). RemoveDeadLock
// removes one whose owner is provably dead.
func (r *Repo) Locks() ([]refs.LockInfo, error) {
	if r.CommonDir == "" {
		return nil, nil
	}
	seen := map[string]bool{}
	var out []refs.LockInfo
	add := func(p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		li, err := refs.InspectLock(p)
		if err != nil {
			return // gone meanwhile
		}
		li.Temporary = refs.IsTempLock(p)
		out = append(out, li)
	}
	top := func(dir string) {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if !e.IsDir() && strings.HasSuffix(e.Name(), refs.LockSuffix) {
				add(filepath.Join(dir, e.Name()))
			}
		}
	}
	walk := func(dir string) error {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == dir {
					return fs.SkipDir
				}
				return nil
			}
			if !d.IsDir() && strings.HasSuffix(d.Name(), refs.LockSuffix) {
				add(p)
			}
			return nil
		})
		return err
	}
	top(r.CommonDir)
	for _, sub := range []string{"refs", "logs", "hegel"} {
		if err := walk(filepath.Join(r.CommonDir, sub)); err != nil {
			return nil, err
		}
	}
	wts, _ := os.ReadDir(filepath.Join(r.CommonDir, "worktrees"))
	for _, w := range wts {
		if w.IsDir() {
			top(filepath.Join(r.CommonDir, "worktrees", w.Name()))
		}
	}
	top(r.GitDir)
	if p := r.IndexFile + refs.LockSuffix; fileExists(p) {
		add(p)
	}
	if p := r.SessionLockPath(); p != "" && fileExists(p) {
		add(p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// CreateLock creates the lock file path (git's <file>.lock protocol)
// holding this process's owner marker; fs.ErrExist if someone holds it.
// Its shared permissions are the repository's.
func (r *Repo) CreateLock(path string) error { return refs.CreateLock(r.owner, path, r.shared) }

// BreakDeadLock removes the lock file at path if git-hegel created it and
// its owner is provably dead (RemoveDeadLock), saying so through Warn,
// and reports whether it did.
func (r *Repo) BreakDeadLock(path string) bool {
	li, removed, _ := refs.RemoveDeadLock(path)
	if removed {
		r.warnf(li.RemovedMessage())
	}
	return removed
}

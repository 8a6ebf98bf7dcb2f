package gitstore

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// isTempLock matches the temporary files git-hegel writes beside a lock
// (lockTemp): "<name>.hegel-<pid>-<8 hex>.lock".
func isTempLock(p string) bool {
	base, ok := strings.CutSuffix(filepath.Base(p), lockSuffix)
	if !ok || len(base) < 9 || base[len(base)-9] != '-' {
		return false
	}
	for _, c := range base[len(base)-8:] {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	i := strings.LastIndex(base[:len(base)-9], ".hegel-")
	if i < 0 || i+len(".hegel-") == len(base)-9 {
		return false
	}
	for _, c := range base[i+len(".hegel-") : len(base)-9] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

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
func (r *Repo) Locks() ([]LockInfo, error) {
	if r.CommonDir == "" {
		return nil, nil
	}
	seen := map[string]bool{}
	var out []LockInfo
	add := func(p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		li, err := InspectLock(p)
		if err != nil {
			return // gone meanwhile
		}
		li.Temporary = isTempLock(p)
		out = append(out, li)
	}
	top := func(dir string) {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if !e.IsDir() && strings.HasSuffix(e.Name(), lockSuffix) {
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
			if !d.IsDir() && strings.HasSuffix(d.Name(), lockSuffix) {
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
	if p := r.IndexFile + lockSuffix; fileExists(p) {
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

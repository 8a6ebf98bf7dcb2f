package rollback

import (
	"bytes"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// A restore writes a new index; without the untracked cache the first git
// status after it reads every directory of the working tree again (on
// 100,000 files, the slow status right after an undo). So the old index's
// cache is carried into the new one, with every directory the restore may
// have made stale invalidated, as git itself invalidates them when it
// changes the index (dir.c, untracked_cache_invalidate_path): a directory
// marked invalid loses its untracked names and is read again; the others
// are still checked against their stat data by git.
//
// git trusts a valid directory whose stat data has not changed. A
// directory's stat data changes when a name is added to it or removed
// from it, but not when an index entry comes or goes (a file that stops
// being tracked stays where it is), and not in the same tick of the clock
// as the change before it. So a directory is invalidated, with every
// directory above it (git does the same for the ancestors of a path
// whenever the cache collapses untracked directories, "dir/"; here it is
// done always), when it holds:
//
//   - a path whose index entries differ in any way between the old index
//     and the new (added, removed, another object, mode, stage or flag);
//   - a path the restore wrote, removed, or changed the type of, or a
//     submodule it checked out.
//
// A directory of the cache at such a path (one a file replaced, or that
// replaced one) is invalidated whole, every directory below it included.
// So is any directory whose recorded mtime is not older than the second
// the old index was written in (git's racy rule: git would have read it
// again, but a new index written later makes it look settled).
//
// The cache is dropped instead (git rebuilds it on the next git status,
// as before) when anything about it is not understood: it does not parse,
// does not write back to the same bytes, names another worktree or
// system, has flags git status does not write, or another per-directory
// exclude file name; and when git would use it in ways these rules do not
// cover: with a file system monitor (core.fsmonitor, or an FSMN
// extension: git then trusts valid directories without looking at them),
// on a file system that folds case, with core.untrackedCache false, on
// systems other than Linux (systemName), and when an interrupted restore
// is replayed (some of its files were written by the process that died).

// Flags of git's dir_struct that git status stores in the cache
// (DIR_SHOW_OTHER_DIRECTORIES and DIR_HIDE_EMPTY_DIRECTORIES, with
// --untracked-files=normal; none with all).
const (
	dirShowOtherDirectories = 1 << 1
	dirHideEmptyDirectories = 1 << 2
)

// indexKey is what of an index entry the untracked cache depends on.
type indexKey struct {
	name  string
	hash  plumbing.Hash
	mode  uint32
	flags uint16
	ext   uint16
}

// untrackedCarry is the old index's untracked cache, parsed, and the keys
// of the old index's entries (taken before newIndex reuses its slice).
type untrackedCarry struct {
	cache   *untrCache
	keys    []indexKey
	modTime time.Time
}

// untrackedCarryFor prepares carrying old's untracked cache into the
// index a restore writes, or returns nil when it is dropped; fold: the
// file system folds case (workspace.folds). It costs nothing when old
// has none.
func (w *workspace) untrackedCarryFor(old *gitIndex, fold bool) *untrackedCarry {
	if w.memory || old.untracked == nil || old.fsmonitor || old.ModTime.IsZero() {
		return nil
	}
	c := w.r.Config()
	if !c.Bool("core", "untrackedcache", true) {
		return nil
	}
	if _, ok := c.Get("core", "", "fsmonitor"); ok && c.Bool("core", "fsmonitor", true) {
		return nil
	}
	if fold {
		return nil
	}
	uc, err := parseUntracked(old.untracked)
	if err != nil || !bytes.Equal(appendUntracked(nil, uc), old.untracked) {
		return nil
	}
	if uc.flags&^(dirShowOtherDirectories|dirHideEmptyDirectories) != 0 || uc.perDir != ".gitignore" ||
		!w.untrackedIdentOK(uc.ident) {
		return nil
	}
	keys := make([]indexKey, len(old.Entries))
	for i := range old.Entries {
		e := &old.Entries[i]
		keys[i] = indexKey{name: e.Name, hash: e.Hash, mode: e.Mode, flags: e.Flags, ext: e.ExtFlags}
	}
	return &untrackedCarry{cache: uc, keys: keys, modTime: old.ModTime}
}

// untrackedIdentOK reports whether ident is the one git writes for this
// worktree on this system ("Location <worktree>, system <uname -s>" and a
// NUL); git ignores a cache with another.
func (w *workspace) untrackedIdentOK(ident []byte) bool {
	sys := systemName()
	if sys == "" || w.r.WorkTree == "" {
		return false
	}
	dirs := []string{w.r.WorkTree}
	if real, err := filepath.EvalSymlinks(w.r.WorkTree); err == nil {
		dirs = append(dirs, real)
	}
	for _, d := range dirs {
		if string(ident) == "Location "+d+", system "+sys+"\x00" {
			return true
		}
	}
	return false
}

// apply invalidates in the cache what the restore may have made stale
// (newIdx is the index it writes, wt the working-tree changes it made,
// subs the submodules it checked out) and returns the cache to write.
func (c *untrackedCarry) apply(newIdx *gitIndex, wt []change, subs []SubmoduleChange) []byte {
	uc := c.cache
	if uc.root != nil {
		changedIndexPaths(c.keys, newIdx.Entries, func(p string) { uc.root.invalidatePath(p) })
		for _, ch := range wt {
			uc.root.invalidatePath(ch.path)
		}
		for _, s := range subs {
			uc.root.invalidatePath(s.Path)
		}
		uc.root.invalidateRacy(c.modTime)
	}
	return appendUntracked(nil, uc)
}

// changedIndexPaths calls touch with each name whose entries (all stages)
// differ between old and new, both sorted as the index keeps them (a name
// may be reported more than once). The two are walked in step: an entry
// whose counterpart at the same place has the same name is compared with
// it; any other is in one index only.
func changedIndexPaths(old []indexKey, new []idxEntry, touch func(string)) {
	i, j := 0, 0
	for i < len(old) || j < len(new) {
		if i < len(old) && j < len(new) && old[i].name == new[j].Name {
			o, n := &old[i], &new[j]
			if o.hash != n.Hash || o.mode != n.Mode || o.flags != n.Flags || o.ext != n.ExtFlags {
				touch(o.name)
			}
			i, j = i+1, j+1
			continue
		}
		if j >= len(new) || (i < len(old) && old[i].name < new[j].Name) {
			touch(old[i].name)
			i++
		} else {
			touch(new[j].Name)
			j++
		}
	}
}

// invalidate marks d to be read again, as git's invalidate_one_directory.
func (d *untrDir) invalidate() {
	d.valid, d.checkOnly, d.untracked = false, false, nil
}

// invalidateTree invalidates d and every directory below it.
func (d *untrDir) invalidateTree() {
	d.invalidate()
	for _, s := range d.subs {
		s.invalidateTree()
	}
}

// invalidatePath invalidates d (the directory rest is relative to), each
// directory on the way to rest and, when rest itself is a directory of
// the cache, the whole tree below it.
func (d *untrDir) invalidatePath(rest string) {
	d.invalidate()
	comp, tail, more := strings.Cut(rest, "/")
	for _, s := range d.named(comp) {
		if more {
			s.invalidatePath(tail)
		} else {
			s.invalidateTree()
		}
	}
}

// named returns d's subdirectories named name (git writes each name
// once; a cache that has one twice has both invalidated).
func (d *untrDir) named(name string) []*untrDir {
	if len(d.subs) < 8 {
		for i, s := range d.subs {
			if s.name == name {
				out := d.subs[i : i+1 : i+1]
				for _, t := range d.subs[i+1:] {
					if t.name == name {
						out = append(out, t)
					}
				}
				return out
			}
		}
		return nil
	}
	if d.byName == nil {
		d.byName = make(map[string][]*untrDir, len(d.subs))
		for _, s := range d.subs {
			d.byName[s.name] = append(d.byName[s.name], s)
		}
	}
	return d.byName[name]
}

// invalidateRacy invalidates every directory whose stat data was recorded
// in the second the old index was written or later (racyForGit).
func (d *untrDir) invalidateRacy(indexTime time.Time) {
	if d.valid && racyForGit(d.stat, indexTime) {
		d.invalidate()
	}
	for _, s := range d.subs {
		s.invalidateRacy(indexTime)
	}
}

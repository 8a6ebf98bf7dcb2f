package rollback

import (
	"errors"
	"path"

	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// ErrNotWritable reports a path the rollback would have to change but
// cannot: an immutable or append-only file (chattr +i, +a), or a
// directory it may not write in.
var ErrNotWritable = errors.New("cannot be changed")

// checkWritable makes sure, before anything changes, that every path in
// wt can be removed, replaced or created: the file (or link) there is
// neither immutable nor append-only, and the directory it is in (for a
// new path: the nearest one that exists) is writable and neither immutable
// nor append-only. A rollback that stopped halfway on such a path could
// not always put things back either.
func (w *workspace) checkWritable(wt []change, words restoreWords) error {
	dirs := map[string]bool{}
	checkDir := func(d string) error {
		for {
			if dirs[d] {
				return nil
			}
			dirs[d] = true
			why, ok := w.fs.problem(d, true)
			if !ok {
				// created (or replaced) by the restore: its parent decides
				d = parentOf(d)
				continue
			}
			if why != "" {
				return userErr(ErrNotWritable, "%s %s, and %s must change what is in it; nothing was changed", quotePath(displayDir(d)), why, words.actor)
			}
			return nil
		}
	}
	for _, c := range wt {
		if c.from.mode != 0 && c.from.mode != filemode.Submodule {
			if why, _ := w.fs.problem(c.path, false); why != "" {
				return userErr(ErrNotWritable, "%s %s, and %s must change it; nothing was changed", quotePath(c.path), why, words.actor)
			}
		}
		if c.to.mode == filemode.Submodule && c.from.mode == filemode.Submodule {
			continue
		}
		if err := checkDir(parentOf(c.path)); err != nil {
			return err
		}
	}
	return nil
}

func parentOf(p string) string {
	d := path.Dir(p)
	if d == "." {
		return ""
	}
	return d
}

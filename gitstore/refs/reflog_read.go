package refs

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/util"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/gitstore/objects"
)

// Reading and removing the reflogs Files writes: doctor goes back through
// a damaged ref's log, and gc drops the logs kept for deleted refs.

// ReflogEntry is one line of a reflog.
type ReflogEntry struct {
	Old, New plumbing.Hash
	When     time.Time
	Msg      string
}

// Logged reports whether r writes reflogs.
func (r *Files) Logged() bool { return r.logs != nil }

// ReadReflog returns name's reflog, oldest first; lines it cannot parse
// are left out, and a log that cannot be read is none.
func (r *Files) ReadReflog(name plumbing.ReferenceName) []ReflogEntry {
	b, err := util.ReadFile(r.fs, filepath.Join("logs", filepath.FromSlash(string(name))))
	if err != nil {
		return nil
	}
	var out []ReflogEntry
	for _, line := range strings.Split(string(b), "\n") {
		head, msg, _ := strings.Cut(line, "\t")
		f := strings.Fields(head)
		if len(f) < 4 {
			continue
		}
		old, ok1 := objects.ParseHex(f[0])
		new, ok2 := objects.ParseHex(f[1])
		if !ok1 || !ok2 {
			continue
		}
		var sec int64
		fmt.Sscan(f[len(f)-2], &sec)
		out = append(out, ReflogEntry{Old: old, New: new, When: time.Unix(sec, 0), Msg: msg})
	}
	return out
}

// LastReflogTime reads the time of the last entry of name's reflog.
func (r *Files) LastReflogTime(name string) (time.Time, bool) {
	b, err := util.ReadFile(r.fs, filepath.Join("logs", filepath.FromSlash(name)))
	if err != nil {
		return time.Time{}, false
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	line := lines[len(lines)-1]
	head, _, _ := strings.Cut(line, "\t")
	f := strings.Fields(head)
	if len(f) < 2 {
		return time.Time{}, false
	}
	var sec int64
	if _, err := fmt.Sscan(f[len(f)-2], &sec); err != nil {
		return time.Time{}, false
	}
	return time.Unix(sec, 0), true
}

// ReflogNames lists the refs below dir (slash-separated, "refs/hegel")
// that have a reflog, whether or not the ref exists.
func (r *Files) ReflogNames(dir string) []string {
	var names []string
	var walk func(dir string)
	walk = func(dir string) {
		ents, err := r.fs.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			p := r.fs.Join(dir, e.Name())
			if e.IsDir() {
				walk(p)
			} else if !strings.HasSuffix(e.Name(), LockSuffix) {
				names = append(names, strings.TrimPrefix(filepath.ToSlash(p), "logs/"))
			}
		}
	}
	walk(filepath.Join("logs", filepath.FromSlash(dir)))
	return names
}

// DropReflog removes name's reflog and the directories that leaves
// empty, and reports whether there was one.
func (r *Files) DropReflog(name plumbing.ReferenceName) bool {
	p := filepath.Join("logs", filepath.FromSlash(string(name)))
	if r.fs.Remove(p) != nil {
		return false
	}
	r.removeEmptyParents(p)
	return true
}

//go:build !linux

package rollback

import (
	"io/fs"
	"os"
	"path/filepath"
)

// scanDirOS lists a directory and lstats the wanted entries by path.
func scanDirOS(dir string, decide func([]dirent) []bool) ([]dirent, []fstat, error) {
	ds, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	out := make([]dirent, len(ds))
	for i, d := range ds {
		out[i] = dirent{name: d.Name(), kind: kindOf(d.Type())}
	}
	want := decide(out)
	sts := make([]fstat, len(ds))
	for i := range out {
		if !want[i] {
			continue
		}
		fi, err := os.Lstat(filepath.Join(dir, out[i].name))
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return nil, nil, err
		}
		sts[i] = statOf(fi)
		out[i].kind = sts[i].kind
	}
	return out, sts, nil
}

var _ = fs.ModeDir

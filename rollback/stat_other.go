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

// readFileOS reads a whole file.
func readFileOS(name string) ([]byte, error) { return os.ReadFile(name) }

// writeFileOS creates name exclusively (O_EXCL: never through a link or
// over a file that is there), writes data and returns its lstat.
func writeFileOS(name string, data []byte, perm os.FileMode) (fstat, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fstat{}, err
	}
	_, err = f.Write(data)
	var fi fs.FileInfo
	if err == nil {
		fi, err = f.Stat()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fstat{}, err
	}
	return statOf(fi), nil
}

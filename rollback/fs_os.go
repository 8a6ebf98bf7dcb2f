package rollback

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// osFS is the working tree of a repository on disk. Each method works on
// one path below root and never follows a symbolic link in its last
// component. probeDir is where foldsCase may create a file (the git dir).
type osFS struct {
	root     string
	probeDir string
}

func (o osFS) full(p string) string {
	if p == "" {
		return o.root
	}
	return filepath.Join(o.root, filepath.FromSlash(p))
}

func statOf(fi fs.FileInfo) fstat {
	st := fstat{kind: kindOf(fi.Mode()), exec: fi.Mode()&0o100 != 0, size: fi.Size()}
	st.stat, st.hasStat = sysStat(fi)
	return st
}

func (o osFS) lstat(p string) (fstat, error) {
	fi, err := os.Lstat(o.full(p))
	if err != nil {
		return fstat{}, err
	}
	return statOf(fi), nil
}

func (o osFS) readDir(p string) ([]dirent, error) {
	ds, err := os.ReadDir(o.full(p))
	if err != nil {
		return nil, err
	}
	out := make([]dirent, len(ds))
	for i, d := range ds {
		out[i] = dirent{name: d.Name(), kind: kindOf(d.Type())}
	}
	return out, nil
}

func (o osFS) scanDir(p string, decide func([]dirent) []bool) ([]dirent, []fstat, error) {
	return scanDirOS(o.full(p), decide)
}

func (o osFS) readFile(p string) ([]byte, error) { return readFileOS(o.full(p)) }

func (o osFS) readlink(p string) (string, error) {
	t, err := os.Readlink(o.full(p))
	return filepath.ToSlash(t), err
}

func (o osFS) writeFile(p string, data []byte, exec bool) (fstat, error) {
	perm := os.FileMode(0o666)
	if exec {
		perm = 0o777
	}
	// O_EXCL (writeFileOS): never write through a link or over a file
	// that appeared since the plan was made.
	return writeFileOS(o.full(p), data, perm)
}

func (o osFS) symlink(target, p string) (fstat, error) {
	if err := os.Symlink(filepath.FromSlash(target), o.full(p)); err != nil {
		return fstat{}, err
	}
	return o.lstat(p)
}

func (o osFS) chmod(p string, exec bool) (fstat, error) {
	fi, err := os.Lstat(o.full(p))
	if err != nil {
		return fstat{}, err
	}
	if !fi.Mode().IsRegular() {
		return fstat{}, &fs.PathError{Op: "chmod", Path: p, Err: errors.New("not a regular file")}
	}
	perm := fi.Mode().Perm()
	if exec {
		perm |= (perm & 0o444) >> 2 // x wherever r is set, as git does
	} else {
		perm &^= 0o111
	}
	if err := os.Chmod(o.full(p), perm); err != nil {
		return fstat{}, err
	}
	return o.lstat(p)
}

func (o osFS) remove(p string) error { return os.Remove(o.full(p)) }

func (o osFS) mkdir(p string) error {
	err := os.Mkdir(o.full(p), 0o777)
	if errors.Is(err, fs.ErrExist) {
		if fi, serr := os.Lstat(o.full(p)); serr == nil && fi.IsDir() {
			return nil
		}
	}
	return err
}

func (o osFS) parallel() bool { return true }

func (o osFS) problem(p string, dir bool) (string, bool) { return changeProblem(o.full(p), dir) }

// foldsCase creates a file with a lower-case name in the git directory
// (the same filesystem as the working tree, as git itself assumes when it
// probes for core.ignorecase) and looks for it under the upper-case name.
func (o osFS) foldsCase() bool {
	dir := o.probeDir
	if dir == "" {
		dir = o.root
	}
	var b [6]byte
	rand.Read(b[:])
	name := filepath.Join(dir, "hegel-case-probe-"+hex.EncodeToString(b[:]))
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return false
	}
	f.Close()
	defer os.Remove(name)
	upper := filepath.Join(dir, strings.ToUpper(filepath.Base(name)))
	_, err = os.Lstat(upper)
	return err == nil
}

package rollback

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"

	"github.com/go-git/go-billy/v5"
)

// fileKind is what a directory entry is, as far as git cares.
type fileKind uint8

const (
	kindNone fileKind = iota // missing
	kindFile
	kindSymlink
	kindDir
	kindOther // fifo, socket, device: git ignores them
)

// fstat is lstat's answer in the form git's stat data needs. hasStat is
// false on filesystems that keep no inode numbers or times (memfs): their
// files never match an index entry's stat data and are always hashed.
type fstat struct {
	kind    fileKind
	exec    bool
	size    int64
	stat    statData
	hasStat bool
}

type dirent struct {
	name string
	kind fileKind
}

// wtFS is the working tree as the snapshot and restore code see it: paths
// are slash-separated and relative to the top ("" is the top). Nothing here
// follows a symbolic link in the last component; callers make sure no
// parent component is one before they write (see restore.go).
type wtFS interface {
	lstat(p string) (fstat, error)
	readDir(p string) ([]dirent, error)
	readFile(p string) ([]byte, error)
	readlink(p string) (string, error)
	// writeFile creates p, which must not exist, with data.
	writeFile(p string, data []byte, exec bool) (fstat, error)
	// symlink creates p, which must not exist.
	symlink(target, p string) (fstat, error)
	chmod(p string, exec bool) (fstat, error)
	// remove deletes a file, a symbolic link or an empty directory.
	remove(p string) error
	mkdir(p string) error
	// parallel reports whether several goroutines may use it at once.
	parallel() bool
	// foldsCase reports whether names that differ only in case name the
	// same file (probed, not taken from core.ignorecase).
	foldsCase() bool
	// problem says why p cannot be removed or replaced (for a directory:
	// why nothing can be changed in it), or "" (writable.go).
	problem(p string, dir bool) (why string, ok bool)
	// scanDir lists a directory, asks decide which entries to lstat, and
	// lstats those (the OS version relative to the open directory, which
	// spares the kernel a walk down the whole path for each).
	scanDir(p string, decide func(ents []dirent) []bool) ([]dirent, []fstat, error)
}

// billyFS adapts a go-billy filesystem (memfs in unit tests). memfs keeps
// no inode numbers or times, so hasStat is always false; it is not safe for
// concurrent use.
type billyFS struct{ fs billy.Filesystem }

func (b billyFS) name(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

func kindOf(m fs.FileMode) fileKind {
	switch {
	case m.IsRegular():
		return kindFile
	case m&fs.ModeSymlink != 0:
		return kindSymlink
	case m.IsDir():
		return kindDir
	}
	return kindOther
}

func (b billyFS) lstat(p string) (fstat, error) {
	fi, err := b.fs.Lstat(b.name(p))
	if err != nil {
		return fstat{}, err
	}
	return fstat{kind: kindOf(fi.Mode()), exec: fi.Mode()&0o100 != 0, size: fi.Size()}, nil
}

func (b billyFS) readDir(p string) ([]dirent, error) {
	fis, err := b.fs.ReadDir(b.name(p))
	if err != nil {
		return nil, err
	}
	out := make([]dirent, 0, len(fis))
	for _, fi := range fis {
		out = append(out, dirent{name: fi.Name(), kind: kindOf(fi.Mode())})
	}
	return out, nil
}

func (b billyFS) scanDir(p string, decide func([]dirent) []bool) ([]dirent, []fstat, error) {
	ds, err := b.readDir(p)
	if err != nil {
		return nil, nil, err
	}
	want := decide(ds)
	sts := make([]fstat, len(ds))
	for i, d := range ds {
		if want[i] {
			if sts[i], err = b.lstat(path.Join(p, d.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, nil, err
			}
		}
	}
	return ds, sts, nil
}

func (b billyFS) readFile(p string) ([]byte, error) {
	f, err := b.fs.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func (b billyFS) readlink(p string) (string, error) { return b.fs.Readlink(p) }

func (b billyFS) writeFile(p string, data []byte, exec bool) (fstat, error) {
	mode := os.FileMode(0o644)
	if exec {
		mode = 0o755
	}
	f, err := b.fs.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fstat{}, err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fstat{}, err
	}
	return b.lstat(p)
}

func (b billyFS) symlink(target, p string) (fstat, error) {
	if err := b.fs.Symlink(target, p); err != nil {
		return fstat{}, err
	}
	return b.lstat(p)
}

func (b billyFS) chmod(p string, exec bool) (fstat, error) {
	mode := os.FileMode(0o644)
	if exec {
		mode = 0o755
	}
	ch, ok := b.fs.(interface {
		Chmod(string, os.FileMode) error
	})
	if !ok {
		return fstat{}, errors.New("filesystem cannot change modes")
	}
	if err := ch.Chmod(p, mode); err != nil {
		return fstat{}, err
	}
	return b.lstat(p)
}

func (b billyFS) remove(p string) error {
	if fi, err := b.fs.Lstat(p); err == nil && fi.IsDir() {
		// memfs removes a directory with its content; git never does.
		if ents, err := b.fs.ReadDir(p); err == nil && len(ents) > 0 {
			return &fs.PathError{Op: "remove", Path: p, Err: errors.New("directory not empty")}
		}
	}
	return b.fs.Remove(p)
}

func (b billyFS) mkdir(p string) error {
	if fi, err := b.fs.Lstat(p); err == nil {
		if fi.IsDir() {
			return nil
		}
		return &fs.PathError{Op: "mkdir", Path: p, Err: fs.ErrExist}
	}
	return b.fs.MkdirAll(p, 0o755)
}

func (b billyFS) parallel() bool { return false }

func (b billyFS) foldsCase() bool { return false }

func (b billyFS) problem(p string, dir bool) (string, bool) {
	st, err := b.lstat(p)
	return "", err == nil && (!dir || st.kind == kindDir)
}

// parentDirs returns the directories above p, outermost first:
// "a/b/c" -> ["a", "a/b"].
func parentDirs(p string) []string {
	var out []string
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			out = append(out, p[:i])
		}
	}
	return out
}

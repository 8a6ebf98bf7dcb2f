package objects

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/git-hegel/git-hegel/gitstore/gitdir"
)

// SharedPerm is core.sharedRepository, applied as git applies it to every
// file and directory it creates in the git dir (git's adjust_shared_perm):
// with "group" (or true, 1) group members may read and write, with "all"
// (world, everybody, 2) everyone may also read, and an octal 0xxx sets
// files' modes exactly. Directories get the execute bits matching their
// read bits, and on Linux the setgid bit when the group gets access, so
// their files keep the repository's group. The zero value ("umask")
// changes nothing.
//
// Everything git-hegel writes in the git dir goes through it (the
// repository's is gitstore's Repo.Shared).
type SharedPerm struct {
	// mode > 0 adds these bits (0660 group, 0664 all); mode < 0 sets
	// files' permission bits to -mode exactly.
	mode int
}

const (
	permGroup     = 0o660
	permEverybody = 0o664
)

// ParseSharedPerm reads core.sharedRepository the way git does
// (git_config_perm): v is its value, set whether it is set at all.
func ParseSharedPerm(v string, set bool) (SharedPerm, error) {
	if !set {
		return SharedPerm{}, nil
	}
	switch v = strings.TrimSpace(v); strings.ToLower(v) {
	case "", "group":
		return SharedPerm{permGroup}, nil
	case "umask":
		return SharedPerm{}, nil
	case "all", "world", "everybody":
		return SharedPerm{permEverybody}, nil
	}
	n, err := strconv.ParseInt(v, 8, 32)
	if err != nil {
		switch strings.ToLower(v) {
		case "true", "yes", "on":
			return SharedPerm{permGroup}, nil
		case "false", "no", "off":
			return SharedPerm{}, nil
		}
		return SharedPerm{}, &gitdir.UnsupportedError{Reason: fmt.Sprintf("bad core.sharedRepository value '%s'", v)}
	}
	switch n {
	case 0:
		return SharedPerm{}, nil
	case 1:
		return SharedPerm{permGroup}, nil
	case 2:
		return SharedPerm{permEverybody}, nil
	}
	if n&0o600 != 0o600 {
		return SharedPerm{}, &gitdir.UnsupportedError{Reason: fmt.Sprintf("problem with core.sharedRepository filemode value (0%.3o): the owner of files must always have read and write permissions", n)}
	}
	return SharedPerm{-int(n & 0o666)}, nil
}

// On reports whether files need adjusting at all.
func (s SharedPerm) On() bool { return s.mode != 0 }

// calc is git's calc_shared_perm for a file's mode bits.
func (s SharedPerm) calc(mode fs.FileMode) fs.FileMode {
	tweak := s.mode
	if tweak < 0 {
		tweak = -tweak
	}
	if mode&0o200 == 0 {
		tweak &^= 0o222
	}
	if mode&0o100 != 0 {
		tweak |= (tweak & 0o444) >> 2
	}
	if s.mode < 0 {
		return mode&^0o777 | fs.FileMode(tweak)
	}
	return mode | fs.FileMode(tweak)
}

// Adjust gives path the repository's shared permissions (a no-op unless
// core.sharedRepository is set), as git does after creating a file or
// directory in the git dir.
func (s SharedPerm) Adjust(path string) error {
	if s.mode == 0 {
		return nil
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil
	}
	old := fi.Mode() & (fs.ModePerm | fs.ModeSetgid)
	mode := s.calc(fi.Mode().Perm()) | fi.Mode()&fs.ModeSetgid
	if fi.IsDir() {
		mode |= (mode & 0o444) >> 2
		if mode&0o060 != 0 && runtime.GOOS == "linux" {
			mode |= fs.ModeSetgid
		}
	}
	if mode == old {
		return nil
	}
	if err := os.Chmod(path, mode); err != nil {
		return fmt.Errorf("cannot fix permission bits on %s: %w", path, err)
	}
	return nil
}

func (s SharedPerm) adjust(path string) error { return s.Adjust(path) }

// MkdirAll creates dir and its missing parents, each with the shared
// permissions (git's safe_create_leading_directories), retrying when a
// concurrent prune removes an empty parent between two steps.
func (s SharedPerm) MkdirAll(dir string) error {
	for attempt := 0; ; attempt++ {
		err := s.mkdirAllOnce(dir)
		if err == nil || !errors.Is(err, fs.ErrNotExist) || attempt == 10 {
			return err
		}
	}
}

func (s SharedPerm) mkdirAll(dir string) error { return s.MkdirAll(dir) }

func (s SharedPerm) mkdirAllOnce(dir string) error {
	if fi, err := os.Stat(dir); err == nil {
		if fi.IsDir() {
			return nil
		}
		return &fs.PathError{Op: "mkdir", Path: dir, Err: errors.New("not a directory")}
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := s.mkdirAllOnce(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o777); err != nil {
		if errors.Is(err, fs.ErrExist) {
			fi, serr := os.Stat(dir)
			if serr == nil && fi.IsDir() {
				return nil
			}
			if errors.Is(serr, fs.ErrNotExist) {
				// Created and removed again meanwhile (a ref delete
				// pruning its empty directory): MkdirAll tries again.
				return serr
			}
		}
		return err
	}
	return s.Adjust(dir)
}

// OpenFile opens (and with os.O_CREATE creates, mode 0666 before the umask)
// a file in the git dir; a file it creates gets the shared permissions.
// Missing parent directories are created with them too.
func (s SharedPerm) OpenFile(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag, 0o666)
	if errors.Is(err, fs.ErrNotExist) && flag&os.O_CREATE != 0 {
		if err := s.MkdirAll(filepath.Dir(path)); err != nil {
			return nil, err
		}
		f, err = os.OpenFile(path, flag, 0o666)
	}
	if err != nil {
		return nil, err
	}
	if flag&os.O_CREATE != 0 && s.mode != 0 {
		if err := s.Adjust(path); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// WriteFile replaces path with data atomically: a temporary file beside
// it (shared permissions), fsynced when durable is set, renamed over it.
func (s SharedPerm) WriteFile(path string, data []byte, durable bool) error {
	var harden func(*os.File) error
	if durable {
		harden = (*os.File).Sync
	}
	return s.WriteFileSync(path, data, harden)
}

// WriteFileSync is WriteFile with harden, if not nil, run on the
// temporary file before its rename.
func (s SharedPerm) WriteFileSync(path string, data []byte, harden func(*os.File) error) error {
	tmp := path + ".tmp-" + NewID()[:8]
	f, err := s.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && harden != nil {
		err = harden(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

//go:build unix

package objects

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// mapFile maps f read-only. A mapping outlives the file's name: a pack that
// git repack deletes while it is mapped stays readable through it, as it
// does for git, which maps packs too.
func mapFile(f *os.File, size int64) ([]byte, func() error, error) {
	if size == 0 || int64(int(size)) != size {
		return nil, nil, errBadMapSize
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, err
	}
	return b, func() error { return syscall.Munmap(b) }, nil
}

// touch sets p's times to now the way git's freshen does (utime with no
// times), which needs write permission rather than ownership: in a shared
// repository a group member can freshen another's object.
func touch(p string) error {
	return unix.UtimesNanoAt(unix.AT_FDCWD, p, nil, 0)
}

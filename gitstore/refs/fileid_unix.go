//go:build unix

package refs

import (
	"io/fs"
	"syscall"
)

// FileID returns fi's inode number (0 if the filesystem gives none).
func FileID(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

//go:build !unix

package objects

import (
	"io"
	"os"
	"time"
)

// mapFile reads f whole where mmap is not available.
func mapFile(f *os.File, size int64) ([]byte, func() error, error) {
	if size == 0 || int64(int(size)) != size {
		return nil, nil, errBadMapSize
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, size), b); err != nil {
		return nil, nil, err
	}
	return b, func() error { return nil }, nil
}

// touch sets p's times to now (git's freshen).
func touch(p string) error {
	now := time.Now()
	return os.Chtimes(p, now, now)
}

//go:build !unix

package gitstore

import "os"

// Without flock (Windows), the journal is rotated by rename, which Windows
// refuses while another process has the file open: the fold then retries
// later, and appends are never lost.
func flock(f *os.File, exclusive bool) error { return nil }

func funlock(f *os.File) {}

func sameFile(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

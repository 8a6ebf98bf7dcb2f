//go:build !linux

package rollback

import "os"

// changeProblem says why nothing can be created or removed in directory
// full. Immutable flags are not read on this system.
func changeProblem(full string, dir bool) string {
	if !dir {
		return ""
	}
	fi, err := os.Stat(full)
	if err != nil {
		return ""
	}
	if fi.Mode().Perm()&0o200 == 0 {
		return "is a directory you may not write in"
	}
	return ""
}

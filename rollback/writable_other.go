//go:build !linux

package rollback

import "os"

// changeProblem says why nothing can be created or removed in directory
// full; ok is false when it does not exist. Immutable flags are not read
// on this system.
func changeProblem(full string, dir bool) (why string, ok bool) {
	fi, err := os.Lstat(full)
	if err != nil || (dir && !fi.IsDir()) {
		return "", false
	}
	if dir && fi.Mode().Perm()&0o200 == 0 {
		return "is a directory you may not write in", true
	}
	return "", true
}

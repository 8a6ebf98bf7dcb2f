//go:build linux && !amd64 && !arm64

package rollback

// sysFstatat is 0 where the stat structure or the call's number differ
// from amd64's and arm64's: fstatat (stat_linux.go) goes through
// unix.Fstatat.
const sysFstatat = 0

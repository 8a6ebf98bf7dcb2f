//go:build linux

package rollback

import "golang.org/x/sys/unix"

// sysFstatat is the system call fstatat (stat_linux.go) makes.
const sysFstatat = unix.SYS_FSTATAT

//go:build unix && !linux

package runexec

import "syscall"

// groupAttr starts the process in a new process group (see the Linux
// version; other systems have no parent-death signal).
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// groupAlive reports whether the process group pgid has a process left.
func groupAlive(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	return err == nil || err == syscall.EPERM
}

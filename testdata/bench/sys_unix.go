//go:build unix

package main

import (
	"os"
	"syscall"
)

// syncDisks asks the kernel to write dirty pages back (sync(2)).
func syncDisks() { syscall.Sync() }

// maxRSS is the finished process's peak resident set as getrusage reports
// it (kilobytes on Linux).
func maxRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Maxrss)
	}
	return 0
}

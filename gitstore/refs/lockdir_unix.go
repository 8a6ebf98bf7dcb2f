//go:build unix

package refs

import (
	"os"
	"syscall"
)

// lockDir takes an exclusive flock on directory dir (released when the
// returned function is called, or when the process dies).
func lockDir(dir string) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// pidState asks the kernel whether a process with that pid exists.
func pidState(pid int) procState {
	if pid <= 0 {
		return procUnknown
	}
	switch err := syscall.Kill(pid, 0); err {
	case nil, syscall.EPERM:
		return procRuns
	case syscall.ESRCH:
		return procGone
	}
	return procUnknown
}

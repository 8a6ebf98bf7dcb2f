package runexec

import (
	"errors"
	"os"
	"syscall"
)

// Windows has no process groups to signal: a stopped step's process is
// killed, and what it started is left alone.
var (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

func groupAttr() *syscall.SysProcAttr { return nil }

func signalGroup(pid int, _ syscall.Signal) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

func groupAlive(int) bool { return false }

func signalName(*os.ProcessState) string { return "" }

// ErrNoProcess: Terminate found no such process.
var ErrNoProcess = errors.New("no such process")

// Terminate ends the process pid (Windows has no SIGTERM to send).
func Terminate(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return ErrNoProcess
	}
	return p.Kill()
}

//go:build unix

package runexec

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

var (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// signalGroup sends sig to every process of the group pgid.
func signalGroup(pgid int, sig syscall.Signal) { _ = syscall.Kill(-pgid, sig) }

func signalName(ps *os.ProcessState) string {
	if ps == nil {
		return ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return unix.SignalName(ws.Signal())
	}
	return ""
}

// ErrNoProcess: Terminate found no such process.
var ErrNoProcess = errors.New("no such process")

// Terminate sends SIGTERM to the process pid (a running git hegel run,
// which stops its step and records the cancel).
func Terminate(pid int) error {
	err := syscall.Kill(pid, syscall.SIGTERM)
	if err == syscall.ESRCH {
		return ErrNoProcess
	}
	return err
}

//go:build unix

package main

import (
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// isBrokenPipe reports the error a write to a pipe nobody reads returns.
func isBrokenPipe(err error) bool { return errors.Is(err, syscall.EPIPE) }

// catchBrokenPipes makes a write to a closed pipe fail with EPIPE instead
// of killing the process. The signal is caught, not ignored: a caught
// signal is reset for the programs git-hegel runs (checks, adapters,
// git), an ignored one would be inherited.
func catchBrokenPipes() {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
}

// dieOfBrokenPipe ends the process as git does when its output is gone:
// by SIGPIPE, with no message.
func dieOfBrokenPipe() {
	signal.Reset(syscall.SIGPIPE)
	_ = syscall.Kill(os.Getpid(), syscall.SIGPIPE)
	os.Exit(brokenPipeExit)
}

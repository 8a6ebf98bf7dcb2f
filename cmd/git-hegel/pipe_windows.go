package main

import (
	"errors"
	"os"
	"syscall"
)

// isBrokenPipe reports the errors Windows gives for a write to a pipe
// nobody reads (ERROR_BROKEN_PIPE, ERROR_NO_DATA).
func isBrokenPipe(err error) bool {
	return errors.Is(err, syscall.ERROR_BROKEN_PIPE) || errors.Is(err, syscall.Errno(232))
}

// catchBrokenPipes does nothing: there is no SIGPIPE, a write to a closed
// pipe fails.
func catchBrokenPipes() {}

// dieOfBrokenPipe ends the process with the status git's would have.
func dieOfBrokenPipe() { os.Exit(brokenPipeExit) }

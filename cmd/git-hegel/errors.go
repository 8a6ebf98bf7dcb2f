package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/git-hegel/git-hegel/gitstore"
)

// Exit codes, as git and git-lfs use them.
const (
	exitOK       = 0
	exitFailed   = 1
	exitUsage    = 2
	exitNotInGit = 128
)

// usageError is a mistake in how a command was called.
type usageError struct {
	cmd string
	msg string
}

func (e *usageError) Error() string {
	if e.cmd == "" {
		return fmt.Sprintf("error: %s (see 'git hegel help')", e.msg)
	}
	return fmt.Sprintf("error: %s (see 'git hegel %s -h')", e.msg, e.cmd)
}

func usagef(cmd, format string, a ...any) error {
	return &usageError{cmd: cmd, msg: fmt.Sprintf(format, a...)}
}

// silentError ends a command with a code after it already said everything
// it had to say.
type silentError struct{ code int }

func (e *silentError) Error() string { return "" }

// exitCode maps an error to the process exit code.
func exitCode(err error) int {
	var ue *usageError
	var se *silentError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &se):
		return se.code
	case errors.As(err, &ue):
		return exitUsage
	case errors.Is(err, gitstore.ErrNotRepo), errors.Is(err, gitstore.ErrNoWorkTree):
		return exitNotInGit
	}
	return exitFailed
}

// message renders err as the one line printed on stderr, in git's style:
// "fatal: " for a repository git-hegel cannot work in (exit 128), "error: "
// for everything else (usage errors carry it already). A message that
// already names its kind keeps it.
func message(err error) string {
	msg := err.Error()
	if msg == "" {
		return ""
	}
	if strings.HasPrefix(msg, "error: ") || strings.HasPrefix(msg, "fatal: ") || strings.HasPrefix(msg, "usage: ") {
		return msg
	}
	if errors.Is(err, gitstore.ErrNotRepo) || errors.Is(err, gitstore.ErrNoWorkTree) {
		return "fatal: " + msg
	}
	return "error: " + msg
}

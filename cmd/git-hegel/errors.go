package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/gitstore"
	"github.com/git-hegel/git-hegel/gitstore/gitdir"
)

// One error style, git's (usage.c): a command returns an error and run
// prints it as one line on stderr, the prefix saying what kind it is.
//
//	error: <msg>                                exit 1: the operation failed
//	error: <msg> (see 'git hegel X -h')         exit 2: the command was misused
//	usage: git hegel X <synopsis>               exit 2: wrong number of arguments
//	fatal: <msg>                                exit 128: no repository git-hegel can work in
//
// Messages are written without the prefix; it is added here. A name given
// on the command line that can never be valid (engine.ErrBadName: a
// malformed task name, a workflow or node that does not exist) is misuse
// too, and exits 2 with its own message.

// Exit codes, as git and git-lfs use them.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
	exitFatal  = 128
)

// usageError is a mistake in how a command was called.
type usageError struct {
	cmd      string // the command, "" for git hegel itself
	msg      string // what was wrong; "" prints the synopsis instead
	synopsis string
	// hint follows the line after a blank one: the commands nearest to a
	// mistyped one, as git lists them.
	hint string
}

func (e *usageError) Error() string {
	switch {
	case e.msg == "":
		return "usage: " + e.synopsis
	case e.hint != "":
		return fmt.Sprintf("error: %s (see 'git hegel help')\n\n%s", e.msg, e.hint)
	case e.cmd == "":
		return fmt.Sprintf("error: %s (see 'git hegel help')", e.msg)
	}
	return fmt.Sprintf("error: %s (see 'git hegel %s -h')", e.msg, e.cmd)
}

// usagef reports a misuse of cmd ("" for git hegel itself).
func usagef(cmd, format string, a ...any) error {
	return &usageError{cmd: cmd, msg: fmt.Sprintf(format, a...)}
}

// usageLine reports a call with the wrong number of arguments by printing
// how the command is called, as git's usage() does.
func usageLine(synopsis string) error {
	return &usageError{synopsis: strings.TrimSpace(synopsis)}
}

// flagError words pflag's parse errors as git's parse-options words them.
func flagError(cmd string, err error) error {
	var notExist *pflag.NotExistError
	var needsValue *pflag.ValueRequiredError
	var invalid *pflag.InvalidValueError
	var syntax *pflag.InvalidSyntaxError
	switch {
	case errors.As(err, &notExist) && notExist.GetSpecifiedShortnames() != "":
		return usagef(cmd, "unknown switch '%s'", notExist.GetSpecifiedName())
	case errors.As(err, &notExist):
		return usagef(cmd, "unknown option '%s'", notExist.GetSpecifiedName())
	case errors.As(err, &needsValue) && needsValue.GetSpecifiedShortnames() != "":
		return usagef(cmd, "switch '%s' requires a value", needsValue.GetSpecifiedName())
	case errors.As(err, &needsValue):
		return usagef(cmd, "option '%s' requires a value", needsValue.GetSpecifiedName())
	case errors.As(err, &invalid):
		return usagef(cmd, "%s", invalidValue(invalid))
	case errors.As(err, &syntax):
		return usagef(cmd, "unknown option '%s'", strings.TrimLeft(syntax.GetSpecifiedFlag(), "-"))
	}
	return usagef(cmd, "%s", err.Error())
}

// invalidValue words a value a flag refused: pflag's own text for the
// built-in types is strconv's ("strconv.ParseBool: parsing …").
func invalidValue(e *pflag.InvalidValueError) string {
	f := e.GetFlag()
	name := "option '" + f.Name + "'"
	var num *strconv.NumError
	if errors.As(e, &num) {
		switch f.Value.Type() {
		case "bool":
			return fmt.Sprintf("%s expects true or false, not '%s'", name, e.GetValue())
		case "int", "int64", "int32", "uint", "uint64", "uint32", "count":
			if errors.Is(num.Err, strconv.ErrRange) {
				return fmt.Sprintf("%s: %s is out of range", name, e.GetValue())
			}
			return fmt.Sprintf("%s expects a whole number, not '%s'", name, e.GetValue())
		case "float64", "float32":
			return fmt.Sprintf("%s expects a number, not '%s'", name, e.GetValue())
		}
		return fmt.Sprintf("%s: invalid value '%s'", name, e.GetValue())
	}
	if f.Value.Type() == "duration" {
		return fmt.Sprintf("%s expects a duration such as 90s or 5m, not '%s'", name, e.GetValue())
	}
	return fmt.Sprintf("%s %v", name, errors.Unwrap(e))
}

// silentError ends a command with a code after it already said everything
// it had to say.
type silentError struct{ code int }

func (e *silentError) Error() string { return "" }

// isFatal reports a repository git-hegel cannot work in: none at all, no
// work tree, a format or extension it refuses, a broken configuration.
func isFatal(err error) bool {
	var unsupported *gitdir.UnsupportedError
	return errors.Is(err, gitdir.ErrNotRepo) || errors.Is(err, gitstore.ErrNoWorkTree) || errors.As(err, &unsupported)
}

// exitCode maps an error to the process exit code.
func exitCode(err error) int {
	var ue *usageError
	var se *silentError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &se):
		return se.code
	case errors.As(err, &ue), errors.Is(err, engine.ErrBadName):
		return exitUsage
	case isFatal(err):
		return exitFatal
	}
	return exitFailed
}

// message renders err as the line printed on stderr. A message that
// already names its kind keeps it. Many name what a fetch brought (a
// worktree's path, a reason, git's own words): what a terminal would act
// on is removed (text.Clean).
func message(err error) string {
	msg := text.Clean(err.Error())
	if msg == "" {
		return ""
	}
	if strings.HasPrefix(msg, "error: ") || strings.HasPrefix(msg, "fatal: ") || strings.HasPrefix(msg, "usage: ") {
		return msg
	}
	if isFatal(err) {
		return "fatal: " + msg
	}
	return "error: " + msg
}

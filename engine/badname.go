package engine

import (
	"errors"
	"fmt"
)

// ErrBadName matches errors about a name given on the command line that
// cannot be right whatever the tasks' state: a malformed task name or
// stash reference, a workflow nobody defined, a node the workflow does not
// have. Commands treat it as a usage error (exit 2); a well-formed name
// that merely does not exist yet (a task, a stash) is an ordinary failure.
var ErrBadName = errors.New("invalid name")

type badNameError struct{ msg string }

func (e *badNameError) Error() string        { return e.msg }
func (e *badNameError) Is(target error) bool { return target == ErrBadName }

func badNamef(format string, a ...any) error {
	return &badNameError{msg: fmt.Sprintf(format, a...)}
}

// BadName marks err as being about a name given on the command line (see
// ErrBadName), keeping its message.
func BadName(err error) error {
	if err == nil || errors.Is(err, ErrBadName) {
		return err
	}
	return &badNameError{msg: err.Error()}
}

// CheckStashID refuses, as a bad name, a string that cannot be a stash id.
func CheckStashID(id string) error {
	if !ValidStashID(id) {
		return badNamef("Invalid stash id '%s' (see 'git hegel stash list --dropped')", id)
	}
	return nil
}

// CheckTaskName refuses, as a bad name, a task name ValidTaskName rejects.
func CheckTaskName(name string) error {
	if !ValidTaskName(name) {
		return badNamef("Invalid task name '%s': use letters, digits, '-' and '_' (at most 100)", name)
	}
	return nil
}

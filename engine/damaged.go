package engine

import (
	"errors"
	"strings"
)

// ErrDamaged marks stored data that cannot be read: a ref that points at
// no commit, a tree without its files, an unknown version, a state that
// does not parse, missing objects. Stores wrap it in a *DamagedError.
var ErrDamaged = errors.New("damaged")

// DamagedError is a stored task (or other ref) that cannot be read. One
// damaged task never stops work on the others: commands that do not act
// on it go on with a warning (Warning), and `git hegel doctor --fix`
// repairs it or moves it aside.
type DamagedError struct {
	Ref  string // refs/hegel/tasks/<t>
	Task string // the task's name, when the ref holds a task
	// Msg says what is wrong, naming the ref.
	Msg string
	// Cause is the error found reading it, if any (errors.Is sees it:
	// an unknown version stays gitstore.ErrUnknownVersion).
	Cause error
}

// Unwrap returns the cause.
func (e *DamagedError) Unwrap() error { return e.Cause }

func (e *DamagedError) Error() string {
	if e.Task == "" {
		return e.Msg + "; 'git hegel doctor --fix' repairs it"
	}
	return e.Msg + "; 'git hegel doctor --fix' repairs it, 'git hegel reset' leaves it"
}

// Is makes errors.Is(err, ErrDamaged) true.
func (e *DamagedError) Is(target error) bool { return target == ErrDamaged }

// Warning is the one line a command that goes on prints about it.
func (e *DamagedError) Warning() string {
	return e.Msg + "; see 'git hegel doctor'"
}

// Damaged describes data found damaged at ref; msg should name the ref.
func Damaged(ref, task, msg string) *DamagedError {
	if !strings.Contains(msg, ref) {
		msg = ref + ": " + msg
	}
	return &DamagedError{Ref: ref, Task: task, Msg: msg}
}

// warnDamaged prints err's warning once per ref and command.
func (e *Engine) warnDamaged(d *DamagedError) {
	if e.warnedDamaged == nil {
		e.warnedDamaged = map[string]bool{}
	}
	if e.warnedDamaged[d.Ref] {
		return
	}
	e.warnedDamaged[d.Ref] = true
	e.warn(d.Warning())
}

// currentOrDamaged is Current for commands that do not act on the current
// task itself but only move away from it (start, switch, stash pop): a
// current task that cannot be read is reported with one warning, and the
// command goes on as if this worktree had none. It returns the damage too.
func (e *Engine) currentOrDamaged(task string) (*Task, *DamagedError, error) {
	cur, err := e.Current(task)
	var d *DamagedError
	if errors.As(err, &d) {
		e.warnDamaged(d)
		return nil, d, ErrNoWorkflow
	}
	return cur, nil, err
}

// resetDamaged detaches this worktree from a current task that cannot be
// read (task is the one named with --task, or ""); the task's ref is left
// as it is for doctor.
func (e *Engine) resetDamaged(d *DamagedError, task string) (*State, error) {
	if _, err := e.Session.UpdateSession(func(s *Session) error {
		if s.ActiveTask == d.Task || task == "" {
			s.ActiveTask = ""
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return &State{Task: d.Task, Status: StatusDamaged}, nil
}

// StatusDamaged is not stored: it is what Reset returns for a task that
// could not be read.
const StatusDamaged = "damaged"

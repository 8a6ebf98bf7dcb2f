package gitstore

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/git-hegel/git-hegel/engine"
)

// Sentinel errors. Callers match them with errors.Is; the wrapped message
// names the ref or file involved.
var (
	// ErrNotFound reports a ref, object or document that does not exist.
	ErrNotFound = engine.ErrNotFound
	// ErrConflict reports a compare-and-swap whose expected old value no
	// longer matches: someone else updated the ref first. Reload and retry.
	ErrConflict = engine.ErrConflict
	// ErrUnknownVersion reports a stored document whose format version this
	// build does not understand.
	ErrUnknownVersion = errors.New("unknown format version")
)

// newerVersionError is an ErrUnknownVersion whose version blob holds
// another value, as a newer git-hegel writes it (a missing blob is
// damage): doctor --fix leaves such a ref to that version.
type newerVersionError struct{ error }

func (e newerVersionError) Unwrap() error { return e.error }

// otherVersion is the error for a version blob that holds got.
func otherVersion(prefix, got string) error {
	return newerVersionError{fmt.Errorf("%s%w %q (this git-hegel understands %q; upgrade it)", prefix, ErrUnknownVersion, got, FormatVersion)}
}

// oneLine joins a message's lines and runs of spaces, so that an error
// from below (go-git, the system) fits the one line a command prints.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// truncate shortens b to n bytes for a message, marking the cut.
func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// isNotDir reports an error from a path one of whose parents is a file.
func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

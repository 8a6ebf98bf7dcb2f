package refs

import "errors"

// Errors of the ref layer, matched with errors.Is; the wrapped message
// names the ref or lock involved. A ref that does not exist and a
// compare-and-swap that lost are the storage contract's own sentinels,
// engine.ErrNotFound and engine.ErrConflict: the stores above return them
// as they come, and the engine matches them.
var (
	// ErrLocked reports a ref whose lock file another process (git itself,
	// or another git-hegel) held for longer than the lock timeout.
	ErrLocked = errors.New("ref is locked")
	// ErrBadRefName reports a ref name git would refuse.
	ErrBadRefName = errors.New("invalid ref name")
)

//go:build !linux

package rollback

// systemName is "" where the untracked cache is not carried across a
// restore (untracked_carry.go): git's ident there is not checked.
func systemName() string { return "" }

//go:build !linux

package objects

import "errors"

// writeout has no cheaper form here than a full fsync; the caller falls
// back to one.
func writeout(OSFile) error { return errors.ErrUnsupported }

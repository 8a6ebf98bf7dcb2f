//go:build !linux

package gitstore

import "errors"

// writeout has no cheaper form here than a full fsync; the caller falls
// back to one.
func writeout(osFile) error { return errors.ErrUnsupported }

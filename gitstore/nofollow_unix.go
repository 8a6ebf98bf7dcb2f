//go:build unix

package gitstore

import (
	"errors"
	"syscall"
)

// oNoFollow makes open fail on a symbolic link in the last component.
const oNoFollow = syscall.O_NOFOLLOW

// isLinkLoop reports the error open with O_NOFOLLOW returns for a link:
// ELOOP (Linux, macOS), EMLINK (FreeBSD, NetBSD).
func isLinkLoop(err error) bool {
	return errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK)
}

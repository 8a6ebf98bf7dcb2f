//go:build !unix

package gitstore

// oNoFollow is 0 where open has no such flag (Windows): the lstat check of
// every component (session_path.go) is what refuses a link there.
const oNoFollow = 0

func isLinkLoop(error) bool { return false }

//go:build !unix

package refs

// ownerFileMode: writable where a read-only file cannot be removed.
const ownerFileMode = 0o666

//go:build unix

package refs

// ownerFileMode: a lock owner file is read-only, so that nothing writes
// through a lock to every lock of the process (lockowner_file.go).
const ownerFileMode = 0o444

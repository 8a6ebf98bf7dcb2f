// Package refs reads and updates git refs the way git's files backend
// does, so that git and git-hegel can work on one repository at the same
// time: loose refs and packed-refs, each update under <ref>.lock with
// compare-and-swap (Files, on a real git dir or a go-billy memfs; Memory
// over go-git's in-memory storage for unit tests), the reflogs git keeps
// (every update below refs/hegel/ is logged), HEAD read and set with the
// same lock protocol, and the lock files themselves: each holds a marker
// naming its owner (pid, host, boot, pid namespace, start time), so a lock
// a dead git-hegel left is told from one held now and removed, and one
// git or another program holds is never touched.
//
// It imports go-git for its plumbing types and go-billy for the
// filesystems it works on; objects for the shared permissions, fsync
// settings and object names it writes with; gitdir for
// core.logAllRefUpdates; and engine for the storage contract's sentinels
// (a missing ref wraps engine.ErrNotFound, a lost compare-and-swap
// engine.ErrConflict), which the engine matches and cannot import from
// here. It knows nothing of what the refs below refs/hegel/ hold.
package refs

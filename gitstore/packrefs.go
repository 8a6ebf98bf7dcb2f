package gitstore

import (
	"context"
	"os"
)

// packRefsAfter is how many refs a fetch, push or sync writes before it
// packs the repository's refs. Every ref it writes is a loose file, and
// loose refs cost every later listing a file open each: git's fetch reads
// all of them to negotiate, and so does the next sync. With 10,000 tasks
// a first sync writes 20,000 (each task and its tracking ref). A sync
// that brings a few changes stays below the threshold and leaves its
// refs loose, as git fetch does, until git gc packs them.
var packRefsAfter = 1000 // a variable: tests lower it

// packRefs packs the repository's refs with git pack-refs --all, as git
// gc and git clone leave them. git does it under its own locks (it writes
// packed-refs under packed-refs.lock and removes a loose ref only under
// that ref's lock, when it still holds the value packed), which the refs
// package honours too, so a ref another process writes meanwhile is
// never lost; git 2.39's pack-refs cannot be limited to some refs, and
// packing all of them is what git gc does. A failure (another process
// holding packed-refs.lock, say) leaves the refs loose, which is only
// slower: it is not reported.
func (r *Repo) packRefs() {
	if r.CommonDir == "" {
		return
	}
	if _, ok := r.fileRefs(); !ok {
		return
	}
	// No deadline: a git killed while it holds packed-refs.lock would
	// leave the lock behind, and every later delete of a packed ref would
	// fail until someone removed it.
	_, _, _ = runSyncGit(context.Background(), r.CommonDir, cleanGitEnv(os.Environ()), nil, "--git-dir", r.CommonDir, "pack-refs", "--all")
}

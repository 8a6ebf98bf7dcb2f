// Package gitstore keeps git-hegel's state in git. It opens a repository
// (Repo, wiring the layers below) and implements the storage interfaces
// the engine defines: the versioned documents under refs/hegel/* (tasks,
// their archive and deleted records, the stash list, the history), the
// per-worktree session file, and the files git-hegel keeps in the git
// directory (the agent-event journal, run records, adoption records,
// caches). It also carries them between clones (sync: fetch, merge,
// push) and finds and repairs damage (gc, doctor).
//
// Below it, and imported one way (docs/architecture.md): gitstore/refs
// (refs, reflogs, HEAD and lock files with git's protocol),
// gitstore/objects (the object database, trees, commits, fsync and
// shared permissions) and gitstore/gitdir (discovery and configuration).
// gitstore/storetest is the engine stores' contract as test suites.
//
// gitstore imports go-git and go-billy, and runs the git binary where
// git's own answer is wanted (git status's count, a date git parses, fsck
// of fetched objects, a credential helper). It is not the only package
// that talks to git: rollback reads and writes the working tree and the
// index with go-git and runs git too, and cmd/git-hegel imports go-git
// where it wires sync.
package gitstore

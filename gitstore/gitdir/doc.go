// Package gitdir finds a repository and reads its configuration the way
// git does: the git dir, the common dir, the work tree, the object
// directory, its alternates and the index (honouring GIT_DIR,
// GIT_WORK_TREE, GIT_COMMON_DIR, GIT_OBJECT_DIRECTORY, GIT_INDEX_FILE and
// GIT_CEILING_DIRECTORIES, which go-git ignores); git's layered
// configuration (system, global, repository, worktree, and what
// `git -c` passes in the environment); and the repository formats
// git-hegel refuses to touch.
//
// It is the floor below the object and ref layers, which read their
// settings (core.fsync, core.sharedRepository, core.logAllRefUpdates…)
// from its Config. It imports go-git only for its config file parser and
// go-billy for the filesystems the files are read through; it writes
// nothing.
package gitdir

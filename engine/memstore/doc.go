// Package memstore keeps the engine's state in memory: a task store with
// its archive and the entries saves put beside a task's state (Tasks), a
// session store (Sessions) and a worktree of files (Files). The engine's
// tests run on it; gitstore/storetest's suites check that it keeps the
// same contract as the git-backed stores, so what passes on it means the
// same against git.
//
// Beside the engine's interfaces it lets a test set up and damage what
// it keeps (a task placed as it is, a lost or corrupt session, a locked
// one, a failing write) and see what was written (the messages of every
// save and archive). It imports engine and the standard library only.
package memstore

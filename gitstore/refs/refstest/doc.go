// Package refstest is the contract of refs.Backend as a test suite any
// implementation can run (git's files backend on disk and on memfs,
// go-git's in-memory storage), so that what unit tests see on memory is
// what a repository on disk does. It imports refs, engine (for the
// sentinel errors the contract names) and testing.
package refstest

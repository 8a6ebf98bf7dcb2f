// Package storetest holds the contract of the engine's storage
// interfaces as test suites any implementation can run: the git-backed
// stores of gitstore (on go-billy's in-memory filesystem and storage, and
// on real repositories in a temporary directory) and the in-memory stores
// the engine's own tests use (engine/memstore). One contract, run on
// every implementation, keeps the fakes the engine is tested against
// honest: what passes there means the same against git.
//
// Each Run function takes a constructor that is handed the subtest's
// *testing.T, so an implementation can make its repository in t.TempDir
// and fail the test if it cannot. It imports engine and testing only.
package storetest

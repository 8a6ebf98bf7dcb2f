package engine

import "time"

// The engine's own tests run on the in-memory stores in fakes_test.go.
// These names let contract_test.go (package engine_test) hand those same
// fakes to gitstore/storetest's suites, so a test that passes on a fake
// means what it would against git.

// NewFakeTaskStore returns an empty in-memory task store with its archive.
func NewFakeTaskStore() *fakeTaskStore { return newFakeTaskStore() }

// NewFakeSessionStore returns an in-memory session store with no session
// and a function that damages what it keeps.
func NewFakeSessionStore(now func() time.Time) (SessionStore, func()) {
	s := &fakeSessionStore{now: now}
	return s, func() {
		s.mu.Lock()
		s.corrupt = true
		s.mu.Unlock()
	}
}

// NewFakeFiles returns an empty in-memory worktree and a function that
// writes a file into it.
func NewFakeFiles() (Files, func(path string, data []byte)) {
	f := fakeFiles{}
	return f, func(p string, b []byte) { f[p] = string(b) }
}

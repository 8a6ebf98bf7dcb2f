package engine

import (
	"fmt"
	"sort"
	"sync"
)

// fakeTaskStore is an in-memory TaskStore with the same compare-and-swap
// contract as the git-backed one.
type fakeTaskStore struct {
	mu    sync.Mutex
	tasks map[string]*Task
	rev   int
	log   []string // commit messages, in order
	// beforeSave, if set, runs before each save (to inject races).
	beforeSave func()
}

func newFakeTaskStore() *fakeTaskStore { return &fakeTaskStore{tasks: map[string]*Task{}} }

func (f *fakeTaskStore) LoadTask(name string) (*Task, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.tasks[name]
	if !ok {
		return nil, fmt.Errorf("task %s: %w", name, ErrNotFound)
	}
	return &Task{State: t.State.Clone(), Definition: t.Definition, Rev: t.Rev}, nil
}

func (f *fakeTaskStore) SaveTask(t *Task, msg string) (string, error) {
	if f.beforeSave != nil {
		f.beforeSave()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	cur, ok := f.tasks[t.State.Task]
	if (ok && cur.Rev != t.Rev) || (!ok && t.Rev != "") {
		return "", fmt.Errorf("task %s: %w", t.State.Task, ErrConflict)
	}
	f.rev++
	rev := fmt.Sprint(f.rev)
	f.tasks[t.State.Task] = &Task{State: t.State.Clone(), Definition: t.Definition, Rev: rev}
	f.log = append(f.log, msg)
	return rev, nil
}

func (f *fakeTaskStore) ListTasks() ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var names []string
	for n := range f.tasks {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// fakeSessionStore keeps the session in memory; corrupt simulates a file
// that no longer parses.
type fakeSessionStore struct {
	mu      sync.Mutex
	s       *Session
	corrupt bool
}

func (f *fakeSessionStore) LoadSession() (*Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.corrupt {
		return nil, ErrCorruptSession
	}
	if f.s == nil {
		return nil, ErrNotFound
	}
	c := *f.s
	return &c, nil
}

func (f *fakeSessionStore) UpdateSession(fn func(*Session) error) (*Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := Session{SessionID: "fake"}
	if f.s != nil && !f.corrupt {
		s = *f.s
	}
	if err := fn(&s); err != nil {
		return nil, err
	}
	f.s, f.corrupt = &s, false
	c := s
	return &c, nil
}

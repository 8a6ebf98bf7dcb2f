package memstore

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/git-hegel/git-hegel/engine"
)

// Sessions is an engine.SessionStore in memory. A missing or corrupt
// session makes the next update start a new one, with an id of its own
// and Now as its start, as the session file does. The exported fields
// set up or damage what it keeps; set them between calls. Safe for
// concurrent use.
type Sessions struct {
	mu sync.Mutex
	n  int

	// Session is the session kept (nil: none).
	Session *engine.Session
	// Corrupt makes the kept session unreadable, as a torn file is.
	Corrupt bool
	// Locked makes every update fail as if another git-hegel held the
	// lock.
	Locked bool
	// FailWrite makes the next update fail after its function ran, as a
	// full disk would.
	FailWrite bool
	// Now is the clock of new sessions (nil: time.Now).
	Now func() time.Time
}

var _ engine.SessionStore = (*Sessions)(nil)

// LoadSession implements engine.SessionStore.
func (s *Sessions) LoadSession() (*engine.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Corrupt {
		return nil, engine.ErrCorruptSession
	}
	if s.Session == nil {
		return nil, fmt.Errorf("session: %w", engine.ErrNotFound)
	}
	c := *s.Session
	return &c, nil
}

// UpdateSession implements engine.SessionStore.
func (s *Sessions) UpdateSession(fn func(*engine.Session) error) (*engine.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Locked {
		return nil, errors.New(".hegel/state.json is locked by another git-hegel")
	}
	var sess engine.Session
	if s.Session != nil && !s.Corrupt {
		sess = *s.Session
	} else {
		s.n++
		now := time.Now
		if s.Now != nil {
			now = s.Now
		}
		sess = engine.Session{SessionID: fmt.Sprintf("session-%d", s.n), StartedAt: now()}
	}
	if err := fn(&sess); err != nil {
		return nil, err
	}
	if s.FailWrite {
		s.FailWrite = false
		return nil, errors.New("cannot write .hegel/state.json: no space left on device")
	}
	s.Session, s.Corrupt = &sess, false
	c := sess
	return &c, nil
}

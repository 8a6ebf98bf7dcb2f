package storetest

import (
	"errors"
	"testing"

	"github.com/git-hegel/git-hegel/engine"
)

// Sessions is a session store under test and a way to damage what it
// keeps, as a torn or hand-edited file would be.
type Sessions struct {
	engine.SessionStore
	// Corrupt makes the stored session unreadable.
	Corrupt func(t *testing.T)
}

// RunSessionStore checks the engine.SessionStore contract: no session is
// ErrNotFound; the first update starts one (an id, a start time) and
// what the update set reads back; an update that fails writes nothing
// and returns its own error; a damaged session is ErrCorruptSession, and
// the next update starts a new one (a new id); what a caller holds is its
// own copy.
func RunSessionStore(t *testing.T, newStore func(t *testing.T) Sessions) {
	t.Run("missing", func(t *testing.T) {
		s := newStore(t)
		if _, err := s.LoadSession(); !errors.Is(err, engine.ErrNotFound) {
			t.Fatalf("load with no session: %v, want ErrNotFound", err)
		}
	})
	t.Run("update", func(t *testing.T) {
		s := newStore(t)
		sess, err := s.UpdateSession(func(s *engine.Session) error {
			if s.SessionID == "" || s.StartedAt.IsZero() {
				t.Errorf("a new session has id %q, started at %v", s.SessionID, s.StartedAt)
			}
			s.ActiveTask = "t1"
			s.Totals.WorkflowsStarted++
			return nil
		})
		if err != nil || sess.ActiveTask != "t1" {
			t.Fatalf("first update: %+v %v", sess, err)
		}
		got, err := s.LoadSession()
		if err != nil || got.SessionID != sess.SessionID || got.ActiveTask != "t1" ||
			!got.StartedAt.Equal(sess.StartedAt) || got.Totals.WorkflowsStarted != 1 {
			t.Fatalf("load after the update: %+v %v; updated %+v", got, err, sess)
		}
		again, err := s.UpdateSession(func(s *engine.Session) error {
			if s.ActiveTask != "t1" {
				t.Errorf("the second update sees active task %q", s.ActiveTask)
			}
			s.Totals.Transitions = 3
			return nil
		})
		if err != nil || again.SessionID != sess.SessionID || again.Totals.WorkflowsStarted != 1 || again.Totals.Transitions != 3 {
			t.Errorf("second update: %+v %v", again, err)
		}
	})
	t.Run("failing update", func(t *testing.T) {
		s := newStore(t)
		if _, err := s.UpdateSession(func(s *engine.Session) error { s.ActiveTask = "t1"; return nil }); err != nil {
			t.Fatal(err)
		}
		boom := errors.New("boom")
		if _, err := s.UpdateSession(func(s *engine.Session) error { s.ActiveTask = "x"; return boom }); !errors.Is(err, boom) {
			t.Errorf("failing update: %v, want its own error", err)
		}
		if got, err := s.LoadSession(); err != nil || got.ActiveTask != "t1" {
			t.Errorf("a failing update changed the session: %+v %v", got, err)
		}
	})
	t.Run("corrupt", func(t *testing.T) {
		s := newStore(t)
		first, err := s.UpdateSession(func(s *engine.Session) error { s.ActiveTask = "t1"; return nil })
		if err != nil {
			t.Fatal(err)
		}
		s.Corrupt(t)
		if _, err := s.LoadSession(); !errors.Is(err, engine.ErrCorruptSession) {
			t.Fatalf("load a damaged session: %v, want ErrCorruptSession", err)
		}
		fresh, err := s.UpdateSession(func(s *engine.Session) error {
			if s.ActiveTask != "" {
				t.Errorf("the update over a damaged session sees active task %q", s.ActiveTask)
			}
			return nil
		})
		if err != nil || fresh.SessionID == "" || fresh.SessionID == first.SessionID {
			t.Errorf("update over a damaged session: %+v %v (the old id was %q)", fresh, err, first.SessionID)
		}
		if got, err := s.LoadSession(); err != nil || got.SessionID != fresh.SessionID {
			t.Errorf("load after the fresh start: %+v %v", got, err)
		}
	})
	t.Run("copies", func(t *testing.T) {
		s := newStore(t)
		sess, err := s.UpdateSession(func(s *engine.Session) error { s.ActiveTask = "t1"; return nil })
		if err != nil {
			t.Fatal(err)
		}
		sess.ActiveTask = "changed after the update"
		got, _ := s.LoadSession()
		if got.ActiveTask != "t1" {
			t.Errorf("changing an updated session changed the store: %q", got.ActiveTask)
		}
		got.ActiveTask = "changed after loading"
		if again, _ := s.LoadSession(); again.ActiveTask != "t1" {
			t.Errorf("changing a loaded session changed the store: %q", again.ActiveTask)
		}
	})
}

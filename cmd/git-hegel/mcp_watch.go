package main

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/git-hegel/git-hegel/gitstore"
)

// mcpPollInterval is how often a server with subscribers looks at the
// task. The task moves from any process (the person's `git hegel approve`
// in a terminal, another agent, a fetch), and git has no change
// notification that works on every platform and file system, so the
// server polls; a poll is two small file reads (the session file and the
// task's ref, as the agent hooks read them), and it runs only while a
// client is subscribed. Half a second is quicker than a person notices
// and costs nothing measurable.
const mcpPollInterval = 500 * time.Millisecond

// taskWatch tells subscribed clients when the worktree's task moves: its
// ref points at a new commit, or another task becomes the active one.
type taskWatch struct {
	s *mcpServer

	mu     sync.Mutex
	subs   map[string]int // URI → subscriptions
	last   string         // the task and commit last seen
	cancel context.CancelFunc
	done   chan struct{}
}

func newTaskWatch(s *mcpServer) *taskWatch {
	return &taskWatch{s: s, subs: map[string]int{}}
}

func (w *taskWatch) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	if _, err := w.s.resourceKind(req.Params.URI); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.subs[req.Params.URI]++
	if w.cancel == nil {
		w.last = w.fingerprint()
		ctx, cancel := context.WithCancel(context.Background())
		w.cancel, w.done = cancel, make(chan struct{})
		go w.poll(ctx, w.done)
	}
	return nil
}

func (w *taskWatch) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.subs[req.Params.URI] > 1 {
		w.subs[req.Params.URI]--
	} else {
		delete(w.subs, req.Params.URI)
	}
	if len(w.subs) == 0 {
		w.stopLocked()
	}
	return nil
}

func (w *taskWatch) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopLocked()
}

func (w *taskWatch) stopLocked() {
	if w.cancel != nil {
		w.cancel()
		done := w.done
		w.cancel, w.done = nil, nil
		w.mu.Unlock()
		<-done
		w.mu.Lock()
	}
}

func (w *taskWatch) poll(ctx context.Context, done chan struct{}) {
	defer close(done)
	tick := time.NewTicker(mcpPollInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := w.fingerprint()
		w.mu.Lock()
		changed := now != w.last
		w.last = now
		var uris []string
		if changed {
			for u := range w.subs {
				uris = append(uris, u)
			}
		}
		w.mu.Unlock()
		for _, u := range uris {
			_ = w.s.server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: u})
		}
	}
}

// fingerprint is the worktree's active task and its ref's commit; an
// unreadable repository counts as a state of its own.
func (w *taskWatch) fingerprint() string {
	t, err := gitstore.LocateHook(w.s.env.Dir, w.s.env.getenv)
	if err != nil {
		return "error: " + err.Error()
	}
	return t.ActiveTask + "@" + t.Commit
}

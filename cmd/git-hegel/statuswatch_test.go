package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe to read while a command writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestStatusWatch: --watch shows a change made by another command on the
// next refresh; on a terminal every frame redraws the screen, elsewhere
// only a changed frame is printed.
func TestStatusWatch(t *testing.T) {
	for _, tty := range []bool{true, false} {
		dir, env := loopRepo(t)
		vars := map[string]string{}
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			vars[k] = v
		}
		var out syncBuffer
		e := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Dir: dir, Getenv: func(k string) string { return vars[k] },
			Now: time.Now, Terminal: func(io.Writer) bool { return tty }}
		fs := lookup("status").flagSet(e)
		fs.Parse([]string{"--watch"})
		c := &cmdCtx{Env: e, name: "status", flags: fs}
		ctx, cancel := context.WithCancel(context.Background())
		ticks := make(chan chan time.Time)
		done := make(chan error)
		go func() {
			done <- c.watchStatus(ctx, time.Second, func(time.Duration) <-chan time.Time {
				ch := make(chan time.Time, 1)
				ticks <- ch
				return ch
			})
		}()
		tick := <-ticks // the first frame is out
		if s := out.String(); !strings.Contains(s, "Current node: a") || !strings.Contains(s, "Every 1s: git hegel status") {
			t.Fatalf("first frame:\n%s", s)
		}
		mustSh(t, env, dir, "git", "hegel", "next", "a_complete")
		tick <- time.Now()
		tick = <-ticks
		tick <- time.Now() // a third frame, the same as the second
		<-ticks
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		s := out.String()
		if !strings.Contains(s, "completed") && !strings.Contains(s, "No active workflow") {
			t.Errorf("the change did not show:\n%s", s)
		}
		frames := strings.Count(s, "Every 1s")
		clears := strings.Count(s, "\x1b[2J")
		if tty && (frames != 3 || clears != 3) {
			t.Errorf("on a terminal: %d frames, %d clears, want 3 and 3:\n%q", frames, clears, s)
		}
		if !tty && (frames != 2 || clears != 0) {
			t.Errorf("not on a terminal: %d frames, %d clears, want 2 (the unchanged one left out) and 0:\n%q", frames, clears, s)
		}
	}
}

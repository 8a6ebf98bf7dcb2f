package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// `git hegel status --watch`: the status again and again, like watch(1),
// for people who stay in the terminal while tasks move elsewhere.

// minWatchInterval keeps --watch from spinning on the repository.
const minWatchInterval = 100 * time.Millisecond

func runStatusWatch(c *cmdCtx) error {
	if c.boolFlag("json") {
		return usagef(c.name, "--watch shows the status for people; --json cannot go with it")
	}
	every, _ := c.flags.GetDuration("interval")
	if every < minWatchInterval {
		return usagef(c.name, "--interval must be at least %s", minWatchInterval)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return c.watchStatus(ctx, every, time.After)
}

// watchStatus prints the status every interval until ctx ends. On a
// terminal each frame replaces the last (cursor home, clear), under a
// header line; elsewhere (a pipe, a log) a frame is printed only when it
// differs from the one before. An error in the first frame ends the
// watch (not a repository, an unknown --task); later ones are shown in
// the frame, and the watch goes on (a ref being rewritten by a sync).
func (c *cmdCtx) watchStatus(ctx context.Context, every time.Duration, after func(time.Duration) <-chan time.Time) error {
	tty := c.Terminal(c.Stdout)
	var last []byte
	for frame := 0; ; frame++ {
		var buf bytes.Buffer
		sub := *c
		env := *c.Env
		env.Stdout, env.Stderr = &buf, &buf
		env.Terminal = func(io.Writer) bool { return tty }
		sub.Env = &env
		if err := statusOnce(&sub); err != nil {
			if frame == 0 {
				// What was printed before the error (warnings) still counts.
				c.Stderr.Write(buf.Bytes())
				return err
			}
			fmt.Fprintln(&buf, message(err))
		}
		header := fmt.Sprintf("Every %s: git hegel status    %s\n\n", every, c.Now().Local().Format("2006-01-02 15:04:05"))
		switch {
		case tty:
			// Home, then clear to the end: no flicker of a blank screen.
			fmt.Fprint(c.Stdout, clearScreen+header)
			c.Stdout.Write(buf.Bytes())
		case !bytes.Equal(buf.Bytes(), last):
			if frame > 0 {
				fmt.Fprintln(c.Stdout)
			}
			fmt.Fprint(c.Stdout, header)
			c.Stdout.Write(buf.Bytes())
		}
		last = buf.Bytes()
		select {
		case <-ctx.Done():
			return nil
		case <-after(every):
		}
	}
}

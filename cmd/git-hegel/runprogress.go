package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/git-hegel/git-hegel/engine"
)

// The run's progress display. On a terminal it is one line on stderr,
// "git hegel run: step 2 of 3: refactor (1m12s)", kept below whatever the
// steps print: before output is written the line is cleared, and once the
// output ends a line it is drawn again; a ticker keeps the time current.
// Elsewhere (a pipe, a file, a CI log) each step gets one plain line on
// stderr instead, and nothing is redrawn.

type runProgress struct {
	mu      sync.Mutex
	c       *cmdCtx
	tty     bool      // stderr is a terminal
	outTTY  bool      // stdout is that terminal too, so output moves the line
	err     io.Writer // the real stderr
	cur     *engine.Progress
	drawn   bool // the line is on the screen, the cursor at its end
	midLine bool // the last output did not end a line
	width   int
	stop    chan struct{}
	closed  bool
	stdout  io.Writer // what the run writes to
	stderr  io.Writer
}

func (c *cmdCtx) newRunProgress() *runProgress {
	p := &runProgress{c: c, err: c.Stderr, width: 80}
	if c.Terminal != nil && c.Terminal(c.Stderr) {
		p.tty = true
		p.outTTY = c.Terminal(c.Stdout)
		if f, ok := outputFile(c.Stderr); ok {
			if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 20 {
				p.width = w
			}
		}
	}
	p.stdout = &runProgressWriter{p: p, w: c.Stdout, moves: p.outTTY}
	p.stderr = &runProgressWriter{p: p, w: c.Stderr, moves: p.tty}
	return p
}

// runProgressWriter writes through the display: output that lands on the
// terminal clears the progress line first.
type runProgressWriter struct {
	p     *runProgress
	w     io.Writer
	moves bool
}

func (pw *runProgressWriter) Write(b []byte) (int, error) {
	p := pw.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if !pw.moves {
		return pw.w.Write(b)
	}
	p.clear()
	n, err := pw.w.Write(b)
	if len(b) > 0 {
		p.midLine = b[len(b)-1] != '\n'
	}
	p.draw()
	return n, err
}

// update is the runner's Progress.
func (p *runProgress) update(ev *engine.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev.Phase {
	case "end":
		p.clear()
		p.cur = nil
		return
	case "confirm":
		// The question takes the line.
		p.clear()
		p.cur = nil
		return
	}
	e := *ev
	p.cur = &e
	if !p.tty {
		if ev.Phase == "step" {
			fmt.Fprintf(p.err, "step %d of %d: %s\n", ev.Step, ev.Total, label(ev))
		}
		return
	}
	p.clear()
	p.draw()
	if p.stop == nil {
		p.stop = make(chan struct{})
		go p.tick(p.stop)
	}
}

func label(ev *engine.Progress) string {
	if ev.Label != "" && ev.Label != ev.Node {
		return ev.Node + " (" + ev.Label + ")"
	}
	return ev.Node
}

func (p *runProgress) tick(stop chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			p.mu.Lock()
			p.clear()
			p.draw()
			p.mu.Unlock()
		}
	}
}

// text is the progress line, cut to the terminal's width so it never
// wraps (a wrapped line cannot be cleared with one carriage return).
func (p *runProgress) text() string {
	ev := p.cur
	what := label(ev)
	if ev.Phase == "check" {
		what += ", checking"
	}
	since := ev.StepStart
	if since.IsZero() {
		since = ev.RunStart
	}
	s := fmt.Sprintf("git hegel run: step %d of %d: %s (%s)", ev.Step, ev.Total, what, compactDuration(p.c.Now().Sub(since)))
	if r := []rune(s); len(r) > p.width-1 {
		s = string(r[:p.width-2]) + "…"
	}
	return s
}

// draw puts the line on the screen, unless output left the cursor in the
// middle of a line.
func (p *runProgress) draw() {
	if !p.tty || p.closed || p.cur == nil || p.drawn || p.midLine {
		return
	}
	fmt.Fprint(p.err, p.c.paint(p.err, "hint", p.text()))
	p.drawn = true
}

func (p *runProgress) clear() {
	if p.drawn {
		fmt.Fprint(p.err, "\r\x1b[K")
		p.drawn = false
	}
}

// close takes the line off the screen for good.
func (p *runProgress) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.clear()
	if p.midLine && p.tty {
		fmt.Fprintln(p.err)
		p.midLine = false
	}
	p.closed = true
	if p.stop != nil {
		close(p.stop)
	}
}

// compactDuration prints 45s, 1m12s, 2h3m: seconds under an hour, then
// minutes.
func compactDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	d = d.Round(time.Second)
	if d >= time.Hour {
		d = d.Round(time.Minute)
		return fmt.Sprintf("%dh%dm", int(d.Hours()), int(d.Minutes())%60)
	}
	if d >= time.Minute {
		return fmt.Sprintf("%dm%ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%ds", int(d.Seconds()))
}

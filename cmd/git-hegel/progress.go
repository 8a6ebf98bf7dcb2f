package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/gitstore"
)

// Progress on long work (checkpoint, rollback, fetch, push, sync), shown
// as git shows it: on stderr, only when stderr is a terminal (or with
// --progress), never with --quiet (unless --progress is given too), and
// only once the command has run for a while, so quick commands print
// nothing. A phase's line is redrawn in place ("Updating files:  45%
// (450/1000)\r") and ends with ", done." once the phase is over.

// progressDelay is how long a command runs before it shows progress.
// git waits two seconds; the issue asks for about half a second.
// GIT_PROGRESS_DELAY (seconds, as git reads it) changes it.
const progressDelay = 500 * time.Millisecond

// progressTick is how often a shown line is redrawn.
const progressTick = 100 * time.Millisecond

// progressFlags adds -q/--quiet and --[no-]progress, as git has them.
func progressFlags(fs *pflag.FlagSet) {
	fs.BoolP("quiet", "q", false, "do not report progress")
	state := new(int)
	fs.Var(progressFlag{state, 1}, "progress", "report progress on stderr even when it is not a terminal (and with --quiet)")
	fs.Lookup("progress").NoOptDefVal = "true"
	fs.Var(progressFlag{state, -1}, "no-progress", "do not report progress")
	fs.Lookup("no-progress").NoOptDefVal = "true"
	altFlags(fs, "quiet", "progress", "no-progress")
}

// progressFlag is --progress or --no-progress; both write one state, so
// the last given wins, as in git.
type progressFlag struct {
	state *int
	value int
}

func (f progressFlag) String() string   { return "false" }
func (f progressFlag) Type() string     { return "bool" }
func (f progressFlag) IsBoolFlag() bool { return true }
func (f progressFlag) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	if b {
		*f.state = f.value
	} else {
		*f.state = -f.value
	}
	return nil
}

// progress returns the Progress for this command: nil when none is to be
// shown. Commands without the flags show it on a terminal.
func (c *cmdCtx) progress() gitstore.Progress {
	forced := 0
	if f := c.flags.Lookup("progress"); f != nil {
		if v, ok := f.Value.(progressFlag); ok {
			forced = *v.state
		}
	}
	switch {
	case forced < 0:
		return nil
	case forced == 0 && c.boolFlag("quiet"):
		return nil
	case forced == 0 && (c.Terminal == nil || !c.Terminal(c.Stderr)):
		return nil
	}
	if c.meter == nil {
		c.meter = newProgressMeter(c.Stderr, c.progressDelay())
	}
	return c.meter
}

// progressDelay reads GIT_PROGRESS_DELAY (seconds) as git does; an
// invalid value keeps the default.
func (c *cmdCtx) progressDelay() time.Duration {
	if v := c.getenv("GIT_PROGRESS_DELAY"); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
			return time.Duration(s * float64(time.Second))
		}
	}
	return progressDelay
}

// gitProgress is where git fetch's and git push's own progress lines go
// (they run for fetch, push and sync): stderr, when progress is shown.
func (c *cmdCtx) gitProgress() io.Writer {
	if c.progress() == nil {
		return nil
	}
	return c.Stderr
}

// progressMeter draws the phases it is told about on w. It starts
// drawing once delay has passed since it was made (the command's start);
// a phase that ends before then prints nothing.
type progressMeter struct {
	w     io.Writer
	since time.Time
	delay time.Duration

	mu      sync.Mutex
	title   string
	total   int
	drawn   bool   // this phase has a line on screen
	last    string // the line last drawn
	stop    chan struct{}
	stopped chan struct{}

	n     atomic.Int64
	bytes atomic.Int64
}

func newProgressMeter(w io.Writer, delay time.Duration) *progressMeter {
	return &progressMeter{w: w, since: time.Now(), delay: delay}
}

func (m *progressMeter) Start(title string, total int) {
	m.Done()
	m.mu.Lock()
	m.title, m.total, m.drawn, m.last = title, total, false, ""
	m.n.Store(0)
	m.bytes.Store(0)
	m.stop, m.stopped = make(chan struct{}), make(chan struct{})
	m.drawLocked(false)
	stop, stopped := m.stop, m.stopped
	m.mu.Unlock()
	go func() {
		defer close(stopped)
		t := time.NewTicker(progressTick)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				m.mu.Lock()
				m.drawLocked(false)
				m.mu.Unlock()
			}
		}
	}()
}

func (m *progressMeter) Add(n int)      { m.n.Add(int64(n)) }
func (m *progressMeter) AddBytes(n int) { m.bytes.Add(int64(n)) }

// Done ends the phase: its line is drawn a last time with ", done." if
// it was drawn before or the delay is over by now.
func (m *progressMeter) Done() {
	m.mu.Lock()
	stop, stopped := m.stop, m.stopped
	m.stop, m.stopped = nil, nil
	m.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	<-stopped
	m.mu.Lock()
	m.drawLocked(true)
	m.title = ""
	m.mu.Unlock()
}

// drawLocked redraws the phase's line if it is time to show it and it
// changed; done ends it.
func (m *progressMeter) drawLocked(done bool) {
	if m.title == "" || (!m.drawn && time.Since(m.since) < m.delay) {
		return
	}
	n := m.n.Load()
	line := m.title + ": "
	if m.total > 0 {
		pct := n * 100 / int64(m.total)
		line += fmt.Sprintf("%3d%% (%d/%d)", pct, n, m.total)
	} else {
		line += strconv.FormatInt(n, 10)
	}
	if b := m.bytes.Load(); b > 0 {
		line += ", " + humanBytes(b)
	}
	if !done && line == m.last {
		return
	}
	// Blank what is left of a longer line drawn before, as git does.
	pad := ""
	if k := len(m.last) - len(line); k > 0 && !done {
		pad = strings.Repeat(" ", k)
	}
	end := "\r"
	if done {
		line += ", done."
		if k := len(m.last) - len(line); k > 0 {
			pad = strings.Repeat(" ", k)
		}
		end = "\n"
	}
	fmt.Fprint(m.w, line+pad+end)
	m.drawn, m.last = true, line
}

// humanBytes is a byte count as git's progress shows it.
func humanBytes(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.2f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", b)
}

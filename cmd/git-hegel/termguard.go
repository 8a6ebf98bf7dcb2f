package main

import (
	"bytes"
	"sync"
	"unicode/utf8"

	"github.com/git-hegel/git-hegel/engine/text"
)

// Everything git-hegel writes to a terminal passes through a termFilter
// (pipeWriter): an escape sequence or control character that git-hegel
// did not put there itself is dropped, whichever print site it came
// through. Text from other clones (a task's description, a lock's path, a
// checkpoint's message) is also cleaned where it is printed (text.Clean,
// text.Visible); this is the net under all of those sites, so one that
// forgets cannot hand a teammate's bytes to the terminal to obey: set the
// window title, write the clipboard, move the cursor, draw over a line.
// Output that is piped or redirected is written byte for byte, as git
// writes it.
//
// What passes: line feeds and tabs; a carriage return that ends a write
// (a progress line redrawn), comes before a line feed, or starts a write
// and one of the sequences below; and the exact escape sequences
// git-hegel writes: its palette (as git config may change it) anywhere,
// and the line and screen clears only where a write starts, as git-hegel
// writes them (a run's progress line, status --watch). Inside a write
// they would let a printed text blank what is before it on the line or
// the screen and draw in its place. Everything else below 0x20, DEL, the C1
// controls written as UTF-8 (U+0080 to U+009F, which some terminals obey
// as escapes) and the bidirectional controls (U+202E and its kin,
// text.IsBidiControl, which turn the rest of a line around) is left out;
// the bytes after a dropped escape stay, as text.

// clearScreen moves the cursor home and clears the screen (status
// --watch redraws this way).
const clearScreen = "\x1b[H\x1b[2J"

// clearLine clears from the cursor to the end of the line.
const clearLine = "\x1b[K"

// termSequences are the escape sequences git-hegel itself writes.
var termSequences = newSequenceSet(colorReset)

func init() {
	termSequences.allowAtStart(clearLine)
	termSequences.allowAtStart(clearScreen)
}

func init() {
	for _, code := range palette {
		termSequences.allow(code)
	}
}

type sequenceSet struct {
	mu sync.RWMutex
	// m maps each sequence to whether it passes anywhere (true) or only
	// where a write starts (false).
	m map[string]bool
}

func newSequenceSet(seqs ...string) *sequenceSet {
	s := &sequenceSet{m: map[string]bool{}}
	for _, q := range seqs {
		s.allow(q)
	}
	return s
}

// allow adds seq, an escape sequence git-hegel writes (a colour read from
// the configuration, say).
func (s *sequenceSet) allow(seq string) { s.add(seq, true) }

// allowAtStart adds seq, an escape sequence git-hegel writes only at the
// start of a write (a line or screen clear).
func (s *sequenceSet) allowAtStart(seq string) { s.add(seq, false) }

func (s *sequenceSet) add(seq string, anywhere bool) {
	if seq == "" || seq[0] != 0x1b {
		return
	}
	s.mu.Lock()
	s.m[seq] = s.m[seq] || anywhere
	s.mu.Unlock()
}

// match says how long the allowed sequence at the start of p (an escape)
// is (0: none), or that p is cut inside one (more is needed to tell);
// atStart says p is where a write starts.
func (s *sequenceSet) match(p []byte, atStart bool) (n int, cut bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for q, anywhere := range s.m {
		if !anywhere && !atStart {
			continue
		}
		switch {
		case len(p) >= len(q) && string(p[:len(q)]) == q:
			if len(q) > n {
				n = len(q)
			}
		case len(p) < len(q) && q[:len(p)] == string(p):
			cut = true
		}
	}
	return n, cut && n == 0
}

// termFilter cleans what one terminal is written.
type termFilter struct {
	mu  sync.Mutex
	set *sequenceSet
	// held is the start of an allowed sequence that a write ended in; it
	// goes out with the next write, or is dropped if that shows it was
	// not one.
	held []byte
	// heldAtStart: held began where a write started.
	heldAtStart bool
}

// filter returns p as the terminal may see it.
func (f *termFilter) filter(p []byte) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	startOK := true
	if len(f.held) > 0 {
		p = append(f.held, p...)
		startOK = f.heldAtStart
		f.held = nil
	}
	if !needsFilter(p) {
		return p
	}
	// atStart says position i is where the write starts, or just after
	// the carriage return it starts with.
	atStart := func(i int) bool {
		return startOK && (i == 0 || i == 1 && p[0] == '\r')
	}
	out := make([]byte, 0, len(p))
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\n' || c == '\t':
			out = append(out, c)
			i++
		case c == 0x1b:
			n, cut := f.set.match(p[i:], atStart(i))
			if cut {
				f.held = bytes.Clone(p[i:])
				f.heldAtStart = atStart(i)
				return out
			}
			if n > 0 {
				out = append(out, p[i:i+n]...)
				i += n
				continue
			}
			i++ // not ours: the escape goes, what follows stays as text
		case c == '\r':
			if i+1 == len(p) || p[i+1] == '\n' {
				out = append(out, c)
			} else if i == 0 && startOK && p[i+1] == 0x1b {
				n, cut := f.set.match(p[i+1:], true)
				if cut { // judged with the sequence it starts
					f.held, f.heldAtStart = bytes.Clone(p), true
					return out
				}
				if n > 0 {
					out = append(out, c)
				}
			}
			i++
		case c < 0x20 || c == 0x7f:
			i++
		case c == 0xc2 && i+1 < len(p) && p[i+1] >= 0x80 && p[i+1] <= 0x9f:
			i += 2 // a C1 control as UTF-8
		case c == 0xd8 || c == 0xe2:
			n, cut := bidiAt(p[i:])
			if cut {
				// Cut by the end of the write: judged with the next.
				f.held, f.heldAtStart = bytes.Clone(p[i:]), false
				return out
			}
			if n == 0 {
				n = 1
				out = append(out, c)
			}
			i += n
		case c == 0xc2 && i+1 == len(p):
			// The character is cut by the end of the write (a buffered
			// writer's chunk): it may be a C1 control, judged with the
			// next write.
			f.held, f.heldAtStart = []byte{c}, false
			return out
		default:
			out = append(out, c)
			i++
		}
	}
	return out
}

// needsFilter reports whether p holds anything filter would look at.
func needsFilter(p []byte) bool {
	for i, c := range p {
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f || c == 0xc2 && (i+1 == len(p) || p[i+1] >= 0x80 && p[i+1] <= 0x9f) {
			return true
		}
		if c == 0xd8 || c == 0xe2 {
			if n, cut := bidiAt(p[i:]); n > 0 || cut {
				return true
			}
		}
	}
	return false
}

// bidiAt says how long the bidirectional control (text.IsBidiControl)
// written as UTF-8 at the start of p is (0: none), or that p ends inside
// what may be one (more is needed to tell).
func bidiAt(p []byte) (n int, cut bool) {
	if !utf8.FullRune(p) {
		// Every bidirectional control starts with 0xd8 or 0xe2.
		return 0, len(p) > 0 && (p[0] == 0xd8 || p[0] == 0xe2) && (len(p) < 2 || p[1] == 0x80 || p[1] == 0x81)
	}
	r, size := utf8.DecodeRune(p)
	if text.IsBidiControl(r) {
		return size, false
	}
	return 0, false
}

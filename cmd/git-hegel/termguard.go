package main

import (
	"bytes"
	"sync"
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
// (a progress line redrawn), comes before a line feed, or starts one of
// the sequences below; and the exact escape sequences git-hegel writes
// (its palette, as git config may change it, and the few it uses to clear
// a line or the screen). Everything else below 0x20, DEL, and the C1
// controls written as UTF-8 (U+0080 to U+009F, which some terminals obey
// as escapes) is left out; the bytes after a dropped escape stay, as
// text.

// clearScreen moves the cursor home and clears the screen (status
// --watch redraws this way).
const clearScreen = "\x1b[H\x1b[2J"

// termSequences are the escape sequences git-hegel itself writes.
var termSequences = newSequenceSet(colorReset, "\x1b[K", clearScreen)

func init() {
	for _, code := range palette {
		termSequences.allow(code)
	}
}

type sequenceSet struct {
	mu sync.RWMutex
	m  map[string]bool
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
func (s *sequenceSet) allow(seq string) {
	if seq == "" || seq[0] != 0x1b {
		return
	}
	s.mu.Lock()
	s.m[seq] = true
	s.mu.Unlock()
}

// match says how long the allowed sequence at the start of p (an escape)
// is (0: none), or that p is cut inside one (more is needed to tell).
func (s *sequenceSet) match(p []byte) (n int, cut bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for q := range s.m {
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
}

// filter returns p as the terminal may see it.
func (f *termFilter) filter(p []byte) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.held) > 0 {
		p = append(f.held, p...)
		f.held = nil
	}
	if !needsFilter(p) {
		return p
	}
	out := make([]byte, 0, len(p))
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\n' || c == '\t':
			out = append(out, c)
			i++
		case c == 0x1b:
			n, cut := f.set.match(p[i:])
			if cut {
				f.held = bytes.Clone(p[i:])
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
			} else if n, _ := f.set.match(p[i+1:]); p[i+1] == 0x1b && n > 0 {
				out = append(out, c)
			}
			i++
		case c < 0x20 || c == 0x7f:
			i++
		case c == 0xc2 && i+1 < len(p) && p[i+1] >= 0x80 && p[i+1] <= 0x9f:
			i += 2 // a C1 control as UTF-8
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
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f || c == 0xc2 && i+1 < len(p) && p[i+1] >= 0x80 && p[i+1] <= 0x9f {
			return true
		}
	}
	return false
}

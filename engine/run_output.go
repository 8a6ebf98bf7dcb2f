package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
)

// A step's output is streamed to the terminal as it comes and kept, up
// to a bound, as the step's result. A handler may end its output with one
// JSON object line (docs/run.md):
//
//	{"requires_confirmation": true, "files": ["a.go", "b.go"], "error": "..."}
//
// That line is the handler talking to git-hegel, not output: it is held
// back from the terminal until it is clear that it is the last line, and
// left out of the stored result.

// DefaultMaxResultSize is hegel.maxResultSize's default.
const DefaultMaxResultSize = 1 << 20

// protocolTail is how much of the end of the output is kept to find the
// trailing JSON line in, and the longest such line honoured.
const protocolTail = 64 << 10

// Protocol is the trailing JSON object of a handler's output.
type Protocol struct {
	RequiresConfirmation bool     `json:"requires_confirmation"`
	Error                string   `json:"error"`
	Files                []string `json:"files"`
}

// parseProtocol reads line as the protocol object: a JSON object with at
// least one of its keys. Anything else is output.
func parseProtocol(line []byte) (*Protocol, bool) {
	line = bytes.TrimSpace(line)
	if len(line) < 2 || line[0] != '{' {
		return nil, false
	}
	var keys map[string]json.RawMessage
	if json.Unmarshal(line, &keys) != nil {
		return nil, false
	}
	known := false
	for _, k := range []string{"requires_confirmation", "error", "files"} {
		if _, ok := keys[k]; ok {
			known = true
		}
	}
	var p Protocol
	if !known || json.Unmarshal(line, &p) != nil {
		return nil, false
	}
	return &p, true
}

// lastLine returns the start offset of the last non-blank line of b, or -1.
func lastLine(b []byte) int {
	end := len(bytes.TrimRight(b, " \t\r\n"))
	if end == 0 {
		return -1
	}
	return bytes.LastIndexByte(b[:end], '\n') + 1
}

// capture keeps a step's stdout: the first max bytes, the last
// protocolTail bytes, and the total, while passing everything on to a
// stream that holds back a possible protocol line.
type capture struct {
	mu    sync.Mutex
	max   int64
	head  []byte
	tail  []byte
	total int64
	out   io.Writer // the stream (nil: none)
	held  []byte    // a trailing line starting with '{', not yet streamed
}

func newCapture(max int64, out io.Writer) *capture {
	return &capture{max: max, out: out}
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += int64(len(p))
	if room := c.max - int64(len(c.head)); room > 0 {
		c.head = append(c.head, p[:min(int64(len(p)), room)]...)
	}
	c.tail = append(c.tail, p...)
	if len(c.tail) > 2*protocolTail {
		c.tail = append(c.tail[:0], c.tail[len(c.tail)-protocolTail:]...)
	}
	if c.out != nil {
		c.stream(p)
	}
	return len(p), nil
}

// stream passes p on, holding back the last line while it could be the
// protocol object.
func (c *capture) stream(p []byte) {
	data := append(c.held, p...)
	c.held = nil
	if i := lastLine(data); i >= 0 && len(data)-i <= protocolTail && bytes.HasPrefix(bytes.TrimLeft(data[i:], " \t"), []byte("{")) {
		c.held = append([]byte(nil), data[i:]...)
		data = data[:i]
	}
	if len(data) > 0 {
		_, _ = c.out.Write(data)
	}
}

// finish ends the output: it works out the protocol object, streams what
// was held back unless it was that object, and returns the result to
// store (cut at max, with a note) and the object (nil if none).
func (c *capture) finish() ([]byte, *Protocol) {
	c.mu.Lock()
	defer c.mu.Unlock()
	full := c.tail
	if c.total <= c.max {
		full = c.head
	}
	var proto *Protocol
	body := full
	if i := lastLine(full); i >= 0 {
		if p, ok := parseProtocol(full[i:]); ok {
			proto, body = p, full[:i]
		}
	}
	if c.out != nil && len(c.held) > 0 && proto == nil {
		_, _ = c.out.Write(c.held)
	}
	c.held = nil
	if c.total <= c.max {
		return append([]byte(nil), body...), proto
	}
	cut := c.head
	if i := bytes.LastIndexByte(cut, '\n'); i >= len(cut)/2 {
		cut = cut[:i+1] // end on a whole line when one is near
	}
	note := fmt.Sprintf("\n[git-hegel: result cut at %s (hegel.maxResultSize); the step printed %s]\n", Size(c.max), Size(c.total))
	return append(append([]byte(nil), cut...), note...), proto
}

// Size prints a byte count for people: 512 B, 3.2 KiB, 1 MiB.
func Size(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return trimZero(float64(n)/1024) + " KiB"
	case n < 1<<30:
		return trimZero(float64(n)/(1<<20)) + " MiB"
	}
	return trimZero(float64(n)/(1<<30)) + " GiB"
}

func trimZero(f float64) string {
	return strings.TrimSuffix(fmt.Sprintf("%.1f", f), ".0")
}

// tailLines keeps the last n lines written to it (within a byte bound),
// for failure messages; it passes everything on to out, if set.
type tailLines struct {
	mu  sync.Mutex
	n   int
	buf []byte
	out io.Writer
}

const tailBytes = 16 << 10

func newTail(n int, out io.Writer) *tailLines { return &tailLines{n: n, out: out} }

func (t *tailLines) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*tailBytes {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailBytes:]...)
	}
	if t.out != nil {
		_, _ = t.out.Write(p)
	}
	return len(p), nil
}

// String returns the last n lines, without trailing blank space.
func (t *tailLines) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimRight(string(t.buf), " \t\r\n")
	lines := strings.Split(s, "\n")
	if len(lines) > t.n {
		lines = lines[len(lines)-t.n:]
	}
	return strings.Join(lines, "\n")
}

package agent

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// MaxHookPayload is the largest hook payload `git hegel hook` reads
// whole. An agent sends a tool's whole input and output (a Write of a big
// file sends its content): a larger payload is read through CutPayload,
// which keeps its structure and small fields and leaves the long strings
// out, and the events say so (Event.PayloadCut).
const MaxHookPayload = 32 << 20

// Bounds of a cut payload: each string keeps at most cutStringLen bytes
// (an event keeps at most maxFieldLen of any field anyway), and the
// whole at most cutTotalLen; past that, the rest is read and dropped.
const (
	cutStringLen = 64 << 10
	cutTotalLen  = 1 << 20
)

// CutPayload reads a JSON document of any size from r with bounded
// memory: every string longer than 64 KiB is cut (at a character
// boundary, never inside an escape) and ends with "…[N bytes cut]", and
// the document stops at 1 MiB (it is then no longer valid JSON). r is
// read to its end either way, so the writer never sees a closed pipe. It
// returns the document and how many bytes were left out.
func CutPayload(r io.Reader) ([]byte, int64, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var out bytes.Buffer
	var cut int64
	var (
		inString bool
		escLeft  int  // bytes of the escape sequence still to come
		escFirst bool // the next byte says which escape it is
		dropping bool // this string is past its bound
		kept     int  // bytes of this string kept
		dropped  int64
	)
	for {
		if inString && dropping && escLeft == 0 {
			// Fast path through a dropped string: skip to its next quote
			// or backslash without looking at each byte.
			buf, _ := br.Peek(max(br.Buffered(), 1))
			i := bytes.IndexAny(buf, `"\`)
			if i < 0 {
				i = len(buf)
			}
			n, _ := br.Discard(i)
			dropped += int64(n)
			cut += int64(n)
		}
		b, err := br.ReadByte()
		if err == io.EOF {
			break
		}
		if err != nil {
			return out.Bytes(), cut, err
		}
		if out.Len() >= cutTotalLen {
			cut++
			n, err := io.Copy(io.Discard, br)
			cut += n
			return out.Bytes(), cut, err
		}
		if !inString {
			out.WriteByte(b)
			if b == '"' {
				inString, escLeft, dropping, kept, dropped = true, 0, false, 0, 0
			}
			continue
		}
		if escLeft > 0 {
			escLeft--
			if escFirst {
				escFirst = false
				if b == 'u' {
					escLeft = 4 // \uXXXX
				}
			}
			keepOrDrop(&out, b, dropping, &kept, &dropped, &cut)
			continue
		}
		// The start of a character or an escape sequence: the only place
		// a string may be cut. UTF-8 continuation bytes follow their
		// first byte's fate.
		if !dropping && kept >= cutStringLen && b != '"' && b&0xC0 != 0x80 {
			dropping = true
		}
		switch b {
		case '"':
			if dropping {
				fmt.Fprintf(&out, "…[%d bytes cut]", dropped)
			}
			out.WriteByte('"')
			inString = false
			continue
		case '\\':
			escLeft, escFirst = 1, true
		}
		keepOrDrop(&out, b, dropping, &kept, &dropped, &cut)
	}
	return out.Bytes(), cut, nil
}

func keepOrDrop(out *bytes.Buffer, b byte, dropping bool, kept *int, dropped, cut *int64) {
	if dropping {
		*dropped++
		*cut++
		return
	}
	out.WriteByte(b)
	*kept++
}

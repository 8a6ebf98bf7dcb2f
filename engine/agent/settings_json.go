package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// A settings file is edited as text: installing inserts git-hegel's
// entries at chosen offsets and uninstalling cuts out byte ranges, so every
// byte the user wrote stays as written. This file reads the document into
// a tree that knows where each value and member starts and ends; the
// scanning is encoding/json's, so errors read as its errors do.

// jval is one JSON value and where it is in the text.
type jval struct {
	start, end int // data[start:end] is the value
	obj        bool
	arr        bool
	members    []jmember // an object's, in order
	items      []*jval   // an array's
	scalar     []byte    // a string, number, true, false or null, as written
}

// jmember is one object member: data[start:val.end] is `"key": value`.
type jmember struct {
	start int
	key   string
	val   *jval
}

// parseJSON reads one JSON value (whitespace around it allowed). Errors
// name the line they are on.
func parseJSON(data []byte) (*jval, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeVal(dec, data)
	if err != nil {
		return nil, jsonErr(data, dec, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, jsonErr(data, dec, errors.New("text after the end of the JSON value"))
	}
	return v, nil
}

// jsonErr names the line a syntax error is on.
func jsonErr(data []byte, dec *json.Decoder, err error) error {
	off := dec.InputOffset()
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = se.Offset
	}
	off = min(max(off, 0), int64(len(data)))
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	return fmt.Errorf("line %d: %s", line, strings.TrimPrefix(err.Error(), "json: "))
}

// tokenStart is where the next token starts: after whitespace and the
// separators the decoder has not consumed yet.
func tokenStart(data []byte, off int64) int {
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n,:", data[off]) >= 0 {
		off++
	}
	return int(off)
}

func decodeVal(dec *json.Decoder, data []byte) (*jval, error) {
	start := tokenStart(data, dec.InputOffset())
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, errors.New("unexpected end of input")
		}
		return nil, err
	}
	v := &jval{start: start}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			v.obj = true
			for dec.More() {
				kstart := tokenStart(data, dec.InputOffset())
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, errors.New("object key is not a string")
				}
				mv, err := decodeVal(dec, data)
				if err != nil {
					return nil, err
				}
				v.members = append(v.members, jmember{start: kstart, key: key, val: mv})
			}
		case '[':
			v.arr = true
			for dec.More() {
				item, err := decodeVal(dec, data)
				if err != nil {
					return nil, err
				}
				v.items = append(v.items, item)
			}
		default:
			return nil, fmt.Errorf("unexpected %v", t)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
	}
	v.end = int(dec.InputOffset())
	if !v.obj && !v.arr {
		v.scalar = data[v.start:v.end]
	}
	return v, nil
}

// get returns the first member called key, or nil.
func (v *jval) get(key string) *jval {
	if v == nil || !v.obj {
		return nil
	}
	for _, m := range v.members {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

// str returns a string scalar's value.
func (v *jval) str() (string, bool) {
	if v == nil || len(v.scalar) == 0 || v.scalar[0] != '"' {
		return "", false
	}
	var s string
	return s, json.Unmarshal(v.scalar, &s) == nil
}

// children are the spans of a container's members or items, in order.
func (v *jval) children() []span {
	var out []span
	for _, m := range v.members {
		out = append(out, span{m.start, m.val.end})
	}
	for _, it := range v.items {
		out = append(out, span{it.start, it.end})
	}
	return out
}

// closeOffset is where a container's closing bracket is.
func (v *jval) closeOffset() int { return v.end - 1 }

// span is a range of the text, [from, to).
type span struct{ from, to int }

// cutSpans is what removing the children at indexes drop (ascending) from
// a container cuts out: each with the separator before it, or, for a
// first child, the separator after it when a child after it stays. This
// is the inverse of insertChildren, so what an install added comes out
// byte for byte.
func cutSpans(kids []span, drop []int) []span {
	removed := map[int]bool{}
	for _, i := range drop {
		removed[i] = true
	}
	var out []span
	for _, i := range drop {
		switch {
		case i > 0:
			out = append(out, span{kids[i-1].to, kids[i].to})
		default:
			next := -1
			for j := 1; j < len(kids); j++ {
				if !removed[j] {
					next = j
					break
				}
			}
			if next >= 0 {
				out = append(out, span{kids[0].from, kids[next].from})
			} else {
				out = append(out, span{kids[0].from, kids[0].to})
			}
		}
	}
	return out
}

// cut returns data without the spans (which may overlap or nest).
func cut(data []byte, spans []span) []byte {
	if len(spans) == 0 {
		return data
	}
	sorted := append([]span(nil), spans...)
	for i := 1; i < len(sorted); i++ {
		for j := i; j > 0 && sorted[j].from < sorted[j-1].from; j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	var b bytes.Buffer
	pos := 0
	for _, s := range sorted {
		if s.from > pos {
			b.Write(data[pos:s.from])
		}
		pos = max(pos, s.to)
	}
	b.Write(data[pos:])
	return b.Bytes()
}

// insertion is text put in at an offset.
type insertion struct {
	at   int
	text string
}

// insertChildren adds members or items (each rendered as text) at the end
// of the container v at depth: after its last child, each on a new line
// behind a comma; into an empty container, the first goes right before
// the closing bracket, where nothing the user wrote is whitespace after
// it. That last rule is what lets uninstall tell a container git-hegel
// created (its last child is followed by a line break) from the user's own
// empty one it only filled.
func insertChildren(v *jval, depth int, f format, texts []string) insertion {
	var b strings.Builder
	kids := v.children()
	at := v.closeOffset()
	if len(kids) > 0 {
		at = kids[len(kids)-1].to
	}
	for i, t := range texts {
		if i > 0 || len(kids) > 0 {
			b.WriteString("," + f.nl + f.indent(depth+1))
		}
		b.WriteString(t)
	}
	return insertion{at, b.String()}
}

// insert returns data with the insertions made (at distinct offsets).
func insert(data []byte, ins []insertion) []byte {
	for i := 1; i < len(ins); i++ {
		for j := i; j > 0 && ins[j].at < ins[j-1].at; j-- {
			ins[j], ins[j-1] = ins[j-1], ins[j]
		}
	}
	var b bytes.Buffer
	pos := 0
	for _, in := range ins {
		b.Write(data[pos:in.at])
		b.WriteString(in.text)
		pos = in.at
	}
	b.Write(data[pos:])
	return b.Bytes()
}

// trailsBreak reports whether the bytes between a container's last child
// and its closing bracket are whitespace holding a line break: true of the
// containers install creates, never of one it only added children to.
func trailsBreak(data []byte, v *jval) bool {
	kids := v.children()
	if len(kids) == 0 {
		return false
	}
	gap := data[kids[len(kids)-1].to:v.closeOffset()]
	return bytes.ContainsAny(gap, "\n") && len(bytes.TrimSpace(gap)) == 0
}

// format is how new text is laid out: the file's indentation unit and
// line break.
type format struct {
	unit, nl string
}

// formatOf detects a file's layout: the indentation of its first indented
// line (two spaces when none is), and CRLF line breaks when it uses them.
func formatOf(data []byte) format {
	f := format{unit: "  ", nl: "\n"}
	if bytes.Contains(data, []byte("\r\n")) {
		f.nl = "\r\n"
	}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		trimmed := strings.TrimLeft(line, " \t")
		if trimmed != "" && len(trimmed) < len(line) {
			f.unit = line[:len(line)-len(trimmed)]
			break
		}
	}
	return f
}

func (f format) indent(depth int) string { return strings.Repeat(f.unit, depth) }

// node is a value git-hegel writes: an object (fields in order), an array
// or a string or other scalar (text, already encoded).
type node struct {
	fields []field
	items  []node
	obj    bool
	arr    bool
	text   string
}

type field struct {
	key string
	val node
}

func object(fields ...field) node { return node{obj: true, fields: fields} }
func array(items ...node) node    { return node{arr: true, items: items} }
func raw(text string) node        { return node{text: text} }
func str(s string) node           { return node{text: quoteJSON(s)} }

// quoteJSON encodes a string without escaping <, > and &, as the user's
// own commands ("make && make test") are written.
func quoteJSON(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimRight(b.String(), "\n")
}

// render writes n as a value at depth: one member or item per line.
func (f format) render(n node, depth int) string {
	var b strings.Builder
	switch {
	case n.obj && len(n.fields) == 0:
		return "{}"
	case n.arr && len(n.items) == 0:
		return "[]"
	case n.obj:
		b.WriteString("{")
		for i, fl := range n.fields {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(f.nl + f.indent(depth+1) + f.member(fl, depth+1))
		}
		b.WriteString(f.nl + f.indent(depth) + "}")
	case n.arr:
		b.WriteString("[")
		for i, it := range n.items {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(f.nl + f.indent(depth+1) + f.render(it, depth+1))
		}
		b.WriteString(f.nl + f.indent(depth) + "]")
	default:
		return n.text
	}
	return b.String()
}

// member writes `"key": value` for a member of an object whose members are
// at depth.
func (f format) member(fl field, depth int) string {
	return quoteJSON(fl.key) + ": " + f.render(fl.val, depth)
}

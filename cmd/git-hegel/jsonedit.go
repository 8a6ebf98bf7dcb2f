package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// A JSON document edited in place: `hooks install` adds entries to an
// agent's settings file and must keep everything else as the user wrote
// it, in the same order. encoding/json's maps would reorder the keys, so
// objects keep their keys in a list; and every value keeps its original
// text, which is written back unchanged unless the value was edited.

// jnode is one JSON value.
type jnode struct {
	obj    []jfield // object members, in order (obj != nil or isObj)
	isObj  bool
	arr    []*jnode
	isArr  bool
	scalar json.RawMessage // string, number, true, false, null
	raw    []byte          // the value's text as parsed; nil for new values
	dirty  bool            // edited since parsed
}

type jfield struct {
	key string
	val *jnode
}

// parseJSONDoc reads one JSON value (whitespace around it allowed).
func parseJSONDoc(data []byte) (*jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := decodeNode(dec, data)
	if err != nil {
		return nil, jsonErr(data, dec, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, jsonErr(data, dec, errors.New("text after the end of the JSON value"))
	}
	return n, nil
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

// valueStart is where the next value starts: after whitespace and the
// separators the decoder has not consumed yet.
func valueStart(data []byte, off int64) int64 {
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n,:", data[off]) >= 0 {
		off++
	}
	return off
}

func decodeNode(dec *json.Decoder, data []byte) (n *jnode, err error) {
	start := valueStart(data, dec.InputOffset())
	defer func() {
		if n != nil {
			n.raw = data[start:dec.InputOffset()]
		}
	}()
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, errors.New("unexpected end of input")
		}
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &jnode{isObj: true}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, errors.New("object key is not a string")
				}
				v, err := decodeNode(dec, data)
				if err != nil {
					return nil, err
				}
				n.obj = append(n.obj, jfield{key, v})
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		case '[':
			n := &jnode{isArr: true}
			for dec.More() {
				v, err := decodeNode(dec, data)
				if err != nil {
					return nil, err
				}
				n.arr = append(n.arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		b, err := marshalText(t)
		if err != nil {
			return nil, err
		}
		return &jnode{scalar: b}, nil
	}
}

// marshalText encodes a scalar without escaping <, > and &, which
// encoding/json does by default and which would change commands like
// "make && make test" in the user's file.
func marshalText(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

func jstring(s string) *jnode {
	b, _ := marshalText(s)
	return &jnode{scalar: b}
}

func jobject(fields ...jfield) *jnode { return &jnode{isObj: true, obj: fields} }

func jarray(items ...*jnode) *jnode { return &jnode{isArr: true, arr: items} }

// get returns an object member, or nil.
func (n *jnode) get(key string) *jnode {
	if n == nil || !n.isObj {
		return nil
	}
	for _, f := range n.obj {
		if f.key == key {
			return f.val
		}
	}
	return nil
}

// set replaces or appends an object member.
func (n *jnode) set(key string, v *jnode) {
	n.dirty = true
	for i, f := range n.obj {
		if f.key == key {
			n.obj[i].val = v
			return
		}
	}
	n.obj = append(n.obj, jfield{key, v})
}

// push appends an array item.
func (n *jnode) push(v *jnode) {
	n.dirty = true
	n.arr = append(n.arr, v)
}

// changed reports whether n or anything in it was edited.
func (n *jnode) changed() bool {
	if n.dirty || n.raw == nil {
		return true
	}
	for _, f := range n.obj {
		if f.val.changed() {
			return true
		}
	}
	for _, v := range n.arr {
		if v.changed() {
			return true
		}
	}
	return false
}

// del removes an object member.
func (n *jnode) del(key string) {
	for i, f := range n.obj {
		if f.key == key {
			n.obj = append(n.obj[:i], n.obj[i+1:]...)
			n.dirty = true
			return
		}
	}
}

// str returns a string scalar's value.
func (n *jnode) str() (string, bool) {
	if n == nil || n.scalar == nil || n.scalar[0] != '"' {
		return "", false
	}
	var s string
	return s, json.Unmarshal(n.scalar, &s) == nil
}

// encode writes the document with indent per level and a final newline.
func (n *jnode) encode(indent string) []byte {
	var b bytes.Buffer
	n.write(&b, indent, "")
	b.WriteByte('\n')
	return b.Bytes()
}

func (n *jnode) write(b *bytes.Buffer, indent, prefix string) {
	if !n.changed() {
		b.Write(n.raw) // as the user wrote it
		return
	}
	switch {
	case n.isObj:
		if len(n.obj) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, f := range n.obj {
			key, _ := marshalText(f.key)
			b.WriteString(prefix + indent)
			b.Write(key)
			b.WriteString(": ")
			f.val.write(b, indent, prefix+indent)
			if i < len(n.obj)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(prefix + "}")
	case n.isArr:
		if len(n.arr) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, v := range n.arr {
			b.WriteString(prefix + indent)
			v.write(b, indent, prefix+indent)
			if i < len(n.arr)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(prefix + "]")
	default:
		b.Write(n.scalar)
	}
}

// detectIndent returns the indentation a file uses (its first indented
// line's leading whitespace), or two spaces.
func detectIndent(data []byte) string {
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		if trimmed != "" && len(trimmed) < len(line) {
			return line[:len(line)-len(trimmed)]
		}
	}
	return "  "
}

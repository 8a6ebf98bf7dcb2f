package rollback

import (
	"bytes"
	"encoding/json"
	"sort"
)

// Meta is the caller's part of a stored record (a checkpoint's
// checkpoint.json, a restore's journal): JSON fields kept beside the
// mechanism's own in the same object and handed back as they were read.
// This package never interprets them: which task, node or history a
// snapshot belongs to is the caller's business.
type Meta map[string]json.RawMessage

// Set stores v under key (encoded as JSON).
func (m Meta) Set(key string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return // the callers store strings, times and string lists
	}
	m[key] = b
}

// Get decodes the field key into v; a missing or undecodable field leaves
// v as it was and reports false.
func (m Meta) Get(key string, v any) bool {
	b, ok := m[key]
	if !ok {
		return false
	}
	return json.Unmarshal(b, v) == nil
}

// String returns the string field key ("" when absent or not a string).
func (m Meta) String(key string) string {
	var s string
	m.Get(key, &s)
	return s
}

// canonical is m as compact JSON with sorted keys: the form a content id
// is computed from, whatever spacing the stored file has.
func (m Meta) canonical() []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		if err := json.Compact(&b, m[k]); err != nil {
			b.WriteString("null")
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// marshalFlat encodes own (a struct whose fields are the mechanism's) and
// then the caller's fields of meta not already present, as one JSON
// object, indented: the mechanism's fields first in their declared order,
// the caller's after them in key order.
func marshalFlat(own any, meta Meta) ([]byte, error) {
	base, err := json.Marshal(own)
	if err != nil {
		return nil, err
	}
	var present map[string]json.RawMessage
	if err := json.Unmarshal(base, &present); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(meta))
	for k := range meta {
		if _, clash := present[k]; !clash {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b bytes.Buffer
	b.Write(base[:len(base)-1]) // without the closing brace
	for _, k := range keys {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(meta[k])
	}
	b.WriteByte('}')
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// unmarshalFlat decodes data into own and returns the fields own does not
// declare (by their JSON names, which are listed in ownKeys).
func unmarshalFlat(data []byte, own any, ownKeys map[string]bool) (Meta, error) {
	if err := json.Unmarshal(data, own); err != nil {
		return nil, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, err
	}
	meta := Meta{}
	for k, v := range all {
		if !ownKeys[k] {
			meta[k] = v
		}
	}
	return meta, nil
}

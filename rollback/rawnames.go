package rollback

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A path or branch name is bytes, and git takes any bytes but NUL and /
// in a file name (Latin-1 names are common on Linux). A JSON string holds
// only UTF-8: encoding/json writes each byte that is not part of valid
// UTF-8 as U+FFFD, so such a name would come back from checkpoint.json as
// another name. The checkpoint's id is derived from the names as they were
// taken, so it would no longer match (the checkpoint, and the safety
// checkpoint of every rollback in that working tree, would count as taken
// elsewhere), and a restore would set intent-to-add and assume-unchanged
// on paths that do not exist, or check out a branch of another name.
//
// So checkpoint.json keeps, beside the names as JSON can show them, the
// exact bytes of each name that is not valid UTF-8: "raw" maps the
// field's JSON name (with ".N" for an element of a list) to the bytes in
// base64. It is present only when such a name is. Reading puts the bytes
// back before anything else looks at the checkpoint, so the id, the
// checks and the restore see the names as taken. "raw" itself is not part
// of the id's digest: the names it gives back are.

const rawKey = "raw"

// jsonText is s as a JSON string gives it back: each byte that is not
// part of valid UTF-8 becomes U+FFFD.
func jsonText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	b, _ := json.Marshal(s)
	var t string
	if json.Unmarshal(b, &t) != nil {
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	return t
}

// rawNames visits every name of c that JSON cannot hold as it is, by the
// key "raw" records it under, with a pointer to the name.
func (c *Checkpoint) rawNames(visit func(key string, name *string)) {
	visit("branch", &c.Branch)
	list := func(field string, items []string) {
		for i := range items {
			visit(field+"."+strconv.Itoa(i), &items[i])
		}
	}
	list("files_changed", c.FilesChanged)
	list("assume_unchanged", c.AssumeUnchanged)
	list("intent_to_add", c.IntentToAdd)
	for i := range c.Skipped {
		visit("skipped."+strconv.Itoa(i), &c.Skipped[i].Path)
	}
	for i := range c.Moved {
		visit("moved."+strconv.Itoa(i), &c.Moved[i].Ref)
	}
}

// rawField is what "raw" holds for c: nil when every name is valid
// UTF-8.
func (c *Checkpoint) rawField() map[string]string { return rawOf(c.rawNames) }

// restoreRaw puts the exact names of the metadata's "raw" field back into
// c (read from meta, which it is then removed from). An entry that names
// no field, is not base64, or whose bytes are not what the field shows is
// an error: the metadata is damaged.
func (c *Checkpoint) restoreRaw(meta Meta) error { return putRaw(c.rawNames, meta) }

// rawNames of a rollback's journal: the branches it moves and the paths
// it is limited to. A rollback killed on a branch named in Latin-1 is
// finished on that branch.
func (j *Journal) rawNames(visit func(key string, name *string)) {
	visit("head_ref", &j.HeadRef)
	visit("head_to_ref", &j.HeadToRef)
	for i := range j.Moves {
		visit("moves."+strconv.Itoa(i), &j.Moves[i].Ref)
	}
	for i := range j.Only {
		visit("only."+strconv.Itoa(i), &j.Only[i])
	}
}

// rawNames of a stash's journal: HEAD's branch and the flagged index
// entries on each side.
func (j *ParkJournal) rawNames(visit func(key string, name *string)) {
	visit("head_ref", &j.HeadRef)
	for _, side := range []struct {
		name string
		s    *parkSide
	}{{"from", &j.From}, {"to", &j.To}} {
		for i := range side.s.AssumeUnchanged {
			visit(side.name+".assume_unchanged."+strconv.Itoa(i), &side.s.AssumeUnchanged[i])
		}
		for i := range side.s.IntentToAdd {
			visit(side.name+".intent_to_add."+strconv.Itoa(i), &side.s.IntentToAdd[i])
		}
	}
}

// withRaw is meta with the "raw" field for the names names visits (meta
// itself when they are all valid UTF-8; a copy otherwise).
func withRaw(meta Meta, names func(visit func(key string, name *string))) Meta {
	raw := rawOf(names)
	if raw == nil {
		return meta
	}
	out := maps.Clone(meta)
	if out == nil {
		out = Meta{}
	}
	out.Set(rawKey, raw)
	return out
}

// rawOf is the "raw" field for the names names visits: nil when every
// one is valid UTF-8.
func rawOf(names func(visit func(key string, name *string))) map[string]string {
	var raw map[string]string
	names(func(key string, name *string) {
		if utf8.ValidString(*name) {
			return
		}
		if raw == nil {
			raw = map[string]string{}
		}
		raw[key] = base64.StdEncoding.EncodeToString([]byte(*name))
	})
	return raw
}

// putRaw puts the exact names of meta's "raw" field back where names
// visits them, and removes the field from meta.
func putRaw(names func(visit func(key string, name *string)), meta Meta) error {
	b, ok := meta[rawKey]
	if !ok {
		return nil
	}
	delete(meta, rawKey)
	var raw map[string]string
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("bad %q field", rawKey)
	}
	byKey := map[string]*string{}
	names(func(key string, name *string) { byKey[key] = name })
	for key, enc := range raw {
		name, ok := byKey[key]
		if !ok {
			return fmt.Errorf("%q names no field (%q)", rawKey, key)
		}
		exact, err := base64.StdEncoding.DecodeString(enc)
		if err != nil || jsonText(string(exact)) != *name || utf8.Valid(exact) {
			return fmt.Errorf("%q does not match the field %q", rawKey, key)
		}
		*name = string(exact)
	}
	return nil
}

// rawSuffix names the field beside a list SetNames stores that keeps its
// names that are not valid UTF-8.
const rawSuffix = "_raw"

// SetNames stores names (paths, branch names: bytes, not necessarily
// UTF-8) under key so that GetNames reads them back exactly: as Set
// stores a list, and, when a name is not valid UTF-8, under key+"_raw"
// its exact bytes by position, in base64 (as a checkpoint's own "raw"
// field keeps its names).
func (m Meta) SetNames(key string, names []string) {
	m.Set(key, names)
	delete(m, key+rawSuffix)
	raw := map[string]string{}
	for i, n := range names {
		if !utf8.ValidString(n) {
			raw[strconv.Itoa(i)] = base64.StdEncoding.EncodeToString([]byte(n))
		}
	}
	if len(raw) > 0 {
		m.Set(key+rawSuffix, raw)
	}
}

// GetNames decodes the list SetNames stored under key into names, with
// each name's exact bytes; false, leaving names as it was, when the field
// is missing or not a list of strings. An exact name that does not match
// the one the list shows is not used.
func (m Meta) GetNames(key string, names *[]string) bool {
	var got []string
	if !m.Get(key, &got) {
		return false
	}
	var raw map[string]string
	if m.Get(key+rawSuffix, &raw) {
		for k, enc := range raw {
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(got) {
				continue
			}
			exact, err := base64.StdEncoding.DecodeString(enc)
			if err == nil && !utf8.Valid(exact) && jsonText(string(exact)) == got[i] {
				got[i] = string(exact)
			}
		}
	}
	*names = got
	return true
}

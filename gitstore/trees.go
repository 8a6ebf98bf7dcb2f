package gitstore

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/git-hegel/git-hegel/gitstore/objects"
)

// treeEntries reads the tree h as go-git's entry type, through the object
// layer's own parser: go-git's object.GetTree decodes through a buffered
// reader and allocates per entry, which for the 1,000-entry stash list was
// most of a stash push's own CPU (docs/benchmarks.md, 2026-11-25).
func (r *Repo) treeEntries(h plumbing.Hash) ([]object.TreeEntry, error) {
	data, err := r.objects.Read(plumbing.TreeObject, h)
	if err != nil {
		return nil, err
	}
	// The names alias the buffer, so it must be this tree's own.
	ents, err := objects.ParseTree(bytes.Clone(data))
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", h, err)
	}
	out := make([]object.TreeEntry, len(ents))
	for i, e := range ents {
		out[i] = object.TreeEntry{Name: e.Name, Mode: e.Mode, Hash: e.Hash}
	}
	return out, nil
}

// encodeTreeAsIs encodes entries in the order given, byte for byte as
// go-git's Tree.Encode does (mode in octal, name, NUL, hash), without its
// per-entry formatting. The callers sort and check their entries.
func encodeTreeAsIs(entries []object.TreeEntry) []byte {
	n := 0
	for _, e := range entries {
		n += 8 + len(e.Name) + len(e.Hash)
	}
	buf := make([]byte, 0, n)
	for _, e := range entries {
		buf = strconv.AppendUint(buf, uint64(e.Mode), 8)
		buf = append(buf, ' ')
		buf = append(buf, e.Name...)
		buf = append(buf, 0)
		buf = append(buf, e.Hash[:]...)
	}
	return buf
}

package objects

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
)

// CommitFields is what the readers of raw commits (the sync graph, the
// task log, log <task>) take from one.
type CommitFields struct {
	Tree    plumbing.Hash
	Parents []plumbing.Hash
	Author  []byte // the author line's value, aliasing the commit
	When    int64  // committer time, seconds
	Message []byte // what follows the header, aliasing the commit
}

// ParseCommit reads a raw commit's tree, parents, author, committer time
// and message. It is lenient about everything else: the checks of
// fetched commits are stricter. A commit without a tree is an error.
func ParseCommit(h plumbing.Hash, data []byte) (CommitFields, error) {
	var c CommitFields
	msg, err := eachHeader(data, func(key, val []byte) error {
		switch string(key) {
		case "tree":
			t, ok := ParseHex(string(val))
			if !ok {
				return fmt.Errorf("commit %s: bad tree line", h)
			}
			c.Tree = t
		case "parent":
			p, ok := ParseHex(string(val))
			if !ok {
				return fmt.Errorf("commit %s: bad parent line", h)
			}
			c.Parents = append(c.Parents, p)
		case "author":
			c.Author = val
		case "committer":
			c.When, _ = identTime(val)
		}
		return nil
	})
	if err != nil {
		return c, err
	}
	if c.Tree.IsZero() {
		return c, fmt.Errorf("commit %s has no tree", h)
	}
	c.Message = msg
	return c, nil
}

// IdentName is the name of an author or committer line's value ("Name
// <email> 1700000000 +0000").
func IdentName(val []byte) string {
	if i := bytes.IndexByte(val, '<'); i >= 0 {
		return string(bytes.TrimSpace(val[:i]))
	}
	return ""
}

// eachHeader calls fn with the key and value of each header line of a raw
// commit, in order, and returns what follows the blank line that ends the
// header (the message). It stops at fn's first error.
func eachHeader(data []byte, fn func(key, val []byte) error) ([]byte, error) {
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) == 0 {
			break // the message follows
		}
		key, val, _ := bytes.Cut(line, []byte{' '})
		if err := fn(key, val); err != nil {
			return nil, err
		}
	}
	return data, nil
}

// identTime is the seconds of an author or committer line's value
// ("Name <email> 1700000000 +0000").
func identTime(val []byte) (int64, bool) {
	i := bytes.LastIndexByte(val, '>')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(val[i+1:])
	if len(f) == 0 {
		return 0, false
	}
	s, err := strconv.ParseInt(string(f[0]), 10, 64)
	return s, err == nil
}

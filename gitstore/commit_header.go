package gitstore

import (
	"bytes"
	"strconv"
)

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

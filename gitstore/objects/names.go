package objects

import (
	crand "crypto/rand"
	"encoding/hex"

	"github.com/go-git/go-git/v5/plumbing"
)

// ParseHex parses a full object name in hex (either case).
func ParseHex(s string) (plumbing.Hash, bool) {
	var h plumbing.Hash
	if len(s) != 2*len(h) {
		return h, false
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return h, false
	}
	return h, true
}

// NewID returns 32 random hex digits: the unique part of a temporary
// file's name (the layers above take their ids from it too).
func NewID() string {
	var b [16]byte
	_, _ = crand.Read(b[:])
	return hex.EncodeToString(b[:])
}

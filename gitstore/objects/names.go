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

// ParseLowerHex parses a full object name as git writes one: lowercase
// hex digits only (loose object names, ls-remote's listing). By a table:
// a sync parses tens of thousands of them.
func ParseLowerHex(s string) (plumbing.Hash, bool) {
	var h plumbing.Hash
	if len(s) != 2*len(h) {
		return plumbing.ZeroHash, false
	}
	bad := byte(0)
	for i := range h {
		hi, lo := lowerHex[s[2*i]], lowerHex[s[2*i+1]]
		bad |= hi | lo
		h[i] = hi<<4 | lo&0x0f
	}
	if bad&0x10 != 0 {
		return plumbing.ZeroHash, false
	}
	return h, true
}

// lowerHex maps a lowercase hex digit to its value, anything else to
// 0x10 (a bit no digit has).
var lowerHex = func() (t [256]byte) {
	for i := range t {
		t[i] = 0x10
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c-'a') + 10
	}
	return t
}()

// NewID returns 32 random hex digits: the unique part of a temporary
// file's name (the layers above take their ids from it too).
func NewID() string {
	var b [16]byte
	_, _ = crand.Read(b[:])
	return hex.EncodeToString(b[:])
}

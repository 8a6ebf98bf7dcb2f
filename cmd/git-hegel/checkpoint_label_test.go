package main

import (
	"strings"
	"testing"
)

// A branch name in a checkpoint or stash from another clone reaches the
// terminal without the control characters a forged one may hold.
func TestHeadLabelCleansBranch(t *testing.T) {
	got := headLabel("main\x1b]0;pwned\x07\x1b[2J\nsecond", "0123456789abcdef0123456789abcdef01234567")
	if strings.ContainsAny(got, "\x1b\x07\n") {
		t.Fatalf("control characters printed: %q", got)
	}
	if !strings.HasPrefix(got, "main") || !strings.Contains(got, " at 0123456") {
		t.Fatalf("label %q", got)
	}
}

package engine

import (
	"regexp"
	"strings"
	"testing"
)

// TestValidTaskName checks the hand-written matcher against the rule it
// implements, written as a regular expression.
func TestValidTaskName(t *testing.T) {
	rule := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$`)
	names := []string{"", "a", "Z", "0", "_", "-", "a_", "a-", "_a", "-a", "open-0000", "a.b", "a/b", "a b",
		"é", "a\x00", "a\n", "ABC_def-123", strings.Repeat("a", 100), strings.Repeat("a", 101), "a" + strings.Repeat("-", 99), "a:b", "a~"}
	for c := 0; c < 256; c++ {
		names = append(names, string([]byte{byte(c)}), "x"+string([]byte{byte(c)}))
	}
	for _, n := range names {
		if got, want := ValidTaskName(n), rule.MatchString(n); got != want {
			t.Errorf("ValidTaskName(%q) = %v, want %v", n, got, want)
		}
	}
}

package main

import "testing"

func TestParseInitTrace(t *testing.T) {
	out := "init internal/bytealg @0.005 ms, 0 ms clock, 0 bytes, 0 allocs\n" +
		"init github.com/mailgun/raymond/v2/lexer @1.2 ms, 0.561 ms clock, 41120 bytes, 380 allocs\n" +
		"something else\n" +
		"init encoding/gob @2 ms, 0.98 ms clock, 1000 bytes, 10 allocs\n"
	got := parseInitTrace(out)
	if len(got) != 3 || got["github.com/mailgun/raymond/v2/lexer"] != 0.561 || got["encoding/gob"] != 0.98 {
		t.Fatalf("parseInitTrace = %v", got)
	}
	if m := medianOf([]float64{3, 1, 2}); m != 2 {
		t.Fatalf("medianOf = %v", m)
	}
}

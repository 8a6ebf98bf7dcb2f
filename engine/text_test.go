package engine

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 stashes", 1: "1 stash", 2: "2 stashes", 11: "11 stashes"} {
		if got := Plural(n, "stash", "stashes"); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestQuotePath checks git's quote_c_style rules; cmd/git-hegel's
// TestQuotePathMatchesGit compares with real git output.
func TestQuotePath(t *testing.T) {
	for _, tc := range []struct {
		in         string
		full, bare string
	}{
		{"plain.txt", "plain.txt", "plain.txt"},
		{"dir/with space", "dir/with space", "dir/with space"},
		{"tab\there", `"tab\there"`, `"tab\there"`},
		{"nl\nx", `"nl\nx"`, `"nl\nx"`},
		{"\a\b\v\f\r", `"\a\b\v\f\r"`, `"\a\b\v\f\r"`},
		{`q"uote`, `"q\"uote"`, `"q\"uote"`},
		{`back\slash`, `"back\\slash"`, `"back\\slash"`},
		{"ctl\x01\x1b", `"ctl\001\033"`, `"ctl\001\033"`},
		{"del\x7f", `"del\177"`, `"del\177"`},
		{"ümlaut", `"\303\274mlaut"`, "ümlaut"},
		{"ü\n", `"\303\274\n"`, "\"ü\\n\""},
		{"", "", ""},
	} {
		if got := QuotePath(tc.in, true); got != tc.full {
			t.Errorf("QuotePath(%q, true) = %s, want %s", tc.in, got, tc.full)
		}
		if got := QuotePath(tc.in, false); got != tc.bare {
			t.Errorf("QuotePath(%q, false) = %s, want %s", tc.in, got, tc.bare)
		}
	}
}

func TestBadName(t *testing.T) {
	if !errors.Is(CheckTaskName("a b"), ErrBadName) || CheckTaskName("ok-1") != nil {
		t.Error("CheckTaskName")
	}
	plain := errors.New("x")
	if err := BadName(plain); !errors.Is(err, ErrBadName) || err.Error() != "x" {
		t.Errorf("BadName = %v", err)
	}
	if BadName(nil) != nil {
		t.Error("BadName(nil) != nil")
	}
	if _, err := ParseStashSelector("stash@{x}"); !errors.Is(err, ErrBadName) {
		t.Errorf("a malformed stash selector: %v", err)
	}
	if err := fmt.Errorf("wrapped: %w", ErrBadName); !errors.Is(err, ErrBadName) {
		t.Error("wrapping")
	}
}

// TestBadNamesFromCommands: the names a command line gives that cannot be
// right whatever the state are bad names; a well-formed name that does
// not exist is not.
func TestBadNamesFromCommands(t *testing.T) {
	te := newTestEngine(t, nil)
	for what, err := range map[string]error{
		"unknown workflow": func() error { _, err := te.Start("nope", "", ""); return err }(),
		"unknown node":     func() error { _, err := te.Start("discovery", "nowhere", ""); return err }(),
		"bad task name":    func() error { _, err := te.Start("discovery", "", "bad/name"); return err }(),
		"bad switch name":  func() error { _, err := te.Switch("a..b"); return err }(),
	} {
		if !errors.Is(err, ErrBadName) {
			t.Errorf("%s: %v is not a bad name", what, err)
		}
	}
	if _, err := te.Switch("no-such-task"); err == nil || errors.Is(err, ErrBadName) {
		t.Errorf("a missing task is not a bad name: %v", err)
	}
}

func TestWorkflowFileNamesQuoted(t *testing.T) {
	r, _ := NewRegistry(map[string][]byte{".hegel/workflows/a\nb.yaml": []byte("nodes: {}\n")})
	b := r.Broken()
	if len(b) != 1 {
		t.Fatalf("broken = %v", b)
	}
	if err := b[0].Err; strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), `".hegel/workflows/a\nb.yaml":1: `) {
		t.Errorf("error = %q", err)
	}
}

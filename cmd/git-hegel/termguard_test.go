package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-hegel/git-hegel/gitstore/gitdir"
)

// What reaches a terminal: git-hegel's own sequences pass, anything else
// a write carries (a fetched text's escapes, wherever it is printed) is
// left out, and a sequence cut by the end of a write is judged with the
// next one.
func TestTermFilter(t *testing.T) {
	set := newSequenceSet(colorReset)
	set.allowAtStart(clearLine)
	set.allowAtStart(clearScreen)
	for _, code := range palette {
		set.allow(code)
	}
	cases := []struct {
		name string
		in   []string // the writes
		want string   // what the terminal gets
	}{
		{"plain", []string{"Task t at plan\n\tnext\n"}, "Task t at plan\n\tnext\n"},
		{"utf-8", []string{"Grüße, 世界 ✓\n"}, "Grüße, 世界 ✓\n"},
		{"palette", []string{palette["node"] + "plan" + colorReset + "\n"}, palette["node"] + "plan" + colorReset + "\n"},
		{"window title", []string{"a\x1b]0;owned\x07b\n"}, "a]0;ownedb\n"},
		{"clipboard", []string{"\x1b]52;c;cm0gLXJmIH4=\x1b\\\n"}, "]52;c;cm0gLXJmIH4=\\\n"},
		{"conceal", []string{"\x1b[8mhidden\x1b[m\n"}, "[8mhidden" + colorReset + "\n"},
		{"cursor up", []string{"ok\x1b[1A\x1b[2Kfine\n"}, "ok[1A[2Kfine\n"},
		{"clear screen alone", []string{"\x1b[2Jx"}, "[2Jx"},
		{"status --watch", []string{clearScreen + "Task t\n"}, clearScreen + "Task t\n"},
		{"carriage return inside", []string{"rm -rf ~\rsafe\n"}, "rm -rf ~safe\n"},
		{"progress line", []string{"Merging (1/2)\r", "Merging (2/2)\r", "Merging (2/2), done.\n"}, "Merging (1/2)\rMerging (2/2)\rMerging (2/2), done.\n"},
		{"crlf", []string{"a\r\nb\r\n"}, "a\r\nb\r\n"},
		{"clear the line", []string{"\r\x1b[Kline\n"}, "\r\x1b[Kline\n"},
		{"clear the line inside a write", []string{"run: curl x | sh\r\x1b[Kls\n"}, "run: curl x | sh[Kls\n"},
		{"clear the screen inside a write", []string{"Task t\n" + clearScreen + "all fine\n"}, "Task t\n[H[2Jall fine\n"},
		{"carriage return and colour inside", []string{"rm -rf ~\r" + palette["node"] + "ok\n"}, "rm -rf ~" + palette["node"] + "ok\n"},
		{"clear cut, then inside", []string{"a\x1b[", "K\n"}, "a[K\n"},
		{"clear cut at the start", []string{"\r\x1b[", "K", "line\n"}, "\r\x1b[Kline\n"},
		{"c1 csi", []string{"a\xc2\x9b31mb\n"}, "a31mb\n"},
		{"c1 csi cut", []string{"a\xc2", "\x9b31mb\n"}, "a31mb\n"},
		{"c1 osc cut by a buffer", []string{strings.Repeat("x", 4095) + "\xc2", "\x9d0;owned\x07\n"}, strings.Repeat("x", 4095) + "0;owned\n"},
		{"non-ascii cut", []string{"\xc2", "\xa9 Grüße\n"}, "© Grüße\n"},
		{"bell, backspace, del", []string{"a\a\b\x7fb\n"}, "ab\n"},
		{"cut palette", []string{"a\x1b[3", "3mb" + colorReset}, "a\x1b[33mb" + colorReset},
		{"cut, not ours", []string{"a\x1b[", "9mb\n"}, "a[9mb\n"},
		{"cut at the escape", []string{"a\x1b", "]0;x\x07\n"}, "a]0;x\n"},
		{"bidi override", []string{"Login \u202eexe.png\n"}, "Login exe.png\n"},
		{"bidi isolates and marks", []string{"a\u2066b\u2069c\u200ed\u200fe\u061cf\u202ag\u202ch\n"}, "abcdefgh\n"},
		{"bidi cut after one byte", []string{"a\xe2", "\x80\xaeb\n"}, "ab\n"},
		{"bidi cut after two bytes", []string{"a\xe2\x80", "\xaeb\n"}, "ab\n"},
		{"arabic mark cut", []string{"a\xd8", "\x9cb\n"}, "ab\n"},
		{"dash cut, not bidi", []string{"a\xe2\x80", "\x94b\n"}, "a—b\n"},
		{"right-to-left text", []string{"مرحبا שלום → …\n"}, "مرحبا שלום → …\n"},
	}
	for _, c := range cases {
		f := &termFilter{set: set}
		var got []byte
		for _, w := range c.in {
			got = append(got, f.filter([]byte(w))...)
		}
		if string(got) != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// A colour set with git config passes the filter once the palette was
// read; the same code written by anything else before that does not. (The
// set is the process's: the colour is one no other test configures.)
func TestTermFilterConfiguredColour(t *testing.T) {
	code, err := parseGitColor("italic strike 123 #0a0b0c")
	if err != nil {
		t.Fatal(err)
	}
	f := &termFilter{set: termSequences}
	if got := string(f.filter([]byte(code + "x"))); got == code+"x" {
		t.Fatalf("%q passed before it was configured", code)
	}
	home := t.TempDir()
	cfg, err := gitdir.UserConfig(func(k string) string {
		switch k {
		case "HOME":
			return home
		case "GIT_CONFIG_PARAMETERS":
			return "'color.hegel.node=italic strike 123 #0a0b0c'"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := paletteFromConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if got := string(f.filter([]byte(code + "x"))); got != code+"x" {
		t.Fatalf("configured colour %q filtered to %q", code, got)
	}
}

// A pipeWriter on a terminal filters; a plain file gets every byte.
func TestPipeWriterFiltersOnlyTerminals(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	file, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	w := newPipeWriter(file, &pipeState{}, true)
	if w.term != nil {
		t.Fatal("a file is not a terminal")
	}
	raw := "a\x1b]0;title\x07b\n"
	if n, err := w.Write([]byte(raw)); err != nil || n != len(raw) {
		t.Fatal(n, err)
	}
	w.term = &termFilter{set: termSequences} // as if it were one
	if n, err := w.Write([]byte(raw)); err != nil || n != len(raw) {
		t.Fatalf("a filtered write reports %d of %d bytes: %v", n, len(raw), err)
	}
	b, _ := os.ReadFile(path)
	if string(b) != raw+"a]0;titleb\n" {
		t.Fatalf("written %q", b)
	}
}

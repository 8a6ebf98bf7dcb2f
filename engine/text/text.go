package text

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Plural counts things in words: "1 stash", "2 stashes", "0 files". Every
// message that counts goes through it, so none says "1 files" or "file(s)".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// QuotePath renders a path the way git prints one (quote.c's
// quote_c_style under core.quotePath): unchanged when it holds nothing
// unusual, otherwise in double quotes with C escapes. \a \b \t \n \v \f \r
// \" and \\ are escaped by name, other control bytes and DEL as three octal
// digits, and bytes from 0x80 up (UTF-8) as octal too when full is set
// (core.quotePath true, git's default) or verbatim when it is not. A space
// alone needs no quotes, as in git. One difference from git: a
// bidirectional control (IsBidiControl) is quoted in octal even when full
// is not set, as a control byte is, since verbatim it would reorder what
// the terminal shows of the path and of the line around it.
func QuotePath(p string, full bool) string {
	i := 0
	for ; i < len(p); i++ {
		if quoteLen(p, i, full) > 0 {
			break
		}
	}
	if i == len(p) {
		return p
	}
	var b strings.Builder
	b.Grow(len(p) + 8)
	b.WriteByte('"')
	b.WriteString(p[:i])
	for i < len(p) {
		n := quoteLen(p, i, full)
		if n == 0 {
			b.WriteByte(p[i])
			i++
			continue
		}
		for _, c := range []byte(p[i : i+n]) {
			quoteByte(&b, c)
		}
		i += n
	}
	b.WriteByte('"')
	return b.String()
}

// quoteLen is how many bytes at p[i] QuotePath escapes (0: none).
func quoteLen(p string, i int, full bool) int {
	switch c := p[i]; {
	case c < 0x20, c == 0x7f, c == '"', c == '\\':
		return 1
	case c >= 0x80 && full:
		return 1
	case c >= 0x80:
		if r, n := utf8.DecodeRuneInString(p[i:]); IsBidiControl(r) {
			return n
		}
	}
	return 0
}

// quoteByte writes c as QuotePath escapes it.
func quoteByte(b *strings.Builder, c byte) {
	b.WriteByte('\\')
	switch c {
	case '\a':
		b.WriteByte('a')
	case '\b':
		b.WriteByte('b')
	case '\t':
		b.WriteByte('t')
	case '\n':
		b.WriteByte('n')
	case '\v':
		b.WriteByte('v')
	case '\f':
		b.WriteByte('f')
	case '\r':
		b.WriteByte('r')
	case '"', '\\':
		b.WriteByte(c)
	default:
		b.WriteByte('0' + c>>6)
		b.WriteByte('0' + c>>3&7)
		b.WriteByte('0' + c&7)
	}
}

// IsBidiControl reports whether r is one of the characters that change
// the order in which a terminal shows text: the Arabic letter mark
// (U+061C), the left-to-right and right-to-left marks (U+200E, U+200F),
// the embeddings and overrides (U+202A to U+202E) and the isolates
// (U+2066 to U+2069). In text from elsewhere one can make a line read
// otherwise than it is stored: an override in a name
// turns the rest of the line around. Right-to-left letters themselves are
// not controls, nor are the joiners other scripts and emoji need.
func IsBidiControl(r rune) bool {
	switch {
	case r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case 0x202a <= r && r <= 0x202e, 0x2066 <= r && r <= 0x2069:
		return true
	}
	return false
}

// Percent prints a rate (0.5) as a percentage to one decimal, without a
// trailing ".0" ("50%", "66.7%"), as stats prints it.
func Percent(r float64) string {
	s := strconv.FormatFloat(math.Round(r*1000)/10, 'f', 1, 64)
	return strings.TrimSuffix(s, ".0") + "%"
}

// Quote is %q for text taken from a file or an argument, shortened so
// that one absurd value cannot bury the rest of the message.
func Quote(s string) string {
	const limit = 80
	if r := []rune(s); len(r) > limit {
		return fmt.Sprintf("%q...", string(r[:limit]))
	}
	return fmt.Sprintf("%q", s)
}

// JoinQuoted lists items in single quotes, separated by commas: 'a', 'b'.
func JoinQuoted(items []string) string {
	s := ""
	for i, it := range items {
		if i > 0 {
			s += ", "
		}
		s += "'" + it + "'"
	}
	return s
}

// HumanDuration prints at most two units: "45s", "3m 12s", "2h 5m",
// "3d 4h"; a negative duration prints as 0s.
func HumanDuration(d time.Duration) string {
	s := int64(max(d, 0).Seconds())
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm %ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh %dm", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%dd %dh", s/86400, s%86400/3600)
}

// Clean removes from text read from elsewhere (a fetched task's
// description, a reason, a commit's author) the control characters a
// terminal would act on: escape sequences, bells, carriage returns,
// backspaces (C0 and C1 alike), the bidirectional controls that reorder
// what it shows (IsBidiControl), and bytes that are not UTF-8, so what is
// left reads in the order it is stored. Line breaks and tabs stay, so
// several lines stay several lines. Its result is also what gets compared
// (a label holds nothing to act on when Clean leaves it as it is) and
// written into commit messages, which is why it removes rather than
// writes out: no escape in it is text nobody wrote.
func Clean(s string) string {
	ok := true
	for _, r := range s {
		if cleanOut(r) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	return strings.Map(func(r rune) rune {
		if cleanOut(r) {
			return -1
		}
		return r
	}, s)
}

// cleanOut reports whether Clean leaves r out.
func cleanOut(r rune) bool {
	return r == utf8.RuneError || IsBidiControl(r) || (unicode.IsControl(r) && r != '\n' && r != '\t')
}

// Visible writes out the control characters of s (but line breaks and
// tabs) and the bidirectional controls as Go escapes (\r, \x1b, \u009b,
// \u202e) and bytes that are not UTF-8 as \xff, for text a person reviews before trusting it: removing them
// would hide that they are there, and printing them would let a carriage
// return or an escape sequence draw over what came before. A carriage
// return that ends a line (CRLF) stays.
func Visible(s string) string {
	if Clean(s) == s {
		return s
	}
	return escape(s, true)
}

// OneLine is Visible for a line of a log whose text someone else chose
// (a request's path): line breaks and tabs are written out too, so the
// text can neither draw on the terminal nor forge a line.
func OneLine(s string) string { return escape(s, false) }

// escape writes out s's control characters, its bidirectional controls
// and the bytes that are not UTF-8; with lines, line breaks, tabs and a CRLF's carriage return stay.
func escape(s string, lines bool) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case lines && r == '\r' && strings.HasPrefix(s[i+1:], "\n"):
			b.WriteByte('\r') // a CRLF line end draws over nothing
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == utf8.RuneError || IsBidiControl(r) || (unicode.IsControl(r) && !(lines && (r == '\n' || r == '\t'))):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Printable keeps text read from elsewhere (a fetched task's fields) to
// one line of at most max bytes, cut at a character, without control
// characters or bidirectional controls: an escape sequence in it must not
// reach a terminal, nor turn the rest of the line around.
func Printable(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError || IsBidiControl(r) {
			return -1
		}
		return r
	}, s)
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

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
// alone needs no quotes, as in git.
func QuotePath(p string, full bool) string {
	i := 0
	for ; i < len(p); i++ {
		if mustQuote(p[i], full) {
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
	for ; i < len(p); i++ {
		c := p[i]
		if !mustQuote(c, full) {
			b.WriteByte(c)
			continue
		}
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
	b.WriteByte('"')
	return b.String()
}

func mustQuote(c byte, full bool) bool {
	switch {
	case c < 0x20, c == 0x7f, c == '"', c == '\\':
		return true
	case c >= 0x80:
		return full
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
// backspaces (C0 and C1 alike), and bytes that are not UTF-8. Line breaks
// and tabs stay, so several lines stay several lines.
func Clean(s string) string {
	ok := true
	for _, r := range s {
		if r == utf8.RuneError || (unicode.IsControl(r) && r != '\n' && r != '\t') {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == utf8.RuneError || (unicode.IsControl(r) && r != '\n' && r != '\t') {
			return -1
		}
		return r
	}, s)
}

// Visible writes out the control characters of s (but line breaks and
// tabs) as Go escapes (\r, \x1b, \u009b) and bytes that are not UTF-8
// as \xff, for text a person reviews before trusting it: removing them
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

// escape writes out s's control characters and the bytes that are not
// UTF-8; with lines, line breaks, tabs and a CRLF's carriage return stay.
func escape(s string, lines bool) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case lines && r == '\r' && strings.HasPrefix(s[i+1:], "\n"):
			b.WriteByte('\r') // a CRLF line end draws over nothing
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == utf8.RuneError || (unicode.IsControl(r) && !(lines && (r == '\n' || r == '\t'))):
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
// characters: an escape sequence in it must not reach a terminal.
func Printable(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
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

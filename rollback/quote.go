package rollback

import (
	"strconv"
	"strings"
)

// quotePath names a path in a message as git does with its default
// core.quotePath (quote.c's quote_c_style): unchanged when it holds
// nothing unusual, else in double quotes with C escapes for control
// bytes, quotes, backslashes and bytes above 0x7f, so a name holding a
// newline or a control byte cannot break the message's one line.
// Warnings use the command's own setting instead (Options.QuotePath).
func quotePath(p string) string {
	i := 0
	for ; i < len(p) && !mustQuote(p[i]); i++ {
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
		if !mustQuote(c) {
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

func mustQuote(c byte) bool { return c < 0x20 || c == '"' || c == '\\' || c >= 0x7f }

// plural is "1 file" or "3 files".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

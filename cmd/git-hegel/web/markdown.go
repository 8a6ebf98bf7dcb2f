package web

import (
	"html"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// A small Markdown renderer for artifacts (SPEC.md, PLAN.md …): headings,
// paragraphs, emphasis, code, lists (with task boxes), block quotes,
// tables, rules and links. Written here rather than taken from a library
// because the libraries initialise their tables when the binary starts,
// which every git-hegel command would pay for (docs/decisions.md).
//
// Safety: every piece of text and every attribute goes through
// html.EscapeString; raw HTML in the source is shown as text; links keep
// only http, https, mailto and relative targets; images are shown as
// links (the page loads nothing from elsewhere).

// RenderMarkdown renders src as HTML that is safe to insert into a page.
func RenderMarkdown(src string) string {
	src = strings.ReplaceAll(src, "\r\n", "\n")
	src = strings.ReplaceAll(src, "\r", "\n")
	src = strings.ReplaceAll(src, "\x00", "\uFFFD")
	lines := strings.Split(strings.TrimRight(src, "\n"), "\n")
	for i, l := range lines {
		lines[i] = expandTabs(l)
	}
	md := &mdRenderer{refs: map[string]mdRef{}}
	lines = md.collectRefs(lines)
	var b strings.Builder
	md.blocks(&b, lines, 0)
	return b.String()
}

type mdRef struct{ url, title string }

type mdRenderer struct {
	refs map[string]mdRef
}

// maxDepth bounds nesting (quotes in lists in quotes…), so a hostile file
// cannot make the renderer recurse without end.
const maxDepth = 32

var mdRe = sync.OnceValue(func() map[string]*regexp.Regexp {
	return map[string]*regexp.Regexp{
		"fence":   regexp.MustCompile("^ {0,3}(`{3,}|~{3,})[ \t]*([^`]*)$"),
		"atx":     regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`),
		"hr":      regexp.MustCompile(`^ {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$`),
		"setext1": regexp.MustCompile(`^ {0,3}=+[ \t]*$`),
		"setext2": regexp.MustCompile(`^ {0,3}-+[ \t]*$`),
		"quote":   regexp.MustCompile(`^ {0,3}> ?(.*)$`),
		"item":    regexp.MustCompile(`^( {0,3})([-*+]|\d{1,9}[.)])( {1,4}|$)(.*)$`),
		"ref":     regexp.MustCompile(`^ {0,3}\[([^\]]{1,200})\]:[ \t]*<?([^ \t>]+)>?(?:[ \t]+["'(](.*)["')])?[ \t]*$`),
		"delim":   regexp.MustCompile(`^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$`),
	}
})

// headLen is how much of a line the patterns that end in "(.*)$" (a
// quote's ">", a list item's marker) are matched on: what they decide is
// in its first few bytes, and the rest of the line is their last group.
// Matched on whole lines, they ran the regexp machine over every byte of
// a line at every level of nesting: a 4 MiB artifact of one line of ">"
// or "1. " took about a minute to render.
const headLen = 256

// matchHead is re.FindStringSubmatch(l) for a pattern whose last group is
// "(.*)$", matched on l's first headLen bytes, the last group extended to
// the end of l.
func matchHead(re *regexp.Regexp, l string) []string {
	head := l[:min(len(l), headLen)]
	idx := re.FindStringSubmatchIndex(head)
	if idx == nil {
		return nil
	}
	m := make([]string, len(idx)/2)
	for k := range m {
		if idx[2*k] >= 0 {
			m[k] = l[idx[2*k]:idx[2*k+1]]
		}
	}
	if last := len(m) - 1; idx[2*last] >= 0 {
		m[last] = l[idx[2*last]:]
	}
	m[0] = l[idx[0]:]
	return m
}

func isQuote(l string) bool { return mdRe()["quote"].MatchString(l[:min(len(l), headLen)]) }

func isItem(l string) bool { return mdRe()["item"].MatchString(l[:min(len(l), headLen)]) }

func expandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	col := 0
	for _, r := range s {
		if r == '\t' {
			n := 4 - col%4
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		b.WriteRune(r)
		col++
	}
	return b.String()
}

// collectRefs takes out link reference definitions ([name]: url "title").
func (md *mdRenderer) collectRefs(lines []string) []string {
	out := lines[:0:0]
	inFence := ""
	for _, l := range lines {
		if m := mdRe()["fence"].FindStringSubmatch(l); m != nil {
			switch {
			case inFence == "":
				inFence = m[1]
			case strings.HasPrefix(strings.TrimSpace(l), inFence[:1]) && len(strings.TrimSpace(m[1])) >= len(inFence) && strings.TrimSpace(m[2]) == "":
				inFence = ""
			}
			out = append(out, l)
			continue
		}
		if inFence == "" {
			if m := mdRe()["ref"].FindStringSubmatch(l); m != nil {
				key := strings.ToLower(strings.Join(strings.Fields(m[1]), " "))
				if _, ok := md.refs[key]; !ok {
					md.refs[key] = mdRef{url: m[2], title: m[3]}
				}
				continue
			}
		}
		out = append(out, l)
	}
	return out
}

func indentOf(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }

// blocks renders lines as block elements.
func (md *mdRenderer) blocks(b *strings.Builder, lines []string, depth int) {
	if depth > maxDepth {
		b.WriteString("<pre>" + html.EscapeString(strings.Join(lines, "\n")) + "</pre>\n")
		return
	}
	re := mdRe()
	for i := 0; i < len(lines); {
		l := lines[i]
		switch {
		case isBlank(l):
			i++
		case re["fence"].MatchString(l):
			i = md.fence(b, lines, i)
		case indentOf(l) >= 4:
			var code []string
			for i < len(lines) && (indentOf(lines[i]) >= 4 || isBlank(lines[i])) {
				code = append(code, strings.TrimPrefix(lines[i], "    "))
				i++
			}
			for len(code) > 0 && isBlank(code[len(code)-1]) {
				code = code[:len(code)-1]
			}
			b.WriteString("<pre><code>" + html.EscapeString(strings.Join(code, "\n")) + "\n</code></pre>\n")
		case re["atx"].MatchString(l):
			m := re["atx"].FindStringSubmatch(l)
			n := strconv.Itoa(len(m[1]))
			b.WriteString("<h" + n + ">" + md.inline(strings.TrimSpace(m[2])) + "</h" + n + ">\n")
			i++
		case re["hr"].MatchString(l):
			b.WriteString("<hr>\n")
			i++
		case isQuote(l):
			var inner []string
			for i < len(lines) && !isBlank(lines[i]) {
				if m := matchHead(re["quote"], lines[i]); m != nil {
					inner = append(inner, m[1])
				} else {
					inner = append(inner, lines[i]) // a lazy continuation line
				}
				i++
			}
			b.WriteString("<blockquote>\n")
			md.blocks(b, inner, depth+1)
			b.WriteString("</blockquote>\n")
		case isItem(l):
			i = md.list(b, lines, i, depth)
		case i+1 < len(lines) && strings.Contains(l, "|") && re["delim"].MatchString(lines[i+1]) &&
			len(splitRow(l)) == len(splitRow(lines[i+1])):
			i = md.table(b, lines, i)
		default:
			i = md.paragraph(b, lines, i)
		}
	}
}

func (md *mdRenderer) fence(b *strings.Builder, lines []string, i int) int {
	m := mdRe()["fence"].FindStringSubmatch(lines[i])
	indent := indentOf(lines[i])
	marker := m[1]
	lang := strings.Fields(m[2])
	i++
	var code []string
	for ; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if indentOf(lines[i]) < 4 && strings.HasPrefix(t, marker) && strings.Trim(t, marker[:1]) == "" {
			i++
			break
		}
		l := lines[i]
		for k := 0; k < indent && strings.HasPrefix(l, " "); k++ {
			l = l[1:]
		}
		code = append(code, l)
	}
	class := ""
	if len(lang) > 0 {
		class = ` class="language-` + html.EscapeString(lang[0]) + `"`
	}
	text := strings.Join(code, "\n")
	if len(code) > 0 {
		text += "\n"
	}
	b.WriteString("<pre><code" + class + ">" + html.EscapeString(text) + "</code></pre>\n")
	return i
}

// startsBlock reports whether l interrupts a paragraph.
func startsBlock(l string) bool {
	re := mdRe()
	if re["fence"].MatchString(l) || re["atx"].MatchString(l) || re["hr"].MatchString(l) || isQuote(l) {
		return true
	}
	if m := matchHead(re["item"], l); m != nil && strings.TrimSpace(m[4]) != "" {
		// An ordered list interrupts a paragraph only when it starts at 1.
		return !strings.ContainsAny(m[2][len(m[2])-1:], ".)") || strings.TrimLeft(m[2][:len(m[2])-1], "0") == "1"
	}
	return false
}

func (md *mdRenderer) paragraph(b *strings.Builder, lines []string, i int) int {
	re := mdRe()
	var para []string
	for i < len(lines) && !isBlank(lines[i]) {
		if len(para) > 0 {
			if re["setext1"].MatchString(lines[i]) || re["setext2"].MatchString(lines[i]) {
				tag := "h1"
				if re["setext2"].MatchString(lines[i]) {
					tag = "h2"
				}
				b.WriteString("<" + tag + ">" + md.inline(strings.TrimSpace(strings.Join(para, "\n"))) + "</" + tag + ">\n")
				return i + 1
			}
			if startsBlock(lines[i]) {
				break
			}
		}
		para = append(para, lines[i])
		i++
	}
	b.WriteString("<p>" + md.inline(strings.TrimSpace(strings.Join(para, "\n"))) + "</p>\n")
	return i
}

// list renders the list that starts at lines[i]: items of the same kind
// of marker, each with the lines indented under it.
func (md *mdRenderer) list(b *strings.Builder, lines []string, i, depth int) int {
	re := mdRe()
	first := matchHead(re["item"], lines[i])
	ordered := !strings.ContainsAny(first[2], "-*+")
	kind := first[2][len(first[2])-1:]
	if ordered {
		start := strings.TrimLeft(first[2][:len(first[2])-1], "0")
		if start == "" {
			start = "0"
		}
		if start != "1" {
			b.WriteString(`<ol start="` + start + `">` + "\n")
		} else {
			b.WriteString("<ol>\n")
		}
	} else {
		b.WriteString("<ul>\n")
	}
	type item struct {
		lines []string
		loose bool
	}
	var items []item
	for i < len(lines) {
		m := matchHead(re["item"], lines[i])
		if m == nil || m[2][len(m[2])-1:] != kind || (!ordered && m[2] != first[2]) || re["hr"].MatchString(lines[i]) {
			break
		}
		content := len(m[1]) + len(m[2]) + len(m[3])
		if m[3] == "" {
			content++
		} else if len(m[3]) > 4 { // code in the item: one space counts
			content = len(m[1]) + len(m[2]) + 1
		}
		it := item{lines: []string{m[4]}}
		i++
		blank := false
		for i < len(lines) {
			l := lines[i]
			if isBlank(l) {
				blank = true
				it.lines = append(it.lines, "")
				i++
				continue
			}
			if indentOf(l) >= content {
				if blank {
					it.loose = true
				}
				it.lines = append(it.lines, l[content:])
				blank = false
				i++
				continue
			}
			if !blank && !startsBlock(l) && !isItem(l) {
				it.lines = append(it.lines, l) // a lazy continuation of the paragraph
				i++
				continue
			}
			break
		}
		for len(it.lines) > 0 && isBlank(it.lines[len(it.lines)-1]) {
			it.lines = it.lines[:len(it.lines)-1]
		}
		items = append(items, it)
		if blank && i < len(lines) && isItem(lines[i]) {
			items[len(items)-1].loose = true
		}
		if blank && (i >= len(lines) || !isItem(lines[i])) {
			break
		}
	}
	loose := false
	for _, it := range items {
		loose = loose || it.loose
	}
	for _, it := range items {
		b.WriteString("<li>")
		text := it.lines
		box := ""
		if len(text) > 0 {
			switch {
			case strings.HasPrefix(text[0], "[ ] "):
				box, text[0] = `<span class="task-box">☐</span> `, text[0][4:]
			case strings.HasPrefix(text[0], "[x] "), strings.HasPrefix(text[0], "[X] "):
				box, text[0] = `<span class="task-box done">☑</span> `, text[0][4:]
			}
		}
		b.WriteString(box)
		var inner strings.Builder
		md.blocks(&inner, text, depth+1)
		s := inner.String()
		if !loose {
			// A tight list: the first paragraph's text stands alone.
			if strings.HasPrefix(s, "<p>") {
				if end := strings.Index(s, "</p>\n"); end >= 0 {
					s = s[3:end] + "\n" + s[end+5:]
				}
			}
			s = strings.TrimSuffix(s, "\n")
		}
		b.WriteString(s)
		b.WriteString("</li>\n")
	}
	if ordered {
		b.WriteString("</ol>\n")
	} else {
		b.WriteString("</ul>\n")
	}
	return i
}

// splitRow splits a table row into cells, honouring \| and code spans.
func splitRow(l string) []string {
	l = strings.TrimSpace(l)
	l = strings.TrimPrefix(l, "|")
	if strings.HasSuffix(l, "|") && !strings.HasSuffix(l, `\|`) {
		l = l[:len(l)-1]
	}
	var cells []string
	var cur strings.Builder
	inCode := false
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case c == '\\' && i+1 < len(l) && l[i+1] == '|':
			cur.WriteByte('|')
			i++
		case c == '`':
			inCode = !inCode
			cur.WriteByte(c)
		case c == '|' && !inCode:
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

func (md *mdRenderer) table(b *strings.Builder, lines []string, i int) int {
	head := splitRow(lines[i])
	var align []string
	for _, d := range splitRow(lines[i+1]) {
		switch {
		case strings.HasPrefix(d, ":") && strings.HasSuffix(d, ":"):
			align = append(align, ` class="al-center"`)
		case strings.HasSuffix(d, ":"):
			align = append(align, ` class="al-right"`)
		case strings.HasPrefix(d, ":"):
			align = append(align, ` class="al-left"`)
		default:
			align = append(align, "")
		}
	}
	b.WriteString("<table>\n<thead>\n<tr>")
	for k, h := range head {
		b.WriteString("<th" + align[k] + ">" + md.inline(h) + "</th>")
	}
	b.WriteString("</tr>\n</thead>\n<tbody>\n")
	i += 2
	for i < len(lines) && !isBlank(lines[i]) && !startsBlock(lines[i]) {
		cells := splitRow(lines[i])
		b.WriteString("<tr>")
		for k := range head {
			c := ""
			if k < len(cells) {
				c = cells[k]
			}
			b.WriteString("<td" + align[k] + ">" + md.inline(c) + "</td>")
		}
		b.WriteString("</tr>\n")
		i++
	}
	b.WriteString("</tbody>\n</table>\n")
	return i
}

// inline renders the text of one block.
func (md *mdRenderer) inline(s string) string {
	var b strings.Builder
	md.inlineTo(&b, s, 0)
	return b.String()
}

const mdPunct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

// maxScan bounds how far ahead a closing emphasis delimiter is looked for.
const maxScan = 4 << 10

// spans holds what one pass over a block's text finds, so that matching
// a backtick run, a bracket or an emphasis delimiter never rescans the
// text: rendering stays linear in the size of the artifact.
type spans struct {
	codeEnd map[int]int  // backtick run start -> start of the run that closes it
	bracket map[int]int  // '[' -> its matching ']'
	lastEnd map[byte]int // '*', '_', '~' -> start of the last run that can close
}

func scanSpans(s string) *spans {
	sp := &spans{codeEnd: map[int]int{}, bracket: map[int]int{}, lastEnd: map[byte]int{'*': -1, '_': -1, '~': -1}}
	// Backtick runs: each opens at the next run of the same length.
	type brun struct{ pos, n int }
	var runs []brun
	for i := 0; i < len(s); {
		if s[i] == '\\' {
			i += 2
			continue
		}
		if s[i] == '`' {
			n := run(s, i, '`')
			runs = append(runs, brun{i, n})
			i += n
			continue
		}
		i++
	}
	next := map[int]int{} // length -> index of the next run of that length
	nextOf := make([]int, len(runs))
	for k := len(runs) - 1; k >= 0; k-- {
		if j, ok := next[runs[k].n]; ok {
			nextOf[k] = j
		} else {
			nextOf[k] = -1
		}
		next[runs[k].n] = k
	}
	for k := 0; k < len(runs); {
		if j := nextOf[k]; j >= 0 {
			sp.codeEnd[runs[k].pos] = runs[j].pos
			k = j + 1
			continue
		}
		k++
	}
	// Brackets and closers, outside code spans.
	var stack []int
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			i += 2
			continue
		case c == '`':
			n := run(s, i, '`')
			if e, ok := sp.codeEnd[i]; ok {
				i = e + n
				continue
			}
			i += n
			continue
		case c == '[':
			stack = append(stack, i)
		case c == ']':
			if len(stack) > 0 {
				sp.bracket[stack[len(stack)-1]] = i
				stack = stack[:len(stack)-1]
			}
		case c == '*' || c == '_' || c == '~':
			n := run(s, i, c)
			if i > 0 && s[i-1] != ' ' && s[i-1] != '\n' {
				sp.lastEnd[c] = i
			}
			i += n
			continue
		}
		i++
	}
	return sp
}

func (md *mdRenderer) inlineTo(b *strings.Builder, s string, depth int) {
	if depth > maxDepth {
		b.WriteString(html.EscapeString(s))
		return
	}
	sp := scanSpans(s)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && strings.IndexByte(mdPunct, s[i+1]) >= 0:
			b.WriteString(html.EscapeString(s[i+1 : i+2]))
			i += 2
		case c == '\\' && i+1 < len(s) && s[i+1] == '\n':
			b.WriteString("<br>\n")
			i += 2
		case c == ' ':
			n := run(s, i, ' ')
			if i+n < len(s) && s[i+n] == '\n' {
				// Spaces at the end of a line: two or more break it.
				if n >= 2 {
					b.WriteString("<br>")
				}
				i += n
				continue
			}
			b.WriteString(s[i : i+n])
			i += n
		case c == '\n':
			b.WriteString("\n")
			i++
			for i < len(s) && s[i] == ' ' {
				i++
			}
		case c == '`':
			n := run(s, i, '`')
			closeAt, ok := sp.codeEnd[i]
			if !ok {
				b.WriteString(strings.Repeat("`", n))
				i += n
				continue
			}
			code := strings.ReplaceAll(s[i+n:closeAt], "\n", " ")
			if len(code) > 2 && code[0] == ' ' && code[len(code)-1] == ' ' && strings.Trim(code, " ") != "" {
				code = code[1 : len(code)-1]
			}
			b.WriteString("<code>" + html.EscapeString(code) + "</code>")
			i = closeAt + n
		case c == '<':
			if end := strings.IndexByte(s[i:min(len(s), i+2048)], '>'); end > 0 {
				target := s[i+1 : i+end]
				if isAutolink(target) {
					md.link(b, target, "", html.EscapeString(strings.TrimPrefix(target, "mailto:")))
					i += end + 1
					continue
				}
			}
			b.WriteString("&lt;")
			i++
		case c == '!' && i+1 < len(s) && s[i+1] == '[':
			if text, url, title, n, ok := md.linkAt(s, i+1, sp); ok {
				label := "image: " + text
				if text == "" {
					label = "image"
				}
				md.link(b, url, title, html.EscapeString(label))
				i += 1 + n
				continue
			}
			b.WriteString("!")
			i++
		case c == '[':
			if text, url, title, n, ok := md.linkAt(s, i, sp); ok {
				var inner strings.Builder
				md.inlineTo(&inner, text, depth+1)
				md.link(b, url, title, inner.String())
				i += n
				continue
			}
			b.WriteString("[")
			i++
		case c == '*' || c == '_' || c == '~':
			n := run(s, i, c)
			if c == '~' && n != 2 {
				b.WriteString(strings.Repeat("~", n))
				i += n
				continue
			}
			if end, k := closingDelim(s, i, c, n, sp); end >= 0 {
				tag := map[int]string{1: "em", 2: "strong"}[k]
				if c == '~' {
					tag = "del"
				}
				if k == 3 {
					b.WriteString("<em><strong>")
				} else {
					b.WriteString(strings.Repeat(string(c), n-k) + "<" + tag + ">")
				}
				md.inlineTo(b, s[i+n:end], depth+1)
				if k == 3 {
					b.WriteString("</strong></em>")
				} else {
					b.WriteString("</" + tag + ">")
				}
				i = end + k
				continue
			}
			b.WriteString(strings.Repeat(string(c), n))
			i += n
		case c == 'h' && (strings.HasPrefix(s[i:], "https://") || strings.HasPrefix(s[i:], "http://")) && (i == 0 || !isWordByte(s[i-1])):
			end := i
			for end < len(s) && s[end] > ' ' && s[end] != '<' && s[end] != '>' && s[end] != '"' {
				end++
			}
			for end > i && strings.IndexByte(".,:;!?)'*_~", s[end-1]) >= 0 {
				end--
			}
			url := s[i:end]
			md.link(b, url, "", html.EscapeString(url))
			i = end
		default:
			_, size := utf8.DecodeRuneInString(s[i:])
			b.WriteString(html.EscapeString(s[i : i+size]))
			i += size
		}
	}
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func run(s string, i int, c byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == c {
		n++
	}
	return n
}

// closingDelim finds where the emphasis opened by the run of n bytes c at
// i closes, and how many of the run it uses (1 em, 2 strong, 3 both).
// Underscores inside words do not count, as in CommonMark.
func closingDelim(s string, i int, c byte, n int, sp *spans) (int, int) {
	after := i + n
	if after >= len(s) || s[after] == ' ' || s[after] == '\n' || sp.lastEnd[c] < after {
		return -1, 0 // not left-flanking, or nothing after it can close
	}
	if c == '_' && i > 0 && isWordByte(s[i-1]) {
		return -1, 0
	}
	want := min(n, 3)
	limit := min(len(s), after+maxScan, sp.lastEnd[c]+1)
	for j := after; j < limit; j++ {
		switch s[j] {
		case '`':
			k := run(s, j, '`')
			if e, ok := sp.codeEnd[j]; ok {
				j = e + k - 1
			} else {
				j += k - 1
			}
			continue
		case '\\':
			j++
			continue
		}
		if s[j] != c {
			continue
		}
		k := run(s, j, c)
		if s[j-1] == ' ' || s[j-1] == '\n' {
			j += k - 1
			continue // not right-flanking
		}
		if c == '_' && j+k < len(s) && isWordByte(s[j+k]) {
			j += k - 1
			continue
		}
		if k >= want {
			return j, want
		}
		if k <= 2 && (c != '~' || k == 2) {
			return j, k
		}
		j += k - 1
	}
	return -1, 0
}

// linkAt parses [text](url "title") or [text][ref] / [text] (a defined
// reference) at s[i] == '['. n is the length consumed.
func (md *mdRenderer) linkAt(s string, i int, sp *spans) (text, url, title string, n int, ok bool) {
	j, found := sp.bracket[i]
	if !found {
		return "", "", "", 0, false
	}
	text = s[i+1 : j]
	rest := s[j+1:]
	if strings.HasPrefix(rest, "(") {
		end := strings.IndexByte(rest[:min(len(rest), 4096)], ')')
		if end < 0 {
			return "", "", "", 0, false
		}
		// Allow one level of balanced parentheses in the target.
		if open := strings.IndexByte(rest[1:end], '('); open >= 0 {
			if e2 := strings.IndexByte(rest[end+1:min(len(rest), end+1+4096)], ')'); e2 >= 0 {
				end = end + 1 + e2
			}
		}
		inside := strings.TrimSpace(rest[1:end])
		url = inside
		if k := strings.IndexAny(inside, " \n"); k >= 0 {
			url = inside[:k]
			t := strings.TrimSpace(inside[k:])
			if len(t) >= 2 && (t[0] == '"' || t[0] == '\'') && t[len(t)-1] == t[0] {
				title = t[1 : len(t)-1]
			} else {
				return "", "", "", 0, false
			}
		}
		url = strings.TrimSuffix(strings.TrimPrefix(url, "<"), ">")
		return text, unescapeMD(url), title, j + 1 + end + 1 - i, true
	}
	key := text
	consumed := j + 1 - i
	if strings.HasPrefix(rest, "[") {
		if end, ok := sp.bracket[j+1]; ok {
			if k := s[j+2 : end]; k != "" {
				key = k
			}
			consumed = end + 1 - i
		}
	}
	if len(md.refs) == 0 {
		return "", "", "", 0, false
	}
	ref, found := md.refs[strings.ToLower(strings.Join(strings.Fields(key), " "))]
	if !found {
		return "", "", "", 0, false
	}
	return text, ref.url, ref.title, consumed, true
}

func unescapeMD(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(mdPunct, s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isAutolink(t string) bool {
	if strings.ContainsAny(t, " <>\n") {
		return false
	}
	return strings.HasPrefix(t, "http://") || strings.HasPrefix(t, "https://") || strings.HasPrefix(t, "mailto:")
}

// SafeURL reports whether a link target may be followed: http, https,
// mailto, or a reference without a scheme (a relative path, #anchor).
func SafeURL(u string) bool {
	u = strings.TrimSpace(u)
	for _, r := range u {
		if unicode.IsControl(r) {
			return false
		}
	}
	colon := strings.IndexByte(u, ':')
	if colon < 0 {
		return true
	}
	if k := strings.IndexAny(u, "/?#"); k >= 0 && k < colon {
		return true // the colon is in the path, not a scheme
	}
	switch strings.ToLower(u[:colon]) {
	case "http", "https", "mailto":
		return true
	}
	return false
}

// link writes an anchor around label (HTML already); an unsafe target
// leaves the label as plain text.
func (md *mdRenderer) link(b *strings.Builder, url, title, label string) {
	if !SafeURL(url) {
		b.WriteString(label)
		return
	}
	b.WriteString(`<a href="` + html.EscapeString(url) + `"`)
	if title != "" {
		b.WriteString(` title="` + html.EscapeString(title) + `"`)
	}
	if externalURL(url) {
		b.WriteString(` rel="noopener noreferrer"`)
	}
	b.WriteString(">" + label + "</a>")
}

// externalURL reports a link that leaves the dashboard: one with a scheme,
// or a scheme-relative one ("//host/x"; browsers read a backslash as a
// slash there, so "/\host" and "\\host" are the same), which only looks
// relative.
func externalURL(u string) bool {
	u = strings.TrimSpace(u)
	if strings.Contains(u, "://") || strings.HasPrefix(strings.ToLower(u), "mailto:") {
		return true
	}
	return len(u) >= 2 && (u[0] == '/' || u[0] == '\\') && (u[1] == '/' || u[1] == '\\')
}

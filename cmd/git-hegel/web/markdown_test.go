package web

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// checkSafeHTML parses out as a browser would and fails on any element,
// attribute or link target the renderer never means to produce.
func checkSafeHTML(t *testing.T, in, out string) {
	t.Helper()
	tags := map[string]bool{"p": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "em": true, "strong": true,
		"del": true, "code": true, "pre": true, "ul": true, "ol": true, "li": true, "blockquote": true, "hr": true, "br": true, "a": true,
		"table": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true, "span": true}
	attrs := map[string]bool{"href": true, "title": true, "rel": true, "class": true, "style": true, "start": true}
	z := html.NewTokenizer(strings.NewReader(out))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		if !tags[tok.Data] {
			t.Errorf("RenderMarkdown(%.60q) made a <%s> element:\n%.300s", in, tok.Data, out)
		}
		for _, a := range tok.Attr {
			if !attrs[a.Key] {
				t.Errorf("RenderMarkdown(%.60q) made attribute %s=%q:\n%.300s", in, a.Key, a.Val, out)
			}
			if a.Key == "href" && !SafeURL(a.Val) {
				t.Errorf("RenderMarkdown(%.60q) links to %q", in, a.Val)
			}
			if a.Key == "style" {
				t.Errorf("RenderMarkdown(%.60q) made style %q (the page's policy allows no inline style)", in, a.Val)
			}
		}
	}
}

func TestRenderMarkdown(t *testing.T) {
	cases := []struct{ in, want string }{
		{"# Title\n\nSome *em* and **strong** and `code`.", "<h1>Title</h1>\n<p>Some <em>em</em> and <strong>strong</strong> and <code>code</code>.</p>\n"},
		{"Title\n=====\nSub\n---", "<h1>Title</h1>\n<h2>Sub</h2>\n"},
		{"- a\n- b\n  - c\n", "<ul>\n<li>a</li>\n<li>b\n<ul>\n<li>c</li>\n</ul></li>\n</ul>\n"},
		{"1. one\n2. two", "<ol>\n<li>one</li>\n<li>two</li>\n</ol>\n"},
		{"3. three", "<ol start=\"3\">\n<li>three</li>\n</ol>\n"},
		{"- [ ] todo\n- [x] done", "<ul>\n<li><span class=\"task-box\">☐</span> todo</li>\n<li><span class=\"task-box done\">☑</span> done</li>\n</ul>\n"},
		{"```go\nfunc main() {}\n```", "<pre><code class=\"language-go\">func main() {}\n</code></pre>\n"},
		{"    indented\n    code", "<pre><code>indented\ncode\n</code></pre>\n"},
		{"> quoted\n> text", "<blockquote>\n<p>quoted\ntext</p>\n</blockquote>\n"},
		{"---", "<hr>\n"},
		{"| a | b |\n|---|--:|\n| 1 | 2 |", "<table>\n<thead>\n<tr><th>a</th><th class=\"al-right\">b</th></tr>\n</thead>\n<tbody>\n<tr><td>1</td><td class=\"al-right\">2</td></tr>\n</tbody>\n</table>\n"},
		{"[site](https://example.com \"T\")", "<p><a href=\"https://example.com\" title=\"T\" rel=\"noopener noreferrer\">site</a></p>\n"},
		{"[plan](PLAN.md)", "<p><a href=\"PLAN.md\">plan</a></p>\n"},
		// Scheme-relative links leave the site: they are marked as such.
		{"[x](//evil.example/x)", "<p><a href=\"//evil.example/x\" rel=\"noopener noreferrer\">x</a></p>\n"},
		{"[x](/\\evil.example/x)", "<p><a href=\"/\\evil.example/x\" rel=\"noopener noreferrer\">x</a></p>\n"},
		{"[root](/task/t)", "<p><a href=\"/task/t\">root</a></p>\n"},
		{"see [the spec][s]\n\n[s]: SPEC.md", "<p>see <a href=\"SPEC.md\">the spec</a></p>\n"},
		{"<https://example.com>", "<p><a href=\"https://example.com\" rel=\"noopener noreferrer\">https://example.com</a></p>\n"},
		{"visit https://example.com/x.", "<p>visit <a href=\"https://example.com/x\" rel=\"noopener noreferrer\">https://example.com/x</a>.</p>\n"},
		{"snake_case_name stays", "<p>snake_case_name stays</p>\n"},
		{"~~gone~~", "<p><del>gone</del></p>\n"},
		{"line one  \nline two", "<p>line one<br>\nline two</p>\n"},
		{`\*not em\*`, "<p>*not em*</p>\n"},
	}
	for _, c := range cases {
		if got := RenderMarkdown(c.in); got != c.want {
			t.Errorf("RenderMarkdown(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// TestRenderMarkdownEscapes: nothing in an artifact becomes markup the
// page would run or load: raw HTML is text, javascript: and data: links
// lose their link, images are links, attributes cannot be broken out of.
func TestRenderMarkdownEscapes(t *testing.T) {
	hostile := []string{
		"<script>alert(1)</script>",
		"<img src=x onerror=alert(1)>",
		"# <b onmouseover=alert(1)>x</b>",
		"[click](javascript:alert(1))",
		"[click](JaVaScRiPt:alert(1))",
		"[click](data:text/html,<script>alert(1)</script>)",
		"[x](https://a.example/\"onmouseover=\"alert(1))",
		"![pic](https://tracker.example/p.png)",
		"<javascript:alert(1)>",
		"```\"><script>alert(1)</script>\n</code></pre><script>x</script>\n```",
		"| <i>a</i> |\n|---|\n| <svg onload=alert(1)> |",
		"[a](<javascript:alert(1)>)",
		"[x]: javascript:alert(1)\n\n[x]",
		"``` \"><img src=x onerror=alert(1)>\ncode\n```",
		strings.Repeat(">", 5000) + " deep",
		strings.Repeat("- ", 5000) + "deep",
		strings.Repeat("[", 3000) + "x" + strings.Repeat("]", 3000),
		strings.Repeat("*a ", 3000),
	}
	for _, in := range hostile {
		checkSafeHTML(t, in, RenderMarkdown(in))
	}
	if out := RenderMarkdown("![pic](https://tracker.example/p.png)"); !strings.Contains(out, `<a href="https://tracker.example/p.png" rel="noopener noreferrer">image: pic</a>`) {
		t.Errorf("an image is not a link: %s", out)
	}
}

func TestSafeURL(t *testing.T) {
	for u, want := range map[string]bool{
		"https://x": true, "http://x": true, "mailto:a@b": true, "PLAN.md": true, "#top": true, "a/b:c": true,
		"javascript:x": false, " javascript:x": false, "vbscript:x": false, "data:x": false, "java\nscript:x": false, "file:///etc/passwd": false,
	} {
		if got := SafeURL(u); got != want {
			t.Errorf("SafeURL(%q) = %v, want %v", u, got, want)
		}
	}
}

// TestRenderMarkdownLinear: a large artifact full of unmatched markers
// renders quickly (the scans ahead are bounded).
func TestRenderMarkdownLinear(t *testing.T) {
	for _, unit := range []string{"*a ", "[", "`x ", "_a ", "![", "~~a "} {
		in := strings.Repeat(unit, (1<<20)/len(unit))
		start := time.Now()
		RenderMarkdown(in)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("1 MiB of %q took %v", unit, d)
		}
	}
}

// TestRenderMarkdownNestedLongLine: an artifact of the largest size
// served, one line of nested quotes or list markers, renders quickly:
// each level of nesting looks at the line's start, not at all of it
// (it took about a minute).
func TestRenderMarkdownNestedLongLine(t *testing.T) {
	for _, unit := range []string{">", "> ", "1. ", "- > ", "> - "} {
		in := strings.Repeat(unit, (4<<20)/len(unit))
		start := time.Now()
		out := RenderMarkdown(in)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("4 MiB of %q took %v", unit, d)
		}
		if !strings.Contains(out, "<pre>") {
			t.Errorf("4 MiB of %q: the nesting past the bound is not shown as text", unit)
		}
	}
}

func FuzzRenderMarkdown(f *testing.F) {
	for _, s := range []string{"# a\n\n- b\n- [x] c\n\n> d\n\n```\ne\n```\n", "[a](b) ![c](d) <e> **f** _g_ `h` ~~i~~", "| a | b |\n|--|--|\n| c | d |"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkSafeHTML(t, s, RenderMarkdown(s)) })
}

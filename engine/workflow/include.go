package workflow

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/git-hegel/git-hegel/engine/text"
)

// Includes: {{templates/NAME}} inserts the template .hegel/guides/templates/NAME.md,
// rendered with the same values (it may use them, other includes and
// guides). A part of the name may come from a value:
// {{templates/code_map_{{code_map_style}}}} picks the file by the value of
// code_map_style ({{?code_map_style}} and {{context.code_map_style}} are
// the same value). Handlebars cannot parse a mustache inside a mustache,
// so before parsing each include is rewritten into a call of a helper only
// the renderer registers: `{{hegel_include "code_map_{code_map_style}" v0=?code_map_style}}`,
// the pattern, then the values it names in order.

// includeHelper is the helper includes are rewritten into. A template that
// calls it itself is refused (refCollector counts the calls).
const includeHelper = "hegel_include"

// includePrefix starts every include.
const includePrefix = "{{templates/"

// maxIncludeDepth bounds includes inside includes; a cycle is reported
// before it is reached.
const maxIncludeDepth = 10

var (
	templateNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]*$`) })
	includeValueRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\{\{\s*(?:\?|context\.)?\s*([A-Za-z_][A-Za-z0-9_-]*)\s*\}\}`)
	})
	namePartRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+`) })
)

// ValidTemplateName reports whether name can name an include: letters,
// digits, '_' and '-' (no '.', no '/': nothing outside the templates
// directory).
func ValidTemplateName(name string) bool {
	return len(name) <= maxNameLen && templateNameRe().MatchString(name)
}

// include is one {{templates/...}} as written: the pattern of its name
// with each value as {NAME}, and the values it names.
type include struct {
	pattern string
	values  []string
	line    int
	start   int // byte offsets of the whole include in the text
	end     int
}

// written gives the include back as its author wrote it.
func (in include) written() string {
	s := in.pattern
	for _, v := range in.values {
		s = strings.Replace(s, "{"+v+"}", "{{"+v+"}}", 1)
	}
	return "{{templates/" + s + "}}"
}

// name fills the pattern in with the values; a missing or empty value, or
// a name that is not a plain file name, is an error.
func (in include) name(value func(string) (string, bool)) (string, error) {
	s := in.pattern
	for _, v := range in.values {
		val, ok := value(v)
		if !ok || val == "" {
			return "", fmt.Errorf("%s: no value for %s (.hegel/context/%s.md)", in.written(), v, v)
		}
		s = strings.Replace(s, "{"+v+"}", strings.TrimSpace(val), 1)
	}
	if !ValidTemplateName(s) {
		return "", fmt.Errorf("%s: %s is not a template name (letters, digits, '_' and '-'; path traversal is not allowed)", in.written(), text.Quote(s))
	}
	return s, nil
}

// scanIncludes finds every include in src (an escaped \{{ is text).
func scanIncludes(src string) ([]include, error) {
	var out []include
	for off := 0; ; {
		i := strings.Index(src[off:], includePrefix)
		if i < 0 {
			return out, nil
		}
		start := off + i
		line := 1 + strings.Count(src[:start], "\n")
		if start > 0 && src[start-1] == '\\' {
			off = start + len(includePrefix)
			continue
		}
		in := include{line: line, start: start}
		p := start + len(includePrefix)
		for {
			rest := src[p:]
			if strings.HasPrefix(rest, "}}") {
				p += 2
				break
			}
			if m := namePartRe().FindString(rest); m != "" {
				in.pattern += m
				p += len(m)
				continue
			}
			if m := includeValueRe().FindStringSubmatch(rest); m != nil {
				in.pattern += "{" + m[1] + "}"
				in.values = append(in.values, m[1])
				p += len(m[0])
				continue
			}
			end := strings.Index(rest, "}}")
			if end < 0 {
				end = len(rest)
			}
			if nl := strings.IndexByte(rest[:end], '\n'); nl >= 0 {
				end = nl
			}
			bad := includePrefix + in.pattern + rest[:end]
			if strings.Contains(bad, "..") || strings.Contains(rest[:end], "/") || strings.Contains(rest[:end], `\`) {
				return nil, &TemplateError{line, fmt.Sprintf("%s: path traversal is not allowed: an include names a file in the templates directory, {{templates/NAME}}", bad)}
			}
			return nil, &TemplateError{line, fmt.Sprintf("%s: an include is {{templates/NAME}}, NAME of letters, digits, '_' and '-', parts of it may be values ({{templates/x_{{name}}}})", bad)}
		}
		if in.pattern == "" {
			return nil, &TemplateError{line, "{{templates/}}: an include needs a name"}
		}
		in.end = p
		out = append(out, in)
		off = p
	}
}

// rewriteIncludes replaces every include of src with a call of the
// include helper, which Handlebars can parse.
func rewriteIncludes(src string) (string, []include, error) {
	incs, err := scanIncludes(src)
	if err != nil || len(incs) == 0 {
		return src, nil, err
	}
	var b strings.Builder
	last := 0
	for _, in := range incs {
		b.WriteString(src[last:in.start])
		b.WriteString("{{" + includeHelper + " \"" + in.pattern + "\"")
		for i, v := range in.values {
			fmt.Fprintf(&b, " v%d=?%s", i, v)
		}
		b.WriteString("}}")
		last = in.end
	}
	b.WriteString(src[last:])
	return b.String(), incs, nil
}

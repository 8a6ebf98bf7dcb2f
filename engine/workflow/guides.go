package workflow

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/git-hegel/git-hegel/engine/text"
)

// Guides are Markdown documents a prompt includes by name ({{NAME}}),
// partials are Handlebars snippets it includes with {{> name}}, and
// includes are templates it inserts with {{templates/name}}. The user's
// files under .hegel/guides/ come first (a partial in partials/, else
// beside the guides as NAME.hbs); the built-ins below fill in the rest.

// ErrNotFound is what a store wraps when what was asked for is not there:
// a guide, a partial or a context value here, a task or a stash in
// engine, which uses this same value.
var ErrNotFound = errors.New("not found")

//go:embed guides/*.md guides/partials/*.hbs
var guidesFS embed.FS

// GuideSource reads the user's guides and partials. gitstore implements it
// on the working tree; a nil source means there are none.
type GuideSource interface {
	// UserGuideNames lists .hegel/guides/*.md by name (no extension).
	UserGuideNames() ([]string, error)
	// UserGuide returns .hegel/guides/NAME.md, or an error wrapping
	// ErrNotFound.
	UserGuide(name string) ([]byte, error)
	// UserPartialNames lists .hegel/guides/partials/*.hbs by name.
	UserPartialNames() ([]string, error)
	// UserPartial returns .hegel/guides/partials/NAME.hbs, or an error
	// wrapping ErrNotFound.
	UserPartial(name string) ([]byte, error)
	// UserGuidePartial returns .hegel/guides/NAME.hbs, where a partial
	// not in partials/ is looked for next, or an error wrapping
	// ErrNotFound; UserGuidePartialNames lists them.
	UserGuidePartial(name string) ([]byte, error)
	UserGuidePartialNames() ([]string, error)
	// UserTemplate returns .hegel/guides/templates/NAME.md, the text of
	// {{templates/NAME}}, or an error wrapping ErrNotFound;
	// UserTemplateNames lists them.
	UserTemplate(name string) ([]byte, error)
	UserTemplateNames() ([]string, error)
	// Optional returns .hegel/context/NAME.md, the value of {{?NAME}},
	// or an error wrapping ErrNotFound.
	Optional(name string) ([]byte, error)
}

var guideFileRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`) })

// ValidGuideName reports whether name can name a guide: upper-case
// letters, digits and '_', starting with a letter (what {{NAME}} matches).
func ValidGuideName(name string) bool {
	return len(name) <= maxNameLen && guideFileRe().MatchString(name)
}

// ValidPartialName reports whether name can name a partial.
func ValidPartialName(name string) bool { return validName(name) }

// BuiltinGuideNames lists the built-in guides, sorted.
func BuiltinGuideNames() []string { return slices.Clone(builtinGuideNames()) }

var builtinGuideNames = sync.OnceValue(func() []string { return embeddedNames("guides", ".md") })

var builtinPartialNames = sync.OnceValue(func() []string { return embeddedNames("guides/partials", ".hbs") })

func embeddedNames(dir, ext string) []string {
	ents, err := fs.ReadDir(guidesFS, dir)
	if err != nil {
		panic(err)
	}
	var out []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ext); ok && !e.IsDir() {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// HasBuiltinGuide reports whether a built-in guide is called name.
func HasBuiltinGuide(name string) bool {
	_, ok := slices.BinarySearch(builtinGuideNames(), name)
	return ok
}

// HasBuiltinPartial reports whether a built-in partial is called name.
func HasBuiltinPartial(name string) bool {
	_, ok := slices.BinarySearch(builtinPartialNames(), name)
	return ok
}

// BuiltinGuide returns the text of a built-in guide.
func BuiltinGuide(name string) (string, bool) {
	if !HasBuiltinGuide(name) {
		return "", false
	}
	b, err := guidesFS.ReadFile("guides/" + name + ".md")
	return string(b), err == nil
}

// BuiltinPartial returns the source of a built-in partial.
func BuiltinPartial(name string) (string, bool) {
	if !HasBuiltinPartial(name) {
		return "", false
	}
	b, err := guidesFS.ReadFile("guides/partials/" + name + ".hbs")
	return string(b), err == nil
}

// Guide is one guide as `git hegel guides` lists it.
type Guide struct {
	Name   string
	Source string // "built-in" or ".hegel/guides/NAME.md"
	Title  string // the first heading, or the first line
	Text   string
	// Overrides is set when a user guide replaces a built-in one.
	Overrides bool
}

// Guides lists every guide, the user's first, sorted by name. A user
// guide replaces the built-in of the same name.
func Guides(src GuideSource, dir string) ([]Guide, error) {
	byName := map[string]Guide{}
	for _, n := range builtinGuideNames() {
		text, _ := BuiltinGuide(n)
		byName[n] = Guide{Name: n, Source: builtinSource, Text: text, Title: guideTitle(text)}
	}
	if src != nil {
		names, err := src.UserGuideNames()
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			b, err := src.UserGuide(n)
			if err != nil {
				return nil, err
			}
			_, builtin := byName[n]
			byName[n] = Guide{Name: n, Source: dir + "/" + n + ".md", Text: string(b), Title: guideTitle(string(b)), Overrides: builtin}
		}
	}
	out := make([]Guide, 0, len(byName))
	for _, g := range byName {
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b Guide) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// guideTitle is a guide's first heading without its #s, or its first line.
func guideTitle(text string) string {
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		return strings.TrimSpace(strings.TrimLeft(l, "#"))
	}
	return ""
}

// guideText returns a guide's text: the user's, else the built-in.
func guideText(src GuideSource, name string) (string, error) {
	if src != nil {
		b, err := src.UserGuide(name)
		if err == nil {
			return string(b), nil
		}
		if !errors.Is(err, ErrNotFound) {
			return "", err
		}
	}
	if t, ok := BuiltinGuide(name); ok {
		return t, nil
	}
	return "", fmt.Errorf("unknown guide {{%s}}: no .hegel/guides/%s.md and no built-in guide of that name", name, name)
}

// partialText returns a partial's source: the user's (in partials/, else
// guides/NAME.hbs), else the built-in.
func partialText(src GuideSource, name string) (string, error) {
	if !ValidPartialName(name) {
		return "", fmt.Errorf("partial %s: invalid name: %s", text.Quote(name), nameRule)
	}
	if src != nil {
		for _, read := range []func(string) ([]byte, error){src.UserPartial, src.UserGuidePartial} {
			b, err := read(name)
			if err == nil {
				return string(b), nil
			}
			if !errors.Is(err, ErrNotFound) {
				return "", err
			}
		}
	}
	if t, ok := BuiltinPartial(name); ok {
		return t, nil
	}
	return "", fmt.Errorf("unknown partial {{> %s}}: no .hegel/guides/partials/%s.hbs and no .hegel/guides/%s.hbs", name, name, name)
}

// includeText returns the text of {{templates/name}}.
func includeText(src GuideSource, name string) (string, error) {
	if !ValidTemplateName(name) {
		return "", fmt.Errorf("{{templates/%s}}: invalid template name (path traversal is not allowed)", name)
	}
	if src != nil {
		b, err := src.UserTemplate(name)
		if err == nil {
			return string(b), nil
		}
		if !errors.Is(err, ErrNotFound) {
			return "", err
		}
	}
	return "", fmt.Errorf("unknown template {{templates/%s}}: no .hegel/guides/templates/%s.md", name, name)
}

// optionalValue reads the optional context name; a name that cannot be a
// file name is simply unset.
func optionalValue(src GuideSource, name string) (string, error) {
	if src == nil || !validOptionalName(name) {
		return "", ErrNotFound
	}
	b, err := src.Optional(name)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

var optionalNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`) })

func validOptionalName(n string) bool { return len(n) <= maxNameLen && optionalNameRe().MatchString(n) }

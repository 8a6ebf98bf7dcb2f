package workflow

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/mailgun/raymond/v2"

	"github.com/git-hegel/git-hegel/engine/text"
)

// RenderData is everything a template may use. Guides, partials, includes
// and optional context are looked up by name when the template (or a
// partial or include it uses) names them; a missing guide, partial or
// include is an error, a missing value is empty.
type RenderData struct {
	Guide   func(name string) (string, error)
	Partial func(name string) (string, error)
	// Include returns the text of {{templates/NAME}}.
	Include func(name string) (string, error)
	// Optional holds values by name ({{?name}}); Value, if set, looks up
	// the ones Optional lacks (an error wrapping ErrNotFound: unset).
	Optional map[string]string
	Value    func(name string) (string, error)
	Prompt   string
	Context  string
	Results  map[string]string
	Task     map[string]string // keys: taskFields
	Vars     map[string]string
}

// Render fills the template in. Text is inserted as is, never escaped.
func (t *Template) Render(d RenderData) (string, error) {
	r := &renderer{d: d, values: map[string]*string{}, guides: map[string]string{},
		partials: map[string]*Template{}, includes: map[string]*Template{}}
	return r.exec(t, nil)
}

// RenderNode renders t, one of node n's templates whose text starts at
// file line line; what prefixes messages about it ("" for the prompt,
// "run: confirm: "). Guides, partials, includes and optional context
// come from src (nil: the built-ins only); d carries the task's and the
// run's values (its Guide, Partial, Include and Value are filled in
// here). An error names the file and line of the template.
func (w *Definition) RenderNode(n *Node, t *Template, line int, what string, src GuideSource, d RenderData) (string, error) {
	d.Guide = func(name string) (string, error) { return guideText(src, name) }
	d.Partial = func(name string) (string, error) { return partialText(src, name) }
	d.Include = func(name string) (string, error) { return includeText(src, name) }
	d.Value = func(name string) (string, error) { return optionalValue(src, name) }
	out, err := t.Render(d)
	if err != nil {
		if te, ok := err.(*TemplateError); ok && line > 0 {
			return "", fmt.Errorf("%s:%d: node %q: %s%s", w.Source, line+te.Line-1, n.Name, what, te.Msg)
		}
		return "", fmt.Errorf("%s: node %q: %s%v", w.Source, n.Name, what, err)
	}
	return trimRightNL(out), nil
}

func trimRightNL(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == ' ') {
		s = s[:len(s)-1]
	}
	return s
}

// renderer renders one template with the partials and includes it uses,
// loading each guide, partial, include and value once.
type renderer struct {
	d        RenderData
	values   map[string]*string // nil: unset
	guides   map[string]string
	partials map[string]*Template // by written name
	includes map[string]*Template
	err      error // the first error of a helper
}

// exec renders t; stack names the includes t is inside.
func (r *renderer) exec(t *Template, stack []string) (string, error) {
	tpl, err := raymond.Parse(t.hbs)
	if err != nil {
		return "", parseError(err)
	}
	used := []*Template{t}
	if err := r.registerPartials(tpl, t.Partials, nil, &used); err != nil {
		return "", err
	}
	ctx := map[string]interface{}{}
	for _, u := range used {
		for _, n := range u.Optional {
			v, err := r.value(n)
			if err != nil {
				return "", &TemplateError{1, err.Error()}
			}
			if v == nil {
				continue
			}
			ctx["?"+n] = raymond.SafeString(*v)
			if !slices.Contains(dataRoots, n) {
				ctx[n] = raymond.SafeString(*v)
			}
		}
	}
	ctx[DataPrompt] = raymond.SafeString(r.d.Prompt)
	ctx[DataContext] = raymond.SafeString(r.d.Context)
	ctx[DataResults] = safeMap(r.d.Results)
	ctx[DataTask] = safeMap(r.d.Task)
	ctx[DataVars] = safeMap(r.d.Vars)
	for _, u := range used {
		for _, g := range u.Guides {
			if _, done := ctx[g.Name]; done {
				continue
			}
			text, err := r.guide(g.Name, stack)
			if err != nil {
				return "", &TemplateError{g.Line, err.Error()}
			}
			ctx[g.Name] = raymond.SafeString(text)
		}
	}
	tpl.RegisterHelper("eq", eq)
	tpl.RegisterHelper(includeHelper, func(pattern string, o *raymond.Options) raymond.SafeString {
		out, err := r.includeCall(t, pattern, o, stack)
		if err != nil && r.err == nil {
			r.err = err
		}
		return raymond.SafeString(out)
	})
	out, err := tpl.Exec(ctx)
	if r.err != nil {
		return "", r.err
	}
	if err != nil {
		return "", &TemplateError{1, strings.Join(strings.Fields(err.Error()), " ")}
	}
	return out, nil
}

// dataRoots are the names with a meaning of their own: a context file of
// that name is reached only as {{?name}} or {{context.name}}.
var dataRoots = []string{DataPrompt, DataContext, DataResults, DataTask, DataVars, includeHelper}

// value returns optional context name (nil: unset).
func (r *renderer) value(name string) (*string, error) {
	if v, ok := r.values[name]; ok {
		return v, nil
	}
	var out *string
	if v, ok := r.d.Optional[name]; ok {
		out = &v
	} else if r.d.Value != nil {
		v, err := r.d.Value(name)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return nil, err
		default:
			v = strings.TrimRight(v, "\n")
			out = &v
		}
	}
	r.values[name] = out
	return out, nil
}

// guide returns a guide's text, its includes filled in.
func (r *renderer) guide(name string, stack []string) (string, error) {
	if t, ok := r.guides[name]; ok {
		return t, nil
	}
	if r.d.Guide == nil {
		return "", fmt.Errorf("no guide %s", name)
	}
	text, err := r.d.Guide(name)
	if err != nil {
		return "", err
	}
	if text, err = r.guideIncludes(name, text, stack); err != nil {
		return "", err
	}
	text = strings.TrimRight(text, "\n")
	r.guides[name] = text
	return text, nil
}

// guideIncludes fills in the includes of a guide's text. Everything else
// in a guide stays as written: a guide is a document, not a template.
func (r *renderer) guideIncludes(name, src string, stack []string) (string, error) {
	if !strings.Contains(src, includePrefix) {
		return src, nil
	}
	incs, err := scanIncludes(src)
	if err != nil {
		return "", fmt.Errorf("guide %s: %v", name, err)
	}
	var b strings.Builder
	last := 0
	for _, in := range incs {
		b.WriteString(src[last:in.start])
		file, err := in.name(r.plainValue)
		if err != nil {
			return "", fmt.Errorf("guide %s: %v", name, err)
		}
		out, err := r.include(file, stack)
		if err != nil {
			return "", fmt.Errorf("guide %s: %v", name, err)
		}
		b.WriteString(out)
		last = in.end
	}
	b.WriteString(src[last:])
	return b.String(), nil
}

// plainValue is a value as an include's name uses it.
func (r *renderer) plainValue(name string) (string, bool) {
	v, err := r.value(name)
	if err != nil || v == nil {
		return "", false
	}
	return *v, true
}

// includeCall is the include helper: pattern with {NAME} for each value,
// the values as v0, v1 … in order, as rewriteIncludes wrote the call.
func (r *renderer) includeCall(t *Template, pattern string, o *raymond.Options, stack []string) (string, error) {
	in := include{pattern: pattern, line: 1}
	for rest := pattern; ; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			break
		}
		in.values = append(in.values, rest[i+1:i+j])
		rest = rest[i+j+1:]
	}
	for _, ref := range t.Includes {
		if ref.Name == pattern || ref.Name == strings.TrimSuffix(strings.TrimPrefix(in.written(), includePrefix), "}}") {
			in.line = ref.Line
			break
		}
	}
	byName := map[string]string{}
	for i, v := range in.values {
		if val := o.HashProp(fmt.Sprintf("v%d", i)); val != nil {
			byName[v] = raymond.Str(val)
		}
	}
	name, err := in.name(func(n string) (string, bool) {
		v, ok := byName[n]
		return v, ok
	})
	if err != nil {
		return "", &TemplateError{in.line, err.Error()}
	}
	out, err := r.include(name, stack)
	if err != nil {
		if _, ok := err.(*TemplateError); ok {
			return "", err
		}
		return "", &TemplateError{in.line, err.Error()}
	}
	return out, nil
}

// include renders {{templates/name}}, refusing cycles and deep nesting.
func (r *renderer) include(name string, stack []string) (string, error) {
	if slices.Contains(stack, name) {
		return "", fmt.Errorf("{{templates/%s}} includes itself (%s)", name, strings.Join(append(slices.Clone(stack), name), " > "))
	}
	if len(stack) >= maxIncludeDepth {
		return "", fmt.Errorf("{{templates/%s}}: includes nest more than %d deep (%s)", name, maxIncludeDepth, strings.Join(stack, " > "))
	}
	sub, ok := r.includes[name]
	if !ok {
		if r.d.Include == nil {
			return "", fmt.Errorf("unknown template {{templates/%s}}", name)
		}
		src, err := r.d.Include(name)
		if err != nil {
			return "", err
		}
		if sub, err = ParseTemplate(src, true); err != nil {
			return "", fmt.Errorf("templates/%s.md: %v", name, err)
		}
		r.includes[name] = sub
	}
	out, err := r.exec(sub, append(slices.Clone(stack), name))
	if err != nil {
		var te *TemplateError
		if errors.As(err, &te) {
			return "", fmt.Errorf("templates/%s.md:%d: %s", name, te.Line, te.Msg)
		}
		return "", err
	}
	return strings.TrimRight(out, "\n"), nil
}

// registerPartials registers the partials refs name, and the ones those
// use, refusing cycles (raymond would recurse until the stack overflows).
// Each partial's template is added to used, so its values and guides are
// loaded too.
func (r *renderer) registerPartials(tpl *raymond.Template, refs []TemplateRef, stack []string, used *[]*Template) error {
	for _, ref := range refs {
		file, _ := partialFile(ref.Name)
		if slices.Contains(stack, file) {
			return &TemplateError{ref.Line, fmt.Sprintf("partial %s includes itself (%s)", text.Quote(file), strings.Join(append(stack, file), " > "))}
		}
		if slices.ContainsFunc(*used, func(u *Template) bool { return u == r.partials[ref.Name] }) {
			continue
		}
		sub, ok := r.partials[ref.Name]
		if !ok {
			if r.d.Partial == nil {
				return &TemplateError{ref.Line, fmt.Sprintf("no partial %s", text.Quote(file))}
			}
			src, err := r.d.Partial(file)
			if err != nil {
				return &TemplateError{ref.Line, err.Error()}
			}
			if sub, err = ParseTemplate(src, true); err != nil {
				return &TemplateError{ref.Line, fmt.Sprintf("partial %s: %v", text.Quote(file), err)}
			}
			r.partials[ref.Name] = sub
		}
		tpl.RegisterPartial(ref.Name, sub.hbs)
		*used = append(*used, sub)
		if err := r.registerPartials(tpl, sub.Partials, append(stack, file), used); err != nil {
			return err
		}
	}
	return nil
}

// eq is hegel's helper: whether two values are equal, as text when both
// are text ({{#if (eq context.style "hierarchical")}}).
func eq(a, b interface{}) bool {
	return reflect.DeepEqual(plainText(a), plainText(b))
}

func plainText(v interface{}) interface{} {
	if s, ok := v.(raymond.SafeString); ok {
		return string(s)
	}
	return v
}

func safeMap(m map[string]string) map[string]interface{} {
	out := make(map[string]interface{}, len(m))
	for k, v := range m {
		out[k] = raymond.SafeString(v)
	}
	return out
}

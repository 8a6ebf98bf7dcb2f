package workflow

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mailgun/raymond/v2"
	"github.com/mailgun/raymond/v2/ast"
	hbsparser "github.com/mailgun/raymond/v2/parser"

	"github.com/git-hegel/git-hegel/engine/text"
)

// The prompt templates. Every prompt (and a confirm step's question) is a
// Handlebars template rendered by github.com/mailgun/raymond
// (docs/decisions.md says why), with three additions taken from hegel's
// workflow format:
//
//   - {{NAME}} (upper case) inserts the guide NAME: .hegel/guides/NAME.md,
//     else the built-in guide of that name;
//   - {{?name}} is optional context: its value, or nothing when unset;
//   - nothing is HTML-escaped: prompts are text for people and agents.
//
// A plain `prompt` and a `prompt_hbs` differ only in what a bare lower-case
// name may be: in a plain prompt it must be one of the data names below (so
// a stray "{{" is reported at load time instead of silently vanishing); in
// prompt_hbs any name is allowed, as #each and #with blocks make the context
// of a name unknowable before rendering.
//
// The data model every template sees:
//
//	{{NAME}}              guide text
//	{{?name}} {{name}}    optional context (.hegel/context/<name>.md)
//	{{prompt}}            the prompt a run was given (git hegel run -p)
//	{{context}}           the context a run was given (--context)
//	{{results.NODE}}      the stored result of an earlier step
//	{{task.FIELD}}        name, description, type, workflow, mode, node, priority
//	{{vars.KEY}}          a run's --set KEY=VALUE
//	{{> name}}            a partial: .hegel/guides/partials/<name>.hbs
//
// Partials and guides are inserted as written; partials are templates
// themselves, guides are not.

// Template data roots: names with a meaning of their own.
const (
	DataPrompt  = "prompt"
	DataContext = "context"
	DataResults = "results"
	DataTask    = "task"
	DataVars    = "vars"
)

// taskFields are the fields {{task.FIELD}} may name.
var taskFields = []string{"name", "description", "type", "workflow", "mode", "node", "priority"}

// builtinHelpers are raymond's helpers; their names are not data.
var builtinHelpers = []string{"if", "unless", "each", "with", "lookup", "log", "equal"}

var (
	optionalRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{\{\?\s*([A-Za-z_][A-Za-z0-9_-]*)\s*\}\}`) })
	guideNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`) })
	parseLineRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^Parse error on line (\d+):\n([^\n]*)`) })
)

// TemplateRef is one use of a name in a template, with its line (1-based,
// counted within the template's text).
type TemplateRef struct {
	Name string
	Line int
}

// Template is a parsed prompt (or command) template. Parsing checks the
// syntax and the names; Render fills it in.
type Template struct {
	Source   string // as written
	Hbs      bool   // written as prompt_hbs
	hbs      string // Source with {{?name}} rewritten for Handlebars
	Guides   []TemplateRef
	Partials []TemplateRef
	Results  []TemplateRef // node names used as {{results.NODE}}
	Optional []string      // names used as optional context ({{?name}}, and bare names in prompt_hbs), sorted, unique
	// Inputs are the run inputs the template uses (prompt, context,
	// results, vars), so a renderer loads only those; Needs are the ones
	// among prompt and context it uses outside any block ({{#if}} and
	// the like), which a run must therefore have been given.
	Inputs []string
	Needs  []string
}

// Uses reports whether the template uses the run input name.
func (t *Template) Uses(name string) bool { return slices.Contains(t.Inputs, name) }

// TemplateError is a problem in a template at a line of its text.
type TemplateError struct {
	Line int
	Msg  string
}

func (e *TemplateError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// ParseTemplate parses src. hbs selects prompt_hbs rules for bare names.
func ParseTemplate(src string, hbs bool) (*Template, error) {
	t := &Template{Source: src, Hbs: hbs}
	opt := map[string]bool{}
	t.hbs = optionalRe().ReplaceAllStringFunc(src, func(m string) string {
		name := optionalRe().FindStringSubmatch(m)[1]
		opt[name] = true
		return "{{" + name + "}}"
	})
	for n := range opt {
		t.Optional = append(t.Optional, n)
	}
	slices.Sort(t.Optional)
	prog, err := hbsparser.Parse(t.hbs)
	if err != nil {
		return nil, parseError(err)
	}
	c := &refCollector{t: t, optional: opt}
	prog.Accept(c)
	if c.err != nil {
		return nil, c.err
	}
	slices.Sort(t.Optional)
	return t, nil
}

// parseError turns raymond's multi-line parse error into one line.
func parseError(err error) *TemplateError {
	msg := err.Error()
	if m := parseLineRe().FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return &TemplateError{Line: max(n, 1), Msg: "template syntax: " + strings.TrimSpace(m[2])}
	}
	return &TemplateError{Line: 1, Msg: "template syntax: " + strings.Join(strings.Fields(msg), " ")}
}

// refCollector walks a template's syntax tree, classifying every name.
type refCollector struct {
	t        *Template
	optional map[string]bool
	err      *TemplateError
	depth    int // blocks the walk is inside
}

// input records the use of a run input.
func (c *refCollector) input(name string) {
	if !slices.Contains(c.t.Inputs, name) {
		c.t.Inputs = append(c.t.Inputs, name)
	}
	if c.depth == 0 && (name == DataPrompt || name == DataContext) && !slices.Contains(c.t.Needs, name) {
		c.t.Needs = append(c.t.Needs, name)
	}
}

func (c *refCollector) fail(line int, format string, args ...any) {
	if c.err == nil {
		c.err = &TemplateError{Line: max(line, 1), Msg: fmt.Sprintf(format, args...)}
	}
}

func (c *refCollector) VisitProgram(p *ast.Program) interface{} {
	for _, n := range p.Body {
		n.Accept(c)
	}
	return nil
}

func (c *refCollector) VisitMustache(m *ast.MustacheStatement) interface{} {
	c.expression(m.Expression, false)
	return nil
}

func (c *refCollector) VisitBlock(b *ast.BlockStatement) interface{} {
	// A block's condition or argument does not make a name needed: the
	// block is there to handle its absence.
	c.depth++
	c.expression(b.Expression, true)
	if b.Program != nil {
		b.Program.Accept(c)
	}
	if b.Inverse != nil {
		b.Inverse.Accept(c)
	}
	c.depth--
	return nil
}

func (c *refCollector) VisitPartial(p *ast.PartialStatement) interface{} {
	name, ok := ast.HelperNameStr(p.Name)
	if !ok || name == "" {
		c.fail(p.Line, "a partial needs a plain name: {{> name}}")
		return nil
	}
	c.t.Partials = append(c.t.Partials, TemplateRef{name, p.Line})
	for _, n := range p.Params {
		n.Accept(c)
	}
	if p.Hash != nil {
		p.Hash.Accept(c)
	}
	return nil
}

func (c *refCollector) VisitContent(*ast.ContentStatement) interface{} { return nil }
func (c *refCollector) VisitComment(*ast.CommentStatement) interface{} { return nil }

func (c *refCollector) VisitExpression(e *ast.Expression) interface{} {
	c.expression(e, false)
	return nil
}

func (c *refCollector) VisitSubExpression(s *ast.SubExpression) interface{} {
	c.expression(s.Expression, true)
	return nil
}

func (c *refCollector) VisitPath(p *ast.PathExpression) interface{} {
	c.path(p)
	return nil
}

func (c *refCollector) VisitString(*ast.StringLiteral) interface{}   { return nil }
func (c *refCollector) VisitBoolean(*ast.BooleanLiteral) interface{} { return nil }
func (c *refCollector) VisitNumber(*ast.NumberLiteral) interface{}   { return nil }

func (c *refCollector) VisitHash(h *ast.Hash) interface{} {
	for _, p := range h.Pairs {
		p.Accept(c)
	}
	return nil
}

func (c *refCollector) VisitHashPair(p *ast.HashPair) interface{} {
	if p.Val != nil {
		p.Val.Accept(c)
	}
	return nil
}

// expression classifies an expression's head: a helper when it has
// arguments or opens a block, a name otherwise; its arguments are names.
func (c *refCollector) expression(e *ast.Expression, block bool) {
	if e == nil {
		return
	}
	helper := block || len(e.Params) > 0 || (e.Hash != nil && len(e.Hash.Pairs) > 0)
	if p, ok := e.Path.(*ast.PathExpression); ok {
		if helper {
			if !slices.Contains(builtinHelpers, p.Original) {
				c.fail(p.Line, "unknown helper %s (known: %s)", text.Quote(p.Original), strings.Join(builtinHelpers, ", "))
			}
		} else if !(len(p.Parts) == 1 && slices.Contains(builtinHelpers, p.Parts[0]) && p.Parts[0] != "log") {
			c.path(p)
		}
	}
	for _, n := range e.Params {
		n.Accept(c)
	}
	if e.Hash != nil {
		e.Hash.Accept(c)
	}
}

// path checks one name against the data model.
func (c *refCollector) path(p *ast.PathExpression) {
	if p.Data || p.Scoped || p.Depth > 0 || len(p.Parts) == 0 {
		return // @index, this, ../x: relative to a block, unknowable here
	}
	head := p.Parts[0]
	switch {
	case guideNameRe().MatchString(head):
		if len(p.Parts) > 1 {
			c.fail(p.Line, "guide %s has no fields: write {{%s}}", text.Quote(head), head)
			return
		}
		c.t.Guides = append(c.t.Guides, TemplateRef{head, p.Line})
	case head == DataResults:
		if len(p.Parts) != 2 {
			c.fail(p.Line, "write {{results.NODE}} to use an earlier step's result")
			return
		}
		c.t.Results = append(c.t.Results, TemplateRef{p.Parts[1], p.Line})
		c.input(DataResults)
	case head == DataTask:
		if len(p.Parts) != 2 || !slices.Contains(taskFields, p.Parts[1]) {
			c.fail(p.Line, "unknown name %s (task fields: %s)", text.Quote(p.Original), strings.Join(taskFields, ", "))
		}
	case head == DataVars:
		if len(p.Parts) != 2 {
			c.fail(p.Line, "write {{vars.KEY}} to use a --set KEY=VALUE")
		}
		c.input(DataVars)
	case head == DataPrompt || head == DataContext:
		if len(p.Parts) != 1 {
			c.fail(p.Line, "%s has no fields: write {{%s}}", text.Quote(head), head)
		}
		c.input(head)
	case c.optional[head]:
	case c.t.Hbs:
		// Optional context, or a name a block binds: unknowable here.
		if !slices.Contains(c.t.Optional, head) {
			c.t.Optional = append(c.t.Optional, head)
		}
	default:
		c.fail(p.Line, "unknown name {{%s}}: write {{?%s}} for optional context or {{NAME}} (upper case) for a guide", p.Original, p.Original)
	}
}

// RenderData is everything a template may use. Guides and partials are
// looked up by name when the template uses them; a missing one is an error.
type RenderData struct {
	Guide    func(name string) (string, error)
	Partial  func(name string) (string, error)
	Optional map[string]string // {{?name}}
	Prompt   string
	Context  string
	Results  map[string]string
	Task     map[string]string // keys: taskFields
	Vars     map[string]string
}

// Render fills the template in. Text is inserted as is, never escaped.
func (t *Template) Render(d RenderData) (string, error) {
	tpl, err := raymond.Parse(t.hbs)
	if err != nil {
		return "", parseError(err)
	}
	guides := slices.Clone(t.Guides)
	l := &partialLoader{tpl: tpl, load: d.Partial, done: map[string]bool{}}
	if err := l.register(t.Partials, nil); err != nil {
		return "", err
	}
	guides = append(guides, l.guides...)
	ctx := map[string]interface{}{}
	for k, v := range d.Optional {
		ctx[k] = raymond.SafeString(v)
	}
	ctx[DataPrompt] = raymond.SafeString(d.Prompt)
	ctx[DataContext] = raymond.SafeString(d.Context)
	ctx[DataResults] = safeMap(d.Results)
	ctx[DataTask] = safeMap(d.Task)
	ctx[DataVars] = safeMap(d.Vars)
	for _, g := range guides {
		if _, done := ctx[g.Name]; done {
			continue
		}
		if d.Guide == nil {
			return "", &TemplateError{g.Line, fmt.Sprintf("no guide %s", g.Name)}
		}
		text, err := d.Guide(g.Name)
		if err != nil {
			return "", &TemplateError{g.Line, err.Error()}
		}
		ctx[g.Name] = raymond.SafeString(strings.TrimRight(text, "\n"))
	}
	out, err := tpl.Exec(ctx)
	if err != nil {
		return "", &TemplateError{1, strings.Join(strings.Fields(err.Error()), " ")}
	}
	return out, nil
}

// partialLoader registers the partials a template uses, and the ones those
// use, refusing cycles: raymond would recurse until the stack overflows.
type partialLoader struct {
	tpl    *raymond.Template
	load   func(string) (string, error)
	done   map[string]bool
	guides []TemplateRef // guides the partials use
}

func (l *partialLoader) register(refs []TemplateRef, stack []string) error {
	for _, r := range refs {
		if slices.Contains(stack, r.Name) {
			return &TemplateError{r.Line, fmt.Sprintf("partial %s includes itself (%s)", text.Quote(r.Name), strings.Join(append(stack, r.Name), " > "))}
		}
		if l.done[r.Name] {
			continue
		}
		if l.load == nil {
			return &TemplateError{r.Line, fmt.Sprintf("no partial %s", text.Quote(r.Name))}
		}
		src, err := l.load(r.Name)
		if err != nil {
			return &TemplateError{r.Line, err.Error()}
		}
		sub, err := ParseTemplate(src, true)
		if err != nil {
			return &TemplateError{r.Line, fmt.Sprintf("partial %s: %v", text.Quote(r.Name), err)}
		}
		l.tpl.RegisterPartial(r.Name, sub.hbs)
		l.guides = append(l.guides, sub.Guides...)
		if err := l.register(sub.Partials, append(stack, r.Name)); err != nil {
			return err
		}
		l.done[r.Name] = true
	}
	return nil
}

func safeMap(m map[string]string) map[string]interface{} {
	out := make(map[string]interface{}, len(m))
	for k, v := range m {
		out[k] = raymond.SafeString(v)
	}
	return out
}

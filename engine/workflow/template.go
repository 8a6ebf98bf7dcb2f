package workflow

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mailgun/raymond/v2/ast"
	hbsparser "github.com/mailgun/raymond/v2/parser"

	"github.com/git-hegel/git-hegel/engine/text"
)

// The prompt templates. Every prompt (and a confirm step's question) is a
// Handlebars template rendered by github.com/mailgun/raymond
// (docs/decisions.md says why), with these additions taken from hegel's
// workflow format:
//
//   - {{NAME}} (upper case) inserts the guide NAME: .hegel/guides/NAME.md,
//     else the built-in guide of that name;
//   - {{?name}} is optional context: its value, or nothing when unset;
//     {{context.name}} is the same value, as hegel's prompt_hbs writes it;
//   - {{templates/NAME}} includes a template (include.go);
//   - the helper eq compares two values: {{#if (eq context.style "x")}};
//   - nothing is HTML-escaped: prompts are text for people and agents.
//
// A plain `prompt` and a `prompt_hbs` differ only in what a bare lower-case
// name may be: in a plain prompt it must be one of the data names below (so
// a stray "{{" is reported at load time instead of silently vanishing); in
// prompt_hbs any name is allowed, as #each and #with blocks make the context
// of a name unknowable before rendering. In both, a name that climbs out of
// where it stands ({{../x}} outside a block, {{a/b}}, {{this}} at the top)
// is a load error: it could only render as nothing, or as Go's own text.
//
// The data model every template sees:
//
//	{{NAME}}              guide text
//	{{?name}} {{name}}    optional context (.hegel/context/<name>.md)
//	{{context.name}}      the same
//	{{prompt}}            the prompt a run was given (git hegel run -p)
//	{{context}}           the context a run was given (--context)
//	{{results.NODE}}      the stored result of an earlier step
//	{{task.FIELD}}        name, description, type, workflow, mode, node, priority,
//	                      dir (the task's folder for its files)
//	{{vars.KEY}}          a run's --set KEY=VALUE
//	{{> name}}            a partial: .hegel/guides/partials/<name>.hbs, else .hegel/guides/<name>.hbs
//	{{templates/name}}    an include: .hegel/guides/templates/<name>.md
//
// {{?prompt}} and {{?context}} are optional context like any other name
// (.hegel/context/prompt.md), not the run's inputs. Guides are inserted as
// written but for their includes; partials and includes are templates.

// Template data roots: names with a meaning of their own.
const (
	DataPrompt  = "prompt"
	DataContext = "context"
	DataResults = "results"
	DataTask    = "task"
	DataVars    = "vars"
)

// taskFields are the fields {{task.FIELD}} may name.
var taskFields = []string{"name", "description", "type", "workflow", "mode", "node", "priority", "dir"}

// builtinHelpers are raymond's helpers; their names are not data.
var builtinHelpers = []string{"if", "unless", "each", "with", "lookup", "log", "equal", "eq"}

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
	Partials []TemplateRef // as written: "name" or hegel's "partials/name"
	// Includes are the {{templates/...}} the template uses, by name; one
	// whose name is built from values has its pattern as Name
	// ("code_map_{{style}}") and Dynamic set.
	Includes []IncludeRef
	Results  []TemplateRef // node names used as {{results.NODE}}
	Optional []string      // names used as optional context ({{?name}}, and bare names in prompt_hbs), sorted, unique
	// Inputs are the run inputs the template uses (prompt, context,
	// results, vars), so a renderer loads only those; Needs are the ones
	// among prompt and context it uses outside any block ({{#if}} and
	// the like), which a run must therefore have been given.
	Inputs []string
	Needs  []string
}

// IncludeRef is one {{templates/NAME}} of a template.
type IncludeRef struct {
	Name    string
	Line    int
	Dynamic bool
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
	rewritten, incs, err := rewriteIncludes(src)
	if err != nil {
		return nil, err
	}
	for _, in := range incs {
		ref := IncludeRef{Name: in.pattern, Line: in.line, Dynamic: len(in.values) > 0}
		if ref.Dynamic {
			ref.Name = strings.TrimSuffix(strings.TrimPrefix(in.written(), includePrefix), "}}")
		}
		t.Includes = append(t.Includes, ref)
		for _, v := range in.values {
			opt[v] = true
		}
	}
	// {{?name}} stays a name of its own ("?name" is a Handlebars name), so
	// {{?prompt}} is the context file prompt.md, never the run's prompt.
	t.hbs = optionalRe().ReplaceAllStringFunc(rewritten, func(m string) string {
		name := optionalRe().FindStringSubmatch(m)[1]
		opt[name] = true
		return "{{?" + name + "}}"
	})
	prog, err := hbsparser.Parse(t.hbs)
	if err != nil {
		return nil, parseError(err)
	}
	c := &refCollector{t: t, optional: opt}
	prog.Accept(c)
	if c.err == nil && c.includeCalls > len(incs) {
		c.fail(1, "unknown helper %s (known: %s)", text.Quote(includeHelper), strings.Join(builtinHelpers, ", "))
	}
	if c.err != nil {
		return nil, c.err
	}
	// {{context.name}} becomes the name's own "?name", the way {{?name}}
	// is written to Handlebars; offsets from the end keep earlier ones valid.
	for i := len(c.edits) - 1; i >= 0; i-- {
		e := c.edits[i]
		if e.pos < 0 || e.pos+e.n > len(t.hbs) || t.hbs[e.pos:e.pos+e.n] != e.orig {
			return nil, &TemplateError{1, fmt.Sprintf("{{%s}}: write {{context.NAME}} without spaces or brackets", e.orig)}
		}
		t.hbs = t.hbs[:e.pos] + e.repl + t.hbs[e.pos+e.n:]
	}
	for n := range opt {
		if !slices.Contains(t.Optional, n) {
			t.Optional = append(t.Optional, n)
		}
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
	t            *Template
	optional     map[string]bool
	err          *TemplateError
	depth        int // blocks the walk is inside
	includeCalls int
	edits        []hbsEdit // rewrites of {{context.name}}, in source order
}

// hbsEdit replaces n bytes at pos of the Handlebars text.
type hbsEdit struct {
	pos, n int
	orig   string
	repl   string
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
	if file, ok := partialFile(name); !ok {
		if strings.Contains(name, "..") || strings.HasPrefix(name, "/") || strings.Contains(file, "/") || strings.Contains(name, `\`) {
			c.fail(p.Line, "partial {{> %s}}: path traversal is not allowed: a partial is {{> name}} (or {{> partials/name}})", name)
		} else {
			c.fail(p.Line, "partial {{> %s}}: invalid name: %s", name, nameRule)
		}
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

// partialFile is the file name a partial's written name stands for:
// hegel's spelling {{> partials/name}} is {{> name}}.
func partialFile(name string) (string, bool) {
	file := strings.TrimPrefix(name, "partials/")
	return file, ValidPartialName(file)
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
			if p.Original == includeHelper {
				c.includeCalls++
			} else if !slices.Contains(builtinHelpers, p.Original) {
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
	switch {
	case p.Data:
		if p.Original == "@root" || p.Original == "@root." {
			c.fail(p.Line, "{{@root}} is the whole data model, not a text; name a field of it")
		}
		return
	case p.Depth > 0:
		// ../ climbs out of a block; outside one (or in a plain prompt,
		// where it could only vanish) there is nothing to climb to.
		if !c.t.Hbs || p.Depth > c.depth {
			c.fail(p.Line, "{{%s}}: path traversal is not allowed: ../ names the data around a block, and there is none here", p.Original)
		}
		return
	case strings.Contains(p.Original, "/"):
		if strings.Contains(p.Original, "..") {
			c.fail(p.Line, "{{%s}}: path traversal is not allowed", p.Original)
		} else {
			c.fail(p.Line, "{{%s}}: a name has no '/' (write a.b for a field; {{templates/NAME}} includes a template)", p.Original)
		}
		return
	case len(p.Parts) == 0:
		// {{this}} or {{.}}: the item of a block; at the top it is the
		// whole data model, which has no text.
		if c.depth == 0 {
			c.fail(p.Line, "{{%s}} outside a block names the whole data model, not a text", p.Original)
		}
		return
	case p.Scoped:
		return // ./x, this.x: relative to a block, unknowable here
	}
	head := p.Parts[0]
	switch {
	case strings.HasPrefix(head, "?"):
		if len(p.Parts) > 1 || !validOptionalName(head[1:]) {
			c.fail(p.Line, "write {{?name}} for optional context, name of letters, digits, '_' and '-'")
			return
		}
		c.optional[head[1:]] = true
	case head == includeHelper:
		c.fail(p.Line, "unknown name {{%s}}", p.Original)
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
	case head == DataContext && len(p.Parts) == 2:
		// hegel's prompt_hbs sees every value under context.
		name := p.Parts[1]
		if !validOptionalName(name) {
			c.fail(p.Line, "{{%s}}: %s is not a context name (letters, digits, '_' and '-')", p.Original, text.Quote(name))
			return
		}
		c.optional[name] = true
		c.edits = append(c.edits, hbsEdit{pos: p.Pos, n: len(p.Original), orig: p.Original, repl: "?" + name})
	case head == DataPrompt || head == DataContext:
		if len(p.Parts) != 1 {
			c.fail(p.Line, "%s has no fields: write {{%s}}", text.Quote(head), head)
		}
		c.input(head)
	case c.optional[head]:
	case c.t.Hbs:
		// Optional context, or a name a block binds: unknowable here.
		c.optional[head] = true
	default:
		c.fail(p.Line, "unknown name {{%s}}: write {{?%s}} for optional context or {{NAME}} (upper case) for a guide", p.Original, p.Original)
	}
}

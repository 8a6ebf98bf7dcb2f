package workflow

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/git-hegel/git-hegel/engine/text"
)

// The parts of the workflow format that come from hegel's files: prompt
// templates (prompt / prompt_hbs), guard rules, explicit done nodes. They
// live apart from load.go so the core format stays readable.

// Warning is a problem in a definition that does not stop it from loading.
type Warning struct {
	File string
	Line int
	Msg  string
}

// String names the file as git names paths, like definition errors.
func (w Warning) String() string {
	return fmt.Sprintf("%s:%d: %s", text.QuotePath(w.File, true), w.Line, w.Msg)
}

// prompt reads a node's prompt or prompt_hbs (one, never both) and parses
// it as a template, so a mistake in one is reported with its line.
//
// A field that is empty counts as absent: hegel's serializer writes both
// keys, the unused one as ”.
func (p *parser) prompt(dn *draftNode, key, prompt, promptHbs *yaml.Node, prefix string) error {
	if prompt != nil && promptHbs != nil {
		switch {
		case isBlank(promptHbs):
			promptHbs = nil
		case isBlank(prompt):
			prompt = nil
		}
	}
	if prompt != nil && promptHbs != nil {
		return p.errAt(promptHbs, "%shas both prompt and prompt_hbs; keep one", prefix)
	}
	n, hbs := prompt, false
	if promptHbs != nil {
		n, hbs = promptHbs, true
	}
	what := "prompt"
	if hbs {
		what = "prompt_hbs"
	}
	if n == nil {
		if dn.node.Terminal || (dn.node.Run != nil && dn.node.Run.Kind != HandlerAdapter) {
			return nil // an end node, a command or a question needs no instructions
		}
		return p.errAt(key, "%smissing prompt", prefix)
	}
	text, err := p.scalar(n, prefix, what)
	if err != nil {
		return err
	}
	if strings.TrimSpace(text) == "" {
		if dn.node.Terminal {
			return nil
		}
		return p.errAt(n, "%s%s is empty", prefix, what)
	}
	// Block scalars end in a newline; callers print prompts with their own.
	dn.node.Prompt = strings.TrimRight(text, " \t\r\n")
	dn.node.PromptHbs = hbs
	dn.node.PromptLine = textLine(n)
	t, err := ParseTemplate(dn.node.Prompt, hbs)
	if err != nil {
		var te *TemplateError
		if asTemplateError(err, &te) {
			return &defError{p.file, dn.node.PromptLine + te.Line - 1, prefix + what + ": " + te.Msg}
		}
		return p.errAt(n, "%s%s: %v", prefix, what, err)
	}
	dn.node.Template = t
	return nil
}

// isBlank reports a scalar that is null or only white space.
func isBlank(n *yaml.Node) bool {
	d := deref(n)
	return d.Kind == yaml.ScalarNode && (isNull(d) || strings.TrimSpace(d.Value) == "")
}

// textLine is the file line of a scalar's first line of text: block
// scalars (| and >) start on the line after their indicator.
func textLine(n *yaml.Node) int {
	d := deref(n)
	line := max(d.Line, 1)
	if d.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		line++
	}
	return line
}

func asTemplateError(err error, target **TemplateError) bool {
	te, ok := err.(*TemplateError)
	if ok {
		*target = te
	}
	return ok
}

// explicitEnd accepts a node named done or aborted as hegel's files write
// them: an end node with no way out is the implicit one and is dropped;
// one with transitions would give the name two meanings.
func (p *parser) explicitEnd(f field) error {
	prefix := fmt.Sprintf("node %q: ", f.name)
	d := deref(f.value)
	if isNull(d) {
		return nil
	}
	fs, err := p.fields(f.value, fmt.Sprintf("node %q", f.name), prefix, "key", nodeKeys)
	if err != nil {
		return err
	}
	for _, nf := range fs {
		if nf.name == "transitions" && !isEmptyList(nf.value) {
			return p.errAt(nf.key, "%s%s ends the workflow and cannot have transitions; rename the node", prefix, f.name)
		}
	}
	return nil
}

// Guard rule types (hegel's names and fields).
const (
	RuleRequireCommits   = "require_commits"
	RuleRepeatedCommand  = "repeated_command"
	RuleRepeatedFileEdit = "repeated_file_edit"
	RulePhaseTimeout     = "phase_timeout"
	RuleTokenBudget      = "token_budget"
)

// RuleTypes lists the rule types in the order they are checked.
var RuleTypes = []string{RuleRequireCommits, RuleRepeatedCommand, RuleRepeatedFileEdit, RulePhaseTimeout, RuleTokenBudget}

// AllCommits is the lookback_phases value hegel uses for "the whole run".
const AllCommits = 999

// ruleFields are each type's fields; required ones are marked in
// ruleRequired.
var ruleFields = map[string][]string{
	RuleRequireCommits:   {"type", "lookback_phases"},
	RuleRepeatedCommand:  {"type", "pattern", "threshold", "window"},
	RuleRepeatedFileEdit: {"type", "path_pattern", "threshold", "window"},
	RulePhaseTimeout:     {"type", "max_duration"},
	RuleTokenBudget:      {"type", "max_tokens"},
}

var ruleRequired = map[string][]string{
	RuleRequireCommits:   {"lookback_phases"},
	RuleRepeatedCommand:  {"threshold", "window"},
	RuleRepeatedFileEdit: {"threshold", "window"},
	RulePhaseTimeout:     {"max_duration"},
	RuleTokenBudget:      {"max_tokens"},
}

// Rule is one guard rule of a node. Which fields matter depends on Type.
type Rule struct {
	Type           string `json:"type"`
	LookbackPhases int    `json:"lookback_phases,omitempty"` // require_commits
	Pattern        string `json:"pattern,omitempty"`         // repeated_command; empty matches every command
	PathPattern    string `json:"path_pattern,omitempty"`    // repeated_file_edit; empty matches every file
	Threshold      int    `json:"threshold,omitempty"`       // repeated_*: this many in the window is a violation
	Window         int    `json:"window,omitempty"`          // repeated_*: seconds
	MaxDuration    int    `json:"max_duration,omitempty"`    // phase_timeout: seconds
	MaxTokens      int64  `json:"max_tokens,omitempty"`      // token_budget
	Line           int    `json:"line,omitempty"`            // where the rule is defined

	re *regexp.Regexp
}

// Matcher returns the rule's compiled pattern (nil: matches everything).
// Rules parsed from a file carry it; rules decoded from JSON compile it
// on each call, which never mutates a shared built-in.
func (r *Rule) Matcher() *regexp.Regexp {
	if r.re != nil {
		return r.re
	}
	pat := r.Pattern
	if r.Type == RuleRepeatedFileEdit {
		pat = r.PathPattern
	}
	if pat == "" {
		return nil
	}
	re, _ := regexp.Compile(pat) // validated at load
	return re
}

// rules parses a node's rules: a list of mappings, each with a type and
// that type's fields. Patterns are compiled here so a bad one is reported
// with its line.
func (p *parser) rules(n *yaml.Node, prefix string) ([]Rule, error) {
	seq := deref(n)
	if isNull(seq) {
		return nil, nil
	}
	if seq.Kind != yaml.SequenceNode {
		return nil, p.errAt(n, "%s\"rules\" must be a list, got %s", prefix, describe(seq))
	}
	var out []Rule
	for _, item := range seq.Content {
		m := deref(item)
		if m.Kind != yaml.MappingNode {
			return nil, p.errAt(item, "%seach rule must be a mapping, got %s", prefix, describe(m))
		}
		var typeNode *yaml.Node
		for i := 0; i+1 < len(m.Content); i += 2 {
			if deref(m.Content[i]).Value == "type" {
				typeNode = m.Content[i+1]
			}
		}
		if typeNode == nil {
			return nil, p.errAt(item, "%srule has no type (one of %s)", prefix, strings.Join(RuleTypes, ", "))
		}
		typ, err := p.scalar(typeNode, prefix, "type")
		if err != nil {
			return nil, err
		}
		known, ok := ruleFields[typ]
		if !ok {
			return nil, p.errAt(typeNode, "%sunknown rule type %s %s", prefix, text.Quote(typ), hint(typ, RuleTypes))
		}
		rprefix := fmt.Sprintf("%srule %s: ", prefix, typ)
		fs, err := p.fields(item, prefix+"each rule", rprefix, "field", known)
		if err != nil {
			return nil, err
		}
		r := Rule{Type: typ, Line: max(deref(item).Line, 1)}
		got := map[string]bool{}
		for _, f := range fs {
			got[f.name] = true
			switch f.name {
			case "type":
			case "pattern", "path_pattern":
				pat, err := p.scalar(f.value, rprefix, f.name)
				if err != nil {
					return nil, err
				}
				re, err := regexp.Compile(pat)
				if err != nil {
					return nil, p.errAt(f.value, "%sinvalid %s %s: %s", rprefix, f.name, text.Quote(pat), strings.TrimPrefix(err.Error(), "error parsing regexp: "))
				}
				if pat != "" {
					r.re = re
				}
				if f.name == "pattern" {
					r.Pattern = pat
				} else {
					r.PathPattern = pat
				}
			default:
				v, err := p.positive(f.value, rprefix, f.name)
				if err != nil {
					return nil, err
				}
				switch f.name {
				case "lookback_phases":
					r.LookbackPhases = int(v)
				case "threshold":
					r.Threshold = int(v)
				case "window":
					r.Window = int(v)
				case "max_duration":
					r.MaxDuration = int(v)
				case "max_tokens":
					r.MaxTokens = v
				}
			}
		}
		for _, req := range ruleRequired[typ] {
			if !got[req] {
				return nil, p.errAt(item, "%smissing %s", rprefix, req)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// maxRuleNumber keeps rule numbers far from overflow in time arithmetic
// (a window of 2^31 seconds is 68 years).
const maxRuleNumber = 1 << 31

// positive reads a whole number of at least 1.
func (p *parser) positive(n *yaml.Node, prefix, what string) (int64, error) {
	d := deref(n)
	if d.Kind != yaml.ScalarNode || isNull(d) {
		return 0, p.errAt(n, "%s%s must be a whole number, got %s", prefix, what, describe(d))
	}
	v, err := strconv.ParseInt(strings.TrimSpace(d.Value), 10, 64)
	if err != nil {
		return 0, p.errAt(n, "%s%s must be a whole number, got %s", prefix, what, text.Quote(d.Value))
	}
	if v < 1 || v > maxRuleNumber {
		return 0, p.errAt(n, "%s%s must be between 1 and %d, got %d", prefix, what, maxRuleNumber, v)
	}
	return v, nil
}

// checkTemplates runs once every node is known: {{results.NODE}} must name
// a node of this workflow.
func (p *parser) checkTemplates(d *draft) error {
	defined := map[string]bool{}
	for _, dn := range d.nodes {
		defined[dn.node.Name] = true
	}
	for _, dn := range d.nodes {
		for _, u := range dn.node.templates() {
			for _, r := range u.t.Results {
				if !defined[r.Name] {
					return &defError{p.file, u.line + r.Line - 1,
						fmt.Sprintf("node %q: %s{{results.%s}} names no node of this workflow", dn.node.Name, u.what, r.Name)}
				}
			}
		}
	}
	return nil
}

// guideProblem reports the first guide or partial a workflow uses that
// is not available, with the file line where it is used.
func (w *Definition) guideProblem(guides, partials, templates func(string) bool) error {
	for _, name := range w.Order {
		for _, u := range w.Nodes[name].templates() {
			for _, g := range u.t.Guides {
				if !guides(g.Name) {
					return &defError{w.Source, u.line + g.Line - 1,
						fmt.Sprintf("node %q: unknown guide {{%s}} (no .hegel/guides/%s.md and no built-in guide of that name; see 'git hegel guides')", name, g.Name, g.Name)}
				}
			}
			for _, pt := range u.t.Partials {
				if file, _ := partialFile(pt.Name); !partials(file) {
					return &defError{w.Source, u.line + pt.Line - 1,
						fmt.Sprintf("node %q: unknown partial {{> %s}} (no .hegel/guides/partials/%s.hbs and no .hegel/guides/%s.hbs)", name, pt.Name, file, file)}
				}
			}
			// An include named by a value is looked for when it is
			// rendered; a fixed name can be checked now.
			for _, in := range u.t.Includes {
				if !in.Dynamic && !templates(in.Name) {
					return &defError{w.Source, u.line + in.Line - 1,
						fmt.Sprintf("node %q: unknown template {{templates/%s}} (no .hegel/guides/templates/%s.md)", name, in.Name, in.Name)}
				}
			}
		}
	}
	return nil
}

// ruleTypeKnown reports whether s names a guard rule type.
func ruleTypeKnown(s string) bool { return slices.Contains(RuleTypes, s) }

package workflow

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/git-hegel/git-hegel/engine/text"
)

// defError is a definition error. Every one names a file and a line so an
// editor or a terminal can jump straight to the problem.
type defError struct {
	file string
	line int
	msg  string
}

// Error names the file as git names paths (QuotePath): a file name with a
// newline in it cannot break the message's one line.
func (e *defError) Error() string {
	return fmt.Sprintf("%s:%d: %s", text.QuotePath(e.file, true), e.line, e.msg)
}

// Parse parses and validates one definition. filename is used in
// error messages (and as Source) only.
//
// The YAML is walked as a yaml.Node tree rather than decoded into structs so
// that duplicate keys, unknown keys and every other mistake can be reported
// with the line it is on.
func Parse(name, filename string, data []byte) (*Definition, error) {
	return ParseWith(name, filename, data, ParseOptions{})
}

// ParseOptions changes how strictly a definition is read.
type ParseOptions struct {
	// Strict makes unknown keys errors instead of warnings
	// (git config hegel.strictWorkflows=true).
	Strict bool
}

// ParseWith is Parse with options.
func ParseWith(name, filename string, data []byte, opts ParseOptions) (*Definition, error) {
	if !validName(name) {
		return nil, &defError{filename, 1, fmt.Sprintf("invalid workflow name %s: %s", text.Quote(name), nameRule)}
	}
	root, err := parseYAML(filename, data)
	if err != nil {
		return nil, err
	}
	p := &parser{file: filename, strict: opts.Strict}
	d, err := p.top(root)
	if err != nil {
		return nil, err
	}
	if err := p.check(d); err != nil {
		return nil, err
	}
	if err := p.checkMeta(d); err != nil {
		return nil, err
	}
	slices.SortStableFunc(p.warnings, func(a, b Warning) int { return a.Line - b.Line })
	w := &Definition{
		Name:      name,
		Mode:      name,
		StartNode: d.start,
		Nodes:     make(map[string]*Node, len(d.nodes)),
		Source:    filename,
		Raw:       bytes.Clone(data),
		Title:     d.title,
		Warnings:  p.warnings,
	}
	if d.hasMode {
		w.Mode = d.mode
	}
	w.TaskTypes, w.DefaultTaskType = d.meta.types, d.meta.defaultType
	w.MaxRollbacks = d.meta.maxRollbacks
	for _, dn := range d.nodes {
		w.Nodes[dn.node.Name] = dn.node
		w.Order = append(w.Order, dn.node.Name)
	}
	return w, nil
}

// parseYAML returns the root of the single document in data.
func parseYAML(file string, data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &defError{file, 1, "empty workflow definition"}
		}
		return nil, syntaxError(file, data, err)
	}
	// A second document would be silently ignored by a plain Unmarshal,
	// hiding half of what the author wrote.
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, syntaxError(file, data, err)
	default:
		return nil, &defError{file, max(extra.Line, 1), "more than one YAML document; a workflow file holds exactly one"}
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return nil, &defError{file, max(doc.Line, 1), "empty workflow definition"}
	}
	return doc.Content[0], nil
}

var (
	yamlLineRe   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^line (\d+): `) })
	yamlAnchorRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^unknown anchor '([^']*)' referenced`) })
)

// yamlParserProblems are the messages yaml's parser (as opposed to its
// scanner) produces. yaml forgets to convert their 0-based lines to 1-based,
// and omits the line entirely when it is 0.
var yamlParserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// syntaxError rewrites a yaml error into the file:line form. yaml reports a
// missing anchor without a line, so that one is located by searching for it.
func syntaxError(file string, data []byte, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 1
	if m := yamlLineRe().FindStringSubmatch(msg); m != nil {
		if n, convErr := strconv.Atoi(m[1]); convErr == nil && n > 0 {
			line = n
		}
		msg = msg[len(m[0]):]
		if yamlParserProblems[msg] {
			line++
		}
	} else if m := yamlAnchorRe().FindStringSubmatch(msg); m != nil {
		if i := bytes.Index(data, []byte("*"+m[1])); i >= 0 {
			line = 1 + bytes.Count(data[:i], []byte("\n"))
		}
	}
	// At end of input yaml points one line past the last one.
	lines := bytes.Count(data, []byte("\n"))
	if !bytes.HasSuffix(data, []byte("\n")) {
		lines++
	}
	line = max(min(line, lines), 1)
	return &defError{file, line, "invalid YAML: " + strings.Join(strings.Fields(msg), " ")}
}

// draft is a definition as written, with the lines needed to report
// problems found only once the whole file has been read.
type draft struct {
	line      int
	title     string // hegel's top-level name
	mode      string
	hasMode   bool
	start     string
	startNode *yaml.Node // nil when start_node is absent
	nodes     []*draftNode
	nodesKey  *yaml.Node // nil when nodes is absent
	meta      draftMeta  // task types (load_meta.go)
}

type draftNode struct {
	node  *Node
	key   *yaml.Node
	toPos []*yaml.Node // value node of each transition's "to"
	meta  nodeMetaPos  // where the stage metadata was written (load_meta.go)
}

type parser struct {
	file     string
	nTrans   int  // transitions so far, across all nodes
	strict   bool // unknown keys are errors, not warnings
	warnings []Warning
}

// maxTransitions bounds the work aliases can multiply: one shared list of
// transitions referenced from every node would otherwise grow with the
// square of the file size.
const maxTransitions = 10000

// warnAt records a problem that does not stop the file from loading.
func (p *parser) warnAt(n *yaml.Node, format string, args ...any) {
	line := 1
	if n != nil && n.Line > 0 {
		line = n.Line
	}
	p.warnings = append(p.warnings, Warning{p.file, line, fmt.Sprintf(format, args...)})
}

func (p *parser) errAt(n *yaml.Node, format string, args ...any) error {
	line := 1
	if n != nil && n.Line > 0 {
		line = n.Line
	}
	return &defError{p.file, line, fmt.Sprintf(format, args...)}
}

// field is one key/value pair of a mapping; value keeps any alias so errors
// point at where the value is used.
type field struct {
	name       string
	key, value *yaml.Node
}

var (
	topKeys        = []string{"name", "mode", "start_node", "nodes"}
	nodeKeys       = []string{"summary", "prompt", "prompt_hbs", "rules", "transitions"}
	transitionKeys = []string{"when", "to"}
)

// fields returns the pairs of mapping n in order. subject names the mapping
// and prefix starts every message about its contents; with known set,
// unknown and repeated keys are errors.
func (p *parser) fields(n *yaml.Node, subject, prefix, what string, known []string) ([]field, error) {
	m := deref(n)
	if m.Kind != yaml.MappingNode {
		return nil, p.errAt(n, "%s must be a mapping, got %s", subject, describe(m))
	}
	var out []field
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		dk := deref(k)
		if dk.Kind != yaml.ScalarNode {
			return nil, p.errAt(k, "%s%s must be a string, got %s", prefix, what, describe(dk))
		}
		if dk.Tag == "!!merge" {
			return nil, p.errAt(k, "%smerge keys (<<) are not supported", prefix)
		}
		name := dk.Value
		if known != nil {
			if first, dup := seen[name]; dup {
				return nil, p.errAt(k, "%sduplicate %s %s (first at line %d)", prefix, what, text.Quote(name), first.Line)
			}
			if !slices.Contains(known, name) {
				if p.strict {
					return nil, p.errAt(k, "%sunknown %s %s %s", prefix, what, text.Quote(name), hint(name, known))
				}
				p.warnAt(k, "%sunknown %s %s ignored %s", prefix, what, text.Quote(name), hint(name, known))
				continue
			}
			seen[name] = k
		}
		out = append(out, field{name, k, v})
	}
	return out, nil
}

// scalar returns the text of a value that must be a single scalar; null
// counts as empty.
func (p *parser) scalar(n *yaml.Node, prefix, what string) (string, error) {
	d := deref(n)
	if d.Kind != yaml.ScalarNode {
		return "", p.errAt(n, "%s%q must be a string, got %s", prefix, what, describe(d))
	}
	if isNull(d) {
		return "", nil
	}
	return d.Value, nil
}

// line returns a scalar that must be non-empty and fit on one line, trimmed.
func (p *parser) line(n *yaml.Node, prefix, what string, required bool) (string, error) {
	s, err := p.scalar(n, prefix, what)
	if err != nil {
		return "", err
	}
	s = strings.TrimSpace(s)
	if s == "" && required {
		return "", p.errAt(n, "%s%q is empty", prefix, what)
	}
	if strings.ContainsAny(s, "\r\n") {
		return "", p.errAt(n, "%s%q must be a single line", prefix, what)
	}
	// A definition may come from another clone, and these lines are
	// printed as they are (a mode, a label): no escape sequence in them.
	if text.Clean(s) != s {
		return "", p.errAt(n, "%s%q holds control characters", prefix, what)
	}
	return s, nil
}

func (p *parser) top(root *yaml.Node) (*draft, error) {
	fs, err := p.fields(root, "the top level", "", "top-level key", topKeys)
	if err != nil {
		return nil, err
	}
	d := &draft{line: max(root.Line, 1)}
	for _, f := range fs {
		switch f.name {
		case "name":
			if d.title, err = p.line(f.value, "", "name", false); err != nil {
				return nil, err
			}
		case "mode":
			if d.mode, err = p.line(f.value, "", "mode", true); err != nil {
				return nil, err
			}
			d.hasMode = true
		case "start_node":
			if d.start, err = p.scalar(f.value, "", "start_node"); err != nil {
				return nil, err
			}
			if d.start == "" {
				return nil, p.errAt(f.value, "%q is empty", "start_node")
			}
			d.startNode = f.value
		case "nodes":
			d.nodesKey = f.key
			if d.nodes, err = p.nodes(f.value); err != nil {
				return nil, err
			}
		default:
			if err := p.topMeta(d, f); err != nil {
				return nil, err
			}
		}
	}
	return d, nil
}

func (p *parser) nodes(n *yaml.Node) ([]*draftNode, error) {
	if isNull(deref(n)) {
		return nil, nil
	}
	fs, err := p.fields(n, `"nodes"`, "", "node name", nil)
	if err != nil {
		return nil, err
	}
	var out []*draftNode
	seen := map[string]*yaml.Node{}
	for _, f := range fs {
		if first, dup := seen[f.name]; dup {
			return nil, p.errAt(f.key, "node %s defined twice (first at line %d)", text.Quote(f.name), first.Line)
		}
		seen[f.name] = f.key
		if f.name == NodeDone || f.name == NodeAborted {
			if err := p.explicitEnd(f); err != nil {
				return nil, err
			}
			continue
		}
		if !validName(f.name) {
			return nil, p.errAt(f.key, "invalid node name %s: %s", text.Quote(f.name), nameRule)
		}
		dn, err := p.node(f)
		if err != nil {
			return nil, err
		}
		out = append(out, dn)
	}
	return out, nil
}

func (p *parser) node(f field) (*draftNode, error) {
	prefix := fmt.Sprintf("node %q: ", f.name)
	dn := &draftNode{node: &Node{Name: f.name}, key: f.key}
	fs, err := p.fields(f.value, fmt.Sprintf("node %q", f.name), prefix, "key", nodeKeys)
	if err != nil {
		return nil, err
	}
	var prompt, promptHbs, rules, transitions *yaml.Node
	for _, nf := range fs {
		switch nf.name {
		case "summary":
			if dn.node.Summary, err = p.line(nf.value, prefix, "summary", false); err != nil {
				return nil, err
			}
		case "prompt":
			prompt = nf.value
		case "prompt_hbs":
			promptHbs = nf.value
		case "rules":
			rules = nf.value
		case "transitions":
			transitions = nf.value
		default:
			if err := p.nodeMeta(dn, nf, prefix); err != nil {
				return nil, err
			}
		}
	}
	// A node without transitions ends the run where it stands, like done.
	if transitions == nil || isEmptyList(transitions) {
		dn.node.Terminal = true
	} else if err := p.transitions(dn, transitions, prefix); err != nil {
		return nil, err
	}
	if err := p.prompt(dn, f.key, prompt, promptHbs, prefix); err != nil {
		return nil, err
	}
	if err := p.checkRun(dn); err != nil {
		return nil, err
	}
	if rules != nil {
		if dn.node.Rules, err = p.rules(rules, prefix); err != nil {
			return nil, err
		}
	}
	return dn, nil
}

// isEmptyList reports a transitions value that lists nothing.
func isEmptyList(n *yaml.Node) bool {
	d := deref(n)
	return isNull(d) || (d.Kind == yaml.SequenceNode && len(d.Content) == 0)
}

func (p *parser) transitions(dn *draftNode, n *yaml.Node, prefix string) error {
	seq := deref(n)
	if seq.Kind != yaml.SequenceNode {
		return p.errAt(n, "%s\"transitions\" must be a list, got %s", prefix, describe(seq))
	}
	for _, item := range seq.Content {
		if p.nTrans++; p.nTrans > maxTransitions {
			at := item
			if n.Kind == yaml.AliasNode {
				at = n
			}
			return p.errAt(at, "too many transitions (more than %d in one file)", maxTransitions)
		}
		fs, err := p.fields(item, prefix+"each transition", prefix, "transition key", transitionKeys)
		if err != nil {
			return err
		}
		var t Transition
		var when, to *yaml.Node
		for _, f := range fs {
			switch f.name {
			case "when":
				when = f.value
			case "to":
				to = f.value
			default:
				if err := p.transitionMeta(&t, f, prefix); err != nil {
					return err
				}
			}
		}
		for _, req := range []struct {
			name string
			val  *yaml.Node
			dst  *string
		}{{"when", when, &t.When}, {"to", to, &t.To}} {
			if req.val == nil {
				return p.errAt(item, "%stransition is missing %q", prefix, req.name)
			}
			if *req.dst, err = p.scalar(req.val, prefix, req.name); err != nil {
				return err
			}
			if *req.dst == "" {
				return p.errAt(req.val, "%stransition has an empty %q", prefix, req.name)
			}
		}
		if !validName(t.When) {
			return p.errAt(when, "%sinvalid claim %s: %s", prefix, text.Quote(t.When), nameRule)
		}
		dn.node.Transitions = append(dn.node.Transitions, t)
		dn.toPos = append(dn.toPos, to)
	}
	return nil
}

// deref follows aliases. The schema has a fixed depth, so an anchor that
// contains itself cannot make the walk loop; the bound is only a backstop.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; i < 8 && n.Kind == yaml.AliasNode && n.Alias != nil; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describe names what was found instead of what was expected.
func describe(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case isNull(n):
		return "nothing"
	case n.Kind == yaml.ScalarNode:
		return text.Quote(n.Value)
	}
	return "an unsupported YAML node"
}

// hint suggests the known key a typo was probably meant to be, or lists
// them all when nothing is close.
func hint(got string, known []string) string {
	best, bestDist := "", 3
	for _, k := range known {
		// Short keys tolerate fewer edits, or "x" would suggest "to".
		if d := editDistance(strings.ToLower(got), k); d < bestDist && d < max(len(k)/2, 1) {
			best, bestDist = k, d
		}
	}
	if best != "" {
		return fmt.Sprintf("(did you mean %q?)", best)
	}
	return "(expected one of " + strings.Join(known, ", ") + ")"
}

// editDistance counts single-character insertions, deletions, substitutions
// and swaps of neighbours, the usual typing slips.
func editDistance(a, b string) int {
	if len(a) > 64 {
		return len(a) // far from every known key; skip the quadratic work
	}
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

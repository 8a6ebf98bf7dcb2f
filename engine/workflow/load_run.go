package workflow

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/git-hegel/git-hegel/engine/text"
)

// The step runner's keys: a node's `run:` handler and its
// `check:` commands. They are parsed here, apart from the core keys in
// load.go and the stage metadata in load_meta.go.
//
//	run:
//	  adapter: claude          # or "default": the run's adapter (--adapter, hegel.adapter)
//	  timeout: 10m             # optional, for adapter and command steps
//	run:
//	  command: make lint       # sh -c in the worktree root
//	run:
//	  confirm: Apply the plan? # a step that only asks
//	check: go test ./...       # or a list; runs before the node ends, by run and by next

// Handler kinds.
const (
	HandlerAdapter = "adapter"
	HandlerCommand = "command"
	HandlerConfirm = "confirm"
)

// DefaultAdapter is the adapter name that means "the run's adapter":
// --adapter, else git config hegel.adapter.
const DefaultAdapter = "default"

// maxChecks bounds a node's check list.
const maxChecks = 20

// Handler is a node's `run:`: what `git hegel run` does at the node.
type Handler struct {
	Kind    string // HandlerAdapter, HandlerCommand or HandlerConfirm
	Adapter string // adapter steps: the adapter's name, or DefaultAdapter
	// Text is the command to run (command steps: as written, with
	// `\{{` read as `{{`) or the question (confirm steps: a template,
	// Template is it parsed); Line is the file line its first line (or the
	// adapter's name) is on.
	Text     string
	Template *Template
	Line     int
	// Timeout stops an adapter or command step that runs longer (0: the
	// adapter's own hegel.adapter.<name>.timeout, else none).
	Timeout time.Duration
}

// Check is one `check:` command: it must exit 0 before the node ends.
// Command is the text to run (`\{{` read as `{{`); Line the file line
// its first line is on.
type Check struct {
	Command string
	Line    int
}

// RunMeta is what a node says about running it: its handler and checks.
type RunMeta struct {
	Run    *Handler // nil: no handler (run stops with "Missing step handler")
	Checks []Check
}

// HasHandler reports whether `git hegel run` can execute node.
func (w *Definition) HasHandler(node string) bool {
	n, ok := w.Nodes[node]
	return ok && n.Run != nil
}

// ValidAdapterName reports whether s may name an adapter (a git config
// subsection hegel.adapter.<name>).
func ValidAdapterName(s string) bool { return validName(s) && s != DefaultAdapter }

// Needs reports whether one of the workflow's templates uses the run
// input name ("prompt" or "context") outside any block, so that a run
// cannot do without it.
func (w *Definition) Needs(input string) bool {
	for _, name := range w.Order {
		if slices.Contains(w.Nodes[name].Needed(), input) {
			return true
		}
	}
	return false
}

// Needed lists the inputs (DataPrompt, DataContext) the node's templates
// cannot be rendered without, template by template, in the order they
// appear.
func (n *Node) Needed() []string {
	var out []string
	for _, u := range n.templates() {
		out = append(out, u.t.Needs...)
	}
	return out
}

// Runnable reports whether `git hegel run` can take the workflow from its
// start to an end: every node it defines has a handler. (A node without
// one stops a run with "Missing step handler".)
func (w *Definition) Runnable() bool {
	handlers := 0
	for _, name := range w.Order {
		n := w.Nodes[name]
		if n.Run != nil {
			handlers++
		} else if !n.Terminal {
			return false
		}
	}
	// A workflow of terminal nodes alone has no step to run.
	return handlers > 0
}

var runNodeKeys = []string{"run", "check"}

var handlerKeys = []string{HandlerAdapter, HandlerCommand, HandlerConfirm, "timeout"}

func init() { nodeKeys = append(nodeKeys, runNodeKeys...) }

// nodeRun parses run: and check:.
func (p *parser) nodeRun(dn *draftNode, f field, prefix string) error {
	var err error
	switch f.name {
	case "run":
		dn.node.Run, err = p.handler(f.value, prefix)
	case "check":
		dn.node.Checks, err = p.checks(f.value, prefix)
	}
	return err
}

func (p *parser) handler(n *yaml.Node, prefix string) (*Handler, error) {
	rprefix := prefix + "run: "
	if m := deref(n); m.Kind != yaml.MappingNode {
		return nil, p.errAt(n, "%s\"run\" must be a mapping with one of adapter, command or confirm, got %s", prefix, describe(m))
	}
	fs, err := p.fields(n, prefix+`"run"`, rprefix, "key", handlerKeys)
	if err != nil {
		return nil, err
	}
	h := &Handler{}
	var kindKey, timeoutKey *yaml.Node
	for _, f := range fs {
		if f.name == "timeout" {
			timeoutKey = f.value
			s, err := p.line(f.value, rprefix, "timeout", true)
			if err != nil {
				return nil, err
			}
			d, err := time.ParseDuration(s)
			if err != nil || d <= 0 {
				return nil, p.errAt(f.value, "%stimeout %s is not a duration such as 90s or 10m", rprefix, text.Quote(s))
			}
			h.Timeout = d
			continue
		}
		if kindKey != nil {
			return nil, p.errAt(f.key, "%sboth %s and %s; a step has one handler", rprefix, h.Kind, f.name)
		}
		kindKey, h.Kind = f.key, f.name
		switch f.name {
		case HandlerAdapter:
			if h.Adapter, err = p.line(f.value, rprefix, "adapter", true); err != nil {
				return nil, err
			}
			h.Line = textLine(f.value)
			if !validName(h.Adapter) {
				return nil, p.errAt(f.value, "%sinvalid adapter name %s: %s (or %q for the run's adapter)", rprefix, text.Quote(h.Adapter), nameRule, DefaultAdapter)
			}
		case HandlerCommand, HandlerConfirm:
			s, err := p.scalar(f.value, rprefix, f.name)
			if err != nil {
				return nil, err
			}
			h.Text = strings.TrimRight(s, " \t\r\n")
			if strings.TrimSpace(h.Text) == "" {
				return nil, p.errAt(f.value, "%s%s is empty", rprefix, f.name)
			}
			h.Line = textLine(f.value)
			if f.name == HandlerCommand {
				if h.Text, err = p.command(h.Text, h.Line, rprefix+f.name); err != nil {
					return nil, err
				}
			} else if h.Template, err = p.runTemplate(h.Text, h.Line, rprefix+f.name); err != nil {
				return nil, err
			}
		}
	}
	if kindKey == nil {
		return nil, p.errAt(n, "%sneeds one of adapter, command or confirm", rprefix)
	}
	if h.Kind == HandlerConfirm && timeoutKey != nil {
		return nil, p.errAt(timeoutKey, "%sa confirm step waits for a person; it takes no timeout", rprefix)
	}
	return h, nil
}

// checks parses check: one command, or a list of them.
func (p *parser) checks(n *yaml.Node, prefix string) ([]Check, error) {
	d := deref(n)
	if isNull(d) {
		return nil, nil
	}
	elems := []*yaml.Node{n}
	if d.Kind == yaml.SequenceNode {
		elems = d.Content
	}
	if len(elems) > maxChecks {
		return nil, p.errAt(n, "%s\"check\" has more than %d commands", prefix, maxChecks)
	}
	var out []Check
	for _, e := range elems {
		s, err := p.scalar(e, prefix, "check")
		if err != nil {
			return nil, err
		}
		s = strings.TrimRight(s, " \t\r\n")
		if strings.TrimSpace(s) == "" {
			return nil, p.errAt(e, "%sa check command is empty", prefix)
		}
		c := Check{Line: textLine(e)}
		if c.Command, err = p.command(s, c.Line, prefix+"check"); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// command checks a command or check (command_env.go): a placeholder is
// an error at its file line.
func (p *parser) command(src string, line int, what string) (string, error) {
	cmd, off, err := shellCommand(src)
	if err != nil {
		return "", &defError{p.file, line + off, what + ": " + err.Error()}
	}
	return cmd, nil
}

// runTemplate parses a confirm step's question as a template, reporting
// a mistake at its file line.
func (p *parser) runTemplate(src string, line int, what string) (*Template, error) {
	t, err := ParseTemplate(src, false)
	if err != nil {
		var te *TemplateError
		if asTemplateError(err, &te) {
			return nil, &defError{p.file, line + te.Line - 1, what + ": " + te.Msg}
		}
		return nil, &defError{p.file, line, fmt.Sprintf("%s: %v", what, err)}
	}
	// A question is text for whoever answers it; a template file's text
	// reaches only prompts.
	if len(t.Includes) > 0 {
		in := t.Includes[0]
		return nil, &defError{p.file, line + in.Line - 1, fmt.Sprintf("%s: {{templates/%s}}: includes are for prompts, not for questions", what, in.Name)}
	}
	return t, nil
}

// checkRun checks what needs the whole node: a node without transitions
// never runs a handler, and an adapter step needs a prompt to send.
func (p *parser) checkRun(dn *draftNode) error {
	n := dn.node
	if n.Run == nil {
		return nil
	}
	if n.Terminal {
		return p.errAt(dn.key, "node %q has run: but no transitions, so reaching it ends the workflow and the step never runs; add a transition to done", n.Name)
	}
	return nil
}

// templateUse is one template of a node with the file line its text
// starts on, and what it is as a message prefix ("" for the prompt), for
// the checks that need every template.
type templateUse struct {
	t    *Template
	line int
	what string
}

// templates lists the node's templates: its prompt and a confirm step's
// question (commands and checks are not templates: command_env.go).
func (n *Node) templates() []templateUse {
	var out []templateUse
	if n.Template != nil {
		out = append(out, templateUse{n.Template, n.PromptLine, ""})
	}
	if n.Run != nil && n.Run.Template != nil {
		out = append(out, templateUse{n.Run.Template, n.Run.Line, "run: " + n.Run.Kind + ": "})
	}
	return out
}

package workflow

import "strings"

// CommandField is one field of a definition that runs a process.
type CommandField struct {
	Node  string
	Field string // "check", "run: command" or "run: adapter"
	Text  string // the command, or the adapter's name
	// Line and EndLine are the file lines the text is on.
	Line, EndLine int
}

// CommandFields lists node's fields that run a process, in file order.
func (w *Definition) CommandFields(node string) []CommandField {
	n, ok := w.Nodes[node]
	if !ok {
		return nil
	}
	var out []CommandField
	if h := n.Run; h != nil {
		switch h.Kind {
		case HandlerCommand:
			out = append(out, CommandField{Node: node, Field: "run: command", Text: h.Text, Line: h.Line, EndLine: h.Line + strings.Count(h.Text, "\n")})
		case HandlerAdapter:
			out = append(out, CommandField{Node: node, Field: "run: adapter", Text: h.Adapter, Line: h.Line, EndLine: h.Line})
		}
	}
	for _, c := range n.Checks {
		out = append(out, CommandField{Node: node, Field: "check", Text: c.Command, Line: c.Line, EndLine: c.Line + strings.Count(c.Command, "\n")})
	}
	return out
}

// AllCommandFields lists every field of the workflow that runs a process,
// node by node in file order.
func (w *Definition) AllCommandFields() []CommandField {
	var out []CommandField
	for _, name := range w.Order {
		out = append(out, w.CommandFields(name)...)
	}
	return out
}

// IsNew reports whether field f is not among old (same node, field and
// text): a command the reviewed version adds or changes.
func (f CommandField) IsNew(old []CommandField) bool {
	for _, o := range old {
		if o.Node == f.Node && o.Field == f.Field && o.Text == f.Text {
			return false
		}
	}
	return true
}

package workflow

import (
	"fmt"
)

// RenderNode renders t, one of node n's templates whose text starts at
// file line line; what prefixes messages about it ("" for the prompt,
// "run: command: " ...). Guides, partials and optional context come from
// src (nil: the built-ins only); d carries the task's and the run's values
// (its Guide, Partial and Optional are filled in here). An error names the
// file and line of the template.
func (w *Definition) RenderNode(n *Node, t *Template, line int, what string, src GuideSource, d RenderData) (string, error) {
	opt, err := optionalValues(src, t.Optional)
	if err != nil {
		return "", err
	}
	d.Guide = func(name string) (string, error) { return guideText(src, name) }
	d.Partial = func(name string) (string, error) { return partialText(src, name) }
	d.Optional = opt
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

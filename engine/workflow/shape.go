package workflow

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
)

// Shape is what checking a stored state against its workflow needs
// of the definition: the node names, and which of them end the run. It is
// a pure function of the definition's text, which a task stores byte for
// byte, so it is remembered by the text's hash (ShapeKey) instead of
// parsing the YAML on every load: the parse costs 40 µs to 1.3 ms (mostly
// the YAML parser, not the templates), the remembered shape one small file
// read (docs/benchmarks.md).
type Shape struct {
	Nodes    []string `json:"nodes"`
	Terminal []string `json:"terminal,omitempty"`
}

// ShapeStore remembers shapes by key. gitstore keeps them as small files
// beside the task cache; losing them costs only a parse. Both calls are
// best effort: a miss, a damaged entry or a failed write is never an error.
type ShapeStore interface {
	// LoadShape returns what SaveShape stored under key, or nil.
	LoadShape(key string) []byte
	// SaveShape stores data under key.
	SaveShape(key string, data []byte)
}

// shapeFormat is part of every key: a change to Shape or to what
// the parser accepts changes it, so old entries are never read.
const shapeFormat = "shape 1\n"

// ShapeKey is the key of a definition's shape: the hex SHA-256 of the
// format and the text.
func ShapeKey(def []byte) string {
	h := sha256.New()
	h.Write([]byte(shapeFormat))
	h.Write(def)
	return hex.EncodeToString(h.Sum(nil))
}

// ShapeOf is the shape of a parsed definition.
func ShapeOf(wf *Definition) *Shape {
	s := &Shape{Nodes: slices.Clone(wf.Order)}
	for _, n := range wf.Order {
		if wf.Nodes[n].Terminal {
			s.Terminal = append(s.Terminal, n)
		}
	}
	return s
}

// Definition returns a definition called name that holds only the
// shape's nodes: enough for HasNode and IsTerminal, and so for checking a
// stored state against it (engine.ValidateState).
func (s *Shape) Definition(name string) *Definition {
	w := &Definition{Name: name, Mode: name, Nodes: make(map[string]*Node, len(s.Nodes)), Order: slices.Clone(s.Nodes)}
	for _, n := range s.Nodes {
		w.Nodes[n] = &Node{Name: n}
	}
	for _, n := range s.Terminal {
		if nd, ok := w.Nodes[n]; ok {
			nd.Terminal = true
		}
	}
	return w
}

package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
)

// WorkflowShape is what checking a stored state against its workflow needs
// of the definition: the node names, and which of them end the run. It is
// a pure function of the definition's text, which a task stores byte for
// byte, so it is remembered by the text's hash (ShapeKey) instead of
// parsing the YAML on every load: the parse costs 40 µs to 1.3 ms (mostly
// the YAML parser, not the templates), the remembered shape one small file
// read (docs/benchmarks.md, issue 10).
type WorkflowShape struct {
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

// shapeFormat is part of every key: a change to WorkflowShape or to what
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
func ShapeOf(wf *Workflow) *WorkflowShape {
	s := &WorkflowShape{Nodes: slices.Clone(wf.Order)}
	for _, n := range wf.Order {
		if wf.Nodes[n].Terminal {
			s.Terminal = append(s.Terminal, n)
		}
	}
	return s
}

// workflow is a definition holding only the shape's nodes: enough for
// HasNode and IsTerminal, and so for ValidateState.
func (s *WorkflowShape) workflow(name string) *Workflow {
	w := &Workflow{Name: name, Mode: name, Nodes: make(map[string]*Node, len(s.Nodes)), Order: slices.Clone(s.Nodes)}
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

// storedShape returns the shape of def, the definition a task stores:
// remembered in shapes, or parsed (and then remembered). shapes may be
// nil. name and file are the workflow's name and where def is, for
// messages.
func storedShape(name, file string, def []byte, shapes ShapeStore) (*WorkflowShape, error) {
	key := ""
	if shapes != nil {
		key = ShapeKey(def)
		if b := shapes.LoadShape(key); b != nil {
			var s WorkflowShape
			if json.Unmarshal(b, &s) == nil && len(s.Nodes) > 0 {
				return &s, nil
			}
		}
	}
	wf, err := ParseWorkflow(name, file, def)
	if err != nil {
		return nil, err
	}
	s := ShapeOf(wf)
	if shapes != nil {
		if b, err := json.Marshal(s); err == nil {
			shapes.SaveShape(key, b)
		}
	}
	return s, nil
}

// CheckStored validates a stored task as every load should: its state by
// the rules (ValidateState) and against def, the definition it stores (its
// current node must be one of def's), without parsing def when shapes
// remembers its shape. It returns nil or a *StateError naming every
// problem; a definition that does not parse is one of them.
func CheckStored(st *State, def []byte, shapes ShapeStore) error {
	if st == nil {
		return ValidateState(nil, nil)
	}
	s, err := storedShape(st.Workflow, "workflow.yaml", def, shapes)
	if err != nil {
		perr := ValidateState(st, nil)
		se, ok := perr.(*StateError)
		if !ok {
			se = &StateError{Task: st.Task}
		}
		se.Problems = append(se.Problems, "its stored workflow definition does not parse")
		return se
	}
	return ValidateState(st, s.workflow(st.Workflow))
}

// CheckTask is CheckStored for a loaded task, through the engine's Shapes.
func (e *Engine) CheckTask(t *Task) error {
	if t == nil {
		return ValidateState(nil, nil)
	}
	return CheckStored(t.State, t.Definition, e.Shapes)
}

// memoShapes is a ShapeStore that keeps what it read or stored in memory,
// over backing (which may be nil), for a command that checks many tasks.
type memoShapes struct {
	backing ShapeStore
	m       map[string][]byte
}

func (s *memoShapes) LoadShape(key string) []byte {
	if b, ok := s.m[key]; ok {
		return b
	}
	var b []byte
	if s.backing != nil {
		b = s.backing.LoadShape(key)
	}
	if b != nil {
		s.m[key] = b
	}
	return b
}

func (s *memoShapes) SaveShape(key string, data []byte) {
	s.m[key] = data
	if s.backing != nil {
		s.backing.SaveShape(key, data)
	}
}

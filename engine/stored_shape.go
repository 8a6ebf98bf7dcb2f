package engine

import (
	"encoding/json"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// Checking a stored task against the definition it stores, through the
// definition's shape (workflow.Shape), remembered so that a load need not
// parse the YAML.

// storedShape returns the shape of def, the definition a task stores:
// remembered in shapes, or parsed (and then remembered). shapes may be
// nil. name and file are the workflow's name and where def is, for
// messages.
func storedShape(name, file string, def []byte, shapes workflow.ShapeStore) (*workflow.Shape, error) {
	key := ""
	if shapes != nil {
		key = workflow.ShapeKey(def)
		if b := shapes.LoadShape(key); b != nil {
			var s workflow.Shape
			if json.Unmarshal(b, &s) == nil && len(s.Nodes) > 0 {
				return &s, nil
			}
		}
	}
	wf, err := workflow.Parse(name, file, def)
	if err != nil {
		return nil, err
	}
	s := workflow.ShapeOf(wf)
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
func CheckStored(st *State, def []byte, shapes workflow.ShapeStore) error {
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
	return ValidateState(st, s.Definition(st.Workflow))
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
	backing workflow.ShapeStore
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

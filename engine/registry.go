package engine

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Registry is the set of workflows available by name: the built-ins with
// the user's files layered on top.
type Registry struct {
	byName map[string]*Workflow
}

// NewRegistry layers user files (display file name, such as
// ".hegel/workflows/foo.yaml", to contents) over the built-ins. A user file
// named like a built-in replaces it. The first invalid user file, in file
// name order, is returned as the error so the result never depends on map
// iteration.
func NewRegistry(user map[string][]byte) (*Registry, error) {
	r := &Registry{byName: map[string]*Workflow{}}
	for _, w := range Builtins() {
		r.byName[w.Name] = w
	}
	files := make([]string, 0, len(user))
	for f := range user {
		files = append(files, f)
	}
	slices.Sort(files)
	fromUser := map[string]string{}
	for _, f := range files {
		name, ok := workflowName(f)
		if !ok {
			return nil, &defError{f, 1, "workflow files must end in .yaml or .yml"}
		}
		if other, dup := fromUser[name]; dup {
			return nil, &defError{f, 1, fmt.Sprintf("workflow %q is already defined in %s", name, other)}
		}
		w, err := ParseWorkflow(name, f, user[f])
		if err != nil {
			return nil, err
		}
		fromUser[name] = f
		r.byName[name] = w
	}
	return r, nil
}

// workflowName derives a workflow's name from its file name. Both "/" and
// "\" count as separators because display names may come from any OS.
func workflowName(file string) (string, bool) {
	base := path.Base(strings.ReplaceAll(file, `\`, "/"))
	for _, ext := range []string{".yaml", ".yml"} {
		if name, ok := strings.CutSuffix(base, ext); ok {
			return name, true
		}
	}
	return "", false
}

// Get returns the workflow called name.
func (r *Registry) Get(name string) (*Workflow, bool) {
	w, ok := r.byName[name]
	return w, ok
}

// List returns every workflow, sorted by name.
func (r *Registry) List() []*Workflow {
	out := make([]*Workflow, 0, len(r.byName))
	for _, w := range r.byName {
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b *Workflow) int { return strings.Compare(a.Name, b.Name) })
	return out
}

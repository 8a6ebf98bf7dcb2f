package workflow

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"
)

// Registry is the set of workflows available by name: the built-ins with
// the user's files layered on top. A file that cannot be loaded is kept as
// broken, with its error, and never stops the others.
type Registry struct {
	byName   map[string]*Definition
	broken   map[string]*BrokenFile
	warnings []Warning
}

// BrokenFile is a user file that could not be loaded.
type BrokenFile struct {
	Name   string // the workflow name its file name gives ("" if none)
	Source string // the file
	Err    error  // file:line: problem
	// Raw is the file's content when it was read and could not be
	// parsed: its error may quote it.
	Raw []byte
	// Empty is true when the file was read and holds nothing but white
	// space: what a shell redirect creates before the command runs.
	Empty bool
}

// LoadOptions are the settings a registry is loaded with.
type LoadOptions struct {
	// Strict makes unknown keys errors (git config hegel.strictWorkflows).
	Strict bool
	// UserGuides and UserPartials name the guides in .hegel/guides/ and
	// the partials in .hegel/guides/partials/ and .hegel/guides/*.hbs;
	// with the built-ins they are what {{NAME}} and {{> name}} may use.
	UserGuides   []string
	UserPartials []string
	// UserTemplates name the includes in .hegel/guides/templates/.
	UserTemplates []string
	// Unreadable are user files that could not be read, with the error.
	Unreadable map[string]error
}

// NewRegistry layers user files (display file name, such as
// ".hegel/workflows/foo.yaml", to contents) over the built-ins with the
// default options. It never fails: broken files are listed by Broken.
func NewRegistry(user map[string][]byte) (*Registry, error) {
	return LoadRegistry(user, LoadOptions{}), nil
}

// LoadRegistry layers user files over the built-ins. A user file named
// like a built-in replaces it, also when it is broken: starting it then
// reports the file's error rather than quietly running the built-in.
func LoadRegistry(user map[string][]byte, opts LoadOptions) *Registry {
	r := &Registry{byName: map[string]*Definition{}, broken: map[string]*BrokenFile{}}
	guides := func(n string) bool { return HasBuiltinGuide(n) || slices.Contains(opts.UserGuides, n) }
	partials := func(n string) bool { return HasBuiltinPartial(n) || slices.Contains(opts.UserPartials, n) }
	templates := func(n string) bool { return slices.Contains(opts.UserTemplates, n) }
	for _, w := range Builtins() {
		r.byName[w.Name] = w
	}
	files := make([]string, 0, len(user))
	for f := range user {
		files = append(files, f)
	}
	slices.Sort(files)
	for f, err := range opts.Unreadable {
		name, _ := workflowName(f)
		if validName(name) {
			delete(r.byName, name)
			r.addBroken(name, f, err)
		} else {
			r.addBroken("", f, err)
		}
	}
	fromUser := map[string]string{}
	for _, f := range files {
		name, ok := workflowName(f)
		if !ok {
			r.addBroken("", f, &defError{f, 1, "workflow files must end in .yaml or .yml"})
			continue
		}
		if other, dup := fromUser[name]; dup {
			r.addBroken("", f, &defError{f, 1, fmt.Sprintf("workflow %q is already defined in %s", name, other)})
			continue
		}
		fromUser[name] = f
		w, err := ParseWith(name, f, user[f], ParseOptions{Strict: opts.Strict})
		if err == nil {
			err = w.guideProblem(guides, partials, templates)
		}
		if err != nil {
			key := name
			if validName(name) {
				delete(r.byName, name)
			} else {
				key = ""
			}
			r.addBroken(key, f, err)
			b := r.broken[brokenKey(key, f)]
			b.Raw = user[f]
			b.Empty = len(bytes.TrimSpace(user[f])) == 0
			continue
		}
		r.warnings = append(r.warnings, w.Warnings...)
		r.byName[name] = w
	}
	return r
}

func (r *Registry) addBroken(name, file string, err error) {
	r.broken[brokenKey(name, file)] = &BrokenFile{Name: name, Source: file, Err: err}
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
func (r *Registry) Get(name string) (*Definition, bool) {
	w, ok := r.byName[name]
	return w, ok
}

// GetBroken returns the broken file that defines name, if any.
func (r *Registry) GetBroken(name string) (*BrokenFile, bool) {
	b, ok := r.broken[name]
	return b, ok
}

// List returns every loadable workflow, sorted by name.
func (r *Registry) List() []*Definition {
	out := make([]*Definition, 0, len(r.byName))
	for _, w := range r.byName {
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b *Definition) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Broken returns the files that could not be loaded, sorted by file.
func (r *Registry) Broken() []*BrokenFile {
	out := make([]*BrokenFile, 0, len(r.broken))
	for _, b := range r.broken {
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b *BrokenFile) int { return strings.Compare(a.Source, b.Source) })
	return out
}

// Warnings returns the loaded user files' warnings, in file order.
func (r *Registry) Warnings() []Warning { return slices.Clone(r.warnings) }

// brokenKey is where the registry keeps a broken file: by the workflow's
// name, or by the file when it gives none.
func brokenKey(name, file string) string {
	if name == "" {
		return "file:" + file
	}
	return name
}

package workflow

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/git-hegel/git-hegel/engine/text"
)

// MetaMode is a workflow of workflows: which workflow a sequence starts
// with, and which workflows may follow each one when its task is done. A
// meta-mode file only names workflows; whatever a named workflow runs is
// decided, and trusted, where that workflow is started.
type MetaMode struct {
	Name        string
	Description string
	// Start is the workflow `git hegel meta NAME` starts.
	Start string
	// Next lists, per workflow, the workflows offered when a task of it
	// is done, in the order the file gives them. A workflow without an
	// entry ends the sequence.
	Next map[string][]string
	// Switch names, per workflow, the meta-mode a task of that workflow
	// carries instead of this one: from then on, that meta-mode's Next
	// decides what is offered.
	Switch map[string]string
	// Order lists the workflows the meta-mode names, start first, then
	// in the order the file names them.
	Order []string
	// Source is "built-in" or the file it was read from.
	Source string

	switchLines map[string]int // where each switch was written
}

// Following returns the workflows offered when a task of wf, run under
// this meta-mode, is done (nil: the sequence ends there).
func (m *MetaMode) Following(wf string) []string { return slices.Clone(m.Next[wf]) }

// ModeFor returns the meta-mode a task of wf started from this meta-mode
// carries: the one its switch names, else this one.
func (m *MetaMode) ModeFor(wf string) string {
	if s, ok := m.Switch[wf]; ok {
		return s
	}
	return m.Name
}

// ValidMetaModeName reports whether s may name a meta-mode: the rule of
// workflow names, which is also what keeps a fetched task's meta_mode
// from carrying a path, a newline or a megabyte into what is printed.
func ValidMetaModeName(s string) bool { return validName(s) }

// maxMetaEntries bounds a meta-mode file's mappings and lists: they name
// a handful of workflows, and a bound keeps a hostile file cheap.
const maxMetaEntries = 100

var metaKeys = []string{"name", "description", "start", "transitions", "switch"}

// ParseMetaMode parses one meta-mode file. name comes from the file's
// name; file is used in messages (file:line, as for workflows).
func ParseMetaMode(name, file string, data []byte) (*MetaMode, error) {
	if !validName(name) {
		return nil, &defError{file, 1, fmt.Sprintf("invalid meta-mode name %s: %s", text.Quote(name), nameRule)}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &defError{file, 1, "empty meta-mode definition"}
	}
	root, err := parseYAML(file, data)
	if err != nil {
		return nil, err
	}
	p := &parser{file: file, strict: true}
	fields, err := p.fields(root, "the top level", "", "top-level key", metaKeys)
	if err != nil {
		return nil, err
	}
	m := &MetaMode{Name: name, Next: map[string][]string{}, Switch: map[string]string{}, Source: file, switchLines: map[string]int{}}
	var startPos *yaml.Node
	for _, f := range fields {
		switch f.name {
		case "name":
			s, err := p.line(f.value, "", "name", true)
			if err != nil {
				return nil, err
			}
			if s != name {
				return nil, p.errAt(f.value, "name %s does not match the file's name %s; a meta-mode is named by its file", text.Quote(s), text.Quote(name))
			}
		case "description":
			if m.Description, err = p.line(f.value, "", "description", false); err != nil {
				return nil, err
			}
		case "start":
			startPos = f.value
			if m.Start, err = p.workflowRef(f.value, "start"); err != nil {
				return nil, err
			}
		case "transitions":
			if err := p.metaTransitions(m, f.value); err != nil {
				return nil, err
			}
		case "switch":
			if err := p.metaSwitch(m, f.value); err != nil {
				return nil, err
			}
		}
	}
	if startPos == nil {
		return nil, &defError{file, max(root.Line, 1), `missing "start": the workflow the meta-mode begins with`}
	}
	m.Order = []string{m.Start}
	add := func(w string) {
		if !slices.Contains(m.Order, w) {
			m.Order = append(m.Order, w)
		}
	}
	for _, f := range fields {
		// Walk the file's order again so Order follows what was written.
		if f.name != "transitions" {
			continue
		}
		for _, kv := range pairs(f.value) {
			add(kv[0].Value)
			for _, v := range deref(kv[1]).Content {
				add(deref(v).Value)
			}
		}
	}
	return m, nil
}

// pairs returns a mapping's key/value nodes.
func pairs(n *yaml.Node) [][2]*yaml.Node {
	d := deref(n)
	var out [][2]*yaml.Node
	for i := 0; i+1 < len(d.Content); i += 2 {
		out = append(out, [2]*yaml.Node{deref(d.Content[i]), d.Content[i+1]})
	}
	return out
}

// workflowRef reads a value naming a workflow.
func (p *parser) workflowRef(n *yaml.Node, what string) (string, error) {
	s, err := p.line(n, "", what, true)
	if err != nil {
		return "", err
	}
	if !validName(s) {
		return "", p.errAt(n, "%q: invalid workflow name %s: %s", what, text.Quote(s), nameRule)
	}
	return s, nil
}

func (p *parser) metaTransitions(m *MetaMode, n *yaml.Node) error {
	fields, err := p.fields(n, `"transitions"`, "transitions: ", "workflow", nil)
	if err != nil {
		return err
	}
	if len(fields) > maxMetaEntries {
		return p.errAt(n, "transitions: more than %d workflows", maxMetaEntries)
	}
	seen := map[string]*yaml.Node{}
	for _, f := range fields {
		if !validName(f.name) {
			return p.errAt(f.key, "transitions: invalid workflow name %s: %s", text.Quote(f.name), nameRule)
		}
		if first, dup := seen[f.name]; dup {
			return p.errAt(f.key, "transitions: workflow %s listed twice (first at line %d)", text.Quote(f.name), first.Line)
		}
		seen[f.name] = f.key
		list := deref(f.value)
		if list.Kind != yaml.SequenceNode {
			return p.errAt(f.value, "transitions: %s must be a list of workflows, got %s", text.Quote(f.name), describe(list))
		}
		if len(list.Content) == 0 {
			return p.errAt(f.value, "transitions: %s lists no workflow; leave it out to end the sequence there", text.Quote(f.name))
		}
		if len(list.Content) > maxMetaEntries {
			return p.errAt(f.value, "transitions: %s lists more than %d workflows", text.Quote(f.name), maxMetaEntries)
		}
		var next []string
		for _, v := range list.Content {
			w, err := p.workflowRef(v, "transitions: "+f.name)
			if err != nil {
				return err
			}
			if slices.Contains(next, w) {
				return p.errAt(v, "transitions: %s lists %s twice", text.Quote(f.name), text.Quote(w))
			}
			next = append(next, w)
		}
		m.Next[f.name] = next
	}
	return nil
}

func (p *parser) metaSwitch(m *MetaMode, n *yaml.Node) error {
	fields, err := p.fields(n, `"switch"`, "switch: ", "workflow", nil)
	if err != nil {
		return err
	}
	if len(fields) > maxMetaEntries {
		return p.errAt(n, "switch: more than %d workflows", maxMetaEntries)
	}
	for _, f := range fields {
		if !validName(f.name) {
			return p.errAt(f.key, "switch: invalid workflow name %s: %s", text.Quote(f.name), nameRule)
		}
		if _, dup := m.Switch[f.name]; dup {
			return p.errAt(f.key, "switch: workflow %s listed twice (first at line %d)", text.Quote(f.name), m.switchLines[f.name])
		}
		s, err := p.line(f.value, "switch: ", f.name, true)
		if err != nil {
			return err
		}
		if !validName(s) {
			return p.errAt(f.value, "switch: invalid meta-mode name %s: %s", text.Quote(s), nameRule)
		}
		m.Switch[f.name] = s
		m.switchLines[f.name] = max(f.value.Line, 1)
	}
	return nil
}

//go:embed builtin_meta/*.yaml
var builtinMetaFS embed.FS

// BuiltinMetaModes returns the embedded meta-modes, sorted by name,
// shared: callers must not modify them.
func BuiltinMetaModes() []*MetaMode { return slices.Clone(loadBuiltinMeta()) }

// loadBuiltinMeta panics on an invalid built-in, a bug TestMetaBuiltins
// catches first.
var loadBuiltinMeta = sync.OnceValue(func() []*MetaMode {
	files, err := fs.Glob(builtinMetaFS, "builtin_meta/*.yaml")
	if err != nil {
		panic(err)
	}
	slices.Sort(files)
	var out []*MetaMode
	for _, f := range files {
		data, err := builtinMetaFS.ReadFile(f)
		if err != nil {
			panic(err)
		}
		name := strings.TrimSuffix(strings.TrimPrefix(f, "builtin_meta/"), ".yaml")
		m, err := ParseMetaMode(name, f, data)
		if err != nil {
			panic(fmt.Sprintf("invalid built-in meta-mode: %v", err))
		}
		m.Source = builtinSource
		out = append(out, m)
	}
	return out
})

// MetaRegistry is the set of meta-modes by name: the built-ins with the
// user's files (.hegel/meta/*.yaml) over them. A file that cannot be
// loaded is kept as broken and never stops the others.
type MetaRegistry struct {
	byName map[string]*MetaMode
	broken map[string]*BrokenFile
}

// LoadMetaModes layers user files (display path to contents) over the
// built-ins; unreadable are files that could not be read. A user file
// named like a built-in replaces it, also when broken, so declaring it
// reports the file's error instead of quietly using the built-in.
func LoadMetaModes(user map[string][]byte, unreadable map[string]error) *MetaRegistry {
	r := &MetaRegistry{byName: map[string]*MetaMode{}, broken: map[string]*BrokenFile{}}
	for _, m := range loadBuiltinMeta() {
		r.byName[m.Name] = m
	}
	addBroken := func(name, f string, err error) {
		key := name
		if !validName(name) {
			name, key = "", "file:"+f
		} else {
			delete(r.byName, name)
		}
		r.broken[key] = &BrokenFile{Name: name, Source: f, Err: err}
	}
	for f, err := range unreadable {
		name, _ := workflowName(f)
		addBroken(name, f, err)
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
			addBroken("", f, &defError{f, 1, "meta-mode files must end in .yaml or .yml"})
			continue
		}
		if other, dup := fromUser[name]; dup {
			r.broken["file:"+f] = &BrokenFile{Source: f, Err: &defError{f, 1, fmt.Sprintf("meta-mode %q is already defined in %s", name, other)}}
			continue
		}
		fromUser[name] = f
		m, err := ParseMetaMode(name, f, user[f])
		if err != nil {
			addBroken(name, f, err)
			continue
		}
		r.byName[name] = m
	}
	// A switch must name a meta-mode that loads; checked once all are
	// read, in name order so the outcome does not depend on map order.
	for changed := true; changed; {
		changed = false
		for _, name := range r.Names() {
			m := r.byName[name]
			for _, wf := range slices.Sorted(maps.Keys(m.Switch)) {
				to := m.Switch[wf]
				if _, ok := r.byName[to]; ok {
					continue
				}
				addBroken(name, m.Source, &defError{m.Source, m.switchLines[wf],
					fmt.Sprintf("switch: %s names the meta-mode %s, which is not defined (meta-modes: %s)", text.Quote(wf), text.Quote(to), text.JoinQuoted(r.Names()))})
				changed = true
				break
			}
		}
	}
	return r
}

// Get returns the meta-mode called name.
func (r *MetaRegistry) Get(name string) (*MetaMode, bool) {
	m, ok := r.byName[name]
	return m, ok
}

// GetBroken returns the broken file that defines name, if any.
func (r *MetaRegistry) GetBroken(name string) (*BrokenFile, bool) {
	b, ok := r.broken[name]
	return b, ok
}

// Names lists the loadable meta-modes, sorted.
func (r *MetaRegistry) Names() []string {
	out := make([]string, 0, len(r.byName))
	for n := range r.byName {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// List returns the loadable meta-modes, sorted by name.
func (r *MetaRegistry) List() []*MetaMode {
	out := make([]*MetaMode, 0, len(r.byName))
	for _, n := range r.Names() {
		out = append(out, r.byName[n])
	}
	return out
}

// Broken returns the files that could not be loaded, sorted by file.
func (r *MetaRegistry) Broken() []*BrokenFile {
	out := make([]*BrokenFile, 0, len(r.broken))
	for _, b := range r.broken {
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b *BrokenFile) int { return strings.Compare(a.Source, b.Source) })
	return out
}

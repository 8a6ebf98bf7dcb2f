package workflow

import (
	"embed"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"sync"
)

// builtinSource is the Source of every embedded workflow.
const builtinSource = "built-in"

// BuiltinSource is the Source of every embedded workflow, for callers
// that must tell one from a file.
const BuiltinSource = builtinSource

//go:embed builtin/*.yaml
var builtinFS embed.FS

//go:embed builtin_former.txt
var formerBuiltins string

// FormerBuiltinIDs returns the blob ids of the earlier versions of the
// built-in workflows, each with its name. A task keeps the definition it
// started from; after an upgrade that changed a built-in, these bytes
// still came from git-hegel itself.
func FormerBuiltinIDs() map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(formerBuiltins, "\n") {
		id, name, ok := strings.Cut(strings.TrimSpace(line), " ")
		if ok && !strings.HasPrefix(id, "#") {
			out[id] = name
		}
	}
	return out
}

// Builtins returns the embedded workflows, parsed, sorted by name. They are
// parsed once and shared, so callers must not modify them.
func Builtins() []*Definition {
	return slices.Clone(loadBuiltins())
}

// BuiltinSources returns the embedded workflows' files as they are
// stored, by name, without parsing them: enough to know a definition is
// a built-in one by its bytes, which the agent hook asks on every call.
func BuiltinSources() map[string][]byte {
	files, err := fs.Glob(builtinFS, "builtin/*.yaml")
	if err != nil {
		panic(err)
	}
	out := make(map[string][]byte, len(files))
	for _, f := range files {
		data, err := builtinFS.ReadFile(f)
		if err != nil {
			panic(err)
		}
		out[strings.TrimSuffix(strings.TrimPrefix(f, "builtin/"), ".yaml")] = data
	}
	return out
}

// loadBuiltins panics on an invalid built-in: that is a bug in this
// package, and TestBuiltins fails before any release could ship it.
var loadBuiltins = sync.OnceValue(func() []*Definition {
	src := BuiltinSources()
	names := slices.Sorted(maps.Keys(src))
	out := make([]*Definition, 0, len(names))
	for _, name := range names {
		w, err := Parse(name, "builtin/"+name+".yaml", src[name])
		if err != nil {
			panic(fmt.Sprintf("invalid built-in workflow: %v", err))
		}
		w.Source = builtinSource
		out = append(out, w)
	}
	return out
})

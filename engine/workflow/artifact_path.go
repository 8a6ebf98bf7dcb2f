package workflow

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/git-hegel/git-hegel/engine/text"
)

// An artifact path (artifact: and requires: on a node) may name the task
// it belongs to, so two tasks never share a file: {{task.dir}}/SPEC.md.
// Only these fields may appear, as they do not change while the task
// runs: the path a node wrote is the path its task reads back later.
//
//	{{task.name}}      the task's name
//	{{task.type}}      its type ("" when it has none)
//	{{task.workflow}}  the workflow's name
//	{{task.dir}}       the task's folder (hegel.artifactDir, fixed at start)
var ArtifactFields = []string{"name", "type", "workflow", "dir"}

var artifactFieldRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{\{\s*([^{}]*?)\s*\}\}`) })

// CheckArtifactPattern refuses an artifact path that names anything but
// the fields above, or that could leave the worktree once they are
// filled in (CheckArtifactPath on the path with each field a plain name).
func CheckArtifactPattern(p string) error {
	var bad string
	plain := artifactFieldRe().ReplaceAllStringFunc(p, func(m string) string {
		name := artifactFieldRe().FindStringSubmatch(m)[1]
		field, ok := strings.CutPrefix(name, DataTask+".")
		if !ok || !slices.Contains(ArtifactFields, field) {
			if bad == "" {
				bad = name
			}
		}
		return "x"
	})
	if bad != "" {
		return fmt.Errorf("%s uses {{%s}}; an artifact path may use only %s", text.Quote(p), bad, artifactFieldList())
	}
	if strings.Contains(plain, "{{") || strings.Contains(plain, "}}") {
		return fmt.Errorf("%s has an unclosed {{ or }}", text.Quote(p))
	}
	return CheckArtifactPath(plain)
}

func artifactFieldList() string {
	names := make([]string, len(ArtifactFields))
	for i, f := range ArtifactFields {
		names[i] = "{{task." + f + "}}"
	}
	return strings.Join(names, ", ")
}

// ExpandArtifact fills the task's fields into artifact path p (a pattern
// CheckArtifactPattern accepted) and checks the result: a field's value
// never takes the path out of the worktree.
func ExpandArtifact(p string, fields map[string]string) (string, error) {
	out := artifactFieldRe().ReplaceAllStringFunc(p, func(m string) string {
		name := artifactFieldRe().FindStringSubmatch(m)[1]
		field, _ := strings.CutPrefix(name, DataTask+".")
		return fields[field]
	})
	if err := CheckArtifactPath(out); err != nil {
		return "", fmt.Errorf("artifact %s: %w", text.Quote(p), err)
	}
	return out, nil
}

// ArtifactName is the name an artifact is known by in a task's tree and
// on the command line: its file name.
func ArtifactName(p string) string { return path.Base(p) }

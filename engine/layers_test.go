package engine

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestLayers holds engine and its sub-packages to the rules doc.go states:
// imports point down (engine → engine/workflow, engine/agent →
// engine/workflow, all → engine/text), and nothing in them does I/O or
// talks to git.
func TestLayers(t *testing.T) {
	const mod = "github.com/git-hegel/git-hegel/"
	may := map[string][]string{
		".":        {"engine/workflow", "engine/agent", "engine/text"},
		"workflow": {"engine/text"},
		"agent":    {"engine/workflow", "engine/text"},
		"text":     {},
	}
	banned := []string{"os", "os/exec", "os/signal", "net", "net/http", "syscall", "io/ioutil", "unsafe", "github.com/go-git/"}
	for dir, allowed := range may {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no files (%v)", dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, is := range af.Imports {
				p, _ := strconv.Unquote(is.Path.Value)
				for _, b := range banned {
					if p == b || strings.HasSuffix(b, "/") && strings.HasPrefix(p, b) {
						t.Errorf("%s imports %s", f, p)
					}
				}
				if rest, ok := strings.CutPrefix(p, mod); ok && !slices.Contains(allowed, rest) {
					t.Errorf("%s imports %s, which its layer may not", f, p)
				}
			}
		}
	}
}

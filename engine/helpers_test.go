package engine

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/engine/agent"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

// The helpers below have twins in engine/workflow's tests: test helpers
// cannot be shared across packages.

// y joins lines into a YAML document.
func y(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

// hegelFile reads a workflow file written for hegel from testdata.
func hegelFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "workflows", "hegel", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// builtin returns the built-in workflow called name.
func builtin(t *testing.T, name string) *workflow.Definition {
	t.Helper()
	for _, w := range workflow.Builtins() {
		if w.Name == name {
			return w
		}
	}
	t.Fatalf("no built-in %q", name)
	return nil
}

// fakeGuides is a GuideSource of fixed user files.
type fakeGuides struct {
	guides, partials, optional map[string]string
	guidePartials, templates   map[string]string
}

func (f *fakeGuides) get(m map[string]string, name string) ([]byte, error) {
	if v, ok := m[name]; ok {
		return []byte(v), nil
	}
	return nil, ErrNotFound
}

func (f *fakeGuides) UserGuideNames() ([]string, error)    { return sortedKeys(f.guides), nil }
func (f *fakeGuides) UserGuide(n string) ([]byte, error)   { return f.get(f.guides, n) }
func (f *fakeGuides) UserPartialNames() ([]string, error)  { return sortedKeys(f.partials), nil }
func (f *fakeGuides) UserPartial(n string) ([]byte, error) { return f.get(f.partials, n) }
func (f *fakeGuides) Optional(n string) ([]byte, error)    { return f.get(f.optional, n) }

func (f *fakeGuides) UserGuidePartialNames() ([]string, error) {
	return sortedKeys(f.guidePartials), nil
}
func (f *fakeGuides) UserGuidePartial(n string) ([]byte, error) { return f.get(f.guidePartials, n) }
func (f *fakeGuides) UserTemplateNames() ([]string, error)      { return sortedKeys(f.templates), nil }
func (f *fakeGuides) UserTemplate(n string) ([]byte, error)     { return f.get(f.templates, n) }

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// cmdEvent is a shell command the agent ran at at.
func cmdEvent(at time.Time, cmd string) agent.Event {
	return agent.Event{Time: at, Kind: agent.EventPostTool, Tool: "Bash", Action: agent.ActionCommand, Command: cmd, Task: "t"}
}

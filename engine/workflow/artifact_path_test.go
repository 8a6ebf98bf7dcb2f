package workflow

import (
	"strings"
	"testing"
)

func TestArtifactPatterns(t *testing.T) {
	for _, ok := range []string{"SPEC.md", "{{task.dir}}/SPEC.md", "tasks/{{ task.name }}/{{task.type}}-{{task.workflow}}.md"} {
		if err := CheckArtifactPattern(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for bad, want := range map[string]string{
		"{{task.description}}/x": "may use only",
		"{{prompt}}":             "may use only",
		"{{task.dir}}/../x":      "'..'",
		"/{{task.name}}":         "absolute",
		"x/{{task.name":          "unclosed",
		".git/{{task.name}}":     ".git",
	} {
		if err := CheckArtifactPattern(bad); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", bad, err, want)
		}
	}
	fields := map[string]string{"name": "t1", "dir": "hegel-tasks/t1", "type": ""}
	if got, err := ExpandArtifact("{{task.dir}}/SPEC.md", fields); err != nil || got != "hegel-tasks/t1/SPEC.md" {
		t.Errorf("expand: %q %v", got, err)
	}
	// A value never takes the path out of the worktree.
	if _, err := ExpandArtifact("{{task.dir}}/x", map[string]string{"dir": "../.."}); err == nil {
		t.Error("a dir of ../.. expanded")
	}
	if _, err := ExpandArtifact("a/{{task.type}}/x", fields); err == nil {
		t.Error("an empty type left an empty part")
	}
}

func TestArtifactNamesOfANodeDiffer(t *testing.T) {
	_, err := Parse("w", "w.yaml", []byte("start_node: a\nnodes:\n  a:\n    prompt: p\n    artifact: [x/SPEC.md, y/SPEC.md]\n    transitions: [{when: a_complete, to: done}]\n"))
	if err == nil || !strings.Contains(err.Error(), "another artifact of this node has the file name") {
		t.Errorf("%v", err)
	}
}

package main

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// TestWorkflowsYAMLRoundTrip: `git hegel workflows <name> --yaml` prints
// every built-in byte for byte, and what it prints parses back to the
// same definition, so a copy in .hegel/workflows/ starts as the built-in.
func TestWorkflowsYAMLRoundTrip(t *testing.T) {
	env := isolatedEnv(t)
	dir := t.TempDir()
	for _, b := range workflow.Builtins() {
		var out, errb bytes.Buffer
		if code := run([]string{"workflows", b.Name, "--yaml"}, envFrom(dir, env, &out, &errb, nil)); code != 0 {
			t.Fatalf("%s: exit %d: %s", b.Name, code, errb.String())
		}
		if !bytes.Equal(out.Bytes(), b.Raw) {
			t.Errorf("%s: --yaml differs from the built-in's bytes", b.Name)
		}
		again, err := workflow.Parse(b.Name, ".hegel/workflows/"+b.Name+".yaml", out.Bytes())
		if err != nil {
			t.Fatalf("%s: does not parse back: %v", b.Name, err)
		}
		if again.StartNode != b.StartNode || again.Mode != b.Mode || again.Title != b.Title ||
			!reflect.DeepEqual(again.Order, b.Order) || !reflect.DeepEqual(again.Nodes, b.Nodes) ||
			!reflect.DeepEqual(again.TaskTypes, b.TaskTypes) || again.DefaultTaskType != b.DefaultTaskType {
			t.Errorf("%s: parsed back to another definition", b.Name)
		}
	}
}

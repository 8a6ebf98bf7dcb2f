package workflow

import (
	"strings"
	"testing"
)

// TestMaxRollbacksKey: max_rollbacks is a whole number from 1 to
// MaxRollbacksLimit, or off; anything else is refused with its line.
func TestMaxRollbacksKey(t *testing.T) {
	const rest = "start_node: a\nnodes:\n  a:\n    prompt: A.\n    transitions:\n      - when: a_complete\n        to: done\n"
	for _, c := range []struct {
		value string
		want  int
		err   string
	}{
		{"", 0, ""},
		{"max_rollbacks: 3\n", 3, ""},
		{"max_rollbacks: 50\n", 50, ""},
		{"max_rollbacks: off\n", -1, ""},
		{"max_rollbacks: 0\n", 0, `wf.yaml:1: "max_rollbacks" must be a whole number from 1 to 50, or off, got "0"`},
		{"max_rollbacks: 51\n", 0, `must be a whole number from 1 to 50`},
		{"max_rollbacks: many\n", 0, `must be a whole number from 1 to 50`},
		{"max_rollbacks: [1]\n", 0, `must be a whole number from 1 to 50`},
	} {
		w, err := Parse("wf", "wf.yaml", []byte(c.value+rest))
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.value, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want %q", c.value, err, c.err)
		case c.err == "" && w.MaxRollbacks != c.want:
			t.Errorf("%q: MaxRollbacks %d, want %d", c.value, w.MaxRollbacks, c.want)
		}
	}
}

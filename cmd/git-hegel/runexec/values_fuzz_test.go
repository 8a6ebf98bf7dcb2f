//go:build unix

package runexec

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-hegel/git-hegel/engine"
)

// valuesCommand is how docs/run.md says to use the values: double-quoted.
const valuesCommand = `printf '%s' "$HEGEL_PROMPT" > p && printf '%s' "$HEGEL_VAR_X" > v && printf '%s' "$HEGEL_RESULT_PLAN" > r`

// FuzzCommandValues: a value with any shell syntax in it reaches the
// command byte for byte through the environment engine.ValueEnv builds,
// and nothing in it runs (a value that ran would create a file beside
// the three the command writes).
func FuzzCommandValues(f *testing.F) {
	meta := "`$(){}[]<>|&;*?!~#'\"\\ \t\n=%^"
	for _, s := range []string{
		"", "plain", meta, "$(touch pwned)", "`touch pwned`", "'$(touch pwned)'", "'; touch pwned; '",
		"\"; touch pwned; \"", "a'b", "${IFS}touch${IFS}pwned", "$(touch pwned)\n`touch pwned`\n", "-n", "*", "\\",
		"x\x00y",
	} {
		f.Add(s, meta, s)
	}
	f.Fuzz(func(t *testing.T, prompt, v, result string) {
		x := &Executor{Dir: t.TempDir(), Env: []string{"PATH=" + os.Getenv("PATH")}}
		env, skipped := engine.ValueEnv(engine.CommandValues{Prompt: prompt, Vars: map[string]string{"x": v},
			Results: map[string]string{"plan": result}})
		res := x.Run(context.Background(), &engine.Process{Command: valuesCommand, Env: env})
		if !res.OK() {
			t.Fatalf("the command failed: %+v (env %q)", res, env)
		}
		for file, want := range map[string]string{"p": prompt, "v": v, "r": result} {
			if strings.IndexByte(want, 0) >= 0 || len(want) > engine.MaxEnvValue {
				want = "" // left empty, and said so
				if len(skipped) == 0 {
					t.Errorf("%s: a value that cannot be passed was not reported", file)
				}
			}
			got, err := os.ReadFile(filepath.Join(x.Dir, file))
			if err != nil || string(got) != want {
				t.Errorf("%s: got %q (%v), want %q", file, got, err, want)
			}
		}
		ents, _ := os.ReadDir(x.Dir)
		if len(ents) != 3 {
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Errorf("the command left %q: a value ran", names)
		}
	})
}

package engine

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// Commands and checks get the run's values in their environment, never in
// their text (engine/workflow/command_env.go says why and how names map).

// MaxEnvValue bounds one value passed in the environment: Linux refuses
// to start a process with a single environment string over 128 KiB
// (MAX_ARG_STRLEN), and all of them together share the argument space.
const MaxEnvValue = 100 << 10

// maxEnvValues bounds the values of one process together.
const maxEnvValues = 1 << 20

// CommandValues are the values a command or check gets in its
// environment.
type CommandValues struct {
	Prompt, Context string
	Vars            map[string]string
	Results         map[string]string
	// Task holds the task fields by {{task.FIELD}} name; the name,
	// workflow and node are set by the caller's own variables.
	Task map[string]string
}

// ValueEnv returns the environment that carries v (KEY=VALUE pairs, in
// a fixed order) and, for each value it had to leave empty, one line
// saying why: a value with a NUL byte (no environment can hold one) or
// larger than MaxEnvValue, or past the budget of all of them.
func ValueEnv(v CommandValues) (env []string, skipped []string) {
	budget := maxEnvValues
	add := func(name, value, what string) {
		switch {
		case strings.IndexByte(value, 0) >= 0:
			skipped = append(skipped, fmt.Sprintf("%s is empty: %s holds a NUL byte, which no environment variable can carry", name, what))
			value = ""
		case len(value) > MaxEnvValue:
			skipped = append(skipped, fmt.Sprintf("%s is empty: %s is %s, more than the %s a variable may hold", name, what, Size(int64(len(value))), Size(MaxEnvValue)))
			value = ""
		case len(value) > budget:
			skipped = append(skipped, fmt.Sprintf("%s is empty: the values before it fill the %s a command's environment may hold", name, Size(maxEnvValues)))
			value = ""
		}
		budget -= len(value)
		env = append(env, name+"="+value)
	}
	add(workflow.EnvPrompt, v.Prompt, "the prompt")
	add(workflow.EnvContext, v.Context, "the context")
	for _, k := range slices.Sorted(maps.Keys(v.Vars)) {
		add(workflow.EnvVarPrefix+workflow.EnvName(k), v.Vars[k], "--set "+k)
	}
	for _, k := range slices.Sorted(maps.Keys(v.Results)) {
		add(workflow.EnvResultPref+workflow.EnvName(k), v.Results[k], "the result of '"+k+"' (also in $"+ResultsDirEnv+"/"+k+")")
	}
	for _, f := range []string{"mode", "description", "type", "priority"} {
		if val, ok := v.Task[f]; ok {
			add(workflow.TaskFieldEnv(f), val, "the task's "+f)
		}
	}
	return env, skipped
}

// VarCollision returns two --set keys that name one variable ("x" and
// "X" are both HEGEL_VAR_X), or "" when there are none.
func VarCollision(vars map[string]string) (a, b string) {
	seen := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		n := workflow.EnvName(k)
		if other, ok := seen[n]; ok {
			return other, k
		}
		seen[n] = k
	}
	return "", ""
}

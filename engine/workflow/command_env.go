package workflow

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Commands (`run: {command: ...}` and `check:`) are shell text, and a
// value spliced into shell text is shell code however it is quoted: a
// prompt holding `'$(touch x)'`, or an earlier step's output holding a
// backtick, ran whatever it said. So commands are not templates. The
// run's values reach them as environment variables, which the shell
// expands as data when the command quotes them ("$HEGEL_PROMPT"), and a
// `{{` in a command is a load error that names the variable to use.
// `\{{` stays the way to write a literal `{{` (docker's --format, for one).

// Environment variables that carry values to commands and checks.
const (
	EnvPrompt     = "HEGEL_PROMPT"
	EnvContext    = "HEGEL_CONTEXT"
	EnvVarPrefix  = "HEGEL_VAR_"
	EnvResultPref = "HEGEL_RESULT_"
)

// taskFieldEnv is the variable of each {{task.FIELD}} (TaskFieldEnv).
var taskFieldEnv = map[string]string{
	"name":        "HEGEL_TASK",
	"workflow":    "HEGEL_WORKFLOW",
	"node":        "HEGEL_NODE",
	"mode":        "HEGEL_TASK_MODE",
	"description": "HEGEL_TASK_DESCRIPTION",
	"type":        "HEGEL_TASK_TYPE",
	"priority":    "HEGEL_TASK_PRIORITY",
	"dir":         "HEGEL_TASK_DIR",
}

// EnvName maps a name (a --set key, a node) into the part of a variable
// name after its prefix: ASCII letters upper-cased, digits and '_' kept,
// every other byte '_' (so node "code-review" is HEGEL_RESULT_CODE_REVIEW).
func EnvName(name string) string {
	b := []byte(name)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_':
		default:
			b[i] = '_'
		}
	}
	return string(b)
}

// TaskFieldEnv returns the variable that carries the task field f
// ({{task.f}} in a prompt), or "" for a name that is not a task field.
func TaskFieldEnv(f string) string { return taskFieldEnv[f] }

// placeholderRe matches a Handlebars mustache, with its optional third
// brace, whitespace control and sigil.
var placeholderRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\{\{\{?~?\s*([#/>^!?&]?)\s*([^}\s]*)`)
})

// placeholderAdvice says what to write instead of the placeholder that
// starts at s ("{{..."): the variable holding its value, or, for what
// has no variable (guides, context files, blocks), how to do without.
func placeholderAdvice(s string) (what, advice string) {
	end := strings.Index(s, "}}")
	what = s
	if end >= 0 {
		what = s[:end+2]
		if strings.HasPrefix(s[end:], "}}}") {
			what = s[:end+3]
		}
	}
	// The message is one line: the placeholder is cut at a line end (or
	// any control character) and kept short.
	if i := strings.IndexFunc(what, func(r rune) bool { return r < 0x20 || r == 0x7f }); i >= 0 {
		what = what[:i] + "..."
	}
	if len(what) > 60 {
		what = strings.ToValidUTF8(what[:57], "") + "..."
	}
	m := placeholderRe().FindStringSubmatch(s)
	generic := `commands are not templates; read values from the environment ("$HEGEL_PROMPT", "$HEGEL_VAR_<KEY>", "$HEGEL_RESULT_<NODE>": docs/run.md), or write \{{ for a literal {{`
	if m == nil || m[1] != "" {
		return what, generic
	}
	head, rest, _ := strings.Cut(m[2], ".")
	v := ""
	switch {
	case head == DataPrompt && rest == "":
		v = EnvPrompt
	case head == DataContext && rest == "":
		v = EnvContext
	case head == DataVars && rest != "":
		v = EnvVarPrefix + EnvName(rest)
	case head == DataResults && rest != "":
		v = EnvResultPref + EnvName(rest)
	case head == DataTask:
		v = taskFieldEnv[rest]
	}
	if v == "" {
		return what, generic
	}
	return what, fmt.Sprintf(`write "$%s" instead (double-quoted, the shell reads it as data)`, v)
}

// shellCommand checks a command or check as written and returns the text
// to run: a `{{` is an error at its line (offset from the command's first
// line, for the caller's message), `\{{` a literal `{{`.
func shellCommand(src string) (cmd string, line int, err error) {
	var b strings.Builder
	for i := 0; i < len(src); {
		j := strings.Index(src[i:], "{{")
		if j < 0 {
			b.WriteString(src[i:])
			break
		}
		j += i
		if j > 0 && src[j-1] == '\\' {
			b.WriteString(src[i : j-1])
			b.WriteString("{{")
			i = j + 2
			continue
		}
		what, advice := placeholderAdvice(src[j:])
		return "", strings.Count(src[:j], "\n"), fmt.Errorf("%s would splice a value into shell code; %s", what, advice)
	}
	return b.String(), 0, nil
}

// checkResultEnv refuses, in a workflow whose nodes run commands, two
// nodes whose results would land in one variable ("code-review" and
// "code_review" are both HEGEL_RESULT_CODE_REVIEW).
func (p *parser) checkResultEnv(d *draft) error {
	runs := false
	for _, dn := range d.nodes {
		runs = runs || dn.node.Run != nil || len(dn.node.Checks) > 0
	}
	if !runs {
		return nil
	}
	seen := map[string]string{}
	for _, dn := range d.nodes {
		name := dn.node.Name
		v := EnvResultPref + EnvName(name)
		if other, ok := seen[v]; ok {
			return p.errAt(dn.key, "nodes %q and %q would both pass their results to commands as %s; rename one", other, name, v)
		}
		seen[v] = name
	}
	return nil
}

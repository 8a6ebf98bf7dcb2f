package main

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// colourRepo is a repository with an active workflow; env has no NO_COLOR
// and no TERM, so each test sets its own.
func colourRepo(t *testing.T) (dir string, env []string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	for _, kv := range isolatedEnv(t) {
		if !strings.HasPrefix(kv, "NO_COLOR=") && !strings.HasPrefix(kv, "TERM=") && !strings.HasPrefix(kv, "GIT_CONFIG_PARAMETERS=") {
			env = append(env, kv)
		}
	}
	dir = t.TempDir()
	mustSh(t, env, dir, "git", "init", "-q")
	mustSh(t, env, dir, "git", "hegel", "start", "minimal", "--task", "t")
	return dir, env
}

// runColour runs git-hegel in-process; stdoutTTY and stderrTTY say which
// of the two the injected terminal check calls a terminal.
func runColour(dir string, env []string, stdoutTTY, stderrTTY bool, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	terminal := func(w io.Writer) bool {
		return (w == io.Writer(&out) && stdoutTTY) || (w == io.Writer(&errb) && stderrTTY)
	}
	code = run(args, envFrom(dir, env, &out, &errb, terminal))
	return code, out.String(), errb.String()
}

// TestColourMatrix: configuration × command line × environment ×
// terminal, against the rule written out again here: the command line
// wins, then color.hegel, then color.ui; always and never are obeyed;
// auto (the default, and true) colours only a terminal with NO_COLOR empty
// and TERM set and not dumb.
func TestColourMatrix(t *testing.T) {
	dir, base := colourRepo(t)
	configs := []string{"", "always", "never", "auto", "true", "false", "ALWAYS"}
	flags := [][]string{nil, {"--color"}, {"--color=always"}, {"--color=never"}, {"--color=auto"}, {"--no-color"},
		{"--no-color", "--color"}, {"--color=always", "--no-color"}}
	envs := [][]string{{"TERM=xterm"}, {"TERM=xterm", "NO_COLOR=1"}, {"TERM=dumb"}, nil, {"TERM=xterm", "NO_COLOR="}}
	want := func(config string, flags, env []string, tty bool) bool {
		mode := map[string]string{"always": "always", "ALWAYS": "always", "never": "never", "false": "never"}[config]
		for _, f := range flags {
			mode = map[string]string{"--color": "always", "--color=always": "always", "--color=never": "never", "--color=auto": "auto", "--no-color": "never"}[f]
		}
		switch mode {
		case "always":
			return true
		case "never":
			return false
		}
		vars := map[string]string{}
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			vars[k] = v
		}
		return tty && vars["NO_COLOR"] == "" && vars["TERM"] != "" && vars["TERM"] != "dumb"
	}
	cells := 0
	for _, config := range configs {
		for _, fl := range flags {
			for _, ev := range envs {
				for _, tty := range []bool{false, true} {
					env := append(append([]string(nil), base...), ev...)
					if config != "" {
						env = append(env, "GIT_CONFIG_PARAMETERS='color.ui'='"+config+"'")
					}
					code, out, errb := runColour(dir, env, tty, false, append([]string{"status"}, fl...)...)
					if code != 0 {
						t.Fatalf("color.ui=%s %v %v tty=%v: exit %d: %s", config, fl, ev, tty, code, errb)
					}
					got := strings.Contains(out, "Current node: \x1b[1;36mspec\x1b[m\n")
					if !got && !strings.Contains(out, "Current node: spec\n") {
						t.Fatalf("unexpected output:\n%q", out)
					}
					if got != want(config, fl, ev, tty) {
						t.Errorf("color.ui=%q, flags %v, env %v, terminal %v: coloured %v, want %v", config, fl, ev, tty, got, !got)
					}
					cells++
				}
			}
		}
	}
	if cells != 7*8*5*2 {
		t.Fatalf("%d cells", cells)
	}
}

// TestColourConfig: color.hegel before color.ui, both from the
// repository's config file as well as from git -c; colours from
// color.hegel.<slot>; bad values fatal as in git.
func TestColourConfig(t *testing.T) {
	dir, base := colourRepo(t)
	env := append(base, "TERM=xterm")
	status := func(extra ...string) (string, string, int) {
		code, out, errb := runColour(dir, append(append([]string(nil), env...), extra...), false, false, "status")
		return out, errb, code
	}
	coloured := func(out string) bool { return strings.Contains(out, "\x1b[") }

	mustSh(t, base, dir, "git", "config", "color.ui", "always")
	if out, _, _ := status(); !coloured(out) {
		t.Error("color.ui=always in .git/config: not coloured")
	}
	mustSh(t, base, dir, "git", "config", "color.hegel", "never")
	if out, _, _ := status(); coloured(out) {
		t.Error("color.hegel=never does not win over color.ui=always")
	}
	if out, _, _ := status("GIT_CONFIG_PARAMETERS='color.hegel'='always'"); !coloured(out) {
		t.Error("git -c color.hegel=always does not win over the file")
	}
	mustSh(t, base, dir, "git", "config", "--unset", "color.hegel")
	mustSh(t, base, dir, "git", "config", "color.hegel.node", "bold magenta ul")
	if out, _, _ := status(); !strings.Contains(out, "Current node: \x1b[1;4;35mspec\x1b[m") {
		t.Errorf("color.hegel.node: %q", out)
	}
	mustSh(t, base, dir, "git", "config", "--unset", "color.hegel.node")

	for _, tc := range []struct{ param, stderr string }{
		{"'color.ui'='maybe'", "fatal: bad boolean config value 'maybe' for 'color.ui'\n"},
		{"'color.hegel'='sometimes'", "fatal: bad boolean config value 'sometimes' for 'color.hegel'\n"},
		{"'color.hegel.node'='bold mauve'", "fatal: invalid color value: bold mauve (in color.hegel.node)\n"},
		{"'core.quotepath'='perhaps'", "fatal: bad boolean config value 'perhaps' for 'core.quotepath'\n"},
	} {
		out, errb, code := status("GIT_CONFIG_PARAMETERS=" + tc.param)
		if code != 128 || errb != tc.stderr || out != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 128, %q", tc.param, code, out, errb, tc.stderr)
		}
	}
	code, out, errb := runColour(dir, env, true, false, "status", "--color=sometimes")
	if want := "error: option 'color' expects \"always\", \"auto\", or \"never\" (see 'git hegel status -h')\n"; code != 2 || errb != want || out != "" {
		t.Errorf("--color=sometimes: exit %d, %q", code, errb)
	}
	// git takes the command line's value only as spelt: Always is refused.
	if code, _, _ := runColour(dir, env, true, false, "status", "--color=Always"); code != 2 {
		t.Errorf("--color=Always: exit %d", code)
	}
}

// TestColourPerStream: the decision is taken for each stream. Outside a
// repository workflows prints a hint on stderr, coloured only when stderr
// is the terminal.
func TestColourPerStream(t *testing.T) {
	_, base := colourRepo(t)
	dir := t.TempDir()
	env := append(base, "TERM=xterm", "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
	hint := "hint: not in a git repository: only the built-in workflows are listed"
	for _, tc := range []struct {
		stdout, stderr bool
		args           []string
		hintColoured   bool
	}{
		{false, true, nil, true},
		{true, false, nil, false},
		{false, false, []string{"--color"}, true},
		{false, true, []string{"--no-color"}, false},
	} {
		code, out, errb := runColour(dir, env, tc.stdout, tc.stderr, append([]string{"workflows"}, tc.args...)...)
		wantErr := hint + "\n"
		if tc.hintColoured {
			wantErr = "\x1b[33m" + hint + "\x1b[m\n"
		}
		if code != 0 || errb != wantErr || strings.Contains(out, "\x1b[") {
			t.Errorf("%+v: exit %d, stdout %q, stderr %q", tc, code, out, errb)
		}
	}
}

// TestParseGitColor compares with what git itself makes of each colour.
func TestParseGitColor(t *testing.T) {
	specs := []string{"bold red", "red bold", "reset", "reset red", "normal", "red blue", "brightred", "nobold",
		"no-ul italic", "7", "12", "200", "#ff0080", "default", "normal blue", "-1 red", "bold", "ul reverse strike dim blink", "RED", ""}
	for _, spec := range specs {
		got, err := parseGitColor(spec)
		if err != nil {
			t.Errorf("%q: %v", spec, err)
			continue
		}
		if _, err := exec.LookPath("git"); err != nil {
			continue
		}
		want, err := exec.Command("git", "config", "--get-color", "", spec).Output()
		if err != nil {
			t.Fatalf("git config --get-color %q: %v", spec, err)
		}
		if got != string(want) {
			t.Errorf("%q: %q, git says %q", spec, got, want)
		}
	}
	for _, bad := range []string{"mauve", "red green blue", "256", "#12345"} {
		if _, err := parseGitColor(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestColourDefaultsOutsideCommands(t *testing.T) {
	e := &Env{Getenv: func(k string) string { return map[string]string{"TERM": "xterm"}[k] }, Terminal: func(io.Writer) bool { return true }}
	if !e.colour(io.Discard) {
		t.Error("auto on a terminal without any configuration should colour")
	}
	if got := fmt.Sprintf("%q", e.paint(io.Discard, "node", "x")); got != `"\x1b[1;36mx\x1b[m"` {
		t.Errorf("paint = %s", got)
	}
}

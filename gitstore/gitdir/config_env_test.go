package gitdir

import (
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

// TestConfigParametersFromGit has git itself write GIT_CONFIG_PARAMETERS
// (as `git -c ... hegel` does) and reads it back.
func TestConfigParametersFromGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	cmd := exec.Command("git", "-c", "color.ui=always", "-c", "a.Sub.C=x y", "-c", "q.k=it's!", "-c", "core.bare",
		"-c", "alias.penv=!printenv GIT_CONFIG_PARAMETERS", "penv")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GIT_CONFIG_PARAMETERS": strings.TrimSuffix(string(out), "\n"), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}
	c, err := UserConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	for _, tc := range []struct{ section, sub, key, want string }{
		{"color", "", "ui", "always"},
		{"a", "Sub", "c", "x y"},
		{"q", "", "k", "it's!"},
		{"core", "", "bare", ""},
		{"alias", "", "penv", "!printenv GIT_CONFIG_PARAMETERS"},
	} {
		if got, ok := c.Get(tc.section, tc.sub, tc.key); !ok || got != tc.want {
			t.Errorf("%s.%s.%s = %q, %v; want %q", tc.section, tc.sub, tc.key, got, ok, tc.want)
		}
	}
	if !c.Bool("core", "bare", false) {
		t.Error("a -c key without a value should read as true")
	}
}

func TestConfigParameters(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want [][2]string
		ok   bool
	}{
		{"", nil, true},
		{"'a.b=c'", [][2]string{{"a.b", "c"}}, true},
		{"'a.b'='c d' 'e.f'=", [][2]string{{"a.b", "c d"}, {"e.f", ""}}, true},
		{"  'a.b'='it'\\''s'  ", [][2]string{{"a.b", "it's"}}, true},
		{"'a.b", nil, false},
		{"a.b=c", nil, false},
		{"'a.b'=c", nil, false},
		{"'a.b'x", nil, false},
	} {
		got, ok := parseConfigParameters(tc.in)
		if ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseConfigParameters(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestConfigFromEnvironment(t *testing.T) {
	env := map[string]string{
		"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
		"GIT_CONFIG_COUNT": "2", "GIT_CONFIG_KEY_0": "hegel.remote", "GIT_CONFIG_VALUE_0": "up",
		"GIT_CONFIG_KEY_1": "color.ui", "GIT_CONFIG_VALUE_1": "never",
		"GIT_CONFIG_PARAMETERS": "'color.ui'='auto' 'remote.Up.url'='x'",
	}
	c, err := UserConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := c.Get("hegel", "", "remote"); v != "up" {
		t.Errorf("hegel.remote = %q", v)
	}
	// -c (GIT_CONFIG_PARAMETERS) comes after GIT_CONFIG_COUNT, as in git.
	if v, _ := c.Get("color", "", "ui"); v != "auto" {
		t.Errorf("color.ui = %q, want auto", v)
	}
	if got := c.Subsections("remote"); !reflect.DeepEqual(got, []string{"Up"}) {
		t.Errorf("remotes = %q", got)
	}
	for _, bad := range []map[string]string{
		{"GIT_CONFIG_COUNT": "x"},
		{"GIT_CONFIG_COUNT": "1"},
		{"GIT_CONFIG_PARAMETERS": "'nodot'='x'"},
		{"GIT_CONFIG_PARAMETERS": "'a.b"},
	} {
		if _, err := UserConfig(func(k string) string { return bad[k] }); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestStrictBool(t *testing.T) {
	env := map[string]string{"GIT_CONFIG_PARAMETERS": "'core.quotepath'='off' 'a.yes'='YES' 'a.two'='2' 'a.bad'='maybe'"}
	c, err := UserConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]bool{"quotepath": false} {
		if got, err := c.StrictBool("core", key, true); err != nil || got != want {
			t.Errorf("core.%s = %v, %v", key, got, err)
		}
	}
	for key, want := range map[string]bool{"yes": true, "two": true, "missing": false} {
		if got, err := c.StrictBool("a", key, false); err != nil || got != want {
			t.Errorf("a.%s = %v, %v", key, got, err)
		}
	}
	if _, err := c.StrictBool("a", "bad", false); err == nil || err.Error() != "bad boolean config value 'maybe' for 'a.bad'" {
		t.Errorf("a.bad: %v", err)
	}
}

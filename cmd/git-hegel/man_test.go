package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestManPageDocumentsEveryCommand keeps docs/git-hegel.1 in step with the
// dispatch table: a command cannot ship without its manual entry.
func TestManPageDocumentsEveryCommand(t *testing.T) {
	man, err := os.ReadFile("../../docs/git-hegel.1")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range commands {
		if c.hidden {
			continue
		}
		// roff spells a hyphen \- ("restore\-task").
		name := strings.ReplaceAll(regexp.QuoteMeta(c.name), "-", `\\?-`)
		re := regexp.MustCompile(`(?m)^\.TP\n\.B[IR]? "?` + name + `\b`)
		if !re.Match(man) {
			t.Errorf("docs/git-hegel.1 has no .TP entry for %q", c.name)
		}
	}
}

// TestUsageListsEveryCommand checks `git hegel` and `git hegel help`.
func TestUsageListsEveryCommand(t *testing.T) {
	for _, args := range [][]string{nil, {"help"}, {"--help"}} {
		var out, errb bytes.Buffer
		env := &Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Dir: t.TempDir()}
		if code := run(args, env); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		for _, c := range commands {
			if c.hidden {
				if strings.Contains(out.String(), c.name) {
					t.Errorf("%v: usage lists the hidden %q", args, c.name)
				}
				continue
			}
			if !strings.Contains(out.String(), "   "+c.name+" ") {
				t.Errorf("%v: usage does not list %q", args, c.name)
			}
		}
	}
}

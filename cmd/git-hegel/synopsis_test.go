package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// flagNamed reports whether a usage line names f, by its short or long name.
func flagNamed(line string, f *pflag.Flag) bool {
	words := regexp.MustCompile(`-[-\w\[\]]+`).FindAllString(line, -1)
	for _, w := range words {
		w = strings.NewReplacer("[", "", "]", "").Replace(strings.SplitN(w, "=", 2)[0])
		if w == "--"+f.Name || (f.Shorthand != "" && w == "-"+f.Shorthand) {
			return true
		}
	}
	// --[no-]progress names --progress and --no-progress.
	return strings.Contains(line, "--[no-]"+strings.TrimPrefix(f.Name, "no-"))
}

// balanced reports whether a usage line's brackets pair up, and none is
// empty.
func balanced(line string) bool {
	depth := 0
	for i, r := range line {
		switch r {
		case '[', '<':
			depth++
		case ']', '>':
			depth--
			if depth < 0 || line[i-1] == '[' {
				return false
			}
		}
	}
	return depth == 0
}

// TestUsageLinesNameEveryFlag: every flag a command (or one of its verbs)
// accepts is in its usage lines, and the lines name no flag it lacks.
func TestUsageLinesNameEveryFlag(t *testing.T) {
	for _, cmd := range commands {
		fs := cmd.flagSet(&Env{})
		lines := cmd.synopses()
		all := strings.Join(lines, "\n")
		for _, l := range lines {
			if strings.ContainsAny(l, "{}") {
				t.Errorf("%s: a placeholder is left in %q (a flag the command does not have?)", cmd.name, l)
			}
			if !balanced(l) {
				t.Errorf("%s: brackets do not pair up in %q", cmd.name, l)
			}
		}
		fs.VisitAll(func(f *pflag.Flag) {
			if f.Hidden || isCommonFlag(f.Name) {
				return
			}
			if len(cmd.subs) == 0 {
				if !flagNamed(all, f) {
					t.Errorf("%s: --%s is not in the usage:\n%s", cmd.name, f.Name, all)
				}
				return
			}
			used := false
			for _, s := range cmd.subs {
				if !contains(s.flags, f.Name) {
					continue
				}
				used = true
				if line := cmd.subSynopsis(s); !flagNamed(line, f) {
					t.Errorf("%s %s: --%s is not in the usage line %q", cmd.name, s.name, f.Name, line)
				}
			}
			if !used {
				t.Errorf("%s: --%s applies to none of its verbs", cmd.name, f.Name)
			}
		})
		for _, w := range regexp.MustCompile(`--?[a-z][-a-z]*`).FindAllString(all, -1) {
			name := strings.TrimLeft(w, "-")
			if strings.HasPrefix(w, "--") {
				name = strings.TrimPrefix(name, "[no-]")
				if fs.Lookup(name) == nil {
					t.Errorf("%s: the usage names %s, which the command does not take", cmd.name, w)
				}
			} else if len(name) == 1 && fs.ShorthandLookup(name) == nil {
				t.Errorf("%s: the usage names %s, which the command does not take", cmd.name, w)
			}
		}
	}
}

// TestHelpOfEveryCommand: -h works for every command and verb, exits 0,
// and prints the usage lines and an options list naming every flag.
func TestHelpOfEveryCommand(t *testing.T) {
	for _, cmd := range commands {
		if cmd.hidden {
			continue
		}
		calls := [][]string{{cmd.name, "-h"}, {cmd.name, "--help"}, {"help", cmd.name}}
		for _, s := range cmd.subs {
			if s.name != "" {
				calls = append(calls, []string{cmd.name, s.name, "-h"})
			}
		}
		for _, args := range calls {
			var out, errb bytes.Buffer
			env := &Env{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""), Getenv: func(string) string { return "" }, Dir: t.TempDir()}
			if code := run(args, env); code != 0 || errb.Len() > 0 {
				t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
				continue
			}
			text := out.String()
			if want := "usage: " + strings.Join(cmd.synopses(), "\n   or: ") + "\n"; !strings.HasPrefix(text, want) {
				t.Errorf("%v: the help starts\n%s\nwant\n%s", args, text, want)
			}
			cmd.flagSet(&Env{}).VisitAll(func(f *pflag.Flag) {
				if !f.Hidden && !strings.Contains(text, "--"+f.Name) {
					t.Errorf("%v: the options list lacks --%s", args, f.Name)
				}
			})
			if strings.Contains(text, "(default -1)") || strings.Contains(text, " string ") {
				t.Errorf("%v: pflag's type or default leaks into the help:\n%s", args, text)
			}
		}
	}
}

// TestOptionsDefaults: a default shows only where the text gives none,
// and the value's name in the list is the one the usage line uses.
func TestOptionsDefaults(t *testing.T) {
	gc := optionsText(lookup("gc").flagSet(&Env{}), nil)
	if strings.Contains(gc, "(default -1)") || !strings.Contains(gc, "--retention-days N ") {
		t.Errorf("gc -h options:\n%s", gc)
	}
	next := optionsText(lookup("next").flagSet(&Env{}), nil)
	if !strings.Contains(next, "--force[=RULE_TYPE] ") || strings.Contains(next, "rule_type[=all]") {
		t.Errorf("next -h options:\n%s", next)
	}
	status := optionsText(lookup("status").flagSet(&Env{}), nil)
	if !strings.Contains(status, "how often --watch refreshes (default 2s)") {
		t.Errorf("status -h options:\n%s", status)
	}
}

// TestFlagAliases: rollback's old --reason still sets -m/--message.
func TestFlagAliases(t *testing.T) {
	fs := lookup("rollback").flagSet(&Env{})
	if err := fs.Parse([]string{"--reason", "why"}); err != nil {
		t.Fatal(err)
	}
	if v, _ := fs.GetString("message"); v != "why" {
		t.Errorf("--reason set message to %q", v)
	}
	if regexp.MustCompile(`(?m)^\s+--reason`).MatchString(optionsText(fs, nil)) {
		t.Error("the alias is listed as an option of its own")
	}
}

// TestDryRunHasN: every --dry-run is also -n.
func TestDryRunHasN(t *testing.T) {
	for _, cmd := range commands {
		if f := cmd.flagSet(&Env{}).Lookup("dry-run"); f != nil && f.Shorthand != "n" {
			t.Errorf("%s: --dry-run has no -n", cmd.name)
		}
	}
}

// TestReasonIsMessage: a reason or comment is given with -m/--message on
// every command.
func TestReasonIsMessage(t *testing.T) {
	for _, cmd := range commands {
		fs := cmd.flagSet(&Env{})
		fs.VisitAll(func(f *pflag.Flag) {
			if f.Name == "reason" || f.Name == "comment" {
				t.Errorf("%s: --%s instead of -m/--message", cmd.name, f.Name)
			}
		})
		if f := fs.Lookup("message"); f != nil && f.Shorthand != "m" {
			t.Errorf("%s: --message has no -m", cmd.name)
		}
	}
}

// TestSimilarCommands: a mistyped command is offered the nearest ones, as
// git offers its own; a word near nothing gets no offer.
func TestSimilarCommands(t *testing.T) {
	for word, want := range map[string]string{
		"stauts": "status", "stat": "stats status", "chekpoint": "checkpoint",
		"rset": "reset", "wrkflows": "workflows", "xyzzyq": "",
	} {
		if got := strings.Join(similarCommands(word), " "); got != want {
			t.Errorf("%s: %q, want %q", word, got, want)
		}
	}
}

// TestJSONTakesASchema: every command's --json is the one flag that
// takes a schema (--json, --json=1, --json=2).
func TestJSONTakesASchema(t *testing.T) {
	for _, cmd := range commands {
		fs := cmd.flagSet(&Env{})
		f := fs.Lookup("json")
		if f == nil {
			continue
		}
		if _, ok := f.Value.(*jsonValue); !ok {
			t.Errorf("%s: --json is a %T, not the schema flag", cmd.name, f.Value)
			continue
		}
		for arg, want := range map[string]int{"--json": 1, "--json=1": 1, "--json=2": 2, "--json=true": 1, "--json=false": 0} {
			fs := cmd.flagSet(&Env{})
			if err := fs.Parse([]string{arg}); err != nil {
				t.Fatalf("%s %s: %v", cmd.name, arg, err)
			}
			c := &cmdCtx{flags: fs}
			if got := c.jsonSchema(); got != want || c.boolFlag("json") != (want > 0) {
				t.Errorf("%s %s: schema %d, want %d", cmd.name, arg, got, want)
			}
		}
	}
}

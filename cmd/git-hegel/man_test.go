package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
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
		re := regexp.MustCompile(`(?m)^\.T[PQ]\n\\fB` + name + `\\fR`)
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

// roffSynopsis renders a usage line (without "git hegel ") as a man page
// heading: flags and literal words bold, placeholders (<x>, NAME) italic
// and in lower case, brackets and bars roman.
func roffSynopsis(line string) string {
	var b strings.Builder
	word := regexp.MustCompile(`^(--\[no-\][a-z][-a-z]*|--?[a-z][-a-z]*|<[^>]+>|[A-Z][A-Z_]*|[a-z][-a-z_]*|.)`)
	esc := func(s string) string { return strings.ReplaceAll(s, "-", `\-`) }
	for line != "" {
		w := word.FindString(line)
		line = line[len(w):]
		switch {
		case strings.HasPrefix(w, "--[no-]"):
			b.WriteString(`\fB\-\-\fR[\fBno\-\fR]\fB` + esc(w[7:]) + `\fR`)
		case strings.HasPrefix(w, "-"):
			b.WriteString(`\fB` + esc(w) + `\fR`)
		case strings.HasPrefix(w, "<"):
			for i, alt := range strings.Split(w[1:len(w)-1], "|") {
				if i > 0 {
					b.WriteString("|")
				}
				b.WriteString(`\fI` + esc(alt) + `\fR`)
			}
		case w[0] >= 'A' && w[0] <= 'Z':
			b.WriteString(`\fI` + strings.ToLower(w) + `\fR`)
		case w[0] >= 'a' && w[0] <= 'z':
			b.WriteString(`\fB` + esc(w) + `\fR`)
		default:
			b.WriteString(w)
		}
	}
	return b.String()
}

// manHeadings are the usage lines of every command as the man page heads
// their paragraphs.
func manHeadings() []string {
	var out []string
	for _, c := range commands {
		if c.hidden {
			continue
		}
		for _, l := range c.synopses() {
			out = append(out, roffSynopsis(strings.TrimPrefix(l, "git hegel ")))
		}
	}
	return out
}

// TestManPageSynopses: the man page heads each command's paragraph with
// the usage lines -h prints (drawn from the same table), so the manual's
// synopses cannot drift from the flags. A paragraph may have several
// headings (.TP, then .TQ for each further one).
func TestManPageSynopses(t *testing.T) {
	man, err := os.ReadFile("../../docs/git-hegel.1")
	if err != nil {
		t.Fatal(err)
	}
	text := string(man)
	start, end := strings.Index(text, "\n.SH COMMANDS\n"), strings.Index(text, "\n.SH OPTIONS\n")
	if start < 0 || end < start {
		t.Fatal("docs/git-hegel.1 has no COMMANDS section before OPTIONS")
	}
	lines := strings.Split(text[start:end], "\n")
	have := map[string]int{}
	for i := 0; i+1 < len(lines); i++ {
		if lines[i] == ".TP" || lines[i] == ".TQ" {
			have[lines[i+1]]++
		}
	}
	want := map[string]bool{}
	var missing, stale []string
	for _, h := range manHeadings() {
		want[h] = true
		if have[h] == 0 {
			missing = append(missing, h)
		} else if have[h] > 1 {
			t.Errorf("docs/git-hegel.1 heads %d paragraphs with this line, want one:\n%s", have[h], h)
		}
	}
	for h := range have {
		if !want[h] {
			stale = append(stale, h)
		}
	}
	if updateScripts() {
		// -update: a stale heading is replaced by the missing one of the
		// same command and form (the same first two words).
		for _, m := range missing {
			for i, s := range stale {
				if s != "" && headingKey(s) == headingKey(m) {
					text = strings.Replace(text, "\n"+s+"\n", "\n"+m+"\n", 1)
					stale[i], m = "", ""
					break
				}
			}
			if m != "" {
				t.Errorf("docs/git-hegel.1: no heading to replace with (add a paragraph):\n%s", m)
			}
		}
		if err := os.WriteFile("../../docs/git-hegel.1", []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, h := range missing {
		t.Errorf("docs/git-hegel.1 heads no paragraph with this usage line (go test -run TestManPageSynopses -update rewrites a stale one):\n%s", h)
	}
	for _, h := range stale {
		t.Errorf("docs/git-hegel.1 has a heading no command's usage gives (stale?):\n%s", h)
	}
}

// headingKey is a heading's first two words: the command and its verb or
// the flag its form is about ("stash pop", "rollback --undo").
func headingKey(h string) string {
	w := strings.Fields(h)
	if len(w) > 2 {
		w = w[:2]
	}
	if len(w) == 2 && strings.HasPrefix(w[1], "[") {
		w = w[:1]
	}
	return strings.Join(w, " ")
}

// TestManPageNamesEveryConfigKey: the man page's CONFIGURATION section
// names every hegel.* key the code reads, and reads no key the code does
// not: a setting cannot ship unlisted, or stay listed once it is gone.
func TestManPageNamesEveryConfigKey(t *testing.T) {
	man, err := os.ReadFile("../../docs/git-hegel.1")
	if err != nil {
		t.Fatal(err)
	}
	text := string(man)
	start, end := strings.Index(text, "\n.SH CONFIGURATION\n"), strings.Index(text, "\n.SH DIAGNOSTICS\n")
	if start < 0 || end < start {
		t.Fatal("docs/git-hegel.1 has no CONFIGURATION section before DIAGNOSTICS")
	}
	documented := map[string]bool{}
	// ".B hegel.remote", ".BR hegel.a \", \" hegel.b", ".BI hegel.adapter. name .command"
	for _, line := range strings.Split(text[start:end], "\n") {
		if !strings.HasPrefix(line, ".B") {
			continue
		}
		line = strings.ReplaceAll(line, "hegel.adapter. name .", "hegel.adapter.name.")
		for _, m := range regexp.MustCompile(`\bhegel\.[A-Za-z.]*[A-Za-z]`).FindAllString(line, -1) {
			documented[strings.ToLower(m)] = true
		}
	}

	read := map[string]bool{}
	patterns := []*regexp.Regexp{
		regexp.MustCompile(`\("hegel", "([a-z]*)", "([a-z]+)"\)`),        // Get("hegel", sub, name)
		regexp.MustCompile(`\("hegel", "()([a-z]+)", [^"]`),              // Int("hegel", name, default)
		regexp.MustCompile(`configValue\([a-z]+, "()([a-z]+)"\)`),        // configValue(cfg, name)
		regexp.MustCompile(`\("hegel", "(adapter)\."\+name, "([a-z]+)"`), // adapter.<name>.<key>
	}
	for _, dir := range []string{".", "../../engine", "../../gitstore", "../../rollback"} {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			src, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for i, re := range patterns {
				for _, m := range re.FindAllStringSubmatch(string(src), -1) {
					key := "hegel." + m[2]
					switch {
					case i == 3:
						key = "hegel.adapter.name." + m[2]
					case m[1] != "":
						key = "hegel." + m[1] + "." + m[2]
					}
					read[key] = true
				}
			}
			return nil
		})
	}
	for _, k := range boolSettings {
		read["hegel."+strings.ToLower(k)] = true
	}
	if len(read) < 20 {
		t.Fatalf("found only %d keys read in the code: %v", len(read), read)
	}
	for k := range read {
		if !documented[k] {
			t.Errorf("the code reads %s, which docs/git-hegel.1's CONFIGURATION does not name", k)
		}
	}
	for k := range documented {
		if !read[k] {
			t.Errorf("docs/git-hegel.1's CONFIGURATION names %s, which the code does not read", k)
		}
	}
	// doctor's list of known keys (a typo is the key it does not know).
	for k := range read {
		if !knownSetting(k) {
			t.Errorf("the code reads %s, which settings.go does not list (doctor would call it unknown)", k)
		}
	}
	for _, k := range settingKeys() {
		if !read[strings.ToLower(k)] {
			t.Errorf("settings.go lists %s, which the code does not read", k)
		}
	}
}

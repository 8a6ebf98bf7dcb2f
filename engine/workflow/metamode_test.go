package workflow

import (
	"slices"
	"strings"
	"testing"
)

func TestMetaBuiltins(t *testing.T) {
	r := LoadMetaModes(nil, nil)
	if got := r.Names(); !slices.Equal(got, []string{"learning", "standard"}) {
		t.Fatalf("built-in meta-modes = %v", got)
	}
	workflows := map[string]bool{}
	for _, w := range Builtins() {
		workflows[w.Name] = true
	}
	for _, m := range r.List() {
		for _, w := range m.Order {
			if !workflows[w] {
				t.Errorf("meta-mode %s names %s, which is no built-in workflow", m.Name, w)
			}
		}
	}
	l, _ := r.Get("learning")
	if l.Start != "research" || !slices.Equal(l.Following("discovery"), []string{"research", "execution"}) || l.ModeFor("execution") != "standard" || l.ModeFor("discovery") != "learning" {
		t.Errorf("learning = %+v", l)
	}
	s, _ := r.Get("standard")
	if s.Start != "discovery" || !slices.Equal(s.Following("execution"), []string{"discovery"}) || !slices.Equal(s.Order, []string{"discovery", "execution"}) {
		t.Errorf("standard = %+v", s)
	}
}

func TestParseMetaModeErrors(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"empty", "", "m.yaml:1: empty meta-mode definition"},
		{"no start", "description: x\n", `m.yaml:1: missing "start"`},
		{"bad start", "start: ../x\n", `m.yaml:1: "start": invalid workflow name`},
		{"unknown key", "start: a\nnext: [b]\n", `m.yaml:2: unknown top-level key "next"`},
		{"not a list", "start: a\ntransitions:\n  a: b\n", `m.yaml:3: transitions: "a" must be a list of workflows, got`},
		{"empty list", "start: a\ntransitions:\n  a: []\n", `m.yaml:3: transitions: "a" lists no workflow`},
		{"twice", "start: a\ntransitions:\n  a: [b]\n  a: [c]\n", `m.yaml:4: transitions: workflow "a" listed twice (first at line 3)`},
		{"dup target", "start: a\ntransitions:\n  a: [b, b]\n", `m.yaml:3: transitions: "a" lists "b" twice`},
		{"bad target", "start: a\ntransitions:\n  a:\n    - b\n    - C/D\n", `m.yaml:5: "transitions: a": invalid workflow name "C/D"`},
		{"name mismatch", "name: other\nstart: a\n", `m.yaml:1: name "other" does not match`},
		{"bad switch", "start: a\nswitch:\n  a: ../up\n", `m.yaml:3: switch: invalid meta-mode name "../up"`},
		{"syntax", "start: [a\n", "m.yaml:1: invalid YAML"},
	} {
		_, err := ParseMetaMode("m", "m.yaml", []byte(tc.src))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want prefix %q", tc.name, err, tc.want)
		}
	}
	if _, err := ParseMetaMode("Bad", "Bad.yaml", []byte("start: a\n")); err == nil || !strings.Contains(err.Error(), "invalid meta-mode name") {
		t.Errorf("bad file name: %v", err)
	}
	huge := "start: a\ntransitions:\n  a: [" + strings.Repeat("b,", maxMetaEntries+1) + "b]\n"
	if _, err := ParseMetaMode("m", "m.yaml", []byte(huge)); err == nil || !strings.Contains(err.Error(), "more than 100") {
		t.Errorf("huge list: %v", err)
	}
}

func TestLoadMetaModesUserFiles(t *testing.T) {
	r := LoadMetaModes(map[string][]byte{
		".hegel/meta/review.yaml":   []byte("description: Review then fix\nstart: ask\ntransitions:\n  ask: [execution]\nswitch:\n  execution: standard\n"),
		".hegel/meta/standard.yaml": []byte("start: [\n"),
		".hegel/meta/loop.yaml":     []byte("start: a\nswitch:\n  a: nosuch\n"),
		".hegel/meta/notes.txt":     []byte("start: a\n"),
	}, nil)
	// A broken user file named like a built-in replaces it; review and
	// the built-in learning switch to it, so they are broken too.
	if got := r.Names(); len(got) != 0 {
		t.Errorf("names = %v", got)
	}
	var msgs []string
	for _, b := range r.Broken() {
		msgs = append(msgs, b.Err.Error())
	}
	for _, want := range []string{
		`.hegel/meta/loop.yaml:3: switch: "a" names the meta-mode "nosuch", which is not defined`,
		`.hegel/meta/notes.txt:1: meta-mode files must end in .yaml or .yml`,
		`.hegel/meta/review.yaml:6: switch: "execution" names the meta-mode "standard"`,
		`.hegel/meta/standard.yaml:1: invalid YAML`,
	} {
		if !slices.ContainsFunc(msgs, func(m string) bool { return strings.HasPrefix(m, want) }) {
			t.Errorf("no broken file %q in %q", want, msgs)
		}
	}
	for _, name := range []string{"standard", "learning", "review", "loop"} {
		if _, ok := r.GetBroken(name); !ok {
			t.Errorf("%s is not listed broken", name)
		}
	}
	ok := LoadMetaModes(map[string][]byte{".hegel/meta/review.yaml": []byte("start: ask\ntransitions:\n  ask: [execution, ask]\n")}, nil)
	m, found := ok.Get("review")
	if !found || !slices.Equal(m.Order, []string{"ask", "execution"}) || m.Source != ".hegel/meta/review.yaml" {
		t.Errorf("review = %+v", m)
	}
}

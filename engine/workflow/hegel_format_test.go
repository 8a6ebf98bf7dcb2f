package workflow

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// testdata/workflows/hegel holds workflow files written in hegel's format,
// covering every field; git hegel must run them as they are.

func hegelFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "workflows", "hegel", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestHegelFormatEveryField(t *testing.T) {
	w, err := Parse("full", "full.yaml", hegelFile(t, "full.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if w.Title != "Every field" || w.Mode != "fields" || w.StartNode != "draft" {
		t.Errorf("title %q mode %q start %q", w.Title, w.Mode, w.StartNode)
	}
	if len(w.Warnings) != 0 {
		t.Errorf("warnings: %v", w.Warnings)
	}
	// The explicit done node is the implicit one, not a node of its own.
	if got := strings.Join(w.Order, ","); got != "draft,review,publish,shelve" {
		t.Errorf("order = %s", got)
	}
	draft := w.Nodes["draft"]
	wantRules := []Rule{
		{Type: RuleRequireCommits, LookbackPhases: 1},
		{Type: RuleRepeatedCommand, Pattern: "go (build|test)", Threshold: 5, Window: 120},
		{Type: RuleRepeatedFileEdit, PathPattern: "src/.*", Threshold: 8, Window: 240},
		{Type: RulePhaseTimeout, MaxDuration: 600},
		{Type: RuleTokenBudget, MaxTokens: 8000},
	}
	if len(draft.Rules) != len(wantRules) {
		t.Fatalf("draft rules = %+v", draft.Rules)
	}
	for i, r := range draft.Rules {
		r.re, r.Line = nil, 0
		if r != wantRules[i] {
			t.Errorf("rule %d = %+v, want %+v", i, r, wantRules[i])
		}
	}
	if draft.Rules[1].Line != 19 {
		t.Errorf("repeated_command defined at line %d, want 19", draft.Rules[1].Line)
	}
	if draft.PromptHbs || draft.Template == nil || draft.PromptLine != 10 {
		t.Errorf("draft prompt: hbs %v line %d", draft.PromptHbs, draft.PromptLine)
	}
	if got := draft.Template.Guides; len(got) != 1 || got[0] != (TemplateRef{"SPEC_WRITING", 3}) {
		t.Errorf("draft guides = %v", got)
	}
	if !slices.Equal(draft.Template.Optional, []string{"context_note"}) {
		t.Errorf("draft optional = %v", draft.Template.Optional)
	}
	review := w.Nodes["review"]
	if !review.PromptHbs || len(review.Template.Partials) != 1 || review.Template.Partials[0].Name != "checklist" {
		t.Errorf("review: %+v", review.Template)
	}
	for _, n := range []string{"publish", "shelve"} {
		if !w.Nodes[n].Terminal || !w.IsTerminal(n) {
			t.Errorf("%s is not an end node", n)
		}
	}
	if w.IsTerminal("review") {
		t.Error("review ends the run")
	}
	// restart_cycle goes back to the start from any node but an end.
	if to, ok := w.Transition("review", RestartCycle); !ok || to != "draft" {
		t.Errorf("restart_cycle from review = %q, %v", to, ok)
	}
	if _, ok := w.Transition("publish", RestartCycle); ok {
		t.Error("restart_cycle from an end node")
	}
	// done finishes from a node with a transition straight to an end.
	if c, ok := w.DoneClaim("review"); !ok || c != "review_complete" {
		t.Errorf("DoneClaim(review) = %q, %v (publish ends the run)", c, ok)
	}
	if c, ok := w.DoneClaim("draft"); !ok || c != "shelve_it" {
		t.Errorf("DoneClaim(draft) = %q, %v", c, ok)
	}
	// The stored copy parses back the same.
	again, err := Parse("full", "stored", w.Raw)
	if err != nil {
		t.Fatal(err)
	}
	again.Source = w.Source
	assertSameWorkflow(t, again, w)
}

func TestHegelFormatLoopWarns(t *testing.T) {
	w, err := Parse("loop", "loop.yaml", hegelFile(t, "loop.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`loop.yaml:7: node "practise" has no path to done: a task there can only leave with restart_cycle or abort`,
		`loop.yaml:12: node "rest" has no path to done: a task there can only leave with restart_cycle or abort`,
	}
	var got []string
	for _, x := range w.Warnings {
		got = append(got, x.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("warnings\n got %q\nwant %q", got, want)
	}
}

func TestHegelFormatUnknownKeys(t *testing.T) {
	data := hegelFile(t, "unknown-keys.yaml")
	w, err := Parse("typos", "typos.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`typos.yaml:4: unknown top-level key "descripton" ignored (expected one of name, mode, start_node, nodes, task_types, default_task_type, max_rollbacks)`,
		`typos.yaml:7: node "only": unknown key "summery" ignored (did you mean "summary"?)`,
		`typos.yaml:11: node "only": rule phase_timeout: unknown field "max_duraton" ignored (did you mean "max_duration"?)`,
		`typos.yaml:16: node "only": unknown transition key "note" ignored (expected one of when, to, confirm)`,
	}
	var got []string
	for _, x := range w.Warnings {
		got = append(got, x.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("warnings\n got %q\nwant %q", got, want)
	}
	if r := w.Nodes["only"].Rules; len(r) != 1 || r[0].MaxDuration != 600 {
		t.Errorf("rules = %+v", r)
	}
	_, err = ParseWith("typos", "typos.yaml", data, ParseOptions{Strict: true})
	if err == nil || err.Error() != `typos.yaml:4: unknown top-level key "descripton" (expected one of name, mode, start_node, nodes, task_types, default_task_type, max_rollbacks)` {
		t.Errorf("strict: %v", err)
	}
}

func TestHegelFormatErrors(t *testing.T) {
	_, err := Parse("bad", "bad-regex.yaml", hegelFile(t, "bad-regex.yaml"))
	if err == nil || err.Error() != `bad-regex.yaml:8: node "code": rule repeated_command: invalid pattern "cargo (build|test": missing closing ): `+"`"+`cargo (build|test`+"`" {
		t.Errorf("bad regex: %v", err)
	}
	r := LoadRegistry(map[string][]byte{"w/unknown-guide.yaml": hegelFile(t, "unknown-guide.yaml")}, LoadOptions{})
	b, ok := r.GetBroken("unknown-guide")
	if !ok || b.Err.Error() != `w/unknown-guide.yaml:8: node "spec": unknown guide {{SPEC_WRITNG}} (no .hegel/guides/SPEC_WRITNG.md and no built-in guide of that name; see 'git hegel guides')` {
		t.Errorf("unknown guide: %+v", b)
	}
	// A user guide of that name makes it load.
	r = LoadRegistry(map[string][]byte{"w/unknown-guide.yaml": hegelFile(t, "unknown-guide.yaml")}, LoadOptions{UserGuides: []string{"SPEC_WRITNG"}})
	if _, ok := r.Get("unknown-guide"); !ok {
		t.Errorf("with the user guide: %v", r.Broken())
	}
}

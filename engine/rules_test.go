package engine

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeEvents is an in-memory EventStore: a journal folded on Fold.
type fakeEvents struct {
	mu      sync.Mutex
	journal []Event
	folded  []Event
	folds   int
}

func (f *fakeEvents) Fold() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.journal) > 0 {
		f.folds++
	}
	f.folded = append(f.folded, f.journal...)
	f.journal = nil
	return nil
}

func (f *fakeEvents) Events(task, run string, since time.Time) ([]Event, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Event
	for _, ev := range append(slices.Clone(f.folded), f.journal...) {
		if ev.Task == task && !ev.Time.Before(since) {
			out = append(out, ev)
		}
	}
	return out, nil
}

func (f *fakeEvents) Record(evs ...Event) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.journal = append(f.journal, evs...)
	return nil
}

func cmdEvent(at time.Time, cmd string) Event {
	return Event{Time: at, Kind: EventPostTool, Tool: "Bash", Action: ActionCommand, Command: cmd, Task: "t"}
}

func editEvent(at time.Time, file string) Event {
	return Event{Time: at, Kind: EventPostTool, Tool: "Edit", Action: ActionEdit, File: file, Task: "t"}
}

func TestCheckRulesEachType(t *testing.T) {
	start := t0
	now := t0.Add(10 * time.Minute)
	at := func(sec int) time.Time { return now.Add(-time.Duration(sec) * time.Second) }
	commits := func(ts ...time.Time) func(time.Time) (int, error) {
		return func(since time.Time) (int, error) {
			n := 0
			for _, c := range ts {
				if !c.Before(since) {
					n++
				}
			}
			return n, nil
		}
	}
	tests := []struct {
		name    string
		rule    Rule
		in      RuleInput
		violate string // "" when satisfied; else a substring of Summary
		recent  int
	}{
		{"require_commits satisfied", Rule{Type: RuleRequireCommits, LookbackPhases: 1},
			RuleInput{CommitsSince: commits(t0.Add(time.Minute))}, "", 0},
		{"require_commits violated", Rule{Type: RuleRequireCommits, LookbackPhases: 1},
			RuleInput{CommitsSince: commits(t0.Add(-time.Minute))}, "no commit on the branch during this phase", 0},
		{"require_commits looks back two phases", Rule{Type: RuleRequireCommits, LookbackPhases: 2},
			RuleInput{CommitsSince: commits(t0.Add(-time.Minute)), LookbackStart: func(k int) time.Time { return t0.Add(-time.Hour) }}, "", 0},
		{"require_commits 999 is the run", Rule{Type: RuleRequireCommits, LookbackPhases: AllCommits},
			RuleInput{CommitsSince: commits(), LookbackStart: func(k int) time.Time { return t0.Add(-time.Hour) }}, "during this run", 0},
		{"require_commits unchecked without git", Rule{Type: RuleRequireCommits, LookbackPhases: 1}, RuleInput{}, "", 0},

		{"repeated_command below threshold", Rule{Type: RuleRepeatedCommand, Pattern: "go test", Threshold: 3, Window: 120},
			RuleInput{Events: []Event{cmdEvent(at(100), "go test ./..."), cmdEvent(at(50), "go test ./x"), cmdEvent(at(40), "go build")}}, "", 0},
		{"repeated_command at threshold", Rule{Type: RuleRepeatedCommand, Pattern: "go (test|build)", Threshold: 3, Window: 120},
			RuleInput{Events: []Event{cmdEvent(at(100), "go test ./..."), cmdEvent(at(50), "go test ./x"), cmdEvent(at(40), "go build")}}, `3 commands matching "go (test|build)" in the last 2m0s`, 3},
		{"repeated_command outside the window", Rule{Type: RuleRepeatedCommand, Threshold: 2, Window: 60},
			RuleInput{Events: []Event{cmdEvent(at(300), "make"), cmdEvent(at(30), "make")}}, "", 0},
		{"repeated_command never counts git hegel", Rule{Type: RuleRepeatedCommand, Threshold: 2, Window: 60},
			RuleInput{Events: []Event{cmdEvent(at(30), "git hegel status"), cmdEvent(at(20), "git hegel status")}}, "", 0},
		{"repeated_command stays in the phase", Rule{Type: RuleRepeatedCommand, Threshold: 2, Window: 3600},
			RuleInput{PhaseStart: at(60), Events: []Event{cmdEvent(at(120), "make"), cmdEvent(at(30), "make")}}, "", 0},

		{"repeated_file_edit below threshold", Rule{Type: RuleRepeatedFileEdit, PathPattern: `^src/`, Threshold: 3, Window: 240},
			RuleInput{Events: []Event{editEvent(at(100), "src/a.go"), editEvent(at(50), "docs/x.md"), editEvent(at(40), "src/b.go")}}, "", 0},
		{"repeated_file_edit violated", Rule{Type: RuleRepeatedFileEdit, Threshold: 3, Window: 240},
			RuleInput{Events: []Event{editEvent(at(100), "src/a.go"), editEvent(at(50), "docs/x.md"), editEvent(at(40), "src/b.go")}}, "3 file edits in the last 4m0s", 3},

		{"phase_timeout within", Rule{Type: RulePhaseTimeout, MaxDuration: 600}, RuleInput{}, "", 0},
		{"phase_timeout over", Rule{Type: RulePhaseTimeout, MaxDuration: 599}, RuleInput{}, "has run 10m0s, longer than its 9m59s limit", 0},

		{"token_budget within", Rule{Type: RuleTokenBudget, MaxTokens: 1000},
			RuleInput{Events: []Event{{Time: at(10), Kind: EventStop, TokensIn: 600, TokensOut: 400}}}, "", 0},
		{"token_budget over", Rule{Type: RuleTokenBudget, MaxTokens: 1000},
			RuleInput{Events: []Event{{Time: at(10), Kind: EventStop, TokensIn: 600, TokensOut: 401}}}, "used 1,001 tokens, over its budget of 1,000", 1},
		{"token_budget counts folded tokens", Rule{Type: RuleTokenBudget, MaxTokens: 1000},
			RuleInput{ExtraTokens: 2000}, "used 2,000 tokens", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			in.Node, in.Now = "code", now
			if in.PhaseStart.IsZero() {
				in.PhaseStart = start
			}
			vs, err := CheckRules([]Rule{tc.rule}, in, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.violate == "" {
				if len(vs) != 0 {
					t.Errorf("violated: %+v", vs)
				}
				return
			}
			if len(vs) != 1 || !strings.Contains(vs[0].Summary, tc.violate) {
				t.Fatalf("violations %+v, want one with %q", vs, tc.violate)
			}
			if vs[0].Comply == "" || len(vs[0].Recent) != tc.recent {
				t.Errorf("comply %q recent %d, want %d", vs[0].Comply, len(vs[0].Recent), tc.recent)
			}
		})
	}
	// skip leaves a type out.
	vs, _ := CheckRules([]Rule{{Type: RulePhaseTimeout, MaxDuration: 1}}, RuleInput{Now: now, PhaseStart: start}, func(s string) bool { return s == RulePhaseTimeout })
	if len(vs) != 0 {
		t.Errorf("skipped rule reported: %v", vs)
	}
}

// guarded is a workflow whose first node has one rule of each kind the
// test sets, so Next can be driven into each.
func guardedWorkflow(rules string) []byte {
	return []byte(y(
		"start_node: code",
		"nodes:",
		"  code:",
		"    prompt: Write code.",
		"    rules:",
		rules,
		"    transitions:",
		"      - {when: code_complete, to: review}",
		"      - {when: give_up, to: aborted}",
		"  review:",
		"    prompt: Review.",
		"    transitions: [{when: review_complete, to: done}]",
	))
}

func newGuardedEngine(t *testing.T, rules string) (*testEnv, *fakeEvents, *[]time.Time) {
	t.Helper()
	te := newTestEngine(t, map[string][]byte{".hegel/workflows/g.yaml": guardedWorkflow(rules)})
	evs := &fakeEvents{}
	var commits []time.Time
	te.Events = evs
	te.CommitTimes = func(since time.Time) ([]time.Time, error) {
		var out []time.Time
		for _, c := range commits {
			if !c.Before(since) {
				out = append(out, c)
			}
		}
		return out, nil
	}
	if _, err := te.Start("g", "", "t"); err != nil {
		t.Fatal(err)
	}
	return te, evs, &commits
}

func TestNextGuardRules(t *testing.T) {
	rules := strings.Join([]string{
		"      - {type: require_commits, lookback_phases: 1}",
		"      - {type: repeated_command, pattern: make, threshold: 2, window: 60}",
	}, "\n")
	te, evs, commits := newGuardedEngine(t, rules)
	te.now = t0.Add(time.Minute)
	evs.Record(cmdEvent(t0.Add(20*time.Second), "make"), cmdEvent(t0.Add(50*time.Second), "make test"))

	// Both rules are broken: the move is blocked, nothing is saved, the
	// journal is folded first and the violations are recorded.
	before := len(te.tasks.log)
	_, err := te.Next("")
	var ge *GuardError
	if !errors.As(err, &ge) || len(ge.Violations) != 2 || ge.From != "code" {
		t.Fatalf("Next = %v", err)
	}
	if !strings.Contains(err.Error(), "To bypass them: git hegel next --force") {
		t.Errorf("message: %v", err)
	}
	if d := ge.Details(); !strings.Contains(d, "recent events:") || !strings.Contains(d, "make test") || !strings.Contains(d, "to comply:") {
		t.Errorf("details:\n%s", d)
	}
	if len(te.tasks.log) != before || te.state(t).CurrentNode != "code" {
		t.Fatalf("a blocked move saved: %v", te.tasks.log)
	}
	if evs.folds != 1 {
		t.Errorf("journal folded %d times before the check", evs.folds)
	}
	var recorded []string
	for _, ev := range evs.journal {
		if ev.Kind == EventViolation {
			recorded = append(recorded, ev.Rule)
		}
	}
	if !slices.Equal(recorded, []string{RuleRequireCommits, RuleRepeatedCommand}) {
		t.Errorf("recorded violations %v", recorded)
	}

	// Forcing one type leaves the other blocking.
	te.Force = Force{Rules: []string{RuleRepeatedCommand}}
	if _, err = te.Next(""); !errors.As(err, &ge) || len(ge.Violations) != 1 || ge.Violations[0].Rule.Type != RuleRequireCommits {
		t.Fatalf("forced repeated_command: %v", err)
	}
	if !strings.Contains(err.Error(), "To bypass it: git hegel next --force require_commits") {
		t.Errorf("message: %v", err)
	}

	// A commit satisfies require_commits; the forced rule is recorded.
	*commits = append(*commits, t0.Add(30*time.Second))
	v, err := te.Next("")
	if err != nil {
		t.Fatal(err)
	}
	if v.Node != "review" {
		t.Errorf("at %s", v.Node)
	}
	st := te.state(t)
	if len(st.Overrides) != 1 || st.Overrides[0].What != "rule:repeated_command" || st.Overrides[0].Node != "code" || st.Overrides[0].Reason == "" {
		t.Errorf("overrides %+v", st.Overrides)
	}
	if last := te.tasks.log[len(te.tasks.log)-1]; last != "next: code -> review (code_complete) [forced: repeated_command]" {
		t.Errorf("commit message %q", last)
	}
}

func TestNextForceAllAndCommitGuard(t *testing.T) {
	rules := "      - {type: require_commits, lookback_phases: 1}\n      - {type: phase_timeout, max_duration: 30}"
	te, _, _ := newGuardedEngine(t, rules)
	te.now = t0.Add(time.Minute)
	// hegel.commitGuard=false turns require_commits off; the timeout still blocks.
	te.NoCommitGuard = true
	_, err := te.Next("")
	var ge *GuardError
	if !errors.As(err, &ge) || len(ge.Violations) != 1 || ge.Violations[0].Rule.Type != RulePhaseTimeout {
		t.Fatalf("with commitGuard off: %v", err)
	}
	// Giving up is never blocked.
	if _, err := te.Next("give_up"); err != nil {
		t.Fatalf("give_up: %v", err)
	}

	te2, _, _ := newGuardedEngine(t, rules)
	te2.now = t0.Add(time.Minute)
	te2.Force = Force{All: true}
	if _, err := te2.Next(""); err != nil {
		t.Fatal(err)
	}
	var what []string
	for _, o := range te2.state(t).Overrides {
		what = append(what, o.What)
	}
	if !slices.Equal(what, []string{"rule:require_commits", "rule:phase_timeout"}) {
		t.Errorf("overrides %v", what)
	}
}

// fakeGuides is a GuideSource of fixed user files.
type fakeGuides struct {
	guides, partials, optional map[string]string
}

func (f *fakeGuides) get(m map[string]string, name string) ([]byte, error) {
	if v, ok := m[name]; ok {
		return []byte(v), nil
	}
	return nil, ErrNotFound
}

func (f *fakeGuides) UserGuideNames() ([]string, error)    { return sortedKeys(f.guides), nil }
func (f *fakeGuides) UserGuide(n string) ([]byte, error)   { return f.get(f.guides, n) }
func (f *fakeGuides) UserPartialNames() ([]string, error)  { return sortedKeys(f.partials), nil }
func (f *fakeGuides) UserPartial(n string) ([]byte, error) { return f.get(f.partials, n) }
func (f *fakeGuides) Optional(n string) ([]byte, error)    { return f.get(f.optional, n) }

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestDoneAndEndNodes(t *testing.T) {
	te := newTestEngine(t, nil)
	g := &fakeGuides{partials: map[string]string{"checklist": "- tests pass"}}
	te.Guides = g
	te.Workflows = func() (*Registry, error) {
		return LoadRegistry(map[string][]byte{".hegel/workflows/full.yaml": hegelFile(t, "full.yaml")}, LoadOptions{UserPartials: []string{"checklist"}}), nil
	}
	if _, err := te.Start("full", "review", "t"); err != nil {
		t.Fatal(err)
	}
	// review leads to publish, a node without transitions: done takes it
	// and the run is complete there.
	v, err := te.Done()
	if err != nil {
		t.Fatal(err)
	}
	st := te.state(t)
	if v.Node != "publish" || st.Status != StatusCompleted || st.EndedAt == nil {
		t.Fatalf("after done: node %s status %s", v.Node, st.Status)
	}
	if v.Prompt != "Publish it." {
		t.Errorf("prompt %q", v.Prompt)
	}
	if _, err := te.Next(""); err == nil || !strings.Contains(err.Error(), "is completed") {
		t.Errorf("next after the end: %v", err)
	}
	// prev reopens it.
	if _, err := te.Prev(); err != nil || te.state(t).Status != StatusActive {
		t.Fatalf("prev: %v %s", err, te.state(t).Status)
	}
	// restart_cycle goes back to the start node from anywhere.
	v, err = te.Next(RestartCycle)
	if err != nil || v.Node != "draft" {
		t.Fatalf("restart_cycle: %v %v", v, err)
	}
	if h := te.state(t).History; !slices.Equal(h, []string{"review", "draft"}) {
		t.Errorf("history %v", h)
	}
	// A node without a transition to an end cannot finish directly.
	te2 := newTestEngine(t, nil)
	te2.Start("discovery", "", "d")
	if _, err := te2.Done(); err == nil || err.Error() != "'spec' cannot finish the workflow directly (it leads to 'plan'); run 'git hegel next' to move on" {
		t.Errorf("done from spec: %v", err)
	}
}

func TestPhaseLogAndLookback(t *testing.T) {
	te := newTestEngine(t, nil)
	te.Start("discovery", "", "d")
	te.now = t0.Add(time.Minute)
	te.Next("")
	te.now = t0.Add(2 * time.Minute)
	te.Next("")
	st := te.state(t)
	want := []PhaseVisit{{"spec", t0}, {"plan", t0.Add(time.Minute)}, {"code", t0.Add(2 * time.Minute)}}
	if !slices.Equal(st.PhaseLog, want) {
		t.Fatalf("phase log %v", st.PhaseLog)
	}
	for k, w := range map[int]time.Time{1: t0.Add(2 * time.Minute), 2: t0.Add(time.Minute), 3: t0, 4: t0, AllCommits: t0} {
		if got := LookbackStart(st, k); !got.Equal(w) {
			t.Errorf("LookbackStart(%d) = %v, want %v", k, got, w)
		}
	}
}

// TestRecentSaysWhenCut: a violation caused by more events than it lists
// says it shows only the last of them, for the agent and at next.
func TestRecentSaysWhenCut(t *testing.T) {
	now := t0.Add(10 * time.Minute)
	var evs []Event
	for i := 7; i > 0; i-- {
		evs = append(evs, cmdEvent(now.Add(-time.Duration(i)*time.Second), "go test ./..."))
	}
	vs, err := CheckRules([]Rule{{Type: RuleRepeatedCommand, Threshold: 3, Window: 600}}, RuleInput{Node: "code", Now: now, PhaseStart: t0, Events: evs}, nil)
	if err != nil || len(vs) != 1 {
		t.Fatalf("%v %v", vs, err)
	}
	if msg := AgentMessage(vs, "w"); !strings.Contains(msg, "\nRecent (the last 5 of 7):\n") {
		t.Errorf("agent message:\n%s", msg)
	}
	ge := &GuardError{From: "code", Violations: vs}
	if d := ge.Details(); !strings.Contains(d, "  recent events (the last 5 of 7):\n") {
		t.Errorf("details:\n%s", d)
	}
	vs[0].Recent, vs[0].Matched = vs[0].Recent[:3], 3
	if msg := AgentMessage(vs, "w"); !strings.Contains(msg, "\nRecent:\n") {
		t.Errorf("a whole list is called Recent:\n%s", msg)
	}
}

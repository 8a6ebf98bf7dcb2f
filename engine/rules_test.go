package engine

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/engine/agent"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

// fakeEvents is an in-memory EventStore: a journal folded on Fold.
type fakeEvents struct {
	mu      sync.Mutex
	journal []agent.Event
	folded  []agent.Event
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

func (f *fakeEvents) Events(task, run string, since time.Time) ([]agent.Event, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []agent.Event
	for _, ev := range append(slices.Clone(f.folded), f.journal...) {
		if ev.Task == task && !ev.Time.Before(since) {
			out = append(out, ev)
		}
	}
	return out, nil
}

func (f *fakeEvents) Record(evs ...agent.Event) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.journal = append(f.journal, evs...)
	return nil
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
	var ge *agent.GuardError
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
		if ev.Kind == agent.EventViolation {
			recorded = append(recorded, ev.Rule)
		}
	}
	if !slices.Equal(recorded, []string{workflow.RuleRequireCommits, workflow.RuleRepeatedCommand}) {
		t.Errorf("recorded violations %v", recorded)
	}

	// Forcing one type leaves the other blocking.
	force := Force{Rules: []string{workflow.RuleRepeatedCommand}}
	if _, err = te.NextWith(NextOptions{Force: force}); !errors.As(err, &ge) || len(ge.Violations) != 1 || ge.Violations[0].Rule.Type != workflow.RuleRequireCommits {
		t.Fatalf("forced repeated_command: %v", err)
	}
	if !strings.Contains(err.Error(), "To bypass it: git hegel next --force require_commits") {
		t.Errorf("message: %v", err)
	}

	// A commit satisfies require_commits; the forced rule is recorded.
	*commits = append(*commits, t0.Add(30*time.Second))
	v, err := te.NextWith(NextOptions{Force: force})
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
	// hegel.commitGuard=false (no CommitTimes) turns require_commits off;
	// the timeout still blocks.
	te.CommitTimes = nil
	_, err := te.Next("")
	var ge *agent.GuardError
	if !errors.As(err, &ge) || len(ge.Violations) != 1 || ge.Violations[0].Rule.Type != workflow.RulePhaseTimeout {
		t.Fatalf("with commitGuard off: %v", err)
	}
	// Giving up is never blocked.
	if _, err := te.Next("give_up"); err != nil {
		t.Fatalf("give_up: %v", err)
	}

	te2, _, _ := newGuardedEngine(t, rules)
	te2.now = t0.Add(time.Minute)
	if _, err := te2.NextWith(NextOptions{Force: Force{All: true}}); err != nil {
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

func TestDoneAndEndNodes(t *testing.T) {
	te := newTestEngine(t, nil)
	g := &fakeGuides{partials: map[string]string{"checklist": "- tests pass"}}
	te.Guides = g
	te.Workflows = func() (*workflow.Registry, error) {
		return workflow.LoadRegistry(map[string][]byte{".hegel/workflows/full.yaml": hegelFile(t, "full.yaml")}, workflow.LoadOptions{UserPartials: []string{"checklist"}}), nil
	}
	if _, err := te.Start("full", "review", "t"); err != nil {
		t.Fatal(err)
	}
	// review leads to publish, a node without transitions: done takes it
	// and the run is complete there.
	v, err := te.Done(DoneOptions{})
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
	if _, err := te.Prev(TaskOptions{}); err != nil || te.state(t).Status != StatusActive {
		t.Fatalf("prev: %v %s", err, te.state(t).Status)
	}
	// restart_cycle goes back to the start node from anywhere.
	v, err = te.Next(workflow.RestartCycle)
	if err != nil || v.Node != "draft" {
		t.Fatalf("restart_cycle: %v %v", v, err)
	}
	if h := te.state(t).History; !slices.Equal(h, []string{"review", "draft"}) {
		t.Errorf("history %v", h)
	}
	// A node without a transition to an end cannot finish directly.
	te2 := newTestEngine(t, nil)
	te2.Start("discovery", "", "d")
	if _, err := te2.Done(DoneOptions{}); err == nil || err.Error() != "'spec' cannot finish the workflow directly (it leads to 'plan'); run 'git hegel next' to move on" {
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
	want := []PhaseVisit{{"spec", t0, ""}, {"plan", t0.Add(time.Minute), ""}, {"code", t0.Add(2 * time.Minute), ""}}
	if !slices.Equal(st.PhaseLog, want) {
		t.Fatalf("phase log %v", st.PhaseLog)
	}
	for k, w := range map[int]time.Time{1: t0.Add(2 * time.Minute), 2: t0.Add(time.Minute), 3: t0, 4: t0, workflow.AllCommits: t0} {
		if got := LookbackStart(st, k); !got.Equal(w) {
			t.Errorf("LookbackStart(%d) = %v, want %v", k, got, w)
		}
	}
}

// require_commits asks for the commits after the head the phase started
// at, so a commit in the phase's first second but before it is not one.
func TestRequireCommitsByAncestry(t *testing.T) {
	te := newTestEngine(t, map[string][]byte{".hegel/workflows/g.yaml": guardedWorkflow("      - {type: require_commits, lookback_phases: 1}")})
	head := "1111111111111111111111111111111111111111"
	te.Git = func() *GitInfo { return &GitInfo{Branch: "main", Head: head} }
	var bases []string
	commits := 0
	te.CommitsAfter = func(base string, since time.Time) (int, error) {
		bases = append(bases, base)
		return commits, nil
	}
	if _, err := te.Start("g", "", "t"); err != nil {
		t.Fatal(err)
	}
	if _, err := te.Next(""); err == nil {
		t.Fatal("next passed without a commit")
	}
	commits = 1
	head = "2222222222222222222222222222222222222222"
	if _, err := te.Next(""); err != nil {
		t.Fatal(err)
	}
	if len(bases) != 2 || bases[0] != "1111111111111111111111111111111111111111" || bases[1] != bases[0] {
		t.Errorf("bases asked for: %v", bases)
	}
}

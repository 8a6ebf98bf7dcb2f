package agent

import (
	"github.com/git-hegel/git-hegel/engine/workflow"
	"strings"
	"testing"
	"time"
)

// t0 is the tests' fixed clock.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

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
		rule    workflow.Rule
		in      RuleInput
		violate string // "" when satisfied; else a substring of Summary
		recent  int
	}{
		{"require_commits satisfied", workflow.Rule{Type: workflow.RuleRequireCommits, LookbackPhases: 1},
			RuleInput{CommitsSince: commits(t0.Add(time.Minute))}, "", 0},
		{"require_commits violated", workflow.Rule{Type: workflow.RuleRequireCommits, LookbackPhases: 1},
			RuleInput{CommitsSince: commits(t0.Add(-time.Minute))}, "no commit on the branch during this phase", 0},
		{"require_commits looks back two phases", workflow.Rule{Type: workflow.RuleRequireCommits, LookbackPhases: 2},
			RuleInput{CommitsSince: commits(t0.Add(-time.Minute)), LookbackStart: func(k int) time.Time { return t0.Add(-time.Hour) }}, "", 0},
		{"require_commits 999 is the run", workflow.Rule{Type: workflow.RuleRequireCommits, LookbackPhases: workflow.AllCommits},
			RuleInput{CommitsSince: commits(), LookbackStart: func(k int) time.Time { return t0.Add(-time.Hour) }}, "during this run", 0},
		{"require_commits unchecked without git", workflow.Rule{Type: workflow.RuleRequireCommits, LookbackPhases: 1}, RuleInput{}, "", 0},

		{"repeated_command below threshold", workflow.Rule{Type: workflow.RuleRepeatedCommand, Pattern: "go test", Threshold: 3, Window: 120},
			RuleInput{Events: []Event{cmdEvent(at(100), "go test ./..."), cmdEvent(at(50), "go test ./x"), cmdEvent(at(40), "go build")}}, "", 0},
		{"repeated_command at threshold", workflow.Rule{Type: workflow.RuleRepeatedCommand, Pattern: "go (test|build)", Threshold: 3, Window: 120},
			RuleInput{Events: []Event{cmdEvent(at(100), "go test ./..."), cmdEvent(at(50), "go test ./x"), cmdEvent(at(40), "go build")}}, `3 commands matching "go (test|build)" in the last 2m0s`, 3},
		{"repeated_command outside the window", workflow.Rule{Type: workflow.RuleRepeatedCommand, Threshold: 2, Window: 60},
			RuleInput{Events: []Event{cmdEvent(at(300), "make"), cmdEvent(at(30), "make")}}, "", 0},
		{"repeated_command never counts git hegel", workflow.Rule{Type: workflow.RuleRepeatedCommand, Threshold: 2, Window: 60},
			RuleInput{Events: []Event{cmdEvent(at(30), "git hegel status"), cmdEvent(at(20), "git hegel status")}}, "", 0},
		{"repeated_command stays in the phase", workflow.Rule{Type: workflow.RuleRepeatedCommand, Threshold: 2, Window: 3600},
			RuleInput{PhaseStart: at(60), Events: []Event{cmdEvent(at(120), "make"), cmdEvent(at(30), "make")}}, "", 0},

		{"repeated_file_edit below threshold", workflow.Rule{Type: workflow.RuleRepeatedFileEdit, PathPattern: `^src/`, Threshold: 3, Window: 240},
			RuleInput{Events: []Event{editEvent(at(100), "src/a.go"), editEvent(at(50), "docs/x.md"), editEvent(at(40), "src/b.go")}}, "", 0},
		{"repeated_file_edit violated", workflow.Rule{Type: workflow.RuleRepeatedFileEdit, Threshold: 3, Window: 240},
			RuleInput{Events: []Event{editEvent(at(100), "src/a.go"), editEvent(at(50), "docs/x.md"), editEvent(at(40), "src/b.go")}}, "3 file edits in the last 4m0s", 3},

		{"phase_timeout within", workflow.Rule{Type: workflow.RulePhaseTimeout, MaxDuration: 600}, RuleInput{}, "", 0},
		{"phase_timeout over", workflow.Rule{Type: workflow.RulePhaseTimeout, MaxDuration: 599}, RuleInput{}, "has run 10m0s, longer than its 9m59s limit", 0},

		{"token_budget within", workflow.Rule{Type: workflow.RuleTokenBudget, MaxTokens: 1000},
			RuleInput{Events: []Event{{Time: at(10), Kind: EventStop, TokensIn: 600, TokensOut: 400}}}, "", 0},
		{"token_budget over", workflow.Rule{Type: workflow.RuleTokenBudget, MaxTokens: 1000},
			RuleInput{Events: []Event{{Time: at(10), Kind: EventStop, TokensIn: 600, TokensOut: 401}}}, "used 1,001 tokens, over its budget of 1,000", 1},
		{"token_budget counts folded tokens", workflow.Rule{Type: workflow.RuleTokenBudget, MaxTokens: 1000},
			RuleInput{ExtraTokens: 2000}, "used 2,000 tokens", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			in.Node, in.Now = "code", now
			if in.PhaseStart.IsZero() {
				in.PhaseStart = start
			}
			vs, err := CheckRules([]workflow.Rule{tc.rule}, in, nil)
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
	vs, _ := CheckRules([]workflow.Rule{{Type: workflow.RulePhaseTimeout, MaxDuration: 1}}, RuleInput{Now: now, PhaseStart: start}, func(s string) bool { return s == workflow.RulePhaseTimeout })
	if len(vs) != 0 {
		t.Errorf("skipped rule reported: %v", vs)
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
	vs, err := CheckRules([]workflow.Rule{{Type: workflow.RuleRepeatedCommand, Threshold: 3, Window: 600}}, RuleInput{Node: "code", Now: now, PhaseStart: t0, Events: evs}, nil)
	if err != nil || len(vs) != 1 {
		t.Fatalf("%v %v", vs, err)
	}
	if msg := ViolationMessage(vs, "w"); !strings.Contains(msg, "\nRecent (the last 5 of 7):\n") {
		t.Errorf("agent message:\n%s", msg)
	}
	ge := &GuardError{From: "code", Violations: vs}
	if d := ge.Details(); !strings.Contains(d, "  recent events (the last 5 of 7):\n") {
		t.Errorf("details:\n%s", d)
	}
	vs[0].Recent, vs[0].Matched = vs[0].Recent[:3], 3
	if msg := ViolationMessage(vs, "w"); !strings.Contains(msg, "\nRecent:\n") {
		t.Errorf("a whole list is called Recent:\n%s", msg)
	}
}

package workflow

import (
	"slices"
	"testing"
)

// typed is twoNodes with task types and stage metadata; cases below break
// one thing at a time.
var typed = []string{
	"start_node: spec", // 1
	"task_types: [feature, bug_fix]",
	"default_task_type: feature", // 3
	"nodes:",
	"  spec:", // 5
	"    display_name: Specification",
	"    description: |", // 7
	"      Decide what to build.",
	"      Then build it.", // 9
	"    artifact: SPEC.md",
	"    gate: approval", // 11
	"    approvers: [Ann, Bob]",
	"    prompt: Do the spec.", // 13
	"    transitions:",
	"      - when: spec_complete", // 15
	"        to: plan",
	"        confirm: true", // 17
	"  plan:",
	"    requires: [SPEC.md, docs/NOTES.md]", // 19
	"    conditional: true",
	"    skip_for: [bug_fix]", // 21
	"    max_attempts: 5",
	"    prompt: Do the plan.", // 23
	"    transitions:",
	"      - when: plan_complete", // 25
	"        to: done",
}

func editTyped(n int, repl ...string) string {
	out := append([]string{}, typed[:n-1]...)
	out = append(out, repl...)
	out = append(out, typed[n:]...)
	return y(out...)
}

func TestParseStageMetadata(t *testing.T) {
	w, err := Parse("wf", "wf.yaml", []byte(y(typed...)))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(w.TaskTypes, []string{"feature", "bug_fix"}) || w.DefaultTaskType != "feature" {
		t.Errorf("types %v default %q", w.TaskTypes, w.DefaultTaskType)
	}
	spec, plan := w.Nodes["spec"], w.Nodes["plan"]
	if spec.DisplayName != "Specification" || spec.Description != "Decide what to build.\nThen build it." ||
		!slices.Equal(spec.Artifacts, []string{"SPEC.md"}) || spec.Gate != GateApproval || !slices.Equal(spec.Approvers, []string{"Ann", "Bob"}) {
		t.Errorf("spec = %+v", spec.StageMeta)
	}
	if !spec.Transitions[0].Confirm {
		t.Error("confirm not read")
	}
	if !slices.Equal(plan.Requires, []string{"SPEC.md", "docs/NOTES.md"}) || !plan.Conditional ||
		!slices.Equal(plan.SkipFor, []string{"bug_fix"}) || plan.MaxAttempts != 5 {
		t.Errorf("plan = %+v", plan.StageMeta)
	}
	if w.Attempts("plan", 3) != 5 || w.Attempts("spec", 4) != 4 || w.Attempts("spec", 0) != DefaultMaxAttempts {
		t.Error("Attempts")
	}
	if !w.SkippedFor("plan", "bug_fix") || w.SkippedFor("plan", "feature") || w.SkippedFor("spec", "bug_fix") {
		t.Error("SkippedFor")
	}
	if got := w.Skips(); !slices.Equal(got["bug_fix"], []string{"plan"}) || len(got["feature"]) != 0 {
		t.Errorf("Skips = %v", got)
	}
	if w.Label("spec") != "Specification" || w.Label("plan") != "plan" {
		t.Error("Label")
	}
	// Without default_task_type the first type is the default.
	w, err = Parse("wf", "wf.yaml", []byte(editTyped(3)))
	if err != nil || w.DefaultTaskType != "feature" {
		t.Errorf("default without default_task_type: %q %v", w.DefaultTaskType, err)
	}
}

func TestParseStageMetadataErrors(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"skip_for undeclared type", editTyped(21, "    skip_for: [bug_fix, docs]"),
			`wf.yaml:21: node "plan": skip_for names task type "docs", which task_types does not declare ('feature', 'bug_fix')`},
		{"skip_for without task types", y(append(append([]string{typed[0]}, typed[3:20]...), append([]string{"    skip_for: [docs]"}, typed[21:]...)...)...),
			`wf.yaml:19: node "plan": skip_for names task type "docs", but the workflow declares no task_types`},
		{"absolute artifact", editTyped(10, "    artifact: /etc/passwd"),
			`wf.yaml:10: node "spec": artifact "/etc/passwd" is absolute; give a path relative to the top of the worktree`},
		{"windows absolute artifact", editTyped(10, "    artifact: C:/x.md"),
			`wf.yaml:10: node "spec": artifact "C:/x.md" is absolute; give a path relative to the top of the worktree`},
		{"dot-dot artifact", editTyped(10, "    artifact: ../SPEC.md"),
			`wf.yaml:10: node "spec": artifact "../SPEC.md" contains '..'; artifacts stay inside the worktree`},
		{"dot-dot inside artifact", editTyped(10, "    artifact: docs/../../x"),
			`wf.yaml:10: node "spec": artifact "docs/../../x" contains '..'; artifacts stay inside the worktree`},
		{"artifact in .git", editTyped(10, "    artifact: .git/config"),
			`wf.yaml:10: node "spec": artifact ".git/config" points into .git`},
		{"artifact in .GIT", editTyped(10, "    artifact: sub/.GIT/hooks/x"),
			`wf.yaml:10: node "spec": artifact "sub/.GIT/hooks/x" points into .git`},
		{"artifact backslash", editTyped(10, `    artifact: 'docs\x.md'`),
			`wf.yaml:10: node "spec": artifact "docs\\x.md" must be a slash-separated path on one line`},
		{"empty artifact", editTyped(10, "    artifact: ''"), `wf.yaml:10: node "spec": "artifact" is empty`},
		{"requires in .git", editTyped(19, "    requires: [SPEC.md, .git/HEAD]"),
			`wf.yaml:19: node "plan": requires: ".git/HEAD" points into .git`},
		{"max_attempts zero", editTyped(22, "    max_attempts: 0"), `wf.yaml:22: node "plan": "max_attempts" must be at least 1, got 0`},
		{"max_attempts negative", editTyped(22, "    max_attempts: -2"), `wf.yaml:22: node "plan": "max_attempts" must be at least 1, got -2`},
		{"max_attempts text", editTyped(22, "    max_attempts: many"), `wf.yaml:22: node "plan": "max_attempts" must be a whole number, got "many"`},
		{"unknown gate", editTyped(11, "    gate: review"), `wf.yaml:11: node "spec": unknown gate "review" (the gate a node may have: "approval")`},
		{"confirm not a bool", editTyped(17, "        confirm: maybe"), `wf.yaml:17: node "spec": "confirm" must be true or false, got "maybe"`},
		{"conditional not a bool", editTyped(20, "    conditional: 1"), `wf.yaml:20: node "plan": "conditional" must be true or false, got "1"`},
		{"default type not declared", editTyped(3, "default_task_type: docs"),
			`wf.yaml:3: default_task_type "docs" is not one of task_types ('feature', 'bug_fix')`},
		{"bad task type name", editTyped(2, "task_types: [feature, Bug Fix]"), `wf.yaml:2: invalid task type "Bug Fix": ` + nameRule},
		{"repeated task type", editTyped(2, "task_types: [feature, feature]"), `wf.yaml:2: task_types lists "feature" twice`},
		{"empty task types", editTyped(2, "task_types: []"), `wf.yaml:2: "task_types" is empty; leave it out if the workflow has no task types`},
		{"approvers without gate", editTyped(11), `wf.yaml:11: node "spec": approvers without a gate; add "gate: approval"`},
		{"skip loop", y("start_node: a", "task_types: [t]", "nodes:",
			"  a:", "    prompt: x", "    skip_for: [t]", "    transitions: [{when: go, to: b}, {when: end, to: done}]",
			"  b:", "    prompt: x", "    skip_for: [t]", "    transitions: [{when: go, to: a}, {when: end, to: done}]"),
			`wf.yaml:4: node "a": for task type "t" every node after it is skipped in a loop, so such a task could never leave it`},
		{"unknown node key", editTyped(22, "    max_attempt: 5"), `wf.yaml:22: node "plan": unknown key "max_attempt" (did you mean "max_attempts"?)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Strict, so a misspelt key is an error here rather than a
			// warning (Parse warns; hegel.strictWorkflows refuses).
			w, err := ParseWith("wf", "wf.yaml", []byte(tc.yaml), ParseOptions{Strict: true})
			if err == nil {
				t.Fatalf("parsed without error:\n%s\nnodes: %v", tc.yaml, w.Order)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n got: %s\nwant: %s\nyaml:\n%s", err, tc.want, tc.yaml)
			}
		})
	}
}

// TestPipelineSkipsTable checks, stage by stage, which stages the
// pipeline built-in skips for each task type (docs/tasks.md, "The
// pipeline workflow").
func TestPipelineSkipsTable(t *testing.T) {
	w := builtin(t, "pipeline")
	want := map[string][]string{
		"feature":  {},
		"bug_fix":  {"design", "benchmark"},
		"refactor": {"design", "migration", "contract", "benchmark", "security"},
		"chore":    {"design", "migration", "contract", "benchmark"},
		"docs":     {"design", "preflight", "migration", "test", "contract", "qa", "benchmark", "security"},
		"hotfix":   {"design", "benchmark"},
	}
	got := w.Skips()
	if len(got) != len(want) {
		t.Fatalf("types %v", w.TaskTypes)
	}
	for typ, nodes := range want {
		if !slices.Equal(got[typ], nodes) {
			t.Errorf("%s skips %v, want %v", typ, got[typ], nodes)
		}
	}
	wantArtifacts := []string{"SPEC.md", "PLAN.md", "DESIGN.md", "PREFLIGHT_REPORT.md", "DEVELOPMENT.md", "MIGRATION_REPORT.md", "TEST_PLAN.md",
		"CONTRACT_REPORT.md", "QA_REPORT.md", "BENCHMARK_REPORT.md", "SECURITY_CHECKLIST.md", "REVIEW_NOTES.md", "DOCS_REPORT.md"}
	for i, a := range wantArtifacts {
		wantArtifacts[i] = "{{task.dir}}/" + a
	}
	if a := w.Artifacts(); !slices.Equal(a, wantArtifacts) {
		t.Errorf("artifacts %v", a)
	}
	for _, n := range w.Order {
		node := w.Nodes[n]
		if node.DisplayName == "" || node.Description == "" || node.Summary == "" || len(node.Artifacts) == 0 {
			t.Errorf("node %s lacks metadata: %+v", n, node.StageMeta)
		}
	}
	if to, ok := w.Transition("qa", "qa_failed"); !ok || to != "dev" {
		t.Errorf("qa_failed -> %q", to)
	}
	if w.DefaultTaskType != "feature" || w.Nodes["pm"].Gate != GateApproval {
		t.Error("default type or pm gate")
	}
}

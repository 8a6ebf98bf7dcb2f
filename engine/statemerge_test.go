package engine

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"
)

// mergeBase is the state both sides moved on from: task t at code,
// active, first attempt.
func mergeBase() *State {
	t0 := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	return &State{
		Task: "t", Workflow: "w", Mode: "w", CurrentNode: "code", History: []string{"spec", "code"},
		WorkflowID: "w1", Status: StatusActive, StartedAt: t0, PhaseStartTime: t0, UpdatedAt: t0,
		Worktree: "/a", WorktreeID: "i:main", Attempt: 1, Description: "fix login",
		PhaseLog:     []PhaseVisit{{Node: "spec", Start: t0}, {Node: "code", Start: t0}},
		Questions:    []Question{{Node: "spec", Question: "which db?", AskedAt: t0}},
		Retries:      map[string]int{"spec": 1},
		NodeAttempts: map[string]int{"code": 1},
		Approvals:    []Approval{{Node: "spec", By: "ann", At: t0}},
		StepResults:  map[string]json.RawMessage{"lint": json.RawMessage(`{"ok":true}`)},
		FilesLocked:  []FileLock{{Path: "docs/", At: t0}},
		MetaMode:     "learning",
	}
}

func at(min int) time.Time { return time.Date(2026, 1, 2, 3, min, 0, 0, time.UTC) }
func atp(min int) *time.Time {
	t := at(min)
	return &t
}

// The merge table: one case per field kind, each with what both sides
// did, what the merge must hold, and the conflicts it must report.
func TestMergeStates(t *testing.T) {
	cases := []struct {
		name       string
		ours       func(*State) // this clone's change
		theirs     func(*State) // the remote's change
		prefer     Side
		conflicts  []string // conflicting fields, in order
		fromTheirs []string
		check      func(t *testing.T, m *State)
	}{{
		name: "B pauses and A records a failure: both stand",
		ours: func(s *State) { // A: fail, attempt 1 of 3
			s.Attempt, s.Retries["code"], s.LastFailure, s.UpdatedAt = 2, 1, "tests fail", at(2)
			s.NodeAttempts = map[string]int{"code": 2}
		},
		theirs: func(s *State) { // B: pause
			s.Status, s.PausedAt, s.PauseReason, s.UpdatedAt = StatusPaused, atp(1), "lunch", at(1)
		},
		fromTheirs: []string{"pause_reason", "paused_at", "status"},
		check: func(t *testing.T, m *State) {
			if m.Status != StatusPaused || m.PauseReason != "lunch" || m.LastFailure != "tests fail" || m.Attempt != 2 || m.Retries["code"] != 1 {
				t.Errorf("merged = %+v", m)
			}
			if !m.UpdatedAt.Equal(at(2)) {
				t.Errorf("updated_at = %s, want the later", m.UpdatedAt)
			}
		},
	}, {
		name: "scalars: a description edit and a node move both stand",
		ours: func(s *State) { s.Description = "fix login on mobile" },
		theirs: func(s *State) {
			s.CurrentNode, s.History, s.PhaseStartTime = "review", append(s.History, "review"), at(3)
			s.PhaseLog = append(s.PhaseLog, PhaseVisit{Node: "review", Start: at(3)})
		},
		fromTheirs: []string{"current_node", "phase_log"},
		check: func(t *testing.T, m *State) {
			if m.Description != "fix login on mobile" || m.CurrentNode != "review" || !slices.Equal(m.History, []string{"spec", "code", "review"}) || !m.PhaseStartTime.Equal(at(3)) {
				t.Errorf("merged = %+v", m)
			}
		},
	}, {
		name:      "scalars: the same field changed differently is a conflict",
		ours:      func(s *State) { s.Description = "mine" },
		theirs:    func(s *State) { s.Description = "theirs" },
		conflicts: []string{"description"},
	}, {
		name:       "scalars: a conflict resolved to theirs keeps our other changes",
		ours:       func(s *State) { s.Description, s.Priority = "mine", "high" },
		theirs:     func(s *State) { s.Description = "theirs" },
		prefer:     SideTheirs,
		conflicts:  []string{"description"},
		fromTheirs: []string{"description"},
		check: func(t *testing.T, m *State) {
			if m.Description != "theirs" || m.Priority != "high" {
				t.Errorf("merged = %+v", m)
			}
		},
	}, {
		name: "holder: A parks the task while B claims it: B holds it",
		ours: func(s *State) { s.Worktree, s.WorktreeID = "", "" }, // A started another task
		theirs: func(s *State) {
			s.Worktree, s.WorktreeID, s.OwnerEmail = "/b", "j:main", "bob@example.com"
		},
		fromTheirs: []string{"owner_email", "worktree", "worktree_id"},
		check: func(t *testing.T, m *State) {
			if m.Worktree != "/b" || m.WorktreeID != "j:main" || m.OwnerEmail != "bob@example.com" {
				t.Errorf("merged holder = %q %q %q", m.Worktree, m.WorktreeID, m.OwnerEmail)
			}
		},
	}, {
		name: "holder: B claims it while A parks it, seen from B: B holds it",
		ours: func(s *State) {
			s.Worktree, s.WorktreeID, s.OwnerEmail = "/b", "j:main", "bob@example.com"
		},
		theirs: func(s *State) { s.Worktree, s.WorktreeID, s.OwnerEmail = "", "", "" }, // an older version cleared the person too
		check: func(t *testing.T, m *State) {
			if m.Worktree != "/b" || m.WorktreeID != "j:main" || m.OwnerEmail != "bob@example.com" {
				t.Errorf("merged holder = %q %q %q", m.Worktree, m.WorktreeID, m.OwnerEmail)
			}
		},
	}, {
		name:      "holder: two clones claim it: a conflict",
		ours:      func(s *State) { s.Worktree, s.WorktreeID = "/c", "k:main" },
		theirs:    func(s *State) { s.Worktree, s.WorktreeID = "/b", "j:main" },
		conflicts: []string{"worktree", "worktree_id"},
	}, {
		name:      "node: both moved it to different places",
		ours:      func(s *State) { s.CurrentNode, s.History = "review", append(s.History, "review") },
		theirs:    func(s *State) { s.CurrentNode, s.History = "spec", append(s.History, "spec") },
		conflicts: []string{"current_node"},
	}, {
		name:      "node: resolved to ours, with the path taken there",
		ours:      func(s *State) { s.CurrentNode, s.History = "review", append(s.History, "review") },
		theirs:    func(s *State) { s.CurrentNode, s.History, s.Description = "spec", append(s.History, "spec"), "d2" },
		prefer:    SideOurs,
		conflicts: []string{"current_node"},
		check: func(t *testing.T, m *State) {
			if m.CurrentNode != "review" || !slices.Equal(m.History, []string{"spec", "code", "review"}) || m.Description != "d2" {
				t.Errorf("merged = %+v", m)
			}
		},
	}, {
		name: "node: both reached the same node (the same gate approved twice)",
		ours: func(s *State) {
			s.CurrentNode, s.History, s.PhaseStartTime = "review", append(s.History, "review"), at(4)
			s.Approvals = append(s.Approvals, Approval{Node: "code", By: "ann", At: at(4)})
		},
		theirs: func(s *State) {
			s.CurrentNode, s.History, s.PhaseStartTime = "review", append(s.History, "review"), at(5)
			s.Approvals = append(s.Approvals, Approval{Node: "code", By: "bob", At: at(5)})
		},
		fromTheirs: []string{"approvals"},
		check: func(t *testing.T, m *State) {
			if m.CurrentNode != "review" || !m.PhaseStartTime.Equal(at(4)) || len(m.Approvals) != 3 || m.Approvals[2].By != "bob" {
				t.Errorf("merged = %+v", m)
			}
		},
	}, {
		name: "file locks: a union by path, without what one side released",
		ours: func(s *State) {
			s.FilesLocked = []FileLock{{Path: "api/", At: at(3)}} // released docs/, took api/
		},
		theirs: func(s *State) {
			s.FilesLocked = []FileLock{{Path: "docs/", At: at(0)}, {Path: "web/", At: at(4)}}
		},
		check: func(t *testing.T, m *State) {
			var paths []string
			for _, l := range m.FilesLocked {
				paths = append(paths, l.Path)
			}
			if !slices.Equal(paths, []string{"api/", "web/"}) {
				t.Errorf("files_locked = %v, want api/ and web/", paths)
			}
		},
		fromTheirs: []string{"files_locked"},
	}, {
		name:      "meta_mode: fixed when the run starts, so a side that changed it conflicts",
		ours:      func(s *State) { s.Description = "fix login and logout" },
		theirs:    func(s *State) { s.MetaMode = "standard" },
		conflicts: []string{"meta_mode"},
	}, {
		name:       "meta_mode: a conflict resolved to their side takes theirs",
		ours:       func(s *State) { s.MetaMode = "" },
		theirs:     func(s *State) { s.MetaMode = "standard" },
		prefer:     SideTheirs,
		conflicts:  []string{"meta_mode"},
		fromTheirs: []string{"meta_mode"},
		check: func(t *testing.T, m *State) {
			if m.MetaMode != "standard" {
				t.Errorf("meta_mode = %q", m.MetaMode)
			}
		},
	}, {
		name:   "lists: approvals and history events are unions, ordered by time",
		ours:   func(s *State) { s.RollbackHistory = []RollbackEvent{{Timestamp: at(7), From: "code", To: "spec"}} },
		theirs: func(s *State) { s.RollbackHistory = []RollbackEvent{{Timestamp: at(6), From: "code", To: "plan"}} },
		check: func(t *testing.T, m *State) {
			if len(m.RollbackHistory) != 2 || m.RollbackHistory[0].To != "plan" || m.RollbackHistory[1].To != "spec" {
				t.Errorf("rollback_history = %+v", m.RollbackHistory)
			}
		},
	}, {
		name: "lists: what one side removed goes, what the other added stays",
		ours: func(s *State) { s.Approvals = nil },
		theirs: func(s *State) {
			s.Overrides = []Override{{Node: "code", What: "artifact", At: at(1)}}
		},
		fromTheirs: []string{"overrides"},
		check: func(t *testing.T, m *State) {
			if len(m.Approvals) != 0 || len(m.Overrides) != 1 {
				t.Errorf("approvals %+v, overrides %+v", m.Approvals, m.Overrides)
			}
		},
	}, {
		name: "lists: questions asked on both sides, one answered on one side",
		ours: func(s *State) {
			s.Questions = append(s.Questions, Question{Node: "code", Question: "tabs?", AskedAt: at(2)})
		},
		theirs: func(s *State) {
			s.Questions[0].Answer, s.Questions[0].AnsweredAt = "postgres", atp(3)
			s.Questions = append(s.Questions, Question{Node: "code", Question: "which port?", AskedAt: at(1)})
		},
		fromTheirs: []string{"questions"},
		check: func(t *testing.T, m *State) {
			if len(m.Questions) != 3 || m.Questions[0].Answer != "postgres" || m.Questions[1].Question != "which port?" || m.Questions[2].Question != "tabs?" {
				t.Errorf("questions = %+v", m.Questions)
			}
		},
	}, {
		name:      "lists: the same question answered differently is a conflict",
		ours:      func(s *State) { s.Questions[0].Answer, s.Questions[0].AnsweredAt = "sqlite", atp(3) },
		theirs:    func(s *State) { s.Questions[0].Answer, s.Questions[0].AnsweredAt = "postgres", atp(3) },
		conflicts: []string{`questions["which db?"]`},
	}, {
		name:   "maps: step results merge per key",
		ours:   func(s *State) { s.StepResults["test"] = json.RawMessage(`{"ok":false}`) },
		theirs: func(s *State) { s.StepResults["build"] = json.RawMessage(`{"ok":true}`) },
		check: func(t *testing.T, m *State) {
			if len(m.StepResults) != 3 || string(m.StepResults["test"]) != `{"ok":false}` || string(m.StepResults["build"]) != `{"ok":true}` {
				t.Errorf("step_results = %s", m.StepResults)
			}
		},
	}, {
		name:      "maps: one key changed differently is a conflict",
		ours:      func(s *State) { s.StepResults["lint"] = json.RawMessage(`{"ok":false}`) },
		theirs:    func(s *State) { s.StepResults["lint"] = json.RawMessage(`{"ok":"maybe"}`) },
		conflicts: []string{`step_results["lint"]`},
	}, {
		name: "maps: artifacts submitted by different nodes both stand",
		ours: func(s *State) {
			s.Submitted = map[string][]Submitted{"spec": {{Path: "hegel-tasks/t/SPEC.md", Blob: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", Size: 1, At: at(3)}}}
		},
		theirs: func(s *State) {
			s.Submitted = map[string][]Submitted{"code": {{Path: "hegel-tasks/t/PLAN.md", Blob: "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", Size: 1, At: at(3)}}}
		},
		check: func(t *testing.T, m *State) {
			if len(m.Submitted) != 2 || m.Submitted["spec"][0].Blob != "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" || m.Submitted["code"][0].Blob != "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" {
				t.Errorf("submitted = %+v", m.Submitted)
			}
		},
	}, {
		name: "maps: one node's artifacts submitted differently is a conflict",
		ours: func(s *State) {
			s.Submitted = map[string][]Submitted{"spec": {{Path: "hegel-tasks/t/SPEC.md", Blob: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", At: at(3)}}}
		},
		theirs: func(s *State) {
			s.Submitted = map[string][]Submitted{"spec": {{Path: "hegel-tasks/t/SPEC.md", Blob: "cccccccccccccccccccccccccccccccccccccccc", At: at(3)}}}
		},
		conflicts: []string{`submitted["spec"]`},
	}, {
		name:   "timestamps: the later one stands",
		ours:   func(s *State) { s.UpdatedAt, s.ResumedAt = at(9), atp(8) },
		theirs: func(s *State) { s.UpdatedAt, s.ResumedAt = at(8), atp(9) },
		check: func(t *testing.T, m *State) {
			if !m.UpdatedAt.Equal(at(9)) || !m.ResumedAt.Equal(at(9)) {
				t.Errorf("updated_at %s, resumed_at %s", m.UpdatedAt, m.ResumedAt)
			}
		},
	}, {
		name: "counters: both sides' increments add up",
		ours: func(s *State) {
			s.Retries["code"], s.Attempt = 1, 2
			s.NodeAttempts = map[string]int{"code": 2}
		},
		theirs: func(s *State) {
			s.Retries["code"], s.Retries["spec"], s.Attempt = 1, 2, 2
			s.NodeAttempts = map[string]int{"code": 2}
		},
		check: func(t *testing.T, m *State) {
			if m.Retries["code"] != 2 || m.Retries["spec"] != 2 || m.Attempt != 3 || m.NodeAttempts["code"] != 3 {
				t.Errorf("retries %v, attempt %d, node_attempts %v", m.Retries, m.Attempt, m.NodeAttempts)
			}
		},
	}, {
		name:   "counters: the attempt number follows the node's mover",
		ours:   func(s *State) { s.Attempt, s.Retries["code"] = 2, 1 },
		theirs: func(s *State) { s.CurrentNode, s.History, s.Attempt = "review", append(s.History, "review"), 1 },
		check: func(t *testing.T, m *State) {
			if m.CurrentNode != "review" || m.Attempt != 1 || m.Retries["code"] != 1 {
				t.Errorf("merged = %+v", m)
			}
		},
	}, {
		name: "node: a finish here against a move there, resolved to theirs, is open again",
		ours: func(s *State) {
			s.CurrentNode, s.History, s.Status, s.EndedAt = "done", append(s.History, "done"), StatusCompleted, atp(5)
		},
		theirs:    func(s *State) { s.CurrentNode, s.History = "review", append(s.History, "review") },
		prefer:    SideTheirs,
		conflicts: []string{"current_node", "ended_at", "status"},
		check: func(t *testing.T, m *State) {
			if m.CurrentNode != "review" || m.Status != StatusActive || m.EndedAt != nil {
				t.Errorf("merged = %+v", m)
			}
		},
	}, {
		name:      "status: finished on one side, paused on the other is a conflict",
		ours:      func(s *State) { s.Status, s.PausedAt = StatusPaused, atp(1) },
		theirs:    func(s *State) { s.Status, s.EndedAt = StatusAborted, atp(1) },
		conflicts: []string{"status"},
	}, {
		name: "a merged state that breaks the state rules is a conflict",
		ours: func(s *State) { s.CompletedNodes = []string{"code"} },
		theirs: func(s *State) {
			s.FailedNodes = []string{"code"}
		},
		conflicts: []string{"state"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base, ours, theirs := mergeBase(), mergeBase(), mergeBase()
			c.ours(ours)
			c.theirs(theirs)
			before := ours.Clone()
			res, err := MergeStates(base, ours, theirs, c.prefer)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range res.Conflicts {
				got = append(got, f.Field)
				if f.Ours == f.Theirs && f.Field != "state" {
					t.Errorf("conflict %s shows the same value on both sides: %s", f.Field, f.Ours)
				}
			}
			if !slices.Equal(got, c.conflicts) {
				t.Fatalf("conflicts = %v, want %v", got, c.conflicts)
			}
			if !reflect.DeepEqual(ours, before) {
				t.Error("MergeStates changed its input")
			}
			if len(c.conflicts) > 0 && c.prefer == SideNone {
				if res.State != nil {
					t.Error("a conflicted merge returned a state")
				}
				return
			}
			if res.State == nil {
				t.Fatal("no merged state")
			}
			if err := ValidateState(res.State, nil); err != nil {
				t.Errorf("merged state is invalid: %v", err)
			}
			if c.fromTheirs != nil && !slices.Equal(res.FromTheirs, c.fromTheirs) {
				t.Errorf("from theirs = %v, want %v", res.FromTheirs, c.fromTheirs)
			}
			if c.check != nil {
				c.check(t, res.State)
			}
		})
	}
}

// The merge is symmetric where no side is preferred: swapping the sides
// gives the same state.
func TestMergeStatesSymmetric(t *testing.T) {
	base, ours, theirs := mergeBase(), mergeBase(), mergeBase()
	ours.Status, ours.PausedAt, ours.UpdatedAt = StatusPaused, atp(1), at(1)
	theirs.Attempt, theirs.Retries["code"], theirs.LastFailure, theirs.UpdatedAt = 2, 1, "x", at(2)
	theirs.Approvals = append(theirs.Approvals, Approval{Node: "code", By: "bob", At: at(2)})
	a, err := MergeStates(base, ours, theirs, SideNone)
	if err != nil {
		t.Fatal(err)
	}
	b, err := MergeStates(base, theirs, ours, SideNone)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.State, b.State) {
		t.Errorf("ours-theirs %+v\ntheirs-ours %+v", a.State, b.State)
	}
	if !slices.Equal(a.FromOurs, b.FromTheirs) || !slices.Equal(a.FromTheirs, b.FromOurs) {
		t.Errorf("fields: %v/%v vs %v/%v", a.FromOurs, a.FromTheirs, b.FromOurs, b.FromTheirs)
	}
}

// Without a common version, every field both sides hold differently is a
// conflict; equal ones merge.
func TestMergeStatesNoBase(t *testing.T) {
	ours, theirs := mergeBase(), mergeBase()
	theirs.Description = "other"
	res, err := MergeStates(nil, ours, theirs, SideNone)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Conflicts) != 1 || res.Conflicts[0].Field != "description" {
		t.Errorf("conflicts = %+v", res.Conflicts)
	}
}

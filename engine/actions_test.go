package engine

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
)

// fakeActions keeps action snapshots as maps of path to content; the
// working tree is a map the test edits. An undo cuts the chain back to
// its target and appends its safety snapshot; a redo puts the chain back
// as it was before that undo, as rollback's chains do.
type fakeActions struct {
	wt      map[string]string
	chain   []*ActionSnapshot
	before  map[string][]*ActionSnapshot // an undo's id: the chain before it
	n       int
	foreign bool // snapshots are not Local
}

func (f *fakeActions) snap(phase string) *ActionSnapshot {
	f.n++
	return &ActionSnapshot{ID: fmt.Sprintf("s%02d", f.n), Phase: phase, Local: !f.foreign, Handle: maps.Clone(f.wt)}
}

func (f *fakeActions) ActionSnapshots(string) ([]*ActionSnapshot, error) {
	return slices.Clone(f.chain), nil
}

func (f *fakeActions) TakeActionSnapshot(_ string, s ActionSnapshot) error {
	n := f.snap(s.Phase)
	n.Session, n.Tool, n.Input, n.Action = s.Session, s.Tool, s.Input, s.Action
	f.chain = append(f.chain, n)
	return nil
}

func (f *fakeActions) NewestActionSnapshot(string) (*ActionSnapshot, error) {
	if len(f.chain) == 0 {
		return nil, nil
	}
	return f.chain[len(f.chain)-1], nil
}

func (f *fakeActions) TakeBackUndo() (bool, error) { return false, nil }

func (f *fakeActions) CheckRestore(string, *ActionSnapshot, []string) error { return nil }

func (f *fakeActions) CurrentSnapshot() (*ActionSnapshot, error) { return f.snap("now"), nil }

func (f *fakeActions) ChangedPaths(a, b *ActionSnapshot) ([]string, error) {
	ma, mb := a.Handle.(map[string]string), b.Handle.(map[string]string)
	var out []string
	for p, v := range ma {
		if w, ok := mb[p]; !ok || w != v {
			out = append(out, p)
		}
	}
	for p := range mb {
		if _, ok := ma[p]; !ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out, nil
}

func (f *fakeActions) RestorePaths(_ string, target *ActionSnapshot, paths []string, safety ActionSnapshot) error {
	s := f.snap(safety.Phase)
	s.Action, s.Paths = safety.Action, safety.Paths
	from := target.Handle.(map[string]string)
	for _, p := range paths {
		if v, ok := from[p]; ok {
			f.wt[p] = v
		} else {
			delete(f.wt, p)
		}
	}
	if f.before == nil {
		f.before = map[string][]*ActionSnapshot{}
	}
	if target.Phase == ActionUndo {
		f.chain = append(slices.Clone(f.before[target.ID]), s)
		return nil
	}
	f.before[s.ID] = slices.Clone(f.chain)
	for i, c := range f.chain {
		if c.ID == target.ID {
			f.chain = append(f.chain[:i+1:i+1], s)
		}
	}
	return nil
}

// act records one tool call that runs change.
func (f *fakeActions) act(t *testing.T, e *Engine, tool string, change func(wt map[string]string)) {
	t.Helper()
	if err := e.RecordAction("t", ActionSnapshot{Phase: ActionBefore, Session: "s", Tool: tool}); err != nil {
		t.Fatal(err)
	}
	change(f.wt)
	if err := e.RecordAction("t", ActionSnapshot{Phase: ActionAfter, Session: "s", Tool: tool}); err != nil {
		t.Fatal(err)
	}
}

func newActionsEnv(t *testing.T) (*testEnv, *fakeActions) {
	te := newTestEngine(t, nil)
	if _, err := te.Start("minimal", "", "t"); err != nil {
		t.Fatal(err)
	}
	f := &fakeActions{wt: map[string]string{"a": "1", "b": "1", "c": "1"}}
	te.Actions = f
	return te, f
}

func undo(t *testing.T, e *Engine, o UndoOptions) *UndoPlan {
	t.Helper()
	p, err := e.PlanUndo("", o)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Undo(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestUndoRestoresOnlyWhatTheActionsChanged(t *testing.T) {
	te, f := newActionsEnv(t)
	f.act(t, te.Engine, "Edit", func(wt map[string]string) { wt["a"] = "2" })
	f.act(t, te.Engine, "Bash", func(wt map[string]string) { delete(wt, "b") })
	f.wt["user"] = "mine" // between actions, by someone else
	f.act(t, te.Engine, "Bash", func(wt map[string]string) { wt["gen/x"] = "x"; wt["c"] = "3" })

	_, acts, err := te.ListActions("")
	if err != nil || len(acts) != 3 || !slices.Equal(acts[2].Changed, []string{"c", "gen/x"}) {
		t.Fatalf("ListActions = %v, %v", acts, err)
	}
	p := undo(t, te.Engine, UndoOptions{N: 2})
	if !slices.Equal(p.Changes, []string{"b", "c", "gen/x"}) {
		t.Errorf("Changes = %v", p.Changes)
	}
	want := map[string]string{"a": "2", "b": "1", "c": "1", "user": "mine"}
	if !maps.Equal(f.wt, want) {
		t.Errorf("after undo 2: %v, want %v", f.wt, want)
	}
	if _, acts, _ := te.ListActions(""); len(acts) != 1 {
		t.Errorf("%d actions listed after undo 2, want 1", len(acts))
	}
	undo(t, te.Engine, UndoOptions{Redo: true})
	want = map[string]string{"a": "2", "c": "3", "gen/x": "x", "user": "mine"}
	if !maps.Equal(f.wt, want) {
		t.Errorf("after redo: %v, want %v", f.wt, want)
	}
	if _, acts, _ := te.ListActions(""); len(acts) != 3 {
		t.Errorf("%d actions listed after redo, want 3", len(acts))
	}
}

func TestUndoRefusesPathsChangedLater(t *testing.T) {
	te, f := newActionsEnv(t)
	f.act(t, te.Engine, "Edit", func(wt map[string]string) { wt["a"] = "2" })
	f.act(t, te.Engine, "Edit", func(wt map[string]string) { wt["b"] = "2" })
	f.wt["a"] = "user" // after both actions
	p, err := te.PlanUndo("", UndoOptions{N: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Later, []string{"a"}) || !errors.Is(p.Refusal(), ErrChangedLater) {
		t.Fatalf("Later = %v, refusal %v", p.Later, p.Refusal())
	}
	if err := te.Undo(p); !errors.Is(err, ErrChangedLater) {
		t.Fatalf("Undo = %v", err)
	}
	if f.wt["a"] != "user" || f.wt["b"] != "2" {
		t.Fatalf("a refused undo changed files: %v", f.wt)
	}
	// Undoing only the newest (b) is not refused: a was not its.
	p = undo(t, te.Engine, UndoOptions{N: 1})
	if len(p.Later) != 0 || f.wt["b"] != "1" || f.wt["a"] != "user" {
		t.Fatalf("undo 1: later %v, files %v", p.Later, f.wt)
	}
	// --force restores it anyway.
	undo(t, te.Engine, UndoOptions{N: 1, Force: true})
	if f.wt["a"] != "1" {
		t.Fatalf("forced undo: %v", f.wt)
	}
}

func TestUndoRefusesAChangeBetweenActions(t *testing.T) {
	te, f := newActionsEnv(t)
	f.act(t, te.Engine, "Edit", func(wt map[string]string) { wt["a"] = "2" })
	f.wt["a"] = "user" // between the actions, by someone else
	f.act(t, te.Engine, "Edit", func(wt map[string]string) { wt["b"] = "2" })
	p, err := te.PlanUndo("", UndoOptions{N: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Later, []string{"a"}) {
		t.Fatalf("Later = %v, want [a]", p.Later)
	}
}

func TestUndoRefusals(t *testing.T) {
	te, f := newActionsEnv(t)
	if _, err := te.PlanUndo("", UndoOptions{N: 1}); !errors.Is(err, ErrNoActions) {
		t.Errorf("no actions: %v", err)
	}
	if _, err := te.PlanUndo("", UndoOptions{Redo: true}); !errors.Is(err, ErrNoActions) {
		t.Errorf("no undo: %v", err)
	}
	f.act(t, te.Engine, "Edit", func(wt map[string]string) { wt["a"] = "2" })
	if _, err := te.PlanUndo("", UndoOptions{N: 2}); err == nil {
		t.Error("undo 2 of 1 action was planned")
	}
	// A PostToolUse without its PreToolUse closes nothing.
	n := len(f.chain)
	if err := te.RecordAction("t", ActionSnapshot{Phase: ActionAfter, Session: "other"}); err != nil || len(f.chain) != n {
		t.Errorf("an unmatched after was stored (%v)", err)
	}
	f.foreign = true
	f.act(t, te.Engine, "Bash", func(wt map[string]string) { wt["b"] = "2" })
	if _, err := te.PlanUndo("", UndoOptions{N: 1}); err == nil {
		t.Error("an undo to a snapshot this clone did not take was planned")
	}
	te.Actions = nil
	if _, err := te.PlanUndo("", UndoOptions{N: 1}); !errors.Is(err, ErrNoWorktree) {
		t.Errorf("no store: %v", err)
	}
}

// Every snapshot an undo or redo reads must be this clone's, not only
// the one it restores from: the others decide which paths it writes and
// which it refuses as changed later.
func TestUndoRefusesAForeignSnapshotItReads(t *testing.T) {
	te, f := newActionsEnv(t)
	f.act(t, te.Engine, "Edit", func(wt map[string]string) { wt["a"] = "2" })
	// The action's "after" is foreign; its "before", the target, is not.
	f.chain[len(f.chain)-1].Local = false
	if _, err := te.PlanUndo("", UndoOptions{N: 1}); err == nil {
		t.Error("an undo reading a foreign after snapshot was planned")
	}
	f.chain[len(f.chain)-1].Local = true
	undo(t, te.Engine, UndoOptions{N: 1})
	// A redo reads the undo's target too, to find what changed since.
	target := f.chain[len(f.chain)-2]
	target.Local = false
	if _, err := te.PlanUndo("", UndoOptions{Redo: true}); err == nil {
		t.Error("a redo reading a foreign snapshot was planned")
	}
	target.Local = true
	if _, err := te.PlanUndo("", UndoOptions{Redo: true}); err != nil {
		t.Errorf("redo: %v", err)
	}
}

// A call with no PostToolUse is closed when its session's turn ends: an
// edit after that is not undone with it. Another session's end, or a
// call already closed, adds nothing to the chain.
func TestCloseOpenAction(t *testing.T) {
	te, f := newActionsEnv(t)
	if err := te.CloseOpenAction("t", "s"); err != nil || len(f.chain) != 0 {
		t.Fatalf("empty chain: %v, %d snapshots", err, len(f.chain))
	}
	if err := te.RecordAction("t", ActionSnapshot{Phase: ActionBefore, Session: "s", Tool: "Bash", Input: "rm a"}); err != nil {
		t.Fatal(err)
	}
	if err := te.CloseOpenAction("t", "other"); err != nil || len(f.chain) != 1 {
		t.Fatalf("another session closed the call: %v, %d snapshots", err, len(f.chain))
	}
	if err := te.CloseOpenAction("t", "s"); err != nil || len(f.chain) != 2 {
		t.Fatalf("not closed: %v, %d snapshots", err, len(f.chain))
	}
	if after := f.chain[1]; after.Phase != ActionAfter || after.Action != f.chain[0].ID || after.Tool != "Bash" || after.Input != "rm a" {
		t.Fatalf("closed by %+v", after)
	}
	if err := te.CloseOpenAction("t", "s"); err != nil || len(f.chain) != 2 {
		t.Fatalf("closed twice: %v, %d snapshots", err, len(f.chain))
	}
	f.wt["b"] = "the person's"
	p := undo(t, te.Engine, UndoOptions{N: 1})
	if len(p.Touched) != 0 || f.wt["b"] != "the person's" {
		t.Fatalf("the undo touched %v; b = %q", p.Touched, f.wt["b"])
	}
	te.Actions = nil
	if err := te.CloseOpenAction("t", "s"); !errors.Is(err, ErrNoWorktree) {
		t.Errorf("no store: %v", err)
	}
}

// An undo told which action was the newest when the list was shown is
// refused once another one has run (or the listed one was undone), and
// changes nothing: it never goes back over an action nobody saw.
func TestUndoRefusesWhenNewestMoved(t *testing.T) {
	te, f := newActionsEnv(t)
	f.act(t, te.Engine, "Edit", func(wt map[string]string) { wt["a"] = "2" })
	_, acts, err := te.ListActions("")
	if err != nil || len(acts) != 1 {
		t.Fatalf("ListActions = %v, %v", acts, err)
	}
	listed := acts[0].Before.ID
	f.act(t, te.Engine, "Bash", func(wt map[string]string) { wt["b"] = "2" })
	if _, err := te.PlanUndo("", UndoOptions{N: 1, Newest: listed}); !errors.Is(err, ErrActionsChanged) {
		t.Fatalf("undo of a list whose newest moved: %v", err)
	}
	if f.wt["a"] != "2" || f.wt["b"] != "2" {
		t.Fatalf("a refused undo changed files: %v", f.wt)
	}
	_, acts, _ = te.ListActions("")
	undo(t, te.Engine, UndoOptions{N: 1, Newest: acts[1].Before.ID})
	if f.wt["a"] != "2" || f.wt["b"] != "1" {
		t.Fatalf("after the undo of the listed newest: %v", f.wt)
	}
	// The listed action was undone since: refused too.
	if _, err := te.PlanUndo("", UndoOptions{N: 1, Newest: acts[1].Before.ID}); !errors.Is(err, ErrActionsChanged) {
		t.Fatalf("undo of an action undone since: %v", err)
	}
}

// A redo told which undo the caller showed is refused once another undo
// is the newest (or a new action made the undo final).
func TestRedoRefusesWhenNewestUndoMoved(t *testing.T) {
	te, f := newActionsEnv(t)
	f.act(t, te.Engine, "Edit", func(wt map[string]string) { wt["a"] = "2" })
	f.act(t, te.Engine, "Edit", func(wt map[string]string) { wt["b"] = "2" })
	undo(t, te.Engine, UndoOptions{N: 1})
	shown, err := te.NewestUndo("")
	if err != nil || shown == nil || shown.Phase != ActionUndo {
		t.Fatalf("NewestUndo = %v, %v", shown, err)
	}
	undo(t, te.Engine, UndoOptions{N: 1}) // another undo: of a
	if _, err := te.PlanUndo("", UndoOptions{Redo: true, Newest: shown.ID}); !errors.Is(err, ErrActionsChanged) {
		t.Fatalf("redo of an undo that is no longer the newest: %v", err)
	}
	now, _ := te.NewestUndo("")
	undo(t, te.Engine, UndoOptions{Redo: true, Newest: now.ID})
	if f.wt["a"] != "2" || f.wt["b"] != "1" {
		t.Fatalf("after the redo of the newest undo: %v", f.wt)
	}
	if s, err := te.NewestUndo(""); s != nil || err != nil {
		t.Errorf("NewestUndo after a redo = %v, %v", s, err)
	}
}

package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// NextOptions are the arguments of `git hegel next`.
type NextOptions struct {
	Task  string // --task: the task to move ("": the active one)
	Claim string // default "<node>_complete"
	// Force bypasses the guard rules of the types it names (--force
	// TYPE). Force.All (--force) bypasses all of them, and also moves on
	// although the node's artifact is missing or empty, without running
	// the node's checks, and on a task another worktree owns; each
	// override is recorded in the task.
	Force Force
	// Ctx stops the node's checks when it is cancelled (nil: never);
	// CheckOutput, if set, gets each check's command line and output.
	Ctx         context.Context
	CheckOutput io.Writer
}

// ErrCancelled means the person declined a confirmation; nothing changed.
var ErrCancelled = errors.New("Cancelled")

// ArtifactError refuses to leave a node whose artifact is missing or
// empty.
type ArtifactError struct {
	Node, Path string
	Empty      bool
	// Unreadable says why a file that is there does not count (a
	// symbolic link, a directory).
	Unreadable string
}

func (e *ArtifactError) Error() string {
	return fmt.Sprintf("Cannot leave '%s': its artifact %s (write it, or run 'git hegel next --force' to move on without it)", e.Node, e.state())
}

// state is "SPEC.md is missing" or "SPEC.md is empty".
func (e *ArtifactError) state() string {
	switch {
	case e.Unreadable != "":
		return e.Path + " does not count: " + e.Unreadable
	case e.Empty:
		return e.Path + " is empty"
	}
	return e.Path + " is missing"
}

// Next follows the first transition of the current node whose `when`
// equals claim (default: "<node>_complete").
func (e *Engine) Next(claim string) (*View, error) { return e.NextWith(NextOptions{Claim: claim}) }

// NextWith is Next with options. The node's artifact must exist; a node
// with an approval gate stops instead of moving (the task awaits
// approval); a transition marked confirm asks first; nodes the task's
// type skips are passed over; a transition back to a node already
// visited is recorded as a rollback event.
func (e *Engine) NextWith(o NextOptions) (*View, error) {
	e.foldEvents()
	cur, err := e.Current(o.Task)
	if err != nil {
		return nil, err
	}
	wf, err := definition(cur)
	if err != nil {
		return nil, err
	}
	if err := checkLoaded(cur, wf); err != nil {
		return nil, err
	}
	from, claim, to, err := e.nextTarget(cur.State, wf, o)
	if err != nil {
		return nil, err
	}
	if missing := e.checkArtifact(cur.State, wf, from); missing != nil && !o.Force.All {
		return nil, missing
	}
	// Nothing runs for a task this worktree may not change, nor for a
	// definition this machine does not trust (--force runs nothing).
	if _, err := e.checkOwner(cur.State, updateOpts{call: TaskOptions{Task: o.Task, Force: o.Force.All}}); err != nil {
		return nil, err
	}
	var checkLog []byte
	if !o.Force.All {
		if err := e.MayRunNode(cur.State.Task, wf, from); err != nil {
			return nil, err
		}
		ctx := o.Ctx
		if ctx == nil {
			ctx = context.Background()
		}
		if checkLog, err = e.checkNode(ctx, cur, wf, from, "next", o.CheckOutput); err != nil {
			return nil, err
		}
	}
	confirmed := false
	if tr := transitionOf(wf, from, claim); tr.Confirm && wf.Nodes[from].Gate != workflow.GateApproval {
		if e.Confirm == nil {
			return nil, fmt.Errorf("Moving from '%s' to '%s' needs confirmation, and there is no one to ask; nothing changed", from, to)
		}
		ok, err := e.Confirm(fmt.Sprintf("Proceed from %s to %s? (y/N) ", from, to))
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, ErrCancelled
		}
		confirmed = true
	}
	var skipped []SkippedNode
	var gate *GateView
	var ended string
	// The node's artifacts go into the task's tree in the same commit
	// that ends the node (submit).
	put := map[string][]byte{}
	// Another process may have moved the task since it was read: the
	// change is worked out again on the state as stored, like any update.
	// Only a confirmation cannot be carried over to another move.
	st, wf, err := e.updateTask(cur, updateOpts{call: TaskOptions{Task: o.Task, Force: o.Force.All}, wf: wf, put: put}, func(st *State, wf *workflow.Definition) (string, error) {
		f, c, t, err := e.nextTarget(st, wf, o)
		if err != nil {
			return "", err
		}
		gated := wf.Nodes[f].Gate == workflow.GateApproval
		if transitionOf(wf, f, c).Confirm && !gated && (!confirmed || f != from || t != to) {
			return "", fmt.Errorf("Task %s moved to '%s' meanwhile; nothing changed", st.Task, st.CurrentNode)
		}
		missing := e.checkArtifact(st, wf, f)
		if missing != nil && !o.Force.All {
			return "", missing
		}
		skipped, gate = nil, nil
		if missing != nil {
			st.Overrides = append(st.Overrides, Override{Node: f, What: "artifact", Reason: missing.state(), At: e.now()})
		}
		if o.Force.All && len(wf.Nodes[f].Checks) > 0 {
			st.Overrides = append(st.Overrides, Override{Node: f, What: "check", Reason: "moved on without running its checks", At: e.now()})
		}
		// The node's guard rules are about the work done here: checked
		// when next is asked, gate or not (guard.go).
		forced, err := e.guard(st, wf, t, c, o.Force)
		if err != nil {
			return "", err
		}
		// A move back counts towards the task's cap, gate or not: the
		// move is asked for here.
		if err := e.capBack(st, wf, t, o.Force.All); err != nil {
			return "", err
		}
		e.submit(st, wf, f, put)
		ended = f
		if checkLog != nil && f == from {
			put[LogPath(f, cur.State.Attempt)] = checkLog
		}
		if gated {
			st.Status = StatusAwaitingApproval
			st.PendingClaim = c
			// The node's work passed (its checks too): an earlier failed
			// attempt is history now (the task's log keeps it).
			st.LastFailure = ""
			gate = gateView(wf, st)
			return fmt.Sprintf("next: %s awaits approval to go to %s (%s)%s", f, t, c, forced), nil
		}
		var msg string
		msg, skipped = e.move(st, wf, c, t, "")
		return "next: " + msg + forced, nil
	})
	if err != nil {
		return nil, err
	}
	// What the node submitted is this worktree's files: an approval here
	// covers content this clone wrote.
	e.markSubmitted(st, ended)
	if err := e.touchSession(func(s *Session) {
		if gate == nil {
			countMove(s, st)
		}
	}); err != nil {
		return nil, err
	}
	v := e.view(st, wf)
	v.Skipped, v.Gate = skipped, e.gateForReader(gate, wf, st)
	if gate == nil {
		e.warnRequires(st, wf)
		e.checkpoint(st)
	}
	return v, nil
}

// nextTarget works out where next would go from st: it checks the status
// and finds the transition.
func (e *Engine) nextTarget(st *State, wf *workflow.Definition, o NextOptions) (from, claim, to string, err error) {
	if wf.IsTerminal(st.CurrentNode) {
		return "", "", "", finishedError(st)
	}
	if err := e.allowed(st, "next"); err != nil {
		return "", "", "", err
	}
	claim = o.Claim
	if claim == "" {
		claim = st.CurrentNode + "_complete"
	}
	to, ok := wf.Transition(st.CurrentNode, claim)
	if !ok {
		return "", "", "", &ErrNoMatch{Node: st.CurrentNode, Claim: claim, Valid: claims(wf, st.CurrentNode)}
	}
	return st.CurrentNode, claim, to, nil
}

func transitionOf(wf *workflow.Definition, node, claim string) workflow.Transition {
	for _, t := range wf.Nodes[node].Transitions {
		if t.When == claim {
			return t
		}
	}
	return workflow.Transition{}
}

// move takes st from its node along claim to to: a move back to a node
// first visited before this one is a rollback event (a review sending the
// work back to coding; going forward again is not),
// and nodes the task's type skips are passed over. It returns the history message ("a -> b
// (claim)") and the nodes skipped.
func (e *Engine) move(st *State, wf *workflow.Definition, claim, to, reason string) (string, []SkippedNode) {
	from := st.CurrentNode
	if to != from && !wf.IsTerminal(to) && movesBack(st.History, from, to) {
		if reason == "" {
			reason = claim
		}
		st.RollbackHistory = appendEvent(st.RollbackHistory, RollbackEvent{Timestamp: e.now().UTC(), From: from, To: to, Reason: reason})
	}
	skipped := e.arrive(st, wf, to, "")
	msg := fmt.Sprintf("%s -> %s (%s)", from, st.CurrentNode, claim)
	if len(skipped) > 0 {
		msg += "; skipped " + skippedNames(skipped)
	}
	return msg, skipped
}

// movesBack reports whether a move from from to to goes back: to was
// first visited before from was. dev -> qa -> dev -> qa holds one move
// back (qa -> dev); the second dev -> qa goes forward again, though qa
// was visited before.
func movesBack(history []string, from, to string) bool {
	first := func(n string) int { return slices.Index(history, n) }
	t, f := first(to), first(from)
	return t >= 0 && f >= 0 && t < f
}

// arrive enters node, or, when the task's type skips it, the first node
// after it (along each skipped node's first transition) that it does not
// skip. reason, if set, replaces the recorded reason for the skips.
func (e *Engine) arrive(st *State, wf *workflow.Definition, node, reason string) []SkippedNode {
	var skipped []SkippedNode
	for i := 0; i <= len(wf.Order) && !wf.IsTerminal(node) && wf.SkippedFor(node, st.TaskType); i++ {
		why := reason
		if why == "" {
			why = "skipped for task type " + st.TaskType
		}
		sk := SkippedNode{Node: node, Reason: why, At: e.now().UTC()}
		skipped = append(skipped, sk)
		st.SkippedNodes = append(st.SkippedNodes, sk)
		node = wf.Nodes[node].Transitions[0].To
	}
	e.enter(st, wf, node)
	return skipped
}

func skippedNames(s []SkippedNode) string {
	names := make([]string, len(s))
	for i, x := range s {
		names[i] = x.Node
	}
	return strings.Join(names, ", ")
}

// appendEvent adds a rollback event, keeping the last MaxRollbackEvents.
func appendEvent(events []RollbackEvent, ev RollbackEvent) []RollbackEvent {
	events = append(events, ev)
	if n := len(events); n > MaxRollbackEvents {
		events = slices.Clone(events[n-MaxRollbackEvents:])
	}
	return events
}

// checkArtifact returns an *ArtifactError for the first of node's
// artifacts (st's fields filled in) that is missing or empty in this
// worktree, nil when all are there (or the engine cannot see files).
func (e *Engine) checkArtifact(st *State, wf *workflow.Definition, node string) *ArtifactError {
	if e.Files == nil {
		return nil
	}
	n, ok := wf.Nodes[node]
	if !ok {
		return nil
	}
	paths, bad := expandPaths(st, n.Artifacts)
	if len(bad) > 0 {
		return &ArtifactError{Node: node, Path: n.Artifacts[0], Unreadable: bad[0].Error()}
	}
	for _, p := range paths {
		size, err := e.Files.Size(p)
		switch {
		case errors.Is(err, ErrNotFound):
			return &ArtifactError{Node: node, Path: p}
		case err != nil:
			return &ArtifactError{Node: node, Path: p, Unreadable: err.Error()}
		case size == 0:
			return &ArtifactError{Node: node, Path: p, Empty: true}
		}
	}
	return nil
}

// warnRequires warns about the files the current node reads that are
// missing. A file only a skipped stage would have written is not
// expected.
func (e *Engine) warnRequires(st *State, wf *workflow.Definition) {
	n, ok := wf.Nodes[st.CurrentNode]
	// The files are those of the worktree that works on the task: a
	// reviewer approving from their clone is not told theirs are missing.
	if !ok || e.Files == nil || st.Status != StatusActive || !e.owns(st) {
		return
	}
	var missing []string
	for _, pat := range n.Requires {
		if by := wf.Producer(pat); by != "" && skippedNode(st, by) {
			continue
		}
		ps, _ := expandPaths(st, []string{pat})
		if len(ps) == 0 {
			continue
		}
		p := ps[0]
		if size, err := e.Files.Size(p); err != nil || size == 0 {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		e.warn(fmt.Sprintf("'%s' reads %s, which %s missing", st.CurrentNode, strings.Join(missing, ", "), plural(len(missing), "is", "are")))
	}
}

func skippedNode(st *State, node string) bool {
	for _, s := range st.SkippedNodes {
		if s.Node == node {
			return true
		}
	}
	return false
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

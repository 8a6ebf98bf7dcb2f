package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// Resume strategies: where a paused or failed task goes on.
const (
	RetryCurrent   = "retry-current"
	RetryPrevious  = "retry-previous"
	SkipCurrent    = "skip-current"
	FromCheckpoint = "from-checkpoint"
)

// Strategies lists the resume strategies with what each does, in the
// order they are offered.
var Strategies = []struct{ Name, Explain string }{
	{RetryCurrent, "try the current node again from attempt 1"},
	{RetryPrevious, "go back to the node before it and redo that first"},
	{SkipCurrent, "skip the current node and move on by its first transition"},
	{FromCheckpoint, "roll files, index and HEAD back to a checkpoint and go on from there"},
}

func joinStrategies(sep string) string {
	names := make([]string, len(Strategies))
	for i, s := range Strategies {
		names[i] = s.Name
	}
	return strings.Join(names, sep)
}

// ValidStrategy reports whether s names a resume strategy.
func ValidStrategy(s string) bool {
	for _, x := range Strategies {
		if x.Name == s {
			return true
		}
	}
	return false
}

// Pause stops the task on purpose; resume (or next) goes on.
func (e *Engine) Pause(o TaskOptions, reason string) (*State, error) {
	st, _, err := e.update(o, func(st *State, wf *workflow.Definition) (string, error) {
		if err := e.allowed(st, "pause"); err != nil {
			return "", err
		}
		now := e.now()
		st.Status, st.PausedAt, st.PauseReason = StatusPaused, &now, strings.TrimSpace(reason)
		msg := "pause: at " + st.CurrentNode
		if st.PauseReason != "" {
			msg += " (" + firstLine(st.PauseReason) + ")"
		}
		return msg, nil
	})
	return st, err
}

// ResumeOptions are the arguments of `git hegel resume`.
type ResumeOptions struct {
	Task     string // --task: the task to resume ("": the active one)
	Force    bool   // --force: resume a task another worktree owns
	Strategy string
	Reason   string
	// Rollback is the rollback from-checkpoint carries out, planned with
	// PlanRollback (RollbackOptions.Resume) and shown to the person first.
	Rollback *RollbackPlan
}

// Resume makes a paused or failed task active again (no other status can
// be resumed), by one of the four strategies.
func (e *Engine) Resume(o ResumeOptions) (*View, error) {
	if !ValidStrategy(o.Strategy) {
		return nil, badNamef("Unknown strategy '%s' (use %s)", o.Strategy, joinStrategies(", "))
	}
	call := TaskOptions{Task: o.Task, Force: o.Force}
	cur, err := e.Current(o.Task)
	if err != nil {
		return nil, err
	}
	if wf, err := definition(cur); err != nil {
		return nil, err
	} else if err := checkLoaded(cur, wf); err != nil {
		return nil, err
	}
	if err := e.allowed(cur.State, "resume"); err != nil {
		return nil, err
	}
	var rolled *RollbackResult
	if o.Strategy == FromCheckpoint {
		if o.Rollback == nil || o.Rollback.Task != cur.State.Task {
			return nil, fmt.Errorf("Cannot resume from a checkpoint without a rollback planned for task %s", cur.State.Task)
		}
		res, err := e.Rollback(o.Rollback)
		if err != nil {
			return nil, err
		}
		rolled = res
	}
	var skipped []SkippedNode
	st, wf, err := e.update(call, func(st *State, wf *workflow.Definition) (string, error) {
		if err := e.allowed(st, "resume"); err != nil {
			return "", err
		}
		now := e.now()
		node := st.CurrentNode
		var msg string
		switch o.Strategy {
		case RetryCurrent:
			// The retry's prompt still says what went wrong last time.
			last := st.LastFailure
			e.reopen(st, wf)
			st.LastFailure = last
			msg = fmt.Sprintf("resume: %s at %s", o.Strategy, node)
		case FromCheckpoint:
			e.reopen(st, wf)
			msg = fmt.Sprintf("resume: %s at %s", o.Strategy, node)
		case RetryPrevious:
			if len(st.History) < 2 {
				return "", fmt.Errorf("No node before '%s' to go back to; use another strategy (%s)", node, joinStrategies(", "))
			}
			if err := e.wentBack(st, wf, node, st.History[len(st.History)-2], "retry-previous", o.Force); err != nil {
				return "", err
			}
			st.History = st.History[:len(st.History)-1]
			st.CurrentNode = st.History[len(st.History)-1]
			e.reopen(st, wf)
			msg = fmt.Sprintf("resume: retry-previous, %s -> %s", node, st.CurrentNode)
		case SkipCurrent:
			why := strings.TrimSpace(o.Reason)
			if why == "" {
				why = "skipped on resume"
			}
			to, err := firstTransition(wf, node)
			if err != nil {
				return "", err
			}
			msg, skipped = e.skip(st, wf, node, to, why)
			msg = "resume: skip-current, " + msg
		}
		st.ResumedAt = &now
		st.PauseReason = ""
		return msg, nil
	})
	if err != nil {
		return nil, err
	}
	if err := e.touchSession(func(*Session) {}); err != nil {
		return nil, err
	}
	if o.Strategy != RetryCurrent && o.Strategy != FromCheckpoint {
		e.afterMove(st, wf)
	}
	v := e.view(st, wf)
	v.Skipped, v.Rollback = skipped, rolled
	return v, nil
}

// skip passes over node, recording why, and arrives at to (or the first
// node after it the task's type does not skip).
func (e *Engine) skip(st *State, wf *workflow.Definition, node, to, why string) (string, []SkippedNode) {
	st.SkippedNodes = append(st.SkippedNodes, SkippedNode{Node: node, Reason: why, At: e.now().UTC()})
	failed := slices.Contains(st.FailedNodes, node)
	more := e.arrive(st, wf, to, "")
	st.CompletedNodes = remove(st.CompletedNodes, node) // skipped, not completed
	if failed {
		st.FailedNodes = appendOnce(st.FailedNodes, node) // and it did fail
	}
	msg := fmt.Sprintf("%s -> %s (skipped: %s)", node, st.CurrentNode, firstLine(why))
	return msg, append([]SkippedNode{{Node: node, Reason: why}}, more...)
}

// Skip passes over the current node when it is conditional or the task's
// type skips it; anything else needs o.Force, which is recorded.
func (e *Engine) Skip(o TaskOptions, reason string) (*View, error) {
	var skipped []SkippedNode
	st, wf, err := e.update(o, func(st *State, wf *workflow.Definition) (string, error) {
		if err := e.allowed(st, "skip"); err != nil {
			return "", err
		}
		node := st.CurrentNode
		n := wf.Nodes[node]
		why := strings.TrimSpace(reason)
		switch {
		case n.Conditional:
			if why == "" {
				why = "conditional stage skipped"
			}
		case wf.SkippedFor(node, st.TaskType):
			if why == "" {
				why = "skipped for task type " + st.TaskType
			}
		case !o.Force:
			typ := st.TaskType
			if typ == "" {
				typ = "(none)"
			}
			return "", fmt.Errorf("Cannot skip '%s': it is not conditional and task type %s does not skip it; nothing changed (--force skips it anyway, recorded in the task)", node, typ)
		default:
			if why == "" {
				why = "skipped with --force"
			}
			st.Overrides = append(st.Overrides, Override{Node: node, What: "skip", Reason: why, At: e.now().UTC()})
		}
		to, err := firstTransition(wf, node)
		if err != nil {
			return "", err
		}
		msg, s := e.skip(st, wf, node, to, why)
		skipped = s
		return "skip: " + msg, nil
	})
	if err != nil {
		return nil, err
	}
	return e.moved(st, wf, skipped)
}

// firstTransition is where a skipped node leads: its first transition.
func firstTransition(wf *workflow.Definition, node string) (string, error) {
	n, ok := wf.Nodes[node]
	if !ok || len(n.Transitions) == 0 {
		return "", fmt.Errorf("'%s' has no transition to skip along; it ends the workflow", node)
	}
	return n.Transitions[0].To, nil
}

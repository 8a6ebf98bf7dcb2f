package web

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/text"
)

// The task page's agent-action timeline and its undo button: the same
// decision and the same safety rules as `git hegel undo -y` (a safety
// snapshot first, only the files the actions changed, a refusal naming
// what something else changed later unless forced), and the undo goes
// back over the actions the page listed or not at all.

type actionRow struct {
	N                    int
	ID, Tool, Input, Age string
	When, Session        string
	Files                []string
	Finished             bool
}

func (s *Server) actions(req *request, task string, now time.Time) ([]actionRow, string) {
	if req.repo.Actions == nil {
		return nil, ""
	}
	acts, err := req.repo.Actions(task)
	if err != nil {
		return nil, err.Error()
	}
	var out []actionRow
	for i := len(acts) - 1; i >= 0; i-- { // newest first
		a := acts[i]
		out = append(out, actionRow{N: len(acts) - i, ID: a.Before.ID, Tool: a.Before.Tool, Input: a.Before.Input,
			Age: engine.RelativeTime(a.Before.CreatedAt, now), When: stamp(a.Before.CreatedAt, now),
			Session: a.Before.Session, Files: a.Changed, Finished: a.After != nil})
	}
	return out, ""
}

// redoable is the id of the undo a redo of task would take back ("":
// none, or it cannot be read; the redo form is then not offered).
func (s *Server) redoable(req *request, task string) string {
	if req.repo.NewestUndo == nil {
		return ""
	}
	u, err := req.repo.NewestUndo(task)
	if err != nil || u == nil {
		return ""
	}
	return u.ID
}

func (s *Server) undo(req *request, _ *engine.Engine, o engine.TaskOptions) (string, error) {
	if req.repo.Undo == nil {
		return "", fmt.Errorf("undo is not available here")
	}
	uo := engine.UndoOptions{N: 1, Redo: req.PostForm.Get("redo") != "", Force: req.PostForm.Get("force") != ""}
	// The form names the newest action its page listed (for a redo, the
	// undo it offered to take back): an action the agent ran since, or
	// another undo, is never taken back unseen.
	uo.Newest = strings.TrimSpace(req.PostForm.Get("newest"))
	if v := strings.TrimSpace(req.PostForm.Get("n")); v != "" && !uo.Redo {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return "", engine.BadName(fmt.Errorf("'%s' is not a number of actions (1 or more)", v))
		}
		uo.N = n
	}
	p, err := req.repo.Undo(o.Task, uo)
	if errors.Is(err, engine.ErrChangedLater) && p != nil && len(p.Later) > 0 {
		return "", laterRefusal(p)
	}
	if err != nil {
		return "", err
	}
	if len(p.Changes) == 0 {
		// Nothing was written and nothing recorded: the actions stay
		// listed, so the page must not say they were undone.
		return fmt.Sprintf("Nothing to change in task %s: the files are already as they were", p.Task), nil
	}
	what := "Undid " + text.Plural(len(p.Actions), "action", "actions")
	if p.Redo {
		what = "Redid the newest undo"
	}
	return fmt.Sprintf("%s of task %s: %s restored", what, p.Task, text.Plural(len(p.Changes), "file", "files")), nil
}

// laterRefusal is the refusal of an undo (or redo) that would overwrite
// files something else changed after the actions, with the page's way to
// go ahead (the command line's is --force).
func laterRefusal(p *engine.UndoPlan) error {
	const shown = 5
	var names []string
	for i, l := range p.Later {
		if i == shown {
			names = append(names, fmt.Sprintf("%d more", len(p.Later)-shown))
			break
		}
		names = append(names, text.QuotePath(l, false))
	}
	what := "undo"
	if p.Redo {
		what = "redo"
	}
	return &pageError{http.StatusConflict, fmt.Errorf("Nothing changed: the %s would overwrite %s, which something else changed after the actions. Tick %q and send it again to restore them anyway (what they hold now is kept in the safety snapshot)",
		what, strings.Join(names, ", "), forceLabel)}
}

// forceLabel is the undo and redo forms' box that restores files changed
// later too.
const forceLabel = "also files changed later by something else"

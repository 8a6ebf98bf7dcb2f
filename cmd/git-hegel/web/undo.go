package web

import (
	"fmt"
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

func (s *Server) undo(req *request, _ *engine.Engine, o engine.TaskOptions) (string, error) {
	if req.repo.Undo == nil {
		return "", fmt.Errorf("undo is not available here")
	}
	uo := engine.UndoOptions{N: 1, Redo: req.PostForm.Get("redo") != "", Force: req.PostForm.Get("force") != ""}
	if !uo.Redo {
		// The form names the newest action its page listed: an action
		// the agent ran since is never undone unseen.
		uo.Newest = strings.TrimSpace(req.PostForm.Get("newest"))
	}
	if v := strings.TrimSpace(req.PostForm.Get("n")); v != "" && !uo.Redo {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return "", engine.BadName(fmt.Errorf("'%s' is not a number of actions (1 or more)", v))
		}
		uo.N = n
	}
	p, err := req.repo.Undo(o.Task, uo)
	if err != nil {
		return "", err
	}
	what := "Undid " + text.Plural(len(p.Actions), "action", "actions")
	if p.Redo {
		what = "Redid the newest undo"
	}
	return fmt.Sprintf("%s of task %s: %s restored", what, p.Task, text.Plural(len(p.Changes), "file", "files")), nil
}

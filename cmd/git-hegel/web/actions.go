package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/git-hegel/git-hegel/engine"
)

// Decisions from the task page: approve, reject, answer. Each is the
// engine operation `git hegel approve|reject|answer --task <task>` runs,
// with the same checks and the same commit, under the user's git
// identity (git config user.name, as the command line records it).

// action wraps a form handler: on success it leaves a message for the
// task page and redirects there (a reload does not send the form again);
// on failure it answers with the error and what to do.
func (s *Server) action(fn func(*request, *engine.Engine, engine.TaskOptions) (string, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		req, err := s.open(r)
		if err != nil {
			s.errorPage(w, r, http.StatusInternalServerError, err, nil)
			return
		}
		name := r.PathValue("name")
		if err := engine.CheckTaskName(name); err != nil {
			s.errorPage(w, r, http.StatusBadRequest, err, nil)
			return
		}
		msg, err := fn(req, req.repo.Engine, engine.TaskOptions{Task: name})
		if err != nil {
			s.logf("%s %s: %v", r.Method, r.URL.Path, err)
			s.errorPage(w, r, statusOf(err), err, req.warnings)
			return
		}
		for _, warn := range req.warnings {
			msg += "\nwarning: " + warn
		}
		http.SetCookie(w, &http.Cookie{Name: s.cookieName("flash"), Value: flashValue(msg), Path: "/", MaxAge: 60, HttpOnly: true, SameSite: http.SameSiteStrictMode})
		http.Redirect(w, r, "/task/"+url.PathEscape(name), http.StatusSeeOther)
	}
}

// maxFlash bounds the flash cookie's value: a browser drops a cookie
// over 4096 bytes (name and value) whole, and the message with it, and a
// message quotes text from elsewhere (a question, artifact paths) that
// escaping can make three to nine times longer.
const maxFlash = 3000

// flashValue is msg escaped for the flash cookie, cut at a character with
// "…" when it would pass maxFlash.
func flashValue(msg string) string {
	if v := url.QueryEscape(msg); len(v) <= maxFlash {
		return v
	}
	ellipsis := url.QueryEscape("…")
	var b strings.Builder
	for _, r := range msg {
		e := url.QueryEscape(string(r))
		if b.Len()+len(e)+len(ellipsis) > maxFlash {
			break
		}
		b.WriteString(e)
	}
	return b.String() + ellipsis
}

// approve approves what the page showed: the form carries the gate's
// node and the blob ids of its artifacts as the page listed them, and
// the engine refuses the approval when the task holds others now (a sync
// brought a new version while the page was open). A form without them
// falls back to this clone's record of what it has shown.
func (s *Server) approve(req *request, e *engine.Engine, o engine.TaskOptions) (string, error) {
	ao := engine.ApproveOptions{TaskOptions: o, Comment: strings.TrimSpace(req.PostForm.Get("comment"))}
	if req.PostForm.Has("gate") {
		ao.Shown = &engine.ShownGate{Node: req.PostForm.Get("gate"), Blobs: req.PostForm["blob"]}
	}
	v, err := e.Approve(ao)
	if err != nil {
		return "", err
	}
	a := v.State.Approvals[len(v.State.Approvals)-1]
	msg := fmt.Sprintf("Approved %s by %s; task %s is now at %s (%s)", a.Node, a.By, v.Task, v.Node, v.State.Status)
	for _, art := range a.Artifacts {
		msg += fmt.Sprintf("\napproved %s (blob %s)", art.Path, engine.ShortID(art.Blob))
	}
	return msg, nil
}

func (s *Server) reject(req *request, e *engine.Engine, o engine.TaskOptions) (string, error) {
	reason := strings.TrimSpace(req.PostForm.Get("reason"))
	if reason == "" {
		return "", engine.BadName(fmt.Errorf("A rejection needs a reason"))
	}
	// The form names the gate its page showed: at another gate by now,
	// the rejection is refused.
	// It names when the task reached it too: sent back and at the same
	// gate again, the rejection (written about the work before) is refused.
	var since time.Time
	if req.PostForm.Has("since") {
		t, err := time.Parse(time.RFC3339Nano, req.PostForm.Get("since"))
		if err != nil {
			return "", engine.BadName(fmt.Errorf("The form does not say which visit of the gate it rejects; reload the page"))
		}
		since = t
	}
	v, err := e.RejectShown(o, reason, strings.TrimSpace(req.PostForm.Get("to")), req.PostForm.Get("gate"), since)
	if err != nil {
		return "", err
	}
	ev := v.State.RollbackHistory[len(v.State.RollbackHistory)-1]
	return fmt.Sprintf("Rejected at %s; task %s was sent back to %s", ev.From, v.Task, ev.To), nil
}

func (s *Server) answer(req *request, e *engine.Engine, o engine.TaskOptions) (string, error) {
	// The form names the question its page showed: answered elsewhere
	// and another asked since, the answer is refused.
	var shown *engine.ShownQuestion
	if req.PostForm.Has("question") {
		i, err := strconv.Atoi(req.PostForm.Get("question"))
		at, terr := time.Parse(time.RFC3339Nano, req.PostForm.Get("asked"))
		if err != nil || terr != nil || i < 0 {
			return "", engine.BadName(fmt.Errorf("The form does not say which question it answers; reload the page"))
		}
		shown = &engine.ShownQuestion{Index: i, AskedAt: at}
	}
	q, v, err := e.AnswerShown(o, req.PostForm.Get("answer"), shown)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Answered %q; task %s is %s at %s", firstLine(q.Question), v.Task, v.State.Status, v.Node), nil
}

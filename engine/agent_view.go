package engine

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// What an agent reads through git-hegel's MCP server (the state
// resource, the status, show, tasks, log and result tools) is held to
// the rule its prompt is held to (fetched_text.go): a task's text that
// arrived with a fetch and that this machine does not trust reaches the
// agent as the one-line notice, not as written. JSON fields are data to
// a program, but an agent reads them as it reads a prompt.

// ForAgent returns st as an agent may read it: its description, last
// failure and step results, when a fetch brought them and they are not
// trusted here, replaced by the notice that stands in the prompt (each
// step result by the notice as a JSON string). st is not changed.
func (e *Engine) ForAgent(st *State) *State {
	texts := e.untrustedState(st)
	notes := e.fetchedNotes(st)
	dirOK := e.agentTaskDir(st) == TaskDir(st)
	if len(texts) == 0 && len(notes) == 0 && labelsOK(st) && dirOK {
		return st
	}
	c := *st
	withholdNotes(&c, notes)
	withholdLabels(&c)
	if !dirOK {
		c.ArtifactDir = stateLabelNotice // the folder, as {{task.dir}} gives it
	}
	for _, t := range texts {
		notice := withheld(st.Task, t)
		switch t.Field {
		case "description":
			c.Description = notice
		case "last_failure":
			c.LastFailure = notice
		case "step_results":
			q, err := json.Marshal(notice)
			if err != nil {
				continue
			}
			c.StepResults = make(map[string]json.RawMessage, len(st.StepResults))
			for k := range st.StepResults {
				c.StepResults[k] = q
			}
		}
	}
	return &c
}

// agentNotes are the state fields that hold free text besides the
// description, last failure and step results: a reason, a comment, a
// question and its answer, an error's message. No prompt carries them,
// so there is nothing to trust them for, but an agent reads them through
// the MCP server as it reads its prompt, and anyone who pushes writes
// them. Written here, they are shown; brought by a fetch, each text in
// the field gives way to a notice (the person sees it in show).
//
// Who owns the task and who did what (the owner's worktree path and
// email, who approved, moved or locked) are the same: another clone
// writes them as it likes, and a path or a name holds any words.
var agentNotes = []string{"pause_reason", "questions", "approvals", "overrides", "rollback_history", "node_moves", "skipped_nodes", "error",
	"worktree", "owner_email", "files_locked"}

// fetchedNotes returns, for each of agentNotes that st holds text in and
// a fetch last changed, the notice an agent reads in its texts' place.
func (e *Engine) fetchedNotes(st *State) map[string]string {
	o, ok := e.Tasks.(TextOrigin)
	if !ok {
		return nil
	}
	var fields []string
	for _, f := range agentNotes {
		if hasNote(st, f) {
			fields = append(fields, f)
		}
	}
	if len(fields) == 0 {
		return nil
	}
	out := map[string]string{}
	for f, remote := range o.TextFetched(st.Task, fields) {
		out[f] = fmt.Sprintf("(Text that came from %s is not shown to the agent: a person reads it with 'git hegel show %s'.)", remote, st.Task)
	}
	return out
}

// hasNote says whether st's field f (one of agentNotes) holds any text.
func hasNote(st *State, f string) bool {
	switch f {
	case "pause_reason":
		return st.PauseReason != ""
	case "questions":
		return len(st.Questions) > 0
	case "approvals":
		for _, a := range st.Approvals {
			if a.Comment != "" || a.By != "" {
				return true
			}
		}
	case "overrides":
		for _, o := range st.Overrides {
			if o.Reason != "" {
				return true
			}
		}
	case "rollback_history":
		for _, r := range st.RollbackHistory {
			if r.Reason != "" {
				return true
			}
		}
	case "node_moves":
		for _, m := range st.NodeMoves {
			if m.Reason != "" || m.By != "" {
				return true
			}
		}
	case "skipped_nodes":
		for _, s := range st.SkippedNodes {
			if s.Reason != "" {
				return true
			}
		}
	case "error":
		return st.Error != nil && st.Error.Message != ""
	case "worktree":
		return st.Worktree != ""
	case "owner_email":
		return st.OwnerEmail != ""
	case "files_locked":
		return len(st.FilesLocked) > 0
	}
	return false
}

// withholdNotes puts each notice of notes (fetchedNotes) in place of the
// texts of its field in c, a copy of a state: the slices are copied
// before they change, so the state copied is not.
func withholdNotes(c *State, notes map[string]string) {
	put := func(s *string, n string) {
		if *s != "" {
			*s = n
		}
	}
	for f, n := range notes {
		switch f {
		case "pause_reason":
			c.PauseReason = n
		case "questions":
			c.Questions = append([]Question(nil), c.Questions...)
			for i := range c.Questions {
				put(&c.Questions[i].Question, n)
				put(&c.Questions[i].Answer, n)
			}
		case "approvals":
			c.Approvals = append([]Approval(nil), c.Approvals...)
			for i := range c.Approvals {
				put(&c.Approvals[i].Comment, n)
				put(&c.Approvals[i].By, n)
			}
		case "overrides":
			c.Overrides = append([]Override(nil), c.Overrides...)
			for i := range c.Overrides {
				put(&c.Overrides[i].Reason, n)
			}
		case "rollback_history":
			c.RollbackHistory = append([]RollbackEvent(nil), c.RollbackHistory...)
			for i := range c.RollbackHistory {
				put(&c.RollbackHistory[i].Reason, n)
			}
		case "node_moves":
			c.NodeMoves = append([]NodeMove(nil), c.NodeMoves...)
			for i := range c.NodeMoves {
				put(&c.NodeMoves[i].Reason, n)
				put(&c.NodeMoves[i].By, n)
			}
		case "skipped_nodes":
			c.SkippedNodes = append([]SkippedNode(nil), c.SkippedNodes...)
			for i := range c.SkippedNodes {
				put(&c.SkippedNodes[i].Reason, n)
			}
		case "error":
			e := *c.Error
			e.Message = n
			c.Error = &e
		case "worktree":
			c.Worktree = n
		case "owner_email":
			c.OwnerEmail = n
		case "files_locked":
			c.FilesLocked = append([]FileLock(nil), c.FilesLocked...)
			for i := range c.FilesLocked {
				put(&c.FilesLocked[i].By, n)
				if !lockPathName(c.FilesLocked[i].Path) {
					c.FilesLocked[i].Path = n
				}
			}
		}
	}
}

// ResultWithheld says whether the stored result of node's step (b, as
// Result read it), or what the state records of the step, arrived with a
// fetch and is not trusted here; notice is what an agent reads instead.
func (e *Engine) ResultWithheld(st *State, node string, b []byte) (notice string, ok bool) {
	for _, t := range e.untrustedState(st) {
		if t.Field == "step_results" {
			return withheld(st.Task, t), true
		}
	}
	if inlineResult(st, node) {
		return "", false // kept in the state, whose step results are trusted
	}
	if t, ok := e.untrustedFile(st.Task, ResultPath(node), string(b)); ok {
		return withheld(st.Task, t), true
	}
	return "", false
}

// DescriptionWithheld says whether desc, a task's description as a
// record of its run keeps it (git hegel log), may not reach an agent:
// it may unless it is the description of task that ForAgent withholds,
// or task is gone and the text is not one this machine trusts.
func (e *Engine) DescriptionWithheld(task, desc string) (notice string, ok bool) {
	if desc == "" || e.textTrusted(desc) {
		return "", false
	}
	t, err := e.load(task)
	if err != nil || t.State.Description != desc {
		return "(A description this clone cannot vouch for is not shown to the agent: see it with 'git hegel log'.)", true
	}
	if a := e.ForAgent(t.State); a.Description != desc {
		return a.Description, true
	}
	return "", false
}

// ErrorWithheld says whether msg, the error a record of task's run keeps
// (git hegel log), may not reach an agent, as DescriptionWithheld does
// for its description: it may when it is the error task's state holds
// now and ForAgent shows it.
func (e *Engine) ErrorWithheld(task, msg string) (notice string, ok bool) {
	if msg == "" {
		return "", false
	}
	t, err := e.load(task)
	if err != nil || t.State.Error == nil || t.State.Error.Message != msg {
		return "(An error message this clone cannot vouch for is not shown to the agent: see it with 'git hegel log'.)", true
	}
	if a := e.ForAgent(t.State); a.Error.Message != msg {
		return a.Error.Message, true
	}
	return "", false
}

// RunnerWithheld says whether who, the user or the worktree a record of a
// run keeps (git hegel log), may not reach an agent: it may when it is
// this clone's own, the user.name it runs as or this worktree's path.
// Records carry no origin of their own, and another clone's name for its
// user or its worktree holds any words its maker chose.
func (e *Engine) RunnerWithheld(who string) (notice string, ok bool) {
	if who == "" || who == e.Worktree || (e.User != nil && who == e.User()) {
		return "", false
	}
	return "(A name this clone cannot vouch for is not shown to the agent: see it with 'git hegel log'.)", true
}

// ArtifactFetched names the remote whose fetch brought a's content, when
// it is a node's submitted copy and this machine does not trust its bytes
// ("" otherwise). It is not withheld (it is the work product the next
// node reads), but an agent is told whose words it reads.
func (e *Engine) ArtifactFetched(task string, a *ArtifactContent) string {
	if a.From != "submitted" {
		return ""
	}
	if t, ok := e.untrustedFile(task, SubmittedPath(a.Node, workflow.ArtifactName(a.Path)), string(a.Data)); ok {
		return t.Remote
	}
	return ""
}

// RunLabel says whether s, a label a record of a run keeps (its workflow,
// mode, task type, status, branches, nodes, and the agents, models and
// tools its metadata lists), may reach an agent as it is: when it is a
// name, as git-hegel and the agents write them. Records carry no origin
// of their own, and another clone's may hold any words in these fields.
func RunLabel(s string) bool {
	if s == "" || len(s) > 200 {
		return s == ""
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case i > 0 && strings.ContainsRune("._-/@:+", r):
		default:
			return false
		}
	}
	return true
}

// lockPathName says whether a lock's path another clone wrote may reach
// an agent as it is: a path of names and glob characters, no spaces (a
// path holds any words its maker chose; the hook still stops an edit of
// a file a withheld lock holds).
func lockPathName(p string) bool {
	if p == "" || len(p) > 200 {
		return false
	}
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-/@:+*?[]!^~=", r)) {
			return false
		}
	}
	return true
}

// RunLabelNotice stands in for a run's label RunLabel refuses, and
// stateLabelNotice for a state's.
const (
	RunLabelNotice   = "(not a name: not shown to the agent; see it with 'git hegel log')"
	stateLabelNotice = "(not a name: not shown to the agent; a person reads it with 'git hegel show')"
)

// The state's labels (its workflow, mode, task type, priority, sub-phase
// and pending claim, the nodes its history and lists name) are names
// when git-hegel writes them, but a fetch checks only that they hold no
// control characters: one that is not a name (RunLabel) reaches an agent
// as stateLabelNotice, and a list's entry that is not one is left out.
func stateLabels(st *State) []*string {
	return []*string{&st.Workflow, &st.Mode, &st.TaskType, &st.Priority, &st.Subphase, &st.PendingClaim}
}

// endedByOK says whether ended_by is one git-hegel writes ("doctor",
// "stash drop <id>", "stash clear <id>").
func endedByOK(s string) bool {
	for _, p := range []string{"stash drop ", "stash clear "} {
		if rest, ok := strings.CutPrefix(s, p); ok {
			return RunLabel(rest)
		}
	}
	return RunLabel(s)
}

func labelsOK(st *State) bool {
	for _, p := range stateLabels(st) {
		if !RunLabel(*p) {
			return false
		}
	}
	if !endedByOK(st.EndedBy) {
		return false
	}
	for _, l := range [][]string{st.History, st.CompletedNodes, st.FailedNodes} {
		for _, n := range l {
			if !RunLabel(n) {
				return false
			}
		}
	}
	return true
}

// withholdLabels applies labelsOK's rule to c, a copy of a state: the
// lists are copied before they change.
func withholdLabels(c *State) {
	for _, p := range stateLabels(c) {
		if !RunLabel(*p) {
			*p = stateLabelNotice
		}
	}
	if !endedByOK(c.EndedBy) {
		c.EndedBy = stateLabelNotice
	}
	names := func(l []string) []string {
		if l == nil {
			return nil
		}
		out := make([]string, 0, len(l))
		for _, n := range l {
			if RunLabel(n) {
				out = append(out, n)
			}
		}
		return out
	}
	c.History, c.CompletedNodes, c.FailedNodes = names(c.History), names(c.CompletedNodes), names(c.FailedNodes)
}

package engine

import (
	"fmt"
	"slices"
)

// The status machine: which command may change a task in which status.
// Every command that changes a task asks allowed first; a refusal names
// the status and the command that fits it.
var allowedIn = map[string][]string{
	// Only the run that set it up changes an initializing task; what is
	// left to others is giving up on it (a run killed while setting up
	// is continued by running it again).
	StatusInitializing:     {"abort", "rollback", "describe"},
	StatusActive:           {"next", "prev", "restart", "fail", "ask", "pause", "skip", "abort", "rollback", "describe", "lock", "unlock"},
	StatusAwaitingApproval: {"approve", "reject", "prev", "restart", "abort", "rollback", "describe", "lock", "unlock"},
	StatusAwaitingAnswer:   {"answer", "abort", "rollback", "describe", "lock", "unlock"},
	StatusPaused:           {"next", "resume", "skip", "prev", "restart", "abort", "rollback", "describe", "lock", "unlock"},
	StatusFailed:           {"resume", "abort", "rollback", "describe", "lock", "unlock"},
	StatusCompleted:        {"prev", "restart", "rollback", "describe"},
	StatusAborted:          {"rollback", "describe"},
	StatusRolledBack:       {"rollback", "describe"},
}

// allowed returns nil if cmd may change st, else the error to show.
func (e *Engine) allowed(st *State, cmd string) error {
	if slices.Contains(allowedIn[st.Status], cmd) {
		return nil
	}
	return &StatusError{Task: st.Task, Status: st.Status, Command: cmd, Advice: e.advice(st, cmd)}
}

// advice is advice(st, cmd) as this engine's reader may read it: the
// open question and the error's message it quotes are the agent view's
// (ForAgent), a notice where a fetch wrote them.
func (e *Engine) advice(st *State, cmd string) string {
	if e.AgentReads {
		st = e.ForAgent(st)
	}
	return advice(st, cmd)
}

// StatusError refuses a command the task's status does not allow.
type StatusError struct {
	Task, Status, Command string
	Advice                string
}

func (e *StatusError) Error() string {
	if e.Command == "resume" {
		// Worded as other tools that resume executions word it.
		return fmt.Sprintf("Cannot resume workflow with status: %s (task %s). %s", e.Status, e.Task, e.Advice)
	}
	return fmt.Sprintf("Cannot %s: task %s is %s. %s", e.Command, e.Task, e.Status, e.Advice)
}

// advice says what fits the task's status instead of cmd.
func advice(st *State, cmd string) string {
	switch st.Status {
	case StatusAwaitingApproval:
		return fmt.Sprintf("It waits for approval at '%s': run 'git hegel approve' or 'git hegel reject -m REASON'", st.CurrentNode)
	case StatusAwaitingAnswer:
		q := ""
		if i := openQuestion(st); i >= 0 {
			q = st.Questions[i].Question
		}
		return fmt.Sprintf("It waits for an answer to: %s. Run 'git hegel answer TEXT'", firstLine(q))
	case StatusInitializing:
		return "A 'git hegel run' is setting it up; 'git hegel status' shows whether that run still runs, and 'git hegel run' continues it"
	case StatusPaused:
		return "Run 'git hegel resume' (or 'git hegel next') to go on"
	case StatusFailed:
		msg := ""
		if st.Error != nil {
			msg = " (" + firstLine(st.Error.Message) + ")"
		}
		return fmt.Sprintf("It failed at '%s'%s; run 'git hegel resume --strategy %s' to go on", st.CurrentNode, msg, joinStrategies("|"))
	case StatusStashed:
		return "Restore it with 'git hegel stash pop'"
	case StatusCompleted, StatusAborted, StatusRolledBack:
		return "Start a new one with 'git hegel start <workflow>'"
	case StatusActive:
		switch cmd {
		case "approve", "reject":
			return "It is not waiting for approval; 'git hegel next' moves it on"
		case "answer":
			return "No question is open; 'git hegel ask QUESTION' asks one"
		case "resume":
			return "It is running; 'git hegel pause' pauses it"
		}
	}
	return "See 'git hegel status'"
}

package agent

import (
	"strings"
	"time"
)

// Agent events: what a coding agent did while a task ran, as its hooks
// report it (agents.go turns each agent's payload into these). `git hegel
// hook` appends them to a per-worktree journal; gitstore folds the journal
// into the task's ref at transitions and when the agent stops; the guard
// rules (rules.go) and metrics read them back.

// Event kinds: the agents' hook events, normalised.
const (
	EventSessionStart = "session_start"
	EventSessionEnd   = "session_end"
	EventPrompt       = "user_prompt"
	EventPreTool      = "pre_tool"
	EventPostTool     = "post_tool"
	EventStop         = "stop"
	EventViolation    = "violation" // a guard rule was found violated
	EventOther        = "other"
)

// Actions classify a tool call for the rules and metrics.
const (
	ActionCommand = "command" // a shell command
	ActionEdit    = "edit"    // a file was written
	ActionRead    = "read"
)

// Event is one normalised agent event. Only what the rules and metrics
// need is kept: never file contents or tool output.
type Event struct {
	Time    time.Time `json:"time"`
	Kind    string    `json:"kind"`
	Hook    string    `json:"hook,omitempty"` // the agent's own event name
	Agent   string    `json:"agent,omitempty"`
	Session string    `json:"session,omitempty"`
	// Task is the task the event belongs to (the worktree's active task
	// when it arrived); Node is filled in when it is folded.
	Task    string `json:"task,omitempty"`
	Node    string `json:"node,omitempty"`
	Tool    string `json:"tool,omitempty"`
	Action  string `json:"action,omitempty"`
	Command string `json:"command,omitempty"`
	File    string `json:"file,omitempty"` // relative to the worktree when inside it
	Model   string `json:"model,omitempty"`
	// Token counts, where the agent reports them: input (not served from
	// a cache), output, and input served from a cache.
	TokensIn     int64 `json:"tokens_in,omitempty"`
	TokensOut    int64 `json:"tokens_out,omitempty"`
	TokensCached int64 `json:"tokens_cached,omitempty"`
	// Rule and Detail describe a violation; Forced marks one bypassed
	// with --force.
	Rule   string `json:"rule,omitempty"`
	Detail string `json:"detail,omitempty"`
	// PayloadCut says the hook's payload was over MaxHookPayload: this
	// many of its bytes (its longest strings) were left out before it
	// was read, so the fields above may be cut short or missing.
	PayloadCut int64 `json:"payload_cut,omitempty"`
}

// Tokens is what a token budget counts: input plus output.
func (ev *Event) Tokens() int64 { return ev.TokensIn + ev.TokensOut }

// IsCommand reports a shell command that ran.
func (ev *Event) IsCommand() bool {
	return ev.Kind == EventPostTool && ev.Action == ActionCommand && ev.Command != ""
}

// IsEdit reports a file that was written.
func (ev *Event) IsEdit() bool {
	return ev.Kind == EventPostTool && ev.Action == ActionEdit && ev.File != ""
}

// IsHegel reports a git hegel command: never counted against a rule, so
// an agent can always move on or look at its task.
func (ev *Event) IsHegel() bool {
	c := strings.TrimSpace(ev.Command)
	return strings.HasPrefix(c, "git hegel") || strings.HasPrefix(c, "git-hegel")
}

// EventStore is where events live: a per-worktree journal and the task
// refs it is folded into. gitstore implements it.
type EventStore interface {
	// Fold moves this worktree's journaled events onto their tasks'
	// refs, one commit per task, attributing them to each task's current
	// node. A crash at any point loses nothing and duplicates nothing.
	Fold() error
	// Events returns task's events of run (its workflow_id) from since
	// on, folded and still journaled, oldest first.
	Events(task, run string, since time.Time) ([]Event, error)
	// Record appends events to the journal.
	Record(evs ...Event) error
}

// maxFieldLen bounds the text an event keeps of a command or path.
const maxFieldLen = 2000

func clip(s string) string {
	if len(s) <= maxFieldLen {
		return s
	}
	cut := maxFieldLen
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

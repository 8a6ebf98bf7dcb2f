package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Adapters for the coding agents' hooks. Each agent sends one JSON object
// on stdin per hook and reads an answer in its own format from stdout.
// docs/agents.md documents each with a sample payload (testdata/agents/).
//
//   - Claude Code: session_id, transcript_path, cwd, hook_event_name
//     (SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop, ...),
//     tool_name, tool_input, tool_response.
//   - Codex CLI: the same shape (its hooks engine follows Claude Code's),
//     plus turn_id and model; tools are Bash, apply_patch and mcp__*.
//   - Cursor: conversation_id, generation_id, workspace_roots and a
//     camelCase hook_event_name (beforeShellExecution, afterFileEdit,
//     stop, ...), with the command or file_path at the top level.

// Agent names.
const (
	Claude = "claude"
	Codex  = "codex"
	Cursor = "cursor"
)

// Names lists the supported agents.
var Names = []string{Claude, Codex, Cursor}

// HookInput is one hook invocation.
type HookInput struct {
	Event   string // the <EventName> argument
	Payload []byte
	Agent   string // forced with --agent; "" detects it from the payload
	Root    string // the worktree's top, to make file paths relative
	Now     time.Time
	Getenv  func(string) string
	// Cut is how many bytes CutPayload left out of Payload (0: none);
	// every event records it.
	Cut int64
}

// Hook is a parsed hook invocation.
type Hook struct {
	Agent          string
	Name           string // the agent's event name
	Kind           string // normalised
	Session        string
	Cwd            string // where the agent runs (cursor: its first workspace root)
	TranscriptPath string
	// Events are what to journal: a tool call that ran, a prompt, a stop.
	// Calls about to run (PreToolUse) are not journaled: the matching
	// PostToolUse counts them.
	Events []Event
	// Edits are the files a tool call about to run (PreToolUse) would
	// write, relative to the worktree once Relativize ran: the hook may
	// deny the call (a locked file). Never journaled.
	Edits []string
	// Again is set when the agent is already continuing because of a
	// stop hook (Claude's stop_hook_active, Cursor's loop_count): it must
	// not be asked to continue once more.
	Again bool
	// CursorRoots are Cursor's workspace_roots.
	CursorRoots []string
	// Call is the tool call of a PreToolUse or PostToolUse (nil for other
	// hooks, and when the payload names no tool).
	Call *ToolCall
}

// payload is the union of the fields the three agents send.
type payload struct {
	HookEventName  string          `json:"hook_event_name"`
	SessionID      string          `json:"session_id"`
	TurnID         string          `json:"turn_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	Model          string          `json:"model"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	Prompt         string          `json:"prompt"`
	StopHookActive bool            `json:"stop_hook_active"`
	Source         string          `json:"source"`
	Usage          *usage          `json:"usage"`
	// Cursor.
	ConversationID string   `json:"conversation_id"`
	GenerationID   string   `json:"generation_id"`
	WorkspaceRoots []string `json:"workspace_roots"`
	Command        string   `json:"command"`
	FilePath       string   `json:"file_path"`
	LoopCount      int      `json:"loop_count"`
}

// usage is a token usage object as Anthropic's and OpenAI's APIs report it.
type usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CachedInputTokens        int64 `json:"cached_input_tokens"`
}

// ErrBadPayload marks a payload that is not a hook payload.
var ErrBadPayload = errors.New("not a hook payload")

// ParseHook reads one hook payload.
func ParseHook(in HookInput) (*Hook, error) {
	var p payload
	if len(bytes.TrimSpace(in.Payload)) == 0 {
		return nil, fmt.Errorf("%w: empty input (agents send one JSON object on stdin)", ErrBadPayload)
	}
	dec := json.NewDecoder(bytes.NewReader(in.Payload))
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrBadPayload, strings.TrimPrefix(err.Error(), "json: "))
	}
	agent := in.Agent
	if agent == "" {
		agent = detectAgent(&p, in.Getenv)
	}
	name := p.HookEventName
	if name == "" {
		name = in.Event
	}
	if name == "" {
		return nil, fmt.Errorf("%w: no hook_event_name and no event given", ErrBadPayload)
	}
	h := &Hook{Agent: agent, Name: name, TranscriptPath: p.TranscriptPath, Cwd: p.Cwd}
	base := Event{Time: in.Now.UTC(), Hook: name, Agent: agent, Model: p.Model}
	switch agent {
	case Cursor:
		h.Session = p.ConversationID
		h.CursorRoots = p.WorkspaceRoots
		if h.Cwd == "" && len(p.WorkspaceRoots) > 0 {
			h.Cwd = p.WorkspaceRoots[0]
		}
		h.Again = p.LoopCount > 0
		base.Session = h.Session
		h.Kind = cursorKind(name)
		h.Events = cursorEvents(&p, base, h.Kind, in.Root)
	default:
		h.Session = p.SessionID
		h.Again = p.StopHookActive
		base.Session = h.Session
		h.Kind = claudeKind(name)
		h.Events = claudeEvents(&p, base, h.Kind, in.Root)
	}
	if h.Kind == EventPreTool && p.ToolName != "" {
		for _, ev := range toolEvents(p.ToolName, p.ToolInput, base, in.Root) {
			if ev.Action == ActionEdit && ev.File != "" {
				h.Edits = append(h.Edits, ev.File)
			}
		}
	}
	h.Call = toolCall(&p, h.Kind)
	for i := range h.Events {
		h.Events[i].PayloadCut = in.Cut
	}
	if p.Usage != nil && len(h.Events) > 0 {
		u := p.Usage
		ev := &h.Events[len(h.Events)-1]
		ev.TokensIn = u.InputTokens + u.CacheCreationInputTokens - u.CachedInputTokens
		ev.TokensOut = u.OutputTokens
		ev.TokensCached = u.CacheReadInputTokens + u.CachedInputTokens
	}
	return h, nil
}

// detectAgent tells the agents apart by what only each one sends.
func detectAgent(p *payload, getenv func(string) string) string {
	switch {
	case p.ConversationID != "" || p.GenerationID != "" || p.WorkspaceRoots != nil ||
		(p.HookEventName != "" && p.HookEventName[0] >= 'a' && p.HookEventName[0] <= 'z'):
		return Cursor
	case getenv != nil && getenv("CLAUDE_PROJECT_DIR") != "":
		return Claude // Claude Code sets it for every hook command
	case p.TurnID != "" || strings.Contains(filepath.ToSlash(p.TranscriptPath), "/.codex/") ||
		strings.HasPrefix(filepath.Base(p.TranscriptPath), "rollout-"):
		return Codex
	}
	return Claude
}

func claudeKind(name string) string {
	switch name {
	case "SessionStart":
		return EventSessionStart
	case "SessionEnd":
		return EventSessionEnd
	case "UserPromptSubmit":
		return EventPrompt
	case "PreToolUse":
		return EventPreTool
	case "PostToolUse", "PostToolUseFailure":
		return EventPostTool
	case "Stop":
		return EventStop
	}
	return EventOther
}

func cursorKind(name string) string {
	switch name {
	case "sessionStart":
		return EventSessionStart
	case "sessionEnd":
		return EventSessionEnd
	case "beforeSubmitPrompt":
		return EventPrompt
	case "beforeShellExecution", "beforeMCPExecution", "beforeReadFile", "preToolUse":
		return EventPreTool
	case "afterShellExecution", "afterMCPExecution", "afterFileEdit", "postToolUse", "postToolUseFailure":
		return EventPostTool
	case "stop":
		return EventStop
	}
	return EventOther
}

// editTools are the tools (of any agent) that write files.
var editTools = map[string]bool{
	"Edit": true, "MultiEdit": true, "Write": true, "NotebookEdit": true,
	"StrReplace": true, "Delete": true, "TabWrite": true, "apply_patch": true,
}

// readTools read files.
var readTools = map[string]bool{"Read": true, "NotebookRead": true}

// shellTools run commands.
var shellTools = map[string]bool{"Bash": true, "Shell": true, "shell": true, "local_shell": true}

// toolInput holds what the rules use from any agent's tool_input.
type toolInput struct {
	Command      json.RawMessage `json:"command"`
	FilePath     string          `json:"file_path"`
	NotebookPath string          `json:"notebook_path"`
	Path         string          `json:"path"`
}

func claudeEvents(p *payload, base Event, kind, root string) []Event {
	ev := base
	ev.Kind = kind
	switch kind {
	case EventPreTool:
		return nil
	case EventPostTool:
		return toolEvents(p.ToolName, p.ToolInput, ev, root)
	case EventPrompt:
		return []Event{ev} // the prompt text itself is not kept
	case EventSessionStart:
		ev.Detail = clip(p.Source)
	}
	return []Event{ev}
}

func cursorEvents(p *payload, base Event, kind, root string) []Event {
	ev := base
	ev.Kind = kind
	switch p.HookEventName {
	case "afterShellExecution":
		ev.Tool, ev.Action, ev.Command = "Bash", ActionCommand, clip(strings.TrimSpace(p.Command))
		return []Event{ev}
	case "afterFileEdit":
		ev.Tool, ev.Action, ev.File = "Edit", ActionEdit, clip(relPath(p.FilePath, root))
		return []Event{ev}
	case "afterMCPExecution":
		ev.Tool = clip(p.ToolName)
		return []Event{ev}
	case "postToolUse", "postToolUseFailure":
		return toolEvents(p.ToolName, p.ToolInput, ev, root)
	}
	if kind == EventPreTool {
		return nil
	}
	return []Event{ev}
}

// toolEvents is one event for a tool call, or one per file for a patch.
func toolEvents(tool string, raw json.RawMessage, ev Event, root string) []Event {
	ev.Tool = clip(tool)
	var in toolInput
	if len(raw) > 0 && raw[0] == '{' {
		_ = json.Unmarshal(raw, &in) // an unexpected shape keeps the tool name only
	}
	cmd := commandText(in.Command)
	switch {
	case tool == "apply_patch":
		files := patchFiles(cmd)
		if len(files) == 0 {
			ev.Action = ActionEdit
			return []Event{ev}
		}
		out := make([]Event, 0, len(files))
		for _, f := range files {
			e := ev
			e.Action, e.File = ActionEdit, clip(relPath(f, root))
			out = append(out, e)
		}
		return out
	case shellTools[tool] || (cmd != "" && !editTools[tool]):
		ev.Tool = "Bash"
		ev.Action, ev.Command = ActionCommand, clip(cmd)
	case editTools[tool]:
		ev.Action, ev.File = ActionEdit, clip(relPath(firstNonEmpty(in.FilePath, in.NotebookPath, in.Path), root))
	case readTools[tool]:
		ev.Action, ev.File = ActionRead, clip(relPath(firstNonEmpty(in.FilePath, in.NotebookPath, in.Path), root))
	}
	return []Event{ev}
}

// commandText reads a command given as a string or as an argv list; for
// ["bash", "-lc", SCRIPT] the script is the command.
func commandText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	var argv []string
	if json.Unmarshal(raw, &argv) != nil || len(argv) == 0 {
		return ""
	}
	if len(argv) == 3 && (argv[1] == "-lc" || argv[1] == "-c") {
		return strings.TrimSpace(argv[2])
	}
	return strings.Join(argv, " ")
}

var patchFileRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$`)
})

// patchFiles lists the files a Codex apply_patch touches.
func patchFiles(patch string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range patchFileRe().FindAllStringSubmatch(patch, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	return out
}

// relPath makes an absolute path inside root relative to it, slash-separated.
func relPath(p, root string) string {
	if p == "" || root == "" || !filepath.IsAbs(p) {
		return filepath.ToSlash(p)
	}
	if rel, err := filepath.Rel(root, p); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return filepath.ToSlash(p)
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// Usage is a token count read from an agent's transcript.
type Usage struct {
	In, Out, Cached int64
}

// transcriptLine is the part of a transcript line that carries usage:
// Claude Code writes assistant messages with message.usage (repeated on
// each line of one message, so lines are grouped by message id); Codex
// writes event_msg lines whose payload is a token_count.
type transcriptLine struct {
	Type    string `json:"type"`
	Message *struct {
		ID    string `json:"id"`
		Usage *usage `json:"usage"`
	} `json:"message"`
	Payload *struct {
		Type string `json:"type"`
		Info *struct {
			Last *usage `json:"last_token_usage"`
		} `json:"info"`
	} `json:"payload"`
}

// TranscriptUsage sums the token usage in complete transcript lines.
// Claude Code repeats a message's usage on each of its lines, so each
// message id counts once, with the largest figures seen; lastID is the id
// counted last by the previous call (not counted again), and the new one is
// returned.
func TranscriptUsage(agent string, data []byte, lastID string) (Usage, string) {
	var u Usage
	byID := map[string]Usage{}
	var order []string
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 || !bytes.Contains(line, []byte("tokens")) {
			continue
		}
		var l transcriptLine
		if json.Unmarshal(line, &l) != nil {
			continue
		}
		switch {
		case agent != Codex && l.Message != nil && l.Message.Usage != nil:
			m := l.Message.Usage
			x := Usage{In: m.InputTokens + m.CacheCreationInputTokens, Out: m.OutputTokens, Cached: m.CacheReadInputTokens}
			id := l.Message.ID
			if id == "" {
				u.In, u.Out, u.Cached = u.In+x.In, u.Out+x.Out, u.Cached+x.Cached
				continue
			}
			if id == lastID && len(order) == 0 {
				continue // the previous call counted it
			}
			old, seen := byID[id]
			if !seen {
				order = append(order, id)
			}
			byID[id] = Usage{max(old.In, x.In), max(old.Out, x.Out), max(old.Cached, x.Cached)}
		case l.Payload != nil && l.Payload.Type == "token_count" && l.Payload.Info != nil && l.Payload.Info.Last != nil:
			m := l.Payload.Info.Last
			u.In += max(m.InputTokens-m.CachedInputTokens, 0)
			u.Out += m.OutputTokens
			u.Cached += m.CachedInputTokens
		}
	}
	for _, id := range order {
		x := byID[id]
		u.In, u.Out, u.Cached = u.In+x.In, u.Out+x.Out, u.Cached+x.Cached
	}
	if len(order) > 0 {
		lastID = order[len(order)-1]
	}
	return u, lastID
}

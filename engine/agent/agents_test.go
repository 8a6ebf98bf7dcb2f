package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The sample payloads in testdata/agents are what each agent sends; every
// one is normalised here, event by event.

const sampleRoot = "/home/dev/project"

var sampleTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func samplePayload(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "agents", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseHookSamples(t *testing.T) {
	claude := "3f1c9a52-7d4e-4b8a-9c21-5e6f7a8b9c0d"
	codex := "0199a2b3-c4d5-7e6f-8a9b-0c1d2e3f4a5b"
	cursor := "c3a1e5d7-2b4f-4e6a-8c0d-1f2e3a4b5c6d"
	ev := func(kind, hook, agent, session string, f func(*Event)) Event {
		e := Event{Time: sampleTime, Kind: kind, Hook: hook, Agent: agent, Session: session}
		if agent == Codex {
			e.Model = "gpt-5-codex"
		}
		if agent == Cursor {
			e.Model = "claude-4.5-sonnet"
		}
		if f != nil {
			f(&e)
		}
		return e
	}
	tests := []struct {
		file  string
		agent string
		kind  string
		want  []Event
	}{
		{"claude/SessionStart.json", Claude, EventSessionStart,
			[]Event{ev(EventSessionStart, "SessionStart", Claude, claude, func(e *Event) { e.Detail = "startup" })}},
		{"claude/UserPromptSubmit.json", Claude, EventPrompt,
			[]Event{ev(EventPrompt, "UserPromptSubmit", Claude, claude, nil)}},
		{"claude/PreToolUse-Bash.json", Claude, EventPreTool, nil},
		{"claude/PostToolUse-Bash.json", Claude, EventPostTool,
			[]Event{ev(EventPostTool, "PostToolUse", Claude, claude, func(e *Event) {
				e.Tool, e.Action, e.Command = "Bash", ActionCommand, "go test ./report/..."
			})}},
		{"claude/PostToolUse-Edit.json", Claude, EventPostTool,
			[]Event{ev(EventPostTool, "PostToolUse", Claude, claude, func(e *Event) {
				e.Tool, e.Action, e.File = "Edit", ActionEdit, "report/json.go"
			})}},
		{"claude/PostToolUse-Write.json", Claude, EventPostTool,
			[]Event{ev(EventPostTool, "PostToolUse", Claude, claude, func(e *Event) {
				e.Tool, e.Action, e.File = "Write", ActionEdit, "SPEC.md"
			})}},
		{"claude/PostToolUse-Read.json", Claude, EventPostTool,
			[]Event{ev(EventPostTool, "PostToolUse", Claude, claude, func(e *Event) {
				e.Tool, e.Action, e.File = "Read", ActionRead, "report/report.go"
			})}},
		{"claude/Stop.json", Claude, EventStop,
			[]Event{ev(EventStop, "Stop", Claude, claude, nil)}},

		{"codex/SessionStart.json", Codex, EventSessionStart,
			[]Event{ev(EventSessionStart, "SessionStart", Codex, codex, func(e *Event) { e.Detail = "startup" })}},
		{"codex/UserPromptSubmit.json", Codex, EventPrompt,
			[]Event{ev(EventPrompt, "UserPromptSubmit", Codex, codex, nil)}},
		{"codex/PostToolUse-Bash.json", Codex, EventPostTool,
			[]Event{ev(EventPostTool, "PostToolUse", Codex, codex, func(e *Event) {
				e.Tool, e.Action, e.Command = "Bash", ActionCommand, "cargo test -p parser"
			})}},
		{"codex/PostToolUse-apply_patch.json", Codex, EventPostTool, []Event{
			ev(EventPostTool, "PostToolUse", Codex, codex, func(e *Event) {
				e.Tool, e.Action, e.File = "apply_patch", ActionEdit, "parser/src/lib.rs"
			}),
			ev(EventPostTool, "PostToolUse", Codex, codex, func(e *Event) {
				e.Tool, e.Action, e.File = "apply_patch", ActionEdit, "parser/tests/trailing.rs"
			}),
		}},
		{"codex/Stop.json", Codex, EventStop,
			[]Event{ev(EventStop, "Stop", Codex, codex, nil)}},

		{"cursor/sessionStart.json", Cursor, EventSessionStart,
			[]Event{ev(EventSessionStart, "sessionStart", Cursor, cursor, nil)}},
		{"cursor/beforeSubmitPrompt.json", Cursor, EventPrompt,
			[]Event{ev(EventPrompt, "beforeSubmitPrompt", Cursor, cursor, nil)}},
		{"cursor/beforeShellExecution.json", Cursor, EventPreTool, nil},
		{"cursor/afterShellExecution.json", Cursor, EventPostTool,
			[]Event{ev(EventPostTool, "afterShellExecution", Cursor, cursor, func(e *Event) {
				e.Tool, e.Action, e.Command = "Bash", ActionCommand, "npm test"
			})}},
		{"cursor/afterFileEdit.json", Cursor, EventPostTool,
			[]Event{ev(EventPostTool, "afterFileEdit", Cursor, cursor, func(e *Event) {
				e.Tool, e.Action, e.File = "Edit", ActionEdit, "src/settings.ts"
			})}},
		{"cursor/stop.json", Cursor, EventStop,
			[]Event{ev(EventStop, "stop", Cursor, cursor, nil)}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			h, err := ParseHook(HookInput{Payload: samplePayload(t, tc.file), Now: sampleTime})
			if err != nil {
				t.Fatal(err)
			}
			h.Relativize(sampleRoot)
			if h.Agent != tc.agent || h.Kind != tc.kind {
				t.Fatalf("agent %s kind %s, want %s %s", h.Agent, h.Kind, tc.agent, tc.kind)
			}
			if h.Cwd != sampleRoot {
				t.Errorf("cwd %q", h.Cwd)
			}
			if !slices.Equal(h.Events, tc.want) {
				t.Errorf("events\n got %+v\nwant %+v", h.Events, tc.want)
			}
		})
	}
}

func TestParseHookDetection(t *testing.T) {
	getenv := func(k string) string {
		if k == "CLAUDE_PROJECT_DIR" {
			return sampleRoot
		}
		return ""
	}
	// Claude Code's environment wins over a payload that could be either.
	h, err := ParseHook(HookInput{Payload: []byte(`{"session_id":"s","turn_id":"1","hook_event_name":"Stop"}`), Now: sampleTime, Getenv: getenv})
	if err != nil || h.Agent != Claude {
		t.Errorf("with CLAUDE_PROJECT_DIR: %v, %v", h, err)
	}
	// --agent overrides detection.
	h, err = ParseHook(HookInput{Payload: samplePayload(t, "claude/Stop.json"), Agent: Codex, Now: sampleTime})
	if err != nil || h.Agent != Codex {
		t.Errorf("forced codex: %v, %v", h, err)
	}
	// The event argument names a payload that does not.
	h, err = ParseHook(HookInput{Event: "Stop", Payload: []byte(`{"session_id":"s"}`), Now: sampleTime})
	if err != nil || h.Kind != EventStop {
		t.Errorf("event from argument: %v, %v", h, err)
	}
	for _, bad := range []string{``, `[1]`, `{"session_id":`, `{}`} {
		if _, err := ParseHook(HookInput{Payload: []byte(bad), Now: sampleTime}); err == nil {
			t.Errorf("payload %q accepted", bad)
		}
	}
}

func TestParseHookDetails(t *testing.T) {
	// Commands given as argv, long commands, usage in the payload, a loop.
	h, err := ParseHook(HookInput{Payload: []byte(`{"session_id":"s","turn_id":"t","hook_event_name":"PostToolUse","tool_name":"Bash",` +
		`"tool_input":{"command":["bash","-lc","make test"]},"usage":{"input_tokens":100,"cached_input_tokens":40,"output_tokens":7}}`), Now: sampleTime})
	if err != nil {
		t.Fatal(err)
	}
	e := h.Events[0]
	if e.Command != "make test" || e.TokensIn != 60 || e.TokensOut != 7 || e.TokensCached != 40 {
		t.Errorf("argv command / usage: %+v", e)
	}
	long := strings.Repeat("x", 5000)
	h, _ = ParseHook(HookInput{Payload: []byte(`{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"` + long + `"}}`), Now: sampleTime})
	if n := len(h.Events[0].Command); n > maxFieldLen+4 {
		t.Errorf("command kept %d bytes", n)
	}
	h, _ = ParseHook(HookInput{Payload: []byte(`{"conversation_id":"c","hook_event_name":"stop","status":"completed","loop_count":2}`), Now: sampleTime})
	if !h.Again || h.Reports() {
		t.Errorf("cursor stop in a loop: again %v reports %v", h.Again, h.Reports())
	}
	// A path outside the work tree stays absolute.
	h, _ = ParseHook(HookInput{Payload: []byte(`{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{"file_path":"/etc/hosts"}}`), Now: sampleTime})
	h.Relativize(sampleRoot)
	if h.Events[0].File != "/etc/hosts" {
		t.Errorf("outside path = %q", h.Events[0].File)
	}
}

func TestTranscriptUsage(t *testing.T) {
	u, last := TranscriptUsage(Claude, samplePayload(t, "claude/transcript.jsonl"), "")
	// msg_01A counts once with its largest figures; msg_01B once.
	if u.In != 1500+800 || u.Out != 95+210 || u.Cached != 15000+16500 || last != "msg_01B" {
		t.Errorf("claude usage %+v last %q", u, last)
	}
	// A second read starting inside msg_01B's lines does not count it again.
	if u2, _ := TranscriptUsage(Claude, []byte(`{"type":"assistant","message":{"id":"msg_01B","usage":{"input_tokens":800,"output_tokens":210}}}`+"\n"), last); u2 != (Usage{}) {
		t.Errorf("msg_01B counted twice: %+v", u2)
	}
	u, _ = TranscriptUsage(Codex, samplePayload(t, "codex/rollout.jsonl"), "")
	if u.In != 3000+4000 || u.Out != 400+600 || u.Cached != 6000+8000 {
		t.Errorf("codex usage %+v", u)
	}
}

func TestHookReply(t *testing.T) {
	parse := func(file string) *Hook {
		h, err := ParseHook(HookInput{Payload: samplePayload(t, file), Now: sampleTime})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	tests := []struct {
		file, context, message, want string
	}{
		{"claude/SessionStart.json", "Task t", "", `{"hookSpecificOutput":{"additionalContext":"Task t","hookEventName":"SessionStart"}}`},
		{"claude/PostToolUse-Bash.json", "", "stop", `{"decision":"block","reason":"stop"}`},
		{"claude/PostToolUse-Bash.json", "", "", ``},
		{"claude/PreToolUse-Bash.json", "", "stop", ``},
		{"claude/UserPromptSubmit.json", "", "stop", `{"hookSpecificOutput":{"additionalContext":"stop","hookEventName":"UserPromptSubmit"}}`},
		{"claude/Stop.json", "", "stop", `{"systemMessage":"stop"}`},
		{"codex/PostToolUse-Bash.json", "", "stop", `{"decision":"block","reason":"stop"}`},
		{"cursor/sessionStart.json", "Task t", "", `{"additional_context":"Task t"}`},
		{"cursor/stop.json", "", "stop", `{"followup_message":"stop"}`},
		{"cursor/afterShellExecution.json", "", "stop", ``},
	}
	for _, tc := range tests {
		got := strings.TrimSpace(string(parse(tc.file).Reply(tc.context, tc.message)))
		if got != tc.want {
			t.Errorf("%s: reply %s, want %s", tc.file, got, tc.want)
		}
	}
}

// TestUndoCommand: a shell call that is git hegel undo and nothing else
// is marked (it gets no snapshot); anything that could run more than it
// is not, even past the event's clip.
func TestUndoCommand(t *testing.T) {
	for cmd, want := range map[string]bool{
		"git hegel undo":                 true,
		"git hegel undo -y":              true,
		"  git  hegel undo 3 -y --force": true,
		"git hegel undo --redo -y":       true,
		"git-hegel undo --list":          true,
		"git hegel undo -y; rm -rf x":    false,
		"git hegel undo && make gen":     false,
		"git hegel undo | tee log":       false,
		"git hegel undo > out":           false,
		"git hegel undo $(rm x)":         false,
		"git hegel undo `rm x`":          false,
		"git hegel undo\nrm x":           false,
		"git hegel status":               false,
		"git hegel next":                 false,
		"git hegelundo":                  false,
		"echo git hegel undo":            false,
		"X=1 git hegel undo":             false,
		"":                               false,
	} {
		if got := UndoCommand(cmd); got != want {
			t.Errorf("UndoCommand(%q) = %v, want %v", cmd, got, want)
		}
	}
	call := func(payload string) *ToolCall {
		t.Helper()
		h, err := ParseHook(HookInput{Payload: []byte(payload), Now: sampleTime})
		if err != nil || h.Call == nil {
			t.Fatalf("%s: %v", payload, err)
		}
		return h.Call
	}
	if c := call(`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git hegel undo -y"}}`); !c.Undo {
		t.Errorf("Claude Bash: %+v", c)
	}
	if c := call(`{"session_id":"s","turn_id":"t","hook_event_name":"PreToolUse","tool_name":"shell","tool_input":{"command":["git","hegel","undo","--redo","-y"]}}`); !c.Undo {
		t.Errorf("Codex argv: %+v", c)
	}
	if c := call(`{"conversation_id":"c","generation_id":"g","hook_event_name":"beforeShellExecution","command":"git hegel undo -y"}`); !c.Undo {
		t.Errorf("Cursor shell: %+v", c)
	}
	// A second command past the clip of the event's copy still counts.
	long := "git hegel undo " + strings.Repeat(" ", 3000) + "; rm -rf src"
	if c := call(`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"` + long + `"}}`); c.Undo {
		t.Errorf("a command hidden past the clip was taken for git hegel undo")
	}
	if c := call(`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"git hegel undo"}}`); c.Undo {
		t.Errorf("an edit was taken for git hegel undo")
	}
}

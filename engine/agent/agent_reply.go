package agent

import (
	"bytes"
	"encoding/json"
)

// What a hook prints back, in each agent's own format. Nothing is printed
// unless the agent must be told something: at session start, where its
// task stands; after a tool call or at a stop, a guard rule it broke.
//
//   - Claude Code and Codex: SessionStart and UserPromptSubmit add
//     hookSpecificOutput.additionalContext to the conversation;
//     PostToolUse {"decision": "block", "reason"} feeds the reason to the
//     model (the tool has already run: nothing is undone); Stop shows a
//     systemMessage to the user.
//   - Cursor: sessionStart {"additional_context"}; stop {"followup_message"}
//     is sent to the agent as the next message (never when it is already
//     continuing because of a stop hook).

// Reply renders the hook's output; nil means print nothing. context is the
// task's state for a session start, message the rule violations (either
// may be empty).
func (h *Hook) Reply(context, message string) []byte {
	var out any
	switch h.Agent {
	case Cursor:
		switch {
		case h.Kind == EventSessionStart && context != "":
			out = map[string]string{"additional_context": context}
		case h.Kind == EventStop && message != "" && !h.Again:
			out = map[string]string{"followup_message": message}
		}
	default:
		switch {
		case h.Kind == EventSessionStart && context != "":
			out = hookSpecific(h.Name, context)
		case h.Kind == EventPrompt && message != "":
			out = hookSpecific(h.Name, message)
		case h.Kind == EventPostTool && message != "":
			out = map[string]string{"decision": "block", "reason": message}
		case h.Kind == EventStop && message != "":
			out = map[string]string{"systemMessage": message}
		}
	}
	if out == nil {
		return nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(out)
	return buf.Bytes()
}

func hookSpecific(event, text string) any {
	return map[string]any{"hookSpecificOutput": map[string]string{"hookEventName": event, "additionalContext": text}}
}

// Deny renders the answer that refuses a tool call about to run (a
// PreToolUse), with reason for the agent: Claude Code and Codex read
// hookSpecificOutput.permissionDecision "deny" and show the reason to the
// model; Cursor's before-hooks read {"permission": "deny"} with a message
// for the user and one for the agent. nil when the event cannot refuse.
func (h *Hook) Deny(reason string) []byte {
	if h.Kind != EventPreTool || reason == "" {
		return nil
	}
	var out any
	if h.Agent == Cursor {
		out = map[string]string{"permission": "deny", "user_message": reason, "agent_message": reason}
	} else {
		out = map[string]any{"hookSpecificOutput": map[string]string{
			"hookEventName": h.Name, "permissionDecision": "deny", "permissionDecisionReason": reason}}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(out)
	return buf.Bytes()
}

// Reports says whether a violation found on this hook can reach the agent
// (otherwise it is left for a later hook to report).
func (h *Hook) Reports() bool {
	if h.Agent == Cursor {
		return h.Kind == EventStop && !h.Again
	}
	return h.Kind == EventPostTool || h.Kind == EventPrompt || h.Kind == EventStop
}

// Relativize makes the events' absolute paths inside root relative to it.
func (h *Hook) Relativize(root string) {
	h.MapPaths(func(p string) string { return relPath(p, root) })
}

// MapPaths replaces every file path the hook names (its events', the
// edits about to run, the tool call's file) with f's answer; f is not
// called for an empty path.
func (h *Hook) MapPaths(f func(string) string) {
	mapped := func(p string) string {
		if p == "" {
			return p
		}
		return f(p)
	}
	for i := range h.Events {
		h.Events[i].File = mapped(h.Events[i].File)
	}
	for i := range h.Edits {
		h.Edits[i] = mapped(h.Edits[i])
	}
	if h.Call != nil && h.Call.File {
		h.Call.Input = mapped(h.Call.Input)
	}
}

package agent

import (
	"encoding/json"
	"strconv"
	"strings"
)

// ToolCall is a tool call about to run (PreToolUse) or that ran
// (PostToolUse), as an action snapshot records it.
type ToolCall struct {
	// Tool is the agent's own name for it (Bash, Edit, apply_patch,
	// Shell...).
	Tool string
	// Input is its command line (shell tools) or the file it writes
	// (edit tools), cut to MaxInput bytes; "" when it names neither.
	Input string
	// File: Input is a path (relative to the worktree once Relativize
	// ran).
	File bool
	// Undo: a shell command that is `git hegel undo` and nothing else
	// (UndoCommand). It gets no snapshot: run by the agent, the undo
	// would otherwise undo its own call, which changed nothing yet, and a
	// redo would find a new action recorded after the undo it takes back.
	Undo bool
	// Gate is the person's command a shell command runs (approve,
	// reject, answer, trust: GateCommand), "" for none.
	Gate string
}

// MaxInput bounds ToolCall.Input.
const MaxInput = 512

// DefaultSnapshotTools are the tools that may change files, of every
// agent: Claude Code's Bash, Edit, MultiEdit, Write and NotebookEdit;
// Codex's shell, local_shell and apply_patch; Cursor's Shell, StrReplace,
// Delete and Write (its beforeShellExecution and afterFileEdit hooks
// count as Shell and Edit).
var DefaultSnapshotTools = []string{
	"Bash", "Edit", "MultiEdit", "Write", "NotebookEdit",
	"shell", "local_shell", "apply_patch",
	"Shell", "StrReplace", "Delete", "TabWrite",
}

// SnapshotsTool reports whether a call of tool gets an action snapshot:
// tools is hegel.agent.snapshotTools (nil: DefaultSnapshotTools). Names
// compare case-sensitively, as the agents send them.
func SnapshotsTool(tool string, tools []string) bool {
	if tools == nil {
		tools = DefaultSnapshotTools
	}
	for _, t := range tools {
		if t == tool {
			return true
		}
	}
	return false
}

// ParseToolList reads hegel.agent.snapshotTools: names separated by
// commas or spaces. An empty value is an empty list (no tool).
func ParseToolList(v string) []string {
	out := []string{}
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		out = append(out, f)
	}
	return out
}

// toolCall is the ToolCall of a pre or post tool hook (nil for others).
func toolCall(p *payload, kind string) *ToolCall {
	if kind != EventPreTool && kind != EventPostTool {
		return nil
	}
	tool := p.ToolName
	var evs []Event
	switch p.HookEventName {
	case "beforeShellExecution", "afterShellExecution":
		tool = "Shell"
		return &ToolCall{Tool: tool, Input: cutInput(strings.TrimSpace(p.Command)), Undo: UndoCommand(p.Command), Gate: GateCommand(p.Command)}
	case "afterFileEdit":
		return &ToolCall{Tool: "Edit", Input: cutInput(p.FilePath), File: true}
	}
	if tool == "" {
		return nil
	}
	evs = toolEvents(tool, p.ToolInput, Event{}, "")
	c := &ToolCall{Tool: tool}
	if len(evs) > 0 {
		switch {
		case evs[0].Command != "":
			c.Input = cutInput(evs[0].Command)
			// The whole command, not the event's clipped copy: what
			// follows the clip could be another command.
			var in toolInput
			if json.Unmarshal(p.ToolInput, &in) == nil {
				c.Undo = UndoCommand(commandText(in.Command))
				c.Gate = GateCommand(commandText(in.Command))
			}
		case evs[0].File != "":
			c.Input, c.File = cutInput(evs[0].File), true
		}
	}
	return c
}

// cutInput keeps at most MaxInput bytes of s, on a character boundary.
func cutInput(s string) string {
	if len(s) <= MaxInput {
		return s
	}
	n := MaxInput
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// UndoCommand reports a shell command that runs `git hegel undo` (any
// form: --redo, --list, -n) and nothing else: "git hegel undo ..." or
// "git-hegel undo ...", with no character that could start another
// command, a redirection, a substitution or an expansion. Anything more is
// an ordinary command, snapshotted as any other, so no change can hide
// behind it.
func UndoCommand(cmd string) bool {
	f := strings.Fields(cmd)
	switch {
	case len(f) >= 3 && f[0] == "git" && f[1] == "hegel" && f[2] == "undo":
	case len(f) >= 2 && f[0] == "git-hegel" && f[1] == "undo":
	default:
		return false
	}
	return !strings.ContainsAny(cmd, ";&|<>`$(){}\\\n\r*?[~!#")
}

// gateCommands are git-hegel's commands that stand for the person: an
// approval or rejection at a gate, the answer to a question the agent
// asked, trust in a definition or text that came from elsewhere.
var gateCommands = []string{"approve", "reject", "answer", "trust"}

// forcedCommands stand for the person when --force is given: lock
// --force takes a lock over from another task (whose files the lock kept
// the agent out of), unlock --force changes another worktree's task.
var forcedCommands = []string{"lock", "unlock"}

// forced says whether the words after a command give --force (or
// --force=VALUE with a value other than false, as the flag parser reads
// it), up to the next git or git-hegel word (the words of a command
// line, not its grammar).
func forced(rest []string) bool {
	for _, w := range rest {
		switch {
		case w == "--force":
			return true
		case strings.HasPrefix(w, "--force="):
			if v, err := strconv.ParseBool(strings.Trim(w[len("--force="):], `'"`)); err != nil || v {
				return true
			}
		case w == "git" || strings.HasSuffix(w, "/git") || w == "git-hegel" || strings.HasSuffix(w, "/git-hegel"):
			return false
		}
	}
	return false
}

// readOnly says whether gate command g with the words after it only
// shows something: its help, or trust's --list and --dry-run.
func readOnly(g string, rest []string) bool {
	for _, w := range rest[:min(len(rest), 4)] {
		switch {
		case w == "-h" || w == "--help":
			return true
		case g == "trust" && (w == "--list" || w == "-n" || w == "--dry-run"):
			return true
		}
	}
	return false
}

// GateCommand returns the gate command a shell command line runs
// ("git hegel approve ...", "git -C dir hegel answer ...", "git-hegel
// trust ...", "git hegel lock --force ..." as "lock --force", anywhere in
// the line), "" for none. It reads words, not the
// shell's grammar: it is there to stop an agent that was told (by a
// prompt, or by text in a file it read) to pass a gate itself, not one
// that hides the command from it. Help, and trust --list or --dry-run,
// only show something and pass.
func GateCommand(cmd string) string {
	f := strings.FieldsFunc(cmd, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == ';' || r == '&' || r == '|' || r == '(' || r == ')' || r == '`'
	})
	for i := 0; i < len(f); i++ {
		j := -1
		switch w := f[i]; {
		case w == "git" || strings.HasSuffix(w, "/git"):
			// git's own options come before the subcommand.
			k := i + 1
			for k < len(f) && strings.HasPrefix(f[k], "-") {
				if f[k] == "-C" || f[k] == "-c" {
					k++
				}
				k++
			}
			if k+1 < len(f) && f[k] == "hegel" {
				j = k + 1
			}
		case w == "git-hegel" || strings.HasSuffix(w, "/git-hegel"):
			j = i + 1
		}
		if j < 0 || j >= len(f) {
			continue
		}
		for _, g := range gateCommands {
			if f[j] != g {
				continue
			}
			if !readOnly(g, f[j+1:]) {
				return g
			}
		}
		for _, g := range forcedCommands {
			if f[j] == g && forced(f[j+1:]) && !readOnly(g, f[j+1:]) {
				return g + " --force"
			}
		}
	}
	return ""
}

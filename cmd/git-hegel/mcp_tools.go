package main

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpTool is one entry of the MCP server's tool table: a command the
// client may run. add registers it (its input and output schemas are
// built from Go types there, when `git hegel mcp` starts, never in another
// command).
type mcpTool struct {
	name string
	add  func(s *mcpServer)
}

// mcpTools are the tools, one entry each. Reading tools print the
// command's --json=2 document; writing tools return what the command
// printed and the task's status after it. approve, reject and answer are
// not here: they are the person's decision, and an agent must not make
// them for itself.
var mcpTools = []mcpTool{
	jsonTool("status", "The active task (or --task's): workflow, node, status, history, git branch and HEAD; the data of 'git hegel status --json=2'.",
		statusJSON2{}, func(in mcpTaskIn) []string { return withTask([]string{"status"}, in.Task) }),
	jsonTool("tasks", "The repository's tasks; the data of 'git hegel tasks --json=2'.",
		tasksJSON{}, func(in mcpTasksIn) []string {
			return flagsIf([]string{"tasks"}, in.All, "--all", in.Archived, "--archived", in.Mine, "--mine")
		}),
	jsonTool("show", "Everything about a task (default: the active one), archived ones too: state, artifacts, checkpoints; the data of 'git hegel show --json=2'.",
		showJSON{}, func(in mcpTaskIn) []string { return withTask([]string{"show"}, in.Task) }),
	jsonTool("artifact", "One artifact of a task as its node submitted it; the data of 'git hegel artifact --json=2'.",
		artifactJSONOut{}, func(in mcpArtifactIn) []string {
			args := []string{"artifact"}
			if in.Node != "" {
				args = append(args, "--node="+in.Node)
			}
			return append(args, "--", in.Task, in.Name)
		}),
	jsonTool("result", "The stored result of a step the task ran; the data of 'git hegel result --json=2'.",
		resultJSON{}, func(in mcpResultIn) []string { return append(withTask([]string{"result"}, in.Task), "--", in.Node) }),
	jsonTool("log", "The runs that ended and the open ones, newest first; the data of 'git hegel log --json=2'.",
		logJSON{}, func(in mcpLogIn) []string {
			args := []string{"log"}
			for _, f := range []struct{ name, v string }{{"task", in.Task}, {"workflow", in.Workflow}, {"status", in.Status}} {
				if f.v != "" {
					args = append(args, "--"+f.name+"="+f.v)
				}
			}
			if in.MaxCount != 0 { // a negative count is refused as the command refuses it
				args = append(args, fmt.Sprintf("--max-count=%d", in.MaxCount))
			}
			return args
		}),
	jsonTool("workflows", "The workflows that can be started, and the files that could not be loaded; the data of 'git hegel workflows --json=2'.",
		workflowsJSON{}, func(struct{}) []string { return []string{"workflows"} }),
	actionTool("next", "Complete the current node and move on: the claim defaults to <node>_complete. Returns the new node's prompt, or the gate the task waits at. force bypasses the node's guard rules (recorded in the task); force_rules only those types.",
		func(in mcpNextIn) []string {
			args := withTask([]string{"next"}, in.Task)
			if in.Force {
				args = append(args, "--force=all")
			}
			for _, r := range in.ForceRules {
				args = append(args, "--force="+r)
			}
			if in.Claim != "" {
				args = append(args, "--", in.Claim)
			}
			return args
		}),
	actionTool("ask", "Ask the person a question: the task waits until they answer with 'git hegel answer'.",
		func(in mcpAskIn) []string { return append(withTask([]string{"ask"}, in.Task), "--", in.Question) }),
	actionTool("fail", "Record a failed attempt at the current node, with why.",
		func(in mcpFailIn) []string { return messageArg(withTask([]string{"fail"}, in.Task), in.Reason) }),
	actionTool("checkpoint", "Save the working tree, index and HEAD now, so a rollback can come back to this point.",
		func(in mcpCheckpointIn) []string {
			return messageArg(withTask([]string{"checkpoint"}, in.Task), in.Message)
		}),
	jsonTool("actions", "The agent actions recorded for undo (newest first: time, tool, command or file, files changed, session); the data of 'git hegel undo --list --json=2'.",
		actionListJSON{}, func(in mcpTaskIn) []string { return withTask([]string{"undo", "--list"}, in.Task) }),
	actionTool("undo", "Put back the files the last n agent actions changed (default 1), as they were before those actions; redo brings back what the last undo took away. Refused, naming the paths, when something else changed those files later, unless force. A dry run listing what would change unless confirm is true; a real one saves a safety snapshot first.",
		func(in mcpUndoIn) []string {
			args := withTask([]string{"undo"}, in.Task)
			if in.Confirm {
				args = append(args, "--yes")
			} else {
				args = append(args, "--dry-run")
			}
			args = flagsIf(args, in.Redo, "--redo", in.Force, "--force")
			if in.N != nil {
				// 0 and negatives too: the command refuses them, as it
				// refuses `undo 0`, rather than undoing one action.
				args = append(args, "--", fmt.Sprint(*in.N))
			}
			return args
		}),
	actionTool("rollback", "Go back to the start of a node (default: the current one), a checkpoint (to), or the whole workflow (all): files, index, HEAD and workflow state. A dry run listing what would change unless confirm is true; a real one always saves a safety checkpoint first, which undo restores.",
		func(in mcpRollbackIn) []string {
			args := withTask([]string{"rollback"}, in.Task)
			if in.Confirm {
				args = append(args, "--yes")
			} else {
				args = append(args, "--dry-run")
			}
			if in.To != "" {
				args = append(args, "--to="+in.To)
			}
			args = flagsIf(args, in.All, "--all", in.Undo, "--undo", in.Force, "--force")
			args = messageArg(args, in.Reason)
			if in.Node != "" {
				args = append(args, "--", in.Node)
			}
			return args
		}),
}

// Tool inputs. A field without omitempty is required.

type mcpTaskIn struct {
	Task string `json:"task,omitempty" jsonschema:"the task to act on (default: this worktree's active one)"`
}

type mcpUndoIn struct {
	N       *int   `json:"n,omitempty" jsonschema:"how many of the newest actions to undo, 1 or more (default 1)"`
	Redo    bool   `json:"redo,omitempty" jsonschema:"bring back what the last undo took away instead"`
	Force   bool   `json:"force,omitempty" jsonschema:"undo even files something else changed after the action"`
	Confirm bool   `json:"confirm,omitempty" jsonschema:"really change the files; without it the call is a dry run"`
	Task    string `json:"task,omitempty" jsonschema:"the task (default: this worktree's active one)"`
}

type mcpTasksIn struct {
	All      bool `json:"all,omitempty" jsonschema:"also list finished tasks not archived yet"`
	Archived bool `json:"archived,omitempty" jsonschema:"also list archived tasks"`
	Mine     bool `json:"mine,omitempty" jsonschema:"only the tasks a worktree of this clone holds"`
}

type mcpArtifactIn struct {
	Task string `json:"task" jsonschema:"the task"`
	Name string `json:"name" jsonschema:"the artifact's name"`
	Node string `json:"node,omitempty" jsonschema:"the node whose copy to read, when several submitted the name"`
}

type mcpResultIn struct {
	Node string `json:"node" jsonschema:"the step's node"`
	Task string `json:"task,omitempty" jsonschema:"the task (default: this worktree's active one)"`
}

type mcpLogIn struct {
	Task     string `json:"task,omitempty" jsonschema:"only runs of this task"`
	Workflow string `json:"workflow,omitempty" jsonschema:"only runs of this workflow"`
	Status   string `json:"status,omitempty" jsonschema:"only runs with this status (completed, aborted, failed, rolled_back, active, paused…)"`
	MaxCount int    `json:"max_count,omitempty" jsonschema:"at most this many runs"`
}

type mcpNextIn struct {
	Claim      string   `json:"claim,omitempty" jsonschema:"the transition's claim (default: <node>_complete)"`
	Force      bool     `json:"force,omitempty" jsonschema:"bypass every guard rule of the node, move on without its artifact, or on another worktree's task (recorded in the task)"`
	ForceRules []string `json:"force_rules,omitempty" jsonschema:"bypass only the guard rules of these types (recorded in the task)"`
	Task       string   `json:"task,omitempty" jsonschema:"the task (default: this worktree's active one)"`
}

type mcpAskIn struct {
	Question string `json:"question" jsonschema:"the question for the person"`
	Task     string `json:"task,omitempty" jsonschema:"the task (default: this worktree's active one)"`
}

type mcpFailIn struct {
	Reason string `json:"reason,omitempty" jsonschema:"why the attempt failed"`
	Task   string `json:"task,omitempty" jsonschema:"the task (default: this worktree's active one)"`
}

type mcpCheckpointIn struct {
	Message string `json:"message,omitempty" jsonschema:"describes the checkpoint"`
	Task    string `json:"task,omitempty" jsonschema:"the task (default: this worktree's active one)"`
}

type mcpRollbackIn struct {
	Node    string `json:"node,omitempty" jsonschema:"go back to the start of this node (default: the current one)"`
	To      string `json:"to,omitempty" jsonschema:"go back to this checkpoint id instead"`
	All     bool   `json:"all,omitempty" jsonschema:"roll the whole workflow back to its start and end it"`
	Undo    bool   `json:"undo,omitempty" jsonschema:"undo the last rollback (its safety checkpoint is restored)"`
	Force   bool   `json:"force,omitempty" jsonschema:"roll back past the loop guard (a checkpoint this clone did not take is the person's to roll back to)"`
	Reason  string `json:"reason,omitempty" jsonschema:"why, kept in the task's rollback history"`
	Confirm bool   `json:"confirm,omitempty" jsonschema:"true to roll back; otherwise only list what would change"`
	Task    string `json:"task,omitempty" jsonschema:"the task (default: this worktree's active one)"`
}

// mcpActionOut is a writing tool's output: what the command printed and
// the task's status after it (statusJSON2, as the status tool returns).
type mcpActionOut struct {
	Output   string          `json:"output" jsonschema:"what the command printed: where the task is now and the prompt to follow"`
	Warnings string          `json:"warnings,omitempty" jsonschema:"what it printed on standard error"`
	Status   json.RawMessage `json:"status" jsonschema:"the task's status after the command, as the status tool returns it"`
}

func withTask(args []string, task string) []string {
	if task != "" {
		args = append(args, "--task="+task)
	}
	return args
}

func messageArg(args []string, msg string) []string {
	if msg != "" {
		args = append(args, "--message="+msg)
	}
	return args
}

// flagsIf appends each flag whose condition holds: pairs of bool, flag.
func flagsIf(args []string, pairs ...any) []string {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i].(bool) {
			args = append(args, pairs[i+1].(string))
		}
	}
	return args
}

// jsonTool is a reading tool: the command run with --json=2, its document
// the structured output (schema built from out's type) and the first text
// block, a line saying what it holds the second.
func jsonTool[In any](name, desc string, out any, argv func(In) []string) mcpTool {
	return mcpTool{name: name, add: func(s *mcpServer) {
		schema := mustSchema(reflect.TypeOf(out))
		t := &mcp.Tool{Name: name, Description: desc, OutputSchema: schema,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)}}
		mcp.AddTool(s.server, t, func(_ context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
			args := argv(in)
			// The schema goes before any "--" that ends the flags.
			args = append([]string{args[0], "--json=2"}, args[1:]...)
			stdout, stderr, err := s.call(args...)
			if err != nil {
				return toolError(err, stderr), nil, nil
			}
			res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(stdout)}}}
			if w := strings.TrimSpace(string(stderr)); w != "" {
				res.Content = append(res.Content, &mcp.TextContent{Text: w})
			}
			return res, json.RawMessage(stdout), nil
		})
	}}
}

// actionTool is a writing tool: the command as typed, then status.
func actionTool[In any](name, desc string, argv func(In) []string) mcpTool {
	return mcpTool{name: name, add: func(s *mcpServer) {
		schema := mustSchema(reflect.TypeOf(mcpActionOut{}))
		status := mustSchema(reflect.TypeOf(statusJSON2{}))
		status.Type, status.Types = "", []string{"null", "object"} // null when it cannot be read
		schema.Properties["status"] = status
		t := &mcp.Tool{Name: name, Description: desc, OutputSchema: schema,
			Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(name == "rollback" || name == "undo"), OpenWorldHint: ptr(false)}}
		mcp.AddTool(s.server, t, func(_ context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
			stdout, stderr, err := s.call(argv(in)...)
			if err != nil {
				return toolError(err, stderr), nil, nil
			}
			out := &mcpActionOut{Output: string(stdout), Warnings: string(stderr)}
			st, _, err := s.call("status", "--json=2")
			if err != nil {
				// The command did its work; say so, and why the status is missing.
				out.Warnings += err.Error() + "\n"
				st = []byte("null")
			}
			out.Status = st
			text := strings.TrimRight(out.Output, "\n")
			if text == "" {
				text = "git hegel " + name + ": done"
			}
			res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
			if w := strings.TrimSpace(out.Warnings); w != "" {
				res.Content = append(res.Content, &mcp.TextContent{Text: w})
			}
			return res, out, nil
		})
	}}
}

// toolError is a command's failure as the client sees it: the command's
// one line, then what it printed on stderr before it (a guard rule's
// events, how to comply).
func toolError(err error, stderr []byte) *mcp.CallToolResult {
	res := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
	if s := strings.TrimSpace(string(stderr)); s != "" && s != err.Error() {
		res.Content = append(res.Content, &mcp.TextContent{Text: s})
	}
	return res
}

// mustSchema is the JSON schema of a --json type. The types are this
// package's own, so a failure is a bug found by any test that starts the
// server.
func mustSchema(t reflect.Type) *jsonschema.Schema {
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{})
	if err != nil {
		panic(fmt.Sprintf("mcp: schema of %s: %v", t, err))
	}
	openObjects(s)
	return s
}

// openObjects lets every object of s hold properties it does not list:
// within a schema version, --json output only ever gains fields (and a
// task's "<node>_complete" booleans are named by the workflow), so a
// client reads what it knows and ignores the rest.
func openObjects(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if a := s.AdditionalProperties; a != nil && a.Not != nil && reflect.ValueOf(*a.Not).IsZero() {
		s.AdditionalProperties = nil
	}
	openObjects(s.AdditionalProperties)
	openObjects(s.Items)
	for _, p := range s.Properties {
		openObjects(p)
	}
	for _, d := range s.Defs {
		openObjects(d)
	}
	for _, d := range s.AnyOf {
		openObjects(d)
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// getenvOf reads an environment given as KEY=VALUE lines, the last one
// winning, as the process environment does.
func getenvOf(env []string) func(string) string {
	return func(key string) string {
		v := ""
		for _, kv := range env {
			if k, val, ok := strings.Cut(kv, "="); ok && k == key {
				v = val
			}
		}
		return v
	}
}

// mcpClient connects an SDK client to a server running in this process on
// dir, and returns its session and the resource updates it hears.
func mcpClient(t *testing.T, dir string, env []string) (*mcp.ClientSession, chan string) {
	t.Helper()
	ctx := context.Background()
	var stderr bytes.Buffer
	srv := newMCPServer(&Env{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &stderr, Getenv: getenvOf(env), Dir: dir,
		Now: time.Now, Terminal: func(io.Writer) bool { return false }})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	updates := make(chan string, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { updates <- req.Params.URI }})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait(); srv.stopWatching() })
	return cs, updates
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func toolText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text + "\n")
		}
	}
	return b.String()
}

// structured decodes a tool's structured output.
func structured(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
}

type mcpStatus struct {
	Task struct {
		Task        string   `json:"task"`
		CurrentNode string   `json:"current_node"`
		Status      string   `json:"status"`
		History     []string `json:"history"`
	} `json:"task"`
}

// TestMCPTools drives every tool through the SDK's client, in process.
func TestMCPTools(t *testing.T) {
	dir, env := loopRepo(t)
	cs, _ := mcpClient(t, dir, env)
	ctx := context.Background()

	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		if tool.OutputSchema == nil || tool.InputSchema == nil {
			t.Errorf("tool %s: no input or output schema", tool.Name)
		}
		if tool.Name == "next" {
			// The status after a writing command is null when it cannot be read.
			b, _ := json.Marshal(tool.OutputSchema)
			var sch struct {
				Properties map[string]struct {
					Type any `json:"type"`
				} `json:"properties"`
			}
			json.Unmarshal(b, &sch)
			if got := fmt.Sprint(sch.Properties["status"].Type); got != "[null object]" {
				t.Errorf("next's status: type %s, not null or object", got)
			}
		}
	}
	slices.Sort(names)
	want := []string{"actions", "artifact", "ask", "checkpoint", "fail", "log", "next", "result", "rollback", "show", "status", "tasks", "undo", "workflows"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v (approve, reject and answer are the person's)", names, want)
	}

	var st mcpStatus
	structured(t, callTool(t, cs, "status", nil), &st)
	if st.Task.Task != "race" || st.Task.CurrentNode != "a" {
		t.Fatalf("status: %+v", st)
	}
	for _, name := range []string{"tasks", "show", "workflows", "log"} {
		res := callTool(t, cs, name, nil)
		if res.IsError || res.StructuredContent == nil {
			t.Errorf("%s: %s", name, toolText(res))
		}
	}
	var tasks struct {
		Tasks []struct {
			Task string `json:"task"`
		} `json:"tasks"`
	}
	structured(t, callTool(t, cs, "tasks", nil), &tasks)
	if len(tasks.Tasks) != 1 || tasks.Tasks[0].Task != "race" {
		t.Errorf("tasks: %+v", tasks)
	}

	// Errors are the command's one line, and the server goes on.
	if res := callTool(t, cs, "artifact", map[string]any{"task": "race", "name": "NOPE.md"}); !res.IsError || !strings.HasPrefix(toolText(res), "error: ") {
		t.Errorf("artifact of nothing: %s", toolText(res))
	}
	if res := callTool(t, cs, "result", map[string]any{"node": "a"}); !res.IsError {
		t.Errorf("result of a node without a step: %s", toolText(res))
	}
	if res := callTool(t, cs, "next", map[string]any{"claim": 5}); !res.IsError || !strings.Contains(toolText(res), "claim") {
		t.Errorf("a claim of the wrong type: %s", toolText(res))
	}
	if res := callTool(t, cs, "show", map[string]any{"task": "../x"}); !res.IsError {
		t.Errorf("a bad task name: %s", toolText(res))
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "approve"}); err == nil {
		t.Errorf("approve is a tool")
	}
	// A claim that looks like a flag is a claim.
	if res := callTool(t, cs, "next", map[string]any{"claim": "--force"}); !res.IsError || !strings.Contains(toolText(res), "--force") {
		t.Errorf("claim --force: %s", toolText(res))
	}

	res := callTool(t, cs, "checkpoint", map[string]any{"message": "before"})
	if res.IsError {
		t.Fatalf("checkpoint: %s", toolText(res))
	}
	res = callTool(t, cs, "next", map[string]any{"claim": "again"})
	var out struct {
		Output string    `json:"output"`
		Status mcpStatus `json:"status"`
	}
	structured(t, res, &out)
	if res.IsError || !strings.Contains(out.Output, "Go round again.") || len(out.Status.Task.History) != 2 {
		t.Fatalf("next again: %s %+v", toolText(res), out)
	}

	// rollback is a dry run unless confirmed.
	res = callTool(t, cs, "rollback", nil)
	if res.IsError {
		t.Fatalf("rollback dry run: %s", toolText(res))
	}
	structured(t, res, &out)
	if len(out.Status.Task.History) != 2 || out.Status.Task.Status != "active" {
		t.Fatalf("a dry run changed the task: %+v", out)
	}
	res = callTool(t, cs, "rollback", map[string]any{"confirm": true, "reason": "try again"})
	if res.IsError {
		t.Fatalf("rollback: %s", toolText(res))
	}
	structured(t, res, &out)
	if out.Status.Task.Status != "paused" {
		t.Fatalf("after a rollback: %+v\n%s", out, toolText(res))
	}
	if log := mustSh(t, env, dir, "git", "hegel", "checkpoint", "list"); !strings.Contains(log, "safety") {
		t.Errorf("no safety checkpoint:\n%s", log)
	}
	mustSh(t, env, dir, "git", "hegel", "resume")

	res = callTool(t, cs, "fail", map[string]any{"reason": "the tests fail"})
	if res.IsError || !strings.Contains(toolText(res), "Recorded the failure") {
		t.Fatalf("fail: %s", toolText(res))
	}
	res = callTool(t, cs, "ask", map[string]any{"question": "Which way?"})
	if res.IsError {
		t.Fatalf("ask: %s", toolText(res))
	}
	// The answer is the person's; next waits for it.
	if res := callTool(t, cs, "next", nil); !res.IsError {
		t.Errorf("next while a question is open: %s", toolText(res))
	}
	mustSh(t, env, dir, "git", "hegel", "answer", "this way")

	got, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcpPromptURI})
	if err != nil || !strings.Contains(got.Contents[0].Text, "Go round again.") {
		t.Fatalf("prompt resource: %v %+v", err, got)
	}
	p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: mcpPromptName})
	if err != nil || !strings.Contains(p.Messages[0].Content.(*mcp.TextContent).Text, "Go round again.") {
		t.Fatalf("prompt: %v %+v", err, p)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "hegel://nothing"}); err == nil {
		t.Errorf("an unknown resource was read")
	}
}

// TestMCPUndo: the actions tool lists what the agent hooks recorded, and
// undo is a dry run until confirmed, then puts back only what the action
// changed.
func TestMCPUndo(t *testing.T) {
	dir, env := loopRepo(t)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o644)
	const call = `{"hook_event_name":"%s","session_id":"s1","tool_name":"Edit","tool_input":{"file_path":"a.txt"}}`
	mustShIn(t, env, dir, fmt.Sprintf(call, "PreToolUse"), "git", "hegel", "hook", "PreToolUse")
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("two\n"), 0o644)
	mustShIn(t, env, dir, fmt.Sprintf(call, "PostToolUse"), "git", "hegel", "hook", "PostToolUse")
	os.WriteFile(filepath.Join(dir, "mine.txt"), []byte("the user's\n"), 0o644)
	cs, _ := mcpClient(t, dir, env)

	var list struct {
		Actions []struct {
			Tool    string   `json:"tool"`
			Changed []string `json:"changed"`
		} `json:"actions"`
	}
	structured(t, callTool(t, cs, "actions", nil), &list)
	if len(list.Actions) != 1 || list.Actions[0].Tool != "Edit" || !slices.Equal(list.Actions[0].Changed, []string{"a.txt"}) {
		t.Fatalf("actions: %+v", list)
	}
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		return string(b)
	}
	if res := callTool(t, cs, "undo", nil); res.IsError || read("a.txt") != "two\n" {
		t.Fatalf("a dry run changed a.txt (%q): %s", read("a.txt"), toolText(res))
	}
	if res := callTool(t, cs, "undo", map[string]any{"n": "one"}); !res.IsError {
		t.Errorf("n of the wrong type: %s", toolText(res))
	}
	// n below 1 is refused as `undo 0` is, never taken for the default.
	for _, n := range []int{0, -5} {
		res := callTool(t, cs, "undo", map[string]any{"n": n, "confirm": true})
		if !res.IsError || !strings.Contains(toolText(res), "is not a number of actions") || read("a.txt") != "two\n" {
			t.Errorf("undo n=%d: a.txt %q: %s", n, read("a.txt"), toolText(res))
		}
	}
	if res := callTool(t, cs, "undo", map[string]any{"confirm": true}); res.IsError {
		t.Fatalf("undo: %s", toolText(res))
	}
	if read("a.txt") != "one\n" || read("mine.txt") != "the user's\n" {
		t.Fatalf("after undo: a.txt %q, mine.txt %q", read("a.txt"), read("mine.txt"))
	}
	if res := callTool(t, cs, "undo", map[string]any{"confirm": true}); !res.IsError || !strings.HasPrefix(toolText(res), "error: ") {
		t.Errorf("undo with nothing left: %s", toolText(res))
	}
	if res := callTool(t, cs, "undo", map[string]any{"redo": true, "confirm": true}); res.IsError || read("a.txt") != "two\n" {
		t.Fatalf("redo: a.txt %q: %s", read("a.txt"), toolText(res))
	}
}

// TestMCPSubscription: a subscriber hears of a next another process made.
func TestMCPSubscription(t *testing.T) {
	dir, env := loopRepo(t)
	cs, updates := mcpClient(t, dir, env)
	if err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: mcpStateURI}); err != nil {
		t.Fatal(err)
	}
	mustSh(t, env, dir, "git", "hegel", "next", "again")
	select {
	case uri := <-updates:
		if uri != mcpStateURI {
			t.Fatalf("update for %s", uri)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no notification of the move")
	}
	if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "hegel://tasks/-x/artifacts/a"}); err == nil {
		t.Errorf("read an artifact of a bad task name")
	}
}

// TestMCPStdio runs `git hegel mcp` as a process and talks to it over its
// standard input and output.
func TestMCPStdio(t *testing.T) {
	dir, env := loopRepo(t)
	cmd := exec.Command("git", "hegel", "mcp")
	cmd.Dir, cmd.Env = dir, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	ctx := context.Background()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := cs.InitializeResult().ServerInfo.Name; got != "git-hegel" {
		t.Errorf("server %q", got)
	}
	if res := callTool(t, cs, "next", map[string]any{"claim": "nowhere"}); !res.IsError || !strings.HasPrefix(toolText(res), "error: ") {
		t.Errorf("a bad claim: %s", toolText(res))
	}
	var st mcpStatus
	structured(t, callTool(t, cs, "status", nil), &st)
	if st.Task.CurrentNode != "a" {
		t.Fatalf("status: %+v", st)
	}
	if err := cs.Close(); err != nil {
		t.Fatalf("close: %v\n%s", err, stderr.String())
	}
}

// TestMCPLockedTask: a call while another process holds the task's ref
// is a tool error with the command's line, and the server goes on.
func TestMCPLockedTask(t *testing.T) {
	dir, env := loopRepo(t)
	cs, _ := mcpClient(t, dir, env)
	head := strings.TrimSpace(mustSh(t, env, dir, "git", "rev-parse", "refs/hegel/tasks/race"))
	tx := prepareGitTransaction(t, env, dir, "update refs/hegel/tasks/race "+head+" "+head)
	res := callTool(t, cs, "next", map[string]any{"claim": "again"})
	if !res.IsError || !strings.HasPrefix(toolText(res), "error: ") || !strings.Contains(toolText(res), "lock") {
		t.Fatalf("next under another process's lock: %s", toolText(res))
	}
	fmt.Fprintln(tx.in, "abort")
	tx.expect(t, "abort: ok")
	if res := callTool(t, cs, "next", map[string]any{"claim": "again"}); res.IsError {
		t.Fatalf("next once the lock is gone: %s", toolText(res))
	}
}

// TestMCPStdioDuplicateID: requests that reuse the id of one not answered
// yet each get one answer (the in-use error), and the server still ends
// at the input's end instead of waiting for answers that never come.
func TestMCPStdioDuplicateID(t *testing.T) {
	dir, env := loopRepo(t)
	var in strings.Builder
	in.WriteString(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
	const n = 20
	for i := 0; i < n; i++ {
		in.WriteString(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"status","arguments":{}}}` + "\n")
	}
	// 12.5 would be the id 12 to the SDK, and its answer come under
	// that: it is refused under its own id, as is an integer no 64-bit
	// number holds.
	in.WriteString(`{"jsonrpc":"2.0","id":12.5,"method":"ping"}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","id":99999999999999999999,"method":"ping"}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","id":12,"method":"ping"}` + "\n")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "hegel", "mcp")
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = strings.NewReader(in.String())
	cmd.WaitDelay = 2 * time.Second // git's child holds the output open
	out, err := cmd.Output()
	if ctx.Err() != nil {
		t.Fatalf("the server did not end at the input's end; it wrote:\n%s", out)
	}
	if err != nil {
		t.Fatalf("mcp: %v\n%s", err, out)
	}
	answers, inUse := 0, 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.Contains(line, `"id":"a"`) {
			answers++
			if strings.Contains(line, `"code":-32600`) && strings.Contains(line, "in use") {
				inUse++
			}
		}
	}
	if answers != n || inUse == 0 {
		t.Errorf("%d answers to the %d requests with id \"a\" (%d refused as in use), want %d:\n%s", answers, n, inUse, n, out)
	}
	for _, want := range []string{`"id":12,"result":{}`,
		`{"jsonrpc":"2.0","id":12.5,"error":{"code":-32600,"message":"Invalid request: an id must be a string or an integer"}}`,
		`{"jsonrpc":"2.0","id":99999999999999999999,"error":{"code":-32600,"message":"Invalid request: an id must be a string or an integer"}}`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("no %s:\n%s", want, out)
		}
	}
}

// TestMCPStdioLongLine: a request longer than the line bound is answered
// with the invalid-request error under its id, and the session goes on
// (the SDK ended it, and every request after went unanswered).
func TestMCPStdioLongLine(t *testing.T) {
	dir, env := loopRepo(t)
	var in strings.Builder
	in.WriteString(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","arguments":{"question":"` + strings.Repeat("q", mcpMaxLine) + `"}}}` + "\n")
	in.WriteString("\n\n" + `{"jsonrpc":"2.0","id":3,"method":"ping"}` + "\n")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "hegel", "mcp")
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = strings.NewReader(in.String())
	cmd.WaitDelay = 2 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mcp: %v\n%s\n%s", err, out, stderr.String())
	}
	if !strings.Contains(string(out), `{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"Invalid request: the line is longer than 16 MiB"}}`) {
		t.Errorf("no error for the long line:\n%s", out)
	}
	if !strings.Contains(string(out), `"id":3,"result":{}`) {
		t.Errorf("no answer to the ping after it:\n%s", out)
	}
}

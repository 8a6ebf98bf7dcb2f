package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// The MCP server's rows: a status tool call on a server already running
// (what an agent pays per call), and a server's start-up to its answer to
// initialize (what a client waits for when it starts one).

// mcpCallBound is the warm status round trip's target.
const mcpCallBound = 5 * time.Millisecond

// mcpStartBound is start-up to the initialize reply against git hegel
// version.
const mcpStartBound = 1.5

const mcpInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n"

func runMCP(b *bench) ([]row, error) {
	dir, err := b.repo(std(1000))
	if err != nil {
		return nil, err
	}
	if err := b.startLoop(dir); err != nil {
		return nil, err
	}
	in := filepath.Join(b.work, "mcp-initialize.jsonl")
	if err := os.WriteFile(in, []byte(mcpInitialize), 0o644); err != nil {
		return nil, err
	}
	start := timed("git hegel mcp (to the initialize reply)", dir, hegelCmd("mcp")...)
	start.stdin = in
	ss, err := b.measure([]step{start, timed("git hegel version", dir, hegelCmd("version")...)}, b.runs, measureOpts{rotate: true})
	if err != nil {
		return nil, err
	}
	b.keep("mcp", "1k", ss...)
	calls, err := b.mcpStatusCalls(dir, b.runs)
	if err != nil {
		return nil, err
	}
	b.keep("mcp", "1k", calls)
	return []row{
		absRow("mcp: status tool call, warm server", "1k", calls, mcpCallBound),
		timeRow("mcp: start-up to initialize reply vs git hegel version", "1k", ss[0], ss[1], mcpStartBound),
	}, nil
}

// mcpStatusCalls starts one server, initializes it, and times runs status
// tool calls, each from writing the request to reading its reply.
func (b *bench) mcpStatusCalls(dir string, runs int) (*stats, error) {
	cmd := exec.Command(b.bin, "mcp")
	cmd.Dir, cmd.Env = dir, b.env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	r := bufio.NewReader(stdout)
	ask := func(msg string) (string, error) {
		if _, err := io.WriteString(stdin, msg); err != nil {
			return "", err
		}
		return r.ReadString('\n')
	}
	if _, err := ask(mcpInitialize); err != nil {
		return nil, fmt.Errorf("mcp initialize: %v", err)
	}
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		return nil, err
	}
	s := &stats{label: "mcp status tool call (warm server)"}
	warm := 3
	for i := range runs + warm {
		t0 := time.Now()
		line, err := ask(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"status","arguments":{}}}`+"\n", i+2))
		d := time.Since(t0)
		if err != nil {
			return nil, fmt.Errorf("mcp status call: %v", err)
		}
		var reply struct {
			Result *struct {
				IsError bool `json:"isError"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(line), &reply) != nil || reply.Result == nil || reply.Result.IsError {
			return nil, fmt.Errorf("mcp status call: %s", line)
		}
		if i >= warm {
			s.walls = append(s.walls, d)
		}
	}
	return s, nil
}

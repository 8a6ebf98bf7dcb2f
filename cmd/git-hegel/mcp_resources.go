package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/git-hegel/git-hegel/engine"
)

// The MCP server's resources and prompt: the active task's state, its
// current prompt, and each artifact of a task. Each is read when asked,
// through the same commands and engine calls as the command line.

const (
	mcpStateURI    = "hegel://task/state"
	mcpPromptURI   = "hegel://task/prompt"
	mcpArtifactURI = "hegel://tasks/{task}/artifacts/{name}"
	mcpArtifactPre = "hegel://tasks/"
	mcpPromptName  = "current_node"
)

func (s *mcpServer) addResources() {
	s.server.AddResource(&mcp.Resource{URI: mcpStateURI, Name: "task-state", Title: "Task state", MIMEType: "application/json",
		Description: "The active task's state: the data of 'git hegel status --json=2'. Subscribe to hear when the task moves."},
		s.readResource)
	s.server.AddResource(&mcp.Resource{URI: mcpPromptURI, Name: "task-prompt", Title: "Current prompt", MIMEType: "text/markdown",
		Description: "The current node's prompt, rendered with its guides, as 'git hegel repeat' prints it. Subscribe to hear when the task moves."},
		s.readResource)
	s.server.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: mcpArtifactURI, Name: "task-artifact", Title: "Artifact",
		Description: "An artifact of a task as its node submitted it ('git hegel artifact TASK NAME')."},
		s.readResource)
}

func (s *mcpServer) addPrompts() {
	s.server.AddPrompt(&mcp.Prompt{Name: mcpPromptName, Title: "Current node",
		Description: "The active task's current node: its prompt, rendered with its guides."},
		func(_ context.Context, _ *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			v, err := s.view()
			if err != nil {
				return nil, rpcFailure(err)
			}
			return &mcp.GetPromptResult{Description: fmt.Sprintf("Task %s, %s at %s", v.Task, v.Mode, v.Node),
				Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: viewText(v)}}}}, nil
		})
}

type mcpResourceKind int

const (
	mcpState mcpResourceKind = iota
	mcpPrompt
	mcpArtifact
)

// resourceKind names what uri is, or says why it names nothing.
func (s *mcpServer) resourceKind(uri string) (mcpResourceKind, error) {
	switch {
	case uri == mcpStateURI:
		return mcpState, nil
	case uri == mcpPromptURI:
		return mcpPrompt, nil
	case strings.HasPrefix(uri, mcpArtifactPre):
		if _, _, err := artifactOfURI(uri); err != nil {
			return 0, err
		}
		return mcpArtifact, nil
	}
	return 0, mcp.ResourceNotFoundError(uri)
}

// artifactOfURI splits hegel://tasks/TASK/artifacts/NAME.
func artifactOfURI(uri string) (task, name string, err error) {
	rest := strings.TrimPrefix(uri, mcpArtifactPre)
	task, name, ok := strings.Cut(rest, "/artifacts/")
	if ok {
		name, err = url.PathUnescape(name)
	}
	if !ok || err != nil || name == "" || strings.Contains(name, "/") {
		return "", "", mcp.ResourceNotFoundError(uri)
	}
	if err := engine.CheckTaskName(task); err != nil {
		return "", "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	return task, name, nil
}

// rpcFailure is a command's failure as a JSON-RPC error: its one line.
func rpcFailure(err error) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

func (s *mcpServer) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	res, err := s.readResourceOf(req.Params.URI)
	var rpc *jsonrpc.Error
	if err != nil && !errors.As(err, &rpc) {
		err = rpcFailure(err)
	}
	return res, err
}

func (s *mcpServer) readResourceOf(uri string) (*mcp.ReadResourceResult, error) {
	kind, err := s.resourceKind(uri)
	if err != nil {
		return nil, err
	}
	switch kind {
	case mcpState:
		out, _, err := s.call("status", "--json=2")
		if err != nil {
			return nil, err
		}
		return oneResource(uri, "application/json", out), nil
	case mcpPrompt:
		v, err := s.view()
		if err != nil {
			return nil, err
		}
		return oneResource(uri, "text/markdown", []byte(viewText(v))), nil
	}
	task, name, _ := artifactOfURI(uri)
	var a *engine.ArtifactContent
	var fetchedFrom string
	err = s.withCommand("artifact", func(c *cmdCtx) (err error) {
		_, _, a, fetchedFrom, err = c.artifactOf(task, name, "")
		return err
	})
	if err != nil {
		return nil, err
	}
	if fetchedFrom == "" {
		return oneResource(uri, "", a.Data), nil
	}
	return fetchedResource(uri, a, fetchedFrom), nil
}

// fetchedResource is an artifact another clone submitted, as the agent
// reads it: the artifact tool's notice first, then the content between
// two lines naming its blob id, which the content cannot hold (it would
// have to contain its own hash), so no line of it can pass for the end.
// A client may not show _meta to the model; fetched_from there is for the
// client, as the tool's field is.
func fetchedResource(uri string, a *engine.ArtifactContent, remote string) *mcp.ReadResourceResult {
	notice := "warning: " + fetchedNotice(a.Path, remote) // as the tool's stderr has it
	res := oneResource(uri, "", a.Data)
	c := res.Contents[0]
	c.Meta = mcp.Meta{"fetched_from": remote}
	if c.Blob != nil {
		// Bytes that are not text: the notice goes before them, on its own.
		res.Contents = []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: notice + "\n", Meta: c.Meta}, c}
		return res
	}
	body := c.Text
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	c.Text = fmt.Sprintf("%s\n\n----- begin artifact blob %s -----\n%s----- end artifact blob %s -----\n", notice, a.Blob, body, a.Blob)
	return res
}

func oneResource(uri, mime string, data []byte) *mcp.ReadResourceResult {
	c := &mcp.ResourceContents{URI: uri, MIMEType: mime}
	if utf8.Valid(data) {
		c.Text = string(data)
		if c.MIMEType == "" {
			c.MIMEType = "text/plain"
		}
	} else {
		c.Blob = data
		if c.MIMEType == "" {
			c.MIMEType = "application/octet-stream"
		}
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}
}

// view is the active task's current node as `git hegel repeat` shows it:
// the engine's view, whose prompt is rendered with its guides, or a notice
// in its place when this machine does not trust the task's definition.
func (s *mcpServer) view() (*engine.View, error) {
	var v *engine.View
	err := s.withCommand("repeat", func(c *cmdCtx) error {
		e, _, err := c.engine()
		if err != nil {
			return err
		}
		v, err = e.Repeat(c.selected())
		if errors.Is(err, engine.ErrNoWorkflow) {
			return errors.New("No active workflow")
		}
		return err
	})
	return v, err
}

// viewText is the node and its prompt, or the gate it waits at, for the
// agent.
func viewText(v *engine.View) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Task: %s\nMode: %s\nCurrent node: %s\n", v.Task, v.Mode, v.Node)
	if v.State != nil {
		fmt.Fprintf(&b, "Status: %s\n", v.State.Status)
	}
	switch {
	case v.Gate != nil:
		fmt.Fprintf(&b, "\n%s\n", gateText(v.Gate))
	case strings.TrimSpace(v.Prompt) != "":
		fmt.Fprintf(&b, "\n%s\n", trimNL(v.Prompt))
	case v.Step:
		fmt.Fprintf(&b, "\n%s has no prompt: 'git hegel run' runs its step\n", v.Node)
	}
	return b.String()
}

// listArtifacts makes the active task's artifacts resources of their
// own, so resources/list names each (the template reaches any task's).
// It runs before each resources/list; what is no longer there goes.
func (s *mcpServer) listArtifacts() {
	want := map[string]*mcp.Resource{}
	_ = s.withCommand("artifact", func(c *cmdCtx) error {
		e, _, err := c.engine()
		if err != nil {
			return err
		}
		t, err := e.Current("")
		if err != nil {
			return err
		}
		task := t.State.Task
		for _, a := range artifactNames(e, task) {
			uri := mcpArtifactPre + task + "/artifacts/" + url.PathEscape(a.word)
			want[uri] = &mcp.Resource{URI: uri, Name: a.word, Title: a.word + " (task " + task + ")",
				Description: "Artifact " + a.word + " of task " + task + ", " + a.desc}
		}
		return nil
	})
	s.artifactsMu.Lock()
	defer s.artifactsMu.Unlock()
	var gone []string
	for uri := range s.artifacts {
		if want[uri] == nil {
			gone = append(gone, uri)
		}
	}
	if len(gone) > 0 {
		s.server.RemoveResources(gone...)
	}
	for uri, r := range want {
		if !s.artifacts[uri] {
			s.server.AddResource(r, s.readResource)
		}
	}
	s.artifacts = map[string]bool{}
	for uri := range want {
		s.artifacts[uri] = true
	}
}

// withCommand runs f as the command name would run, in this process: its
// flags (none given), the server's environment, one call at a time.
func (s *mcpServer) withCommand(name string, f func(c *cmdCtx) error) error {
	_, _, err := s.callFunc(name, f)
	return err
}

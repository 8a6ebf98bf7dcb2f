package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// `git hegel mcp`: a Model Context Protocol server over standard input and
// output, for as long as the client keeps it open. It is an adapter: every
// tool runs a command in this process, through the same dispatch, flags,
// checks and --json output as the command line (so ownership, gates, trust,
// locks and compare-and-swap hold as they do there), and hands the client
// what the command printed. Standard output carries protocol messages only.

func runMCP(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 0); err != nil {
		return err
	}
	srv := newMCPServer(c.Env)
	in, ok := c.Stdin.(io.ReadCloser)
	if !ok {
		in = io.NopCloser(c.Stdin)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer srv.stopWatching()
	d := newMCPDrain()
	w := &drainWriter{d: d, w: c.Stdout}
	// The reader bounds each line itself (mcpMaxLine) and answers a longer
	// one; the SDK's own bound would end the session.
	t := &mcp.IOTransport{Reader: &drainReader{d: d, in: in, r: bufio.NewReader(in), w: w}, Writer: w, MaxLineLength: -1}
	err := srv.server.Run(ctx, t)
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		// The client closed its end: the session is over.
		return nil
	}
	return fmt.Errorf("mcp: %v", err)
}

// mcpServer is the server and what its handlers share.
type mcpServer struct {
	server *mcp.Server
	env    *Env
	// mu runs one command at a time: a command is written for a process
	// of its own (its lock owner files, its snapshots), and the client may
	// send calls concurrently.
	mu sync.Mutex
	// watch is the poller that tells subscribers the task moved
	// (mcp_watch.go).
	watch *taskWatch
	// toolsOnce registers the tools on the first tools/ request.
	toolsOnce sync.Once
	// artifacts are the artifact resources listed last (mcp_resources.go).
	artifactsMu sync.Mutex
	artifacts   map[string]bool
}

func newMCPServer(env *Env) *mcpServer {
	s := &mcpServer{env: env}
	s.watch = newTaskWatch(s)
	s.server = mcp.NewServer(&mcp.Implementation{Name: "git-hegel", Title: "git-hegel", Version: version}, &mcp.ServerOptions{
		Instructions: mcpInstructions,
		// Logs go to standard error; standard output is the protocol's.
		Logger:             slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		SubscribeHandler:   s.watch.subscribe,
		UnsubscribeHandler: s.watch.unsubscribe,
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{},
			Resources: &mcp.ResourceCapabilities{Subscribe: true},
			Prompts:   &mcp.PromptCapabilities{},
		},
	})
	// The tools' schemas are built from the --json types by reflection,
	// which takes longer than the rest of start-up together (16 ms against
	// a few): they are built when the client first asks about tools, not
	// before the initialize reply. The capability is declared above, so
	// the client knows there are tools.
	s.server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "resources/list" {
				s.listArtifacts()
			}
			if strings.HasPrefix(method, "tools/") {
				s.toolsOnce.Do(func() {
					for _, t := range mcpTools {
						t.add(s)
					}
				})
			}
			return next(ctx, method, req)
		}
	})
	s.addResources()
	s.addPrompts()
	return s
}

const mcpInstructions = "git-hegel keeps this repository's stage-gated workflow. Read the task's state with the status tool and " +
	"the current node's instructions from the prompt (or the hegel://task/prompt resource); when the node's work is done, " +
	"call next. Approvals, rejections and answers to questions are the person's: there are no tools for them."

// call runs one git-hegel command in this process with the server's
// environment, and returns what it printed on stdout and stderr. A
// command's error comes back as the one line the command prints.
func (s *mcpServer) call(args ...string) (stdout, stderr []byte, err error) {
	return s.run(args[0], func(env *Env) error { return dispatch(args, env) })
}

// callFunc runs f as the command name runs, with no flags given.
func (s *mcpServer) callFunc(name string, f func(c *cmdCtx) error) (stdout, stderr []byte, err error) {
	return s.run(name, func(env *Env) error {
		c := &cmdCtx{Env: env, name: name, flags: lookup(name).flagSet(env)}
		defer c.closeSnapshots()
		return f(c)
	})
}

func (s *mcpServer) run(name string, f func(env *Env) error) (stdout, stderr []byte, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out, errOut bytes.Buffer
	env := &Env{
		Stdin:    strings.NewReader(""), // nobody answers a question
		Stdout:   &out,
		Stderr:   &errOut,
		Getenv:   s.env.Getenv,
		Dir:      s.env.Dir,
		Now:      s.env.Now,
		Terminal: func(io.Writer) bool { return false },
		forAgent: true,
	}
	err = func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("git hegel %s failed: %v", name, p)
			}
		}()
		// The lock owner files are the command's, as when it runs alone.
		defer refs.ReleaseLockOwners()
		return f(env)
	}()
	if err != nil {
		if msg := message(err); msg != "" {
			err = errors.New(msg)
		} else {
			// A silent error already said why on stderr.
			err = errors.New(firstLineOf(strings.TrimSpace(errOut.String())))
		}
	}
	return out.Bytes(), errOut.Bytes(), err
}

// stopWatching ends the poller when the session ends.
func (s *mcpServer) stopWatching() { s.watch.stop() }

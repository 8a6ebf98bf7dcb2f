package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// command is one entry of the dispatch table.
type command struct {
	name     string
	args     string // synopsis after the name
	summary  string
	group    string
	setFlags func(fs *pflag.FlagSet) // nil: no flags besides -h
	run      func(c *cmdCtx, args []string) error
}

// cmdCtx is what a running command gets: the environment and its parsed
// flags.
type cmdCtx struct {
	*Env
	name  string
	flags *pflag.FlagSet
}

var groups = []string{"Workflows", "Inspect", "Setup"}

// commands is the dispatch table; help output and the man page test read
// it, so a command cannot exist undocumented.
var commands []*command

func init() {
	commands = []*command{
		{name: "start", args: "<workflow> [<node>] [--task NAME]", summary: "Start a workflow in this worktree", group: "Workflows",
			setFlags: func(fs *pflag.FlagSet) { fs.String("task", "", "name the task (default: generated, unique)") },
			run:      runStart},
		{name: "next", args: "[<claim>]", summary: "Complete the current node and move on (claim defaults to <node>_complete)", group: "Workflows", run: runNext},
		{name: "prev", summary: "Go back to the previous node", group: "Workflows", run: runPrev},
		{name: "repeat", summary: "Show the current node's prompt again", group: "Workflows", run: runRepeat},
		{name: "restart", summary: "Go back to the workflow's start node", group: "Workflows", run: runRestart},
		{name: "abort", summary: "Abort the active workflow", group: "Workflows", run: runAbort},
		{name: "switch", args: "<task>", summary: "Make a task this worktree's workflow (take over one fetched from another clone)", group: "Workflows", run: runSwitch},
		{name: "reset", summary: "Forget this worktree's workflow (aborting it if active)", group: "Workflows", run: runReset},
		{name: "stash", args: "[push|save|list|show|pop|apply|drop|clear|restore] [<stash>] [-m MSG] [--files|-u] [--json] [--dropped] [-y]",
			summary: "Park the active workflow and restore it later, like git stash", group: "Workflows",
			setFlags: stashFlags, run: runStash},
		{name: "checkpoint", args: "[-m MSG] | list [--json] | show <id|node> [--json] | drop <id> [-y]",
			summary: "Save the files, index and HEAD now, or list and show the saved checkpoints", group: "Workflows",
			setFlags: checkpointFlags, run: runCheckpoint},
		{name: "rollback", args: "[<node> | --to <checkpoint>] [-y] [--dry-run] [--reason TEXT] [--force] [--recurse-submodules] | --undo",
			summary: "Go back to the start of a node: files, index, HEAD and workflow state", group: "Workflows",
			setFlags: rollbackFlags, run: runRollback},
		{name: "fetch", args: "[<remote>] [--checkpoints]", summary: "Fetch refs/hegel/* from a remote and merge them into yours", group: "Workflows",
			setFlags: syncFlags, run: runFetch},
		{name: "push", args: "[<remote>] [--checkpoints]", summary: "Push refs/hegel/* to a remote, fast-forward only", group: "Workflows",
			setFlags: syncFlags, run: runPush},
		{name: "sync", args: "[<remote>] [--checkpoints]", summary: "Fetch, merge and push refs/hegel/*", group: "Workflows",
			setFlags: syncFlags, run: runSync},
		{name: "status", args: "[-v] [--json]", summary: "Show the active workflow", group: "Inspect",
			setFlags: func(fs *pflag.FlagSet) {
				fs.BoolP("verbose", "v", false, "also count uncommitted files (scans the working tree)")
				fs.Bool("json", false, "print JSON (schema: docs/json.md)")
			},
			run: runStatus},
		{name: "workflows", args: "[--json]", summary: "List the workflows you can start", group: "Inspect",
			setFlags: func(fs *pflag.FlagSet) { fs.Bool("json", false, "print JSON (schema: docs/json.md)") },
			run:      runWorkflows},
		{name: "init", summary: "Prepare .hegel/ in this worktree (start does this too)", group: "Setup", run: runInit},
		{name: "help", args: "[<command>]", summary: "Show help for git-hegel or a command", group: "Setup", run: runHelp},
		{name: "version", summary: "Print the version", group: "Setup", run: runVersion},
		{name: "completion", args: "bash", summary: "Print a shell completion script (source <(git hegel completion bash))", group: "Setup", run: runCompletion},
	}
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// run executes one git-hegel invocation and returns the exit code.
func run(args []string, env *Env) int {
	err := dispatch(args, env)
	if err != nil {
		if msg := message(err); msg != "" {
			fmt.Fprintln(env.Stderr, msg)
		}
	}
	return exitCode(err)
}

func dispatch(args []string, env *Env) error {
	if len(args) == 0 {
		printUsage(env.Stdout)
		return nil
	}
	name := args[0]
	switch name {
	case "-h", "--help":
		printUsage(env.Stdout)
		return nil
	case "--version":
		name = "version"
	}
	cmd := lookup(name)
	if cmd == nil {
		return usagef("", "'%s' is not a git hegel command", name)
	}
	fs := pflag.NewFlagSet("git hegel "+cmd.name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetInterspersed(true)
	if cmd.setFlags != nil {
		cmd.setFlags(fs)
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			printCommandUsage(env.Stdout, cmd, fs)
			return nil
		}
		return usagef(cmd.name, "%s", err.Error())
	}
	return cmd.run(&cmdCtx{Env: env, name: cmd.name, flags: fs}, fs.Args())
}

// wantArgs checks the number of positional arguments.
func (c *cmdCtx) wantArgs(args []string, min, max int) error {
	switch {
	case len(args) < min:
		return usagef(c.name, "missing argument")
	case len(args) > max:
		return usagef(c.name, "unexpected argument '%s'", args[max])
	}
	return nil
}

func (c *cmdCtx) boolFlag(name string) bool {
	v, _ := c.flags.GetBool(name)
	return v
}

func (c *cmdCtx) stringFlag(name string) string {
	v, _ := c.flags.GetString(name)
	return v
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, "usage: git hegel <command> [<args>]\n\n")
	fmt.Fprint(w, "Stage-gated workflows whose state lives in this repository under refs/hegel/*.\n")
	for _, g := range groups {
		fmt.Fprintf(w, "\n%s:\n", g)
		for _, c := range commands {
			if c.group == g {
				fmt.Fprintf(w, "   %-10s %s\n", c.name, c.summary)
			}
		}
	}
	fmt.Fprint(w, "\nRun 'git hegel <command> -h' for a command's options, 'git hegel --help' for the manual.\n")
}

func printCommandUsage(w io.Writer, cmd *command, fs *pflag.FlagSet) {
	syn := strings.TrimSpace("git hegel " + cmd.name + " " + cmd.args)
	fmt.Fprintf(w, "usage: %s\n\n%s\n", syn, cmd.summary)
	if u := fs.FlagUsages(); u != "" {
		fmt.Fprintf(w, "\nOptions:\n%s", u)
	}
}

func runHelp(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 1); err != nil {
		return err
	}
	if len(args) == 0 {
		printUsage(c.Stdout)
		return nil
	}
	cmd := lookup(args[0])
	if cmd == nil {
		return usagef("", "'%s' is not a git hegel command", args[0])
	}
	fs := pflag.NewFlagSet(cmd.name, pflag.ContinueOnError)
	if cmd.setFlags != nil {
		cmd.setFlags(fs)
	}
	printCommandUsage(c.Stdout, cmd, fs)
	return nil
}

// version is set at build time by the Makefile (-ldflags -X).
var version = "dev"

func runVersion(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 0); err != nil {
		return err
	}
	fmt.Fprintf(c.Stdout, "git-hegel version %s\n", version)
	return nil
}

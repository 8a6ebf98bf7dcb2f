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

var groups = []string{"Workflows", "Failures and gates", "Tasks", "Inspect", "Setup"}

// commands is the dispatch table; help output and the man page test read
// it, so a command cannot exist undocumented.
var commands []*command

// taskFlag is --task on every command that reads or changes one task.
func taskFlag(fs *pflag.FlagSet) {
	fs.String("task", "", "act on this task instead of this worktree's active one")
}

// ownerForce is --force where its only meaning is changing a task that
// another worktree owns.
func ownerForce(fs *pflag.FlagSet) {
	fs.Bool("force", false, "change a task another worktree owns (recorded in the task)")
}

func jsonFlag(fs *pflag.FlagSet) { fs.Bool("json", false, "print JSON (schema: docs/json.md)") }

// flags combines flag setters.
func flags(set ...func(*pflag.FlagSet)) func(*pflag.FlagSet) {
	return func(fs *pflag.FlagSet) {
		for _, f := range set {
			f(fs)
		}
	}
}

func init() {
	commands = []*command{
		{name: "start", args: "<workflow> [<node>] [--task NAME] [--type TYPE] [-d TEXT] [--priority P]", summary: "Start a workflow in this worktree", group: "Workflows",
			setFlags: startFlags, run: runStart},
		{name: "next", args: "[<claim>] [--force] [-y] [--task NAME]", summary: "Complete the current node and move on (claim defaults to <node>_complete)", group: "Workflows",
			setFlags: flags(taskFlag, func(fs *pflag.FlagSet) {
				fs.Bool("force", false, "move on although the node's artifact is missing, or the task is another worktree's (recorded)")
				fs.BoolP("yes", "y", false, "do not ask before a transition marked confirm")
			}), run: runNext},
		{name: "prev", args: "[--task NAME]", summary: "Go back to the previous node", group: "Workflows", setFlags: flags(taskFlag, ownerForce), run: runPrev},
		{name: "repeat", args: "[--task NAME]", summary: "Show the current node's prompt again", group: "Workflows", setFlags: taskFlag, run: runRepeat},
		{name: "restart", args: "[--task NAME]", summary: "Go back to the workflow's start node", group: "Workflows", setFlags: flags(taskFlag, ownerForce), run: runRestart},
		{name: "skip", args: "[-m REASON] [--force] [--task NAME]", summary: "Skip the current node when it is conditional or the task type skips it", group: "Workflows",
			setFlags: flags(taskFlag, func(fs *pflag.FlagSet) {
				fs.StringP("message", "m", "", "why it is skipped (kept in the task)")
				fs.Bool("force", false, "skip a node that is not conditional, or another worktree's task (recorded)")
			}), run: runSkip},
		{name: "abort", args: "[--task NAME]", summary: "Abort the active workflow", group: "Workflows", setFlags: flags(taskFlag, ownerForce), run: runAbort},
		{name: "switch", args: "<task>", summary: "Make a task this worktree's workflow, parking the current one (takes over one fetched from another clone)", group: "Workflows", run: runSwitch},
		{name: "reset", summary: "Forget this worktree's workflow (aborting it if active)", group: "Workflows", run: runReset},
		{name: "stash", args: "[push|save|list|show|pop|apply|drop|clear|restore] [<stash>] [-m MSG] [--json] [--dropped] [-y]",
			summary: "Park the active workflow and restore it later, like git stash", group: "Workflows",
			setFlags: stashFlags, run: runStash},
		{name: "checkpoint", args: "[-m MSG] | list [--json] | show <id|node> [--json] [--task NAME]",
			summary: "Save the files, index and HEAD now, or list and show the saved checkpoints", group: "Workflows",
			setFlags: flags(checkpointFlags, taskFlag), run: runCheckpoint},
		{name: "rollback", args: "[<node> | --to <checkpoint> | --all] [-y] [--dry-run] [--reason TEXT] [--force] [--task NAME] | --undo",
			summary: "Go back to the start of a node, or the whole workflow: files, index, HEAD and workflow state", group: "Workflows",
			setFlags: flags(rollbackFlags, taskFlag), run: runRollback},
		{name: "fetch", args: "[<remote>] [--checkpoints]", summary: "Fetch refs/hegel/* from a remote and merge them into yours", group: "Workflows",
			setFlags: syncFlags, run: runFetch},
		{name: "push", args: "[<remote>] [--checkpoints]", summary: "Push refs/hegel/* to a remote, fast-forward only", group: "Workflows",
			setFlags: syncFlags, run: runPush},
		{name: "sync", args: "[<remote>] [--checkpoints]", summary: "Fetch, merge and push refs/hegel/*", group: "Workflows",
			setFlags: syncFlags, run: runSync},

		{name: "fail", args: "[-m REASON] [--task NAME]", summary: "Record a failed attempt at the current node", group: "Failures and gates",
			setFlags: flags(taskFlag, ownerForce, messageFlag("why the attempt failed")), run: runFail},
		{name: "approve", args: "[-m COMMENT] [--task NAME]", summary: "Approve the move an approval gate holds, and go on", group: "Failures and gates",
			setFlags: flags(taskFlag, messageFlag("a comment kept with the approval"), func(fs *pflag.FlagSet) {
				fs.Bool("force", false, "decide although the node names other approvers (recorded)")
			}), run: runApprove},
		{name: "reject", args: "-m REASON [--to NODE] [--task NAME]", summary: "Reject at an approval gate and send the task back", group: "Failures and gates",
			setFlags: flags(taskFlag, messageFlag("why (required)"), func(fs *pflag.FlagSet) {
				fs.String("to", "", "the node to send the task back to (default: the node before)")
				fs.Bool("force", false, "decide although the node names other approvers (recorded)")
			}), run: runReject},
		{name: "ask", args: "<question> [--task NAME]", summary: "Ask the human a question; the task waits for the answer", group: "Failures and gates",
			setFlags: flags(taskFlag, ownerForce), run: runAsk},
		{name: "answer", args: "<text> [--task NAME]", summary: "Answer the open question and make the task active again", group: "Failures and gates",
			setFlags: taskFlag, run: runAnswer},
		{name: "pause", args: "[-m REASON] [--task NAME]", summary: "Pause the task", group: "Failures and gates",
			setFlags: flags(taskFlag, ownerForce, messageFlag("why it is paused")), run: runPause},
		{name: "resume", args: "[--strategy S] [--checkpoint ID] [-m REASON] [-y] [--task NAME]", summary: "Resume a paused or failed task (retry-current, retry-previous, skip-current, from-checkpoint)", group: "Failures and gates",
			setFlags: flags(taskFlag, ownerForce, messageFlag("why (kept with a skip)"), func(fs *pflag.FlagSet) {
				fs.String("strategy", "", "retry-current, retry-previous, skip-current or from-checkpoint (asked on a terminal when left out)")
				fs.String("checkpoint", "", "the checkpoint for from-checkpoint (default: the task's first)")
				fs.BoolP("yes", "y", false, "do not ask before rolling back to the checkpoint")
			}), run: runResume},

		{name: "tasks", args: "[--all] [--archived] [--json]", summary: "List the repository's tasks", group: "Tasks",
			setFlags: flags(jsonFlag, func(fs *pflag.FlagSet) {
				fs.Bool("all", false, "also list finished tasks not archived yet")
				fs.Bool("archived", false, "also list archived tasks")
			}), run: runTasks},
		{name: "show", args: "[<task> | --task NAME] [--json]", summary: "Show everything about a task (default: the active one), archived ones too", group: "Tasks",
			setFlags: flags(jsonFlag, taskFlag), run: runShow},
		{name: "describe", args: "[<task>] <text>", summary: "Change a task's description", group: "Tasks", run: runDescribe},
		{name: "delete", args: "<task> [-y]", summary: "Delete a finished task and its checkpoints (restore-task brings it back)", group: "Tasks",
			setFlags: func(fs *pflag.FlagSet) { fs.BoolP("yes", "y", false, "do not ask for confirmation") }, run: runDelete},
		{name: "restore-task", args: "[<task>] [--json]", summary: "Bring back a deleted task, or list the ones that can be", group: "Tasks",
			setFlags: jsonFlag, run: runRestoreTask},

		{name: "status", args: "[-v] [--json] [--task NAME]", summary: "Show the active workflow", group: "Inspect",
			setFlags: flags(taskFlag, func(fs *pflag.FlagSet) {
				fs.BoolP("verbose", "v", false, "also count uncommitted files (scans the working tree)")
				fs.Bool("json", false, "print JSON (schema: docs/json.md)")
			}),
			run: runStatus},
		{name: "workflows", args: "[<name>] [--json]", summary: "List the workflows you can start, or show one", group: "Inspect",
			setFlags: jsonFlag, run: runWorkflows},
		{name: "init", summary: "Prepare .hegel/ in this worktree (start does this too)", group: "Setup", run: runInit},
		{name: "help", args: "[<command>]", summary: "Show help for git-hegel or a command", group: "Setup", run: runHelp},
		{name: "version", summary: "Print the version", group: "Setup", run: runVersion},
		{name: "completion", args: "bash", summary: "Print a shell completion script (source <(git hegel completion bash))", group: "Setup", run: runCompletion},
	}
}

func messageFlag(usage string) func(*pflag.FlagSet) {
	return func(fs *pflag.FlagSet) { fs.StringP("message", "m", "", usage) }
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
	if f := fs.Lookup("task"); f != nil && f.Changed && f.Value.String() == "" {
		return usagef(cmd.name, "--task needs a name")
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
				fmt.Fprintf(w, "   %-12s %s\n", c.name, c.summary)
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

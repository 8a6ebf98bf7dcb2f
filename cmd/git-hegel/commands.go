package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/cmd/git-hegel/worktree"
	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore"
	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// command is one entry of the dispatch table. Help, the man page test, the
// error table test and shell completion all read the table, so what a
// command declares here (flags, operands, subcommands) is documented,
// checked and completed without more work.
type command struct {
	name     string
	args     string // synopsis after the name
	summary  string
	group    string
	setFlags func(fs *pflag.FlagSet) // nil: no flags besides -h and the common ones
	run      func(c *cmdCtx, args []string) error
	// operands says what each positional argument is, for completion
	// (completion.go); mark a flag's value with completeValues.
	operands []valueKind
	// subs are the command's verbs (stash pop, checkpoint list). Dispatch
	// picks one, checks that the flags given apply to it and the number of
	// arguments, and runs it; run is not used. defaultSub is the verb run
	// when none is given ("" names a verb without a name).
	subs       []*subcommand
	defaultSub string
	// hidden commands are left out of the usage, the manual and completion.
	hidden bool
	// rawArgs: run gets the arguments unparsed (the completion helper is
	// handed partial command lines).
	rawArgs bool
}

// subcommand is one verb of a command that has several.
type subcommand struct {
	name     string
	args     string   // synopsis after the verb
	flags    []string // the command's flags that apply to this verb
	min      int      // required operands
	operands []valueKind
	run      func(c *cmdCtx, args []string) error
}

// cmdCtx is what a running command gets: the environment and its parsed
// flags.
type cmdCtx struct {
	*Env
	name  string
	flags *pflag.FlagSet
	// repo is the repository the command opened (nil if none), for the
	// automatic cleanup that follows it (gc.go).
	repo *gitstore.Repo
	// sub is the verb run (stash pop), "" for a command without verbs.
	sub string
	// meter draws progress (progress.go), made on first use.
	meter *progressMeter
	// snaps are the repository's checkpoints (checkpoint.go), made on
	// first use and closed when the command ends.
	snaps *worktree.Snapshots
	// gcPercent is the GC target set when the snapshots are first used
	// (0: checkpoints' 50).
	gcPercent int
	// fsckHinted: the fetch.fsckObjects hint was given (remote.go).
	fsckHinted bool
}

var groups = []string{"Workflows", "Running steps", "Failures and gates", "Tasks", "Inspect", "Agents", "Maintenance", "Setup"}

// commands is the dispatch table; help output and the man page test read
// it, so a command cannot exist undocumented.
var commands []*command

// taskFlag is --task on every command that reads or changes one task.
func taskFlag(fs *pflag.FlagSet) {
	fs.String("task", "", "act on this task instead of this worktree's active one")
	completeValues(fs, "task", kindAnyTask)
}

// ownerForce is --force where its only meaning is changing a task that
// another worktree owns.
func ownerForce(fs *pflag.FlagSet) {
	fs.Bool("force", false, "change a task another worktree owns (recorded in the task)")
}

func jsonFlag(fs *pflag.FlagSet) { fs.Bool("json", false, "print JSON (schema: docs/json.md)") }

func messageFlag(usage string) func(*pflag.FlagSet) {
	return func(fs *pflag.FlagSet) { fs.StringP("message", "m", "", usage) }
}

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
			setFlags: startFlags, run: runStart, operands: []valueKind{kindWorkflow, kindNode}},
		{name: "next", args: "[<claim>] [--force[=<rule_type>]] [-y] [--task NAME]", summary: "Complete the current node and move on (claim defaults to <node>_complete)", group: "Workflows",
			setFlags: flags(taskFlag, nextFlags), run: runNext, operands: []valueKind{kindClaim}},
		{name: "done", args: "[--force[=<rule_type>]] [-y] [--task NAME]", summary: "Finish the workflow from a node that leads straight to done", group: "Workflows",
			setFlags: flags(taskFlag, nextFlags), run: runDone},
		{name: "prev", args: "[--task NAME]", summary: "Go back to the previous node", group: "Workflows", setFlags: flags(taskFlag, ownerForce), run: runPrev},
		{name: "repeat", args: "[--task NAME]", summary: "Show the current node's prompt again", group: "Workflows", setFlags: taskFlag, run: runRepeat},
		{name: "restart", args: "[--task NAME]", summary: "Go back to the workflow's start node", group: "Workflows", setFlags: flags(taskFlag, ownerForce), run: runRestart},
		{name: "skip", args: "[-m REASON] [--force] [--task NAME]", summary: "Skip the current node when it is conditional or the task type skips it", group: "Workflows",
			setFlags: flags(taskFlag, messageFlag("why it is skipped (kept in the task)"), func(fs *pflag.FlagSet) {
				fs.Bool("force", false, "skip a node that is not conditional, or another worktree's task (recorded)")
			}), run: runSkip},
		{name: "abort", args: "[--task NAME]", summary: "Abort the active workflow", group: "Workflows", setFlags: flags(taskFlag, ownerForce), run: runAbort},
		{name: "switch", args: "<task>", summary: "Make a task this worktree's workflow, parking the current one (takes over one fetched from another clone)", group: "Workflows", run: runSwitch,
			operands: []valueKind{kindTask}},
		{name: "reset", summary: "Forget this worktree's workflow (aborting it if active)", group: "Workflows", run: runReset},
		{name: "stash", summary: "Park the active workflow and restore it later, like git stash", group: "Workflows",
			setFlags: stashFlags, subs: stashSubs, defaultSub: "push"},
		{name: "checkpoint", summary: "Save the files, index and HEAD now, or list and show the saved checkpoints", group: "Workflows",
			setFlags: flags(checkpointFlags, taskFlag), subs: checkpointSubs, defaultSub: ""},
		{name: "rollback", args: "[<node> | --to <checkpoint> | --all] [-y] [--dry-run [-z]] [--reason TEXT] [--force] [--recurse-submodules] [--task NAME] [-q | --[no-]progress] | --undo",
			summary: "Go back to the start of a node, or the whole workflow: files, index, HEAD and workflow state", group: "Workflows",
			setFlags: flags(rollbackFlags, taskFlag), run: runRollback, operands: []valueKind{kindRollbackNode}},
		{name: "fetch", args: "[<remote>] [--checkpoints] [--strict] [--json] [-q | --[no-]progress]", summary: "Fetch refs/hegel/* from a remote and merge them into yours", group: "Workflows",
			setFlags: syncFlags, run: runFetch, operands: []valueKind{kindRemote}},
		{name: "push", args: "[<remote>] [--checkpoints] [--strict] [--json] [-q | --[no-]progress]", summary: "Push refs/hegel/* to a remote, fast-forward only", group: "Workflows",
			setFlags: syncFlags, run: runPush, operands: []valueKind{kindRemote}},
		{name: "sync", args: "[<remote>] [--checkpoints] [--strict] [--ours|--theirs <task>]... [--json] [-q | --[no-]progress]", summary: "Fetch, merge and push refs/hegel/*", group: "Workflows",
			setFlags: syncFlags, run: runSync, operands: []valueKind{kindRemote}},
		{name: "trust", args: "[<task>] [-y | --dry-run] [--json] | --list [--json]", summary: "Review what differs in a task's workflow definition and trust it on this machine, so it may run commands and instruct your agent", group: "Workflows",
			setFlags: trustFlags, run: runTrust, operands: []valueKind{kindAnyTask}},

		{name: "run", args: "[<workflow>] [-p PROMPT] [--context FILE]... [--set KEY=VALUE]... [--adapter NAME] [-y] [--task NAME] [--on-complete CMD]",
			summary: "Run a workflow's steps through their handlers (adapters, commands), or continue the active task's run", group: "Running steps",
			setFlags: runFlags, run: runRun, operands: []valueKind{kindRunWorkflow}},
		{name: "cancel", args: "[--task NAME] [--force]", summary: "Stop a running 'git hegel run' (from another terminal); the task is kept", group: "Running steps",
			setFlags: flags(taskFlag, func(fs *pflag.FlagSet) {
				fs.Bool("force", false, "remove the record of a run on another host, which cannot be signalled from here")
			}), run: runCancel},
		{name: "result", args: "<node> [--task NAME] [--json]", summary: "Print the stored result of a step", group: "Running steps",
			setFlags: flags(taskFlag, jsonFlag), run: runResult, operands: []valueKind{kindResultNode}},

		{name: "fail", args: "[-m REASON] [--task NAME]", summary: "Record a failed attempt at the current node", group: "Failures and gates",
			setFlags: flags(taskFlag, ownerForce, messageFlag("why the attempt failed")), run: runFail},
		{name: "approve", args: "[-m COMMENT] [--task NAME]", summary: "Approve the move an approval gate holds, and go on", group: "Failures and gates",
			setFlags: flags(taskFlag, messageFlag("a comment kept with the approval"), func(fs *pflag.FlagSet) {
				fs.Bool("force", false, "decide although the node names other approvers (recorded)")
			}), run: runApprove},
		{name: "reject", args: "-m REASON [--to NODE] [--task NAME]", summary: "Reject at an approval gate and send the task back", group: "Failures and gates",
			setFlags: flags(taskFlag, messageFlag("why (required)"), func(fs *pflag.FlagSet) {
				fs.String("to", "", "the node to send the task back to (default: the node before)")
				completeValues(fs, "to", kindTaskNode)
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
				completeValues(fs, "strategy", kindStrategy)
				fs.String("checkpoint", "", "the checkpoint for from-checkpoint (default: the task's first)")
				completeValues(fs, "checkpoint", kindCheckpoint)
				fs.BoolP("yes", "y", false, "do not ask before rolling back to the checkpoint")
			}), run: runResume},

		{name: "tasks", args: "[--all] [--archived] [--json]", summary: "List the repository's tasks", group: "Tasks",
			setFlags: flags(jsonFlag, func(fs *pflag.FlagSet) {
				fs.Bool("all", false, "also list finished tasks not archived yet")
				fs.Bool("archived", false, "also list archived tasks")
			}), run: runTasks},
		{name: "show", args: "[<task> | --task NAME] [--json]", summary: "Show everything about a task (default: the active one), archived ones too", group: "Tasks",
			setFlags: flags(jsonFlag, taskFlag), run: runShow, operands: []valueKind{kindAnyTask}},
		{name: "describe", args: "[<task>] <text>", summary: "Change a task's description", group: "Tasks", run: runDescribe},
		{name: "delete", args: "<task> [-y]", summary: "Delete a finished task and its checkpoints (restore-task brings it back)", group: "Tasks",
			setFlags: func(fs *pflag.FlagSet) { fs.BoolP("yes", "y", false, "do not ask for confirmation") }, run: runDelete,
			operands: []valueKind{kindAnyTask}},
		{name: "restore-task", args: "[<task>] [--json]", summary: "Bring back a deleted task, or list the ones that can be", group: "Tasks",
			setFlags: jsonFlag, run: runRestoreTask, operands: []valueKind{kindDeletedTask}},

		{name: "status", args: "[-v] [--json] [--task NAME] [--watch [--interval D]]", summary: "Show the active workflow", group: "Inspect",
			setFlags: flags(taskFlag, func(fs *pflag.FlagSet) {
				fs.BoolP("verbose", "v", false, "also count uncommitted files (scans the working tree)")
				fs.Bool("json", false, "print JSON (schema: docs/json.md)")
				fs.BoolP("watch", "w", false, "show it again every --interval, in place on a terminal, until Ctrl-C")
				fs.Duration("interval", 2*time.Second, "how often --watch refreshes")
			}),
			run: runStatus},
		{name: "workflows", args: "[<name>] [--json]", summary: "List the workflows you can start, or show one", group: "Inspect",
			setFlags: jsonFlag, run: runWorkflows, operands: []valueKind{kindWorkflow}},
		{name: "log", args: "[<task>] [--workflow W] [--status S] [--task T] [--type T] [--since DATE] [--until DATE] [--grep TEXT] [-n N] [--json | --format=jsonl]",
			summary: "List the runs that ended (and the open ones), newest first; or one task's operations", group: "Inspect",
			setFlags: logFlags, run: runLog, operands: []valueKind{kindAnyTask}},
		{name: "stats", args: "[--date DAY | --since DATE] [--by day|week|workflow] [--json]",
			summary: "Summarize the runs of a day or period: counts, durations, success rate, per-node time and failures", group: "Inspect",
			setFlags: statsFlags, run: runStats},
		{name: "web", args: "[--port N] [--open] [--no-auth]", summary: "Serve a dashboard of the tasks, their gates and workflow graphs on 127.0.0.1", group: "Inspect",
			setFlags: webFlags, run: runWeb},
		{name: "hook", args: "<EventName> [--agent claude|codex|cursor]", summary: "Record one coding-agent hook event (JSON on stdin); agents run this", group: "Agents",
			setFlags: hookFlags, run: runHook, operands: []valueKind{kindHookEvent}},
		{name: "hooks", summary: "Install or remove git-hegel's hooks in Claude Code, Codex or Cursor", group: "Agents",
			setFlags: hooksFlags, defaultSub: "status", subs: []*subcommand{
				{name: "status", args: "[--agent A] [--project|--user]", flags: []string{"agent", "project", "user"}, run: runHooksStatus},
				{name: "install", args: "[--agent A] [--project|--user] [--dry-run]", flags: []string{"agent", "project", "user", "dry-run"}, run: runHooksInstall},
				{name: "uninstall", args: "[--agent A] [--project|--user] [--dry-run]", flags: []string{"agent", "project", "user", "dry-run"}, run: runHooksUninstall},
			}},
		{name: "guides", args: "[<NAME>] [--json]", summary: "List the prompt guides, or print one", group: "Agents",
			setFlags: func(fs *pflag.FlagSet) { fs.Bool("json", false, "print JSON (schema: docs/json.md)") },
			run:      runGuides, operands: []valueKind{kindGuide}},
		{name: "metrics", args: "[--task T] [--json] | --graph [--format dot|mermaid]", summary: "Per-phase time, tool calls, commands, edits, tokens, commits and rule violations", group: "Agents",
			setFlags: metricsFlags, run: runMetrics},
		{name: "gc", args: "[--retention-days N] [--dry-run] [--json]", summary: "Remove history entries, archived tasks and dropped stashes older than the retention, so git gc reclaims them", group: "Maintenance",
			setFlags: gcFlags, run: runGC},
		{name: "doctor", args: "[--fix] [--json]", summary: "Check refs/hegel/, the session file, locks, rollbacks and task owners; --fix repairs what it can", group: "Maintenance",
			setFlags: doctorFlags, run: runDoctor},
		{name: "init", summary: "Prepare .hegel/ in this worktree (start does this too)", group: "Setup", run: runInit},
		{name: "help", args: "[<command>]", summary: "Show help for git-hegel or a command", group: "Setup", run: runHelp,
			operands: []valueKind{kindCommand}},
		{name: "version", summary: "Print the version", group: "Setup", run: runVersion},
		{name: "completion", args: "bash|zsh|fish", summary: "Print the completion script for bash, zsh or fish (how to load it: git hegel --help)", group: "Setup", run: runCompletion,
			operands: []valueKind{kindShell}},
		{name: "remote", summary: "Make plain git fetch and git push carry refs/hegel/* for a remote", group: "Setup",
			setFlags: remoteFlags, subs: remoteSubs},
		{name: completeCommand, args: "<word>...", summary: "Print the completions of the last word (used by the completion scripts)", run: runComplete, hidden: true, rawArgs: true},
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

// findSub returns the verb named name, or nil.
func (cmd *command) findSub(name string) *subcommand {
	for _, s := range cmd.subs {
		if s.name == name {
			return s
		}
	}
	return nil
}

// subNames lists the verbs that have a name, for messages and completion.
func (cmd *command) subNames() []string {
	var out []string
	for _, s := range cmd.subs {
		if s.name != "" {
			out = append(out, s.name)
		}
	}
	return out
}

// synopses are the command's usage lines: one per verb for a command with
// several, as git stash -h shows them.
func (cmd *command) synopses() []string {
	if len(cmd.subs) == 0 {
		return []string{strings.TrimSpace("git hegel " + cmd.name + " " + cmd.args)}
	}
	var out []string
	for _, s := range cmd.subs {
		out = append(out, cmd.subSynopsis(s))
	}
	return out
}

func (cmd *command) subSynopsis(s *subcommand) string {
	verb := s.name
	if s.name == cmd.defaultSub && s.name != "" {
		verb = "[" + s.name + "]"
	}
	return strings.Join(strings.Fields("git hegel "+cmd.name+" "+verb+" "+s.args), " ")
}

// flagSet builds the flags cmd accepts: its own and the common ones, which
// write into env.
func (cmd *command) flagSet(env *Env) *pflag.FlagSet {
	fs := pflag.NewFlagSet("git hegel "+cmd.name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetInterspersed(true)
	fs.SortFlags = true
	if cmd.setFlags != nil {
		cmd.setFlags(fs)
	}
	env.commonFlags(fs)
	return fs
}

// run executes one git-hegel invocation and returns the exit code.
func run(args []string, env *Env) int {
	defer refs.ReleaseLockOwners()
	err := dispatch(args, env)
	if err != nil {
		if msg := message(err); msg != "" {
			fmt.Fprintln(env.Stderr, msg)
		}
	}
	return exitCode(err)
}

func dispatch(args []string, env *Env) error {
	// The common options may also come first: git hegel --no-color status.
	for len(args) > 0 && isCommonOption(args[0]) {
		fs := pflag.NewFlagSet("git hegel", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		env.commonFlags(fs)
		if err := fs.Parse(args[:1]); err != nil {
			return flagError("", err)
		}
		args = args[1:]
	}
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
		if strings.HasPrefix(name, "-") {
			return usagef("", "unknown option '%s'", strings.TrimLeft(name, "-"))
		}
		return usagef("", "'%s' is not a git hegel command", name)
	}
	fs := cmd.flagSet(env)
	if cmd.rawArgs {
		return cmd.run(&cmdCtx{Env: env, name: cmd.name, flags: fs}, args[1:])
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			printCommandUsage(env.Stdout, cmd, fs)
			return nil
		}
		return flagError(cmd.name, err)
	}
	if f := fs.Lookup("task"); f != nil && f.Changed && f.Value.String() == "" {
		return usagef(cmd.name, "--task needs a name")
	}
	c := &cmdCtx{Env: env, name: cmd.name, flags: fs}
	defer c.closeSnapshots()
	var err error
	if len(cmd.subs) > 0 {
		err = c.runSub(cmd, fs.Args())
	} else if err = checkOperands(cmd.operands, fs.Args()); err == nil {
		err = cmd.run(c, fs.Args())
	}
	if err == nil {
		c.autoCleanup()
	}
	return err
}

// operandChecks refuse, before anything is read, operands that cannot be
// right whatever the state: a usage error (engine.ErrBadName), even
// outside a repository.
var operandChecks = map[valueKind]func(string) error{
	kindTask:        engine.CheckTaskName,
	kindAnyTask:     engine.CheckTaskName,
	kindDeletedTask: engine.CheckTaskName,
	kindStash: func(s string) error {
		_, err := engine.ParseStashSelector(s)
		return err
	},
	kindDroppedStash: engine.CheckStashID,
}

func checkOperands(kinds []valueKind, args []string) error {
	for i, a := range args {
		if i < len(kinds) {
			if check := operandChecks[kinds[i]]; check != nil {
				if err := check(a); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// runSub runs the verb args[0] of cmd (its default verb when there are no
// arguments), after checking that the flags given apply to it and that it
// got as many arguments as it takes.
func (c *cmdCtx) runSub(cmd *command, args []string) error {
	sub := cmd.findSub(cmd.defaultSub)
	if len(args) > 0 {
		if sub = cmd.findSub(args[0]); sub == nil || sub.name == "" {
			return usagef(cmd.name, "'%s' is not a %s subcommand (%s)", args[0], cmd.name, strings.Join(cmd.subNames(), ", "))
		}
		args = args[1:]
	}
	if sub == nil {
		return usageLine(strings.Join(cmd.synopses(), "\n   or: "))
	}
	c.sub = sub.name
	where := strings.TrimSpace(cmd.name + " " + sub.name)
	var misused string
	c.flags.Visit(func(f *pflag.Flag) {
		if misused == "" && !isCommonFlag(f.Name) && !contains(sub.flags, f.Name) {
			misused = f.Name
		}
	})
	if misused != "" {
		return usagef(cmd.name, "--%s does not apply to '%s'", misused, where)
	}
	if len(args) < sub.min || len(args) > len(sub.operands) {
		return usageLine(cmd.subSynopsis(sub))
	}
	if err := checkOperands(sub.operands, args); err != nil {
		return err
	}
	return sub.run(c, args)
}

// wantArgs checks the number of positional arguments; a wrong number
// prints the command's usage line, as git does.
func (c *cmdCtx) wantArgs(args []string, min, max int) error {
	if len(args) < min || len(args) > max {
		if cmd := lookup(c.name); cmd != nil {
			return usageLine(cmd.synopses()[0])
		}
		return usagef(c.name, "wrong number of arguments")
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
			if c.group == g && !c.hidden {
				fmt.Fprintf(w, "   %-12s %s\n", c.name, c.summary)
			}
		}
	}
	fmt.Fprint(w, "\nEvery command takes --color[=<when>] and --no-color, before or after its name.\n")
	fmt.Fprint(w, "Run 'git hegel <command> -h' for a command's options, 'git hegel --help' for the manual.\n")
}

func printCommandUsage(w io.Writer, cmd *command, fs *pflag.FlagSet) {
	fmt.Fprintf(w, "usage: %s\n\n%s\n", strings.Join(cmd.synopses(), "\n   or: "), cmd.summary)
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
	if cmd == nil || cmd.hidden {
		return usagef("", "'%s' is not a git hegel command", args[0])
	}
	printCommandUsage(c.Stdout, cmd, cmd.flagSet(&Env{}))
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

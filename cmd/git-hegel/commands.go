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
	name string
	// args is the usage line after the name: the operands, and where the
	// flags go when the default place (the end) is not right; alt are
	// further forms ("rollback --undo"). synopsis.go draws the flags.
	args     string
	alt      []string
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
	// aliases are flag names accepted for another (old name: new name);
	// they are not listed.
	aliases map[string]string
	// readOnly commands write nothing to the repository, not even the
	// clone's instance id (gitstore.ExistingWorktreeID); writeFlag names
	// the flag that makes one write (doctor --fix).
	readOnly  bool
	writeFlag string
}

// subcommand is one verb of a command that has several.
type subcommand struct {
	name     string
	args     string   // the usage line after the verb, as command.args
	flags    []string // the command's flags that apply to this verb
	min      int      // required operands
	readOnly bool     // as command.readOnly
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
	// eng is the engine the command opened (nil if none), for what
	// follows a printed view (a meta-mode's next workflow, meta.go).
	eng *engine.Engine
	// meter draws progress (progress.go), made on first use.
	meter *progressMeter
	// worktreeID is the repository's gitstore.WorktreeID, read by openRepo.
	worktreeID string
	// snaps are the repository's checkpoints (checkpoint.go), made on
	// first use and closed when the command ends.
	snaps *worktree.Snapshots
	// gcPercent is the GC target set when the snapshots are first used
	// (0: checkpoints' 50).
	gcPercent int
	// fsckHinted: the fetch.fsckObjects hint was given (remote.go).
	fsckHinted bool
	// displayConfigErr is the colour or path-quoting setting doctor could
	// not read: doctor reports it instead of stopping on it.
	displayConfigErr error
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

// backForce is --force on a command that moves a task back: past its
// max_rollbacks, or on a task another worktree owns.
func backForce(fs *pflag.FlagSet) {
	fs.Bool("force", false, "go back past the task's max_rollbacks, or change a task another worktree owns (recorded in the task)")
}

// quietFlagSaying is -q/--quiet on a command that ends by naming the task
// or node it left you at: only those lines are printed, not the prompt or
// other detail (errors and warnings still go to stderr). usage says what
// stays, as the command prints it.
func quietFlagSaying(usage string) func(*pflag.FlagSet) {
	return func(fs *pflag.FlagSet) { fs.BoolP("quiet", "q", false, usage) }
}

var (
	// quietMoved is -q on the commands that move a task to a node.
	quietMoved = quietFlagSaying("print only where the task moved, not the prompt ('git hegel repeat' prints it)")
	// quietStarted is -q on the commands that start a task.
	quietStarted = quietFlagSaying("print only the task started, not its prompt ('git hegel repeat' prints it)")
	// quietAborted is -q on abort, whose one line is all it prints: taken
	// so a script can pass -q to every command that moves a task.
	quietAborted = quietFlagSaying("print only the task aborted, as abort always does: it prints no prompt")
)

// messageFlag is -m/--message, the one spelling of a reason or comment;
// value names it in the usage line (REASON, COMMENT).
func messageFlag(value, usage string) func(*pflag.FlagSet) {
	return func(fs *pflag.FlagSet) {
		fs.StringP("message", "m", "", usage)
		valueName(fs, "message", value)
	}
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
		{name: "start", args: "<workflow> [<node>]", summary: "Start a workflow in this worktree", group: "Workflows",
			setFlags: flags(startFlags, quietStarted), run: runStart, operands: []valueKind{kindWorkflow, kindNode}},
		{name: "next", args: "[<claim>] {...}", alt: []string{"{sub} [{task}]"}, summary: "Complete the current node and move on (claim defaults to <node>_complete)", group: "Workflows",
			setFlags: flags(nextFlags, func(fs *pflag.FlagSet) {
				fs.Bool("sub", false, "move to the node's next sub-phase instead of leaving the node")
			}, taskFlag), run: runNext, operands: []valueKind{kindClaim}},
		{name: "check", readOnly: true, summary: "Run the current node's checks and print the result, without spending an attempt", group: "Workflows",
			setFlags: checkFlags, run: runCheck},
		{name: "done", summary: "Finish the workflow from a node that leads straight to done", group: "Workflows",
			setFlags: flags(nextFlags, taskFlag), run: runDone},
		{name: "prev", summary: "Go back to the previous node", group: "Workflows", setFlags: flags(backForce, quietMoved, taskFlag), run: runPrev},
		{name: "repeat", summary: "Show the current node's prompt again", group: "Workflows", setFlags: taskFlag, run: runRepeat},
		{name: "restart", summary: "Go back to the workflow's start node", group: "Workflows", setFlags: flags(ownerForce, quietMoved, taskFlag), run: runRestart},
		{name: "skip", summary: "Skip the current node when it is conditional or the task type skips it", group: "Workflows",
			setFlags: flags(messageFlag("REASON", "why it is skipped (kept in the task)"), func(fs *pflag.FlagSet) {
				fs.Bool("force", false, "skip a node that is not conditional, or another worktree's task (recorded)")
			}, taskFlag), run: runSkip},
		{name: "goto", args: "<node>", summary: "Set the task's node by hand (recorded, with the entry checkpoint)", group: "Workflows",
			setFlags: flags(messageFlag("REASON", "why (kept in the task)"), func(fs *pflag.FlagSet) {
				fs.Bool("force", false, "move a task that waits at a gate or failed, back past its max_rollbacks, or another worktree's task (recorded)")
			}, taskFlag), run: runGoto, operands: []valueKind{kindTaskNode}},
		{name: "meta", args: "[<meta-mode>]", summary: "Start a meta-mode (a workflow of workflows), or show the current one and what comes next", group: "Workflows",
			setFlags: metaFlags, run: runMeta, operands: []valueKind{kindMetaMode}},
		{name: "next-workflow", args: "[<workflow>]", summary: "Start the workflow that follows a done task in its meta-mode", group: "Workflows",
			setFlags: quietStarted, run: runNextWorkflow, operands: []valueKind{kindNextWorkflow}},
		{name: "abort", summary: "Abort the active workflow", group: "Workflows", setFlags: flags(ownerForce, quietAborted, taskFlag), run: runAbort},
		{name: "switch", args: "<task>", summary: "Make a task this worktree's workflow, parking the current one (takes over one fetched from another clone)", group: "Workflows", run: runSwitch,
			operands: []valueKind{kindTask}},
		{name: "claim", args: "<task>", summary: "Take a task another clone owns (or one nobody holds), and say whose it was", group: "Workflows", run: runClaim,
			operands: []valueKind{kindTask}},
		{name: "reset", summary: "Forget this worktree's workflow (aborting it if active)", group: "Workflows", run: runReset},
		{name: "stash", summary: "Park the active workflow and restore it later, like git stash", group: "Workflows",
			setFlags: stashFlags, subs: stashSubs, defaultSub: "push"},
		{name: "checkpoint", summary: "Save the files, index and HEAD now, or list and show the saved checkpoints", group: "Workflows",
			setFlags: flags(checkpointFlags, taskFlag, func(fs *pflag.FlagSet) { altFlags(fs, "json", "null") }), subs: checkpointSubs, defaultSub: ""},
		{name: "rollback", args: "[<node> | {to}]",
			alt:     []string{"{all} [{yes}] [{dry-run}] [{message}] [{task}]", "{undo} [{yes}] [{dry-run}] [{recurse-submodules}] [{task}]"},
			summary: "Go back to the start of a node, or the whole workflow: files, index, HEAD and workflow state", group: "Workflows",
			setFlags: flags(rollbackFlags, taskFlag, func(fs *pflag.FlagSet) {
				valueName(fs, "to", "ID")
				nestFlag(fs, "dry-run", "null")
			}), aliases: map[string]string{"reason": "message"},
			run: runRollback, operands: []valueKind{kindRollbackNode}},
		{name: "undo", args: "[<n>]", alt: []string{"{redo} [{yes}] [{dry-run}] [{force}] [{task}]", "{list} [{json}] [{task}]"},
			summary: "Put back what the last agent actions changed (shell commands too), and nothing else", group: "Workflows",
			setFlags: flags(undoFlags, taskFlag, jsonFlag), run: runUndo},
		{name: "fetch", args: "[<remote>]", summary: "Fetch refs/hegel/* from a remote and merge them into yours", group: "Workflows",
			setFlags: syncFlags, run: runFetch, operands: []valueKind{kindRemote}},
		{name: "push", args: "[<remote>]", summary: "Push refs/hegel/* to a remote, fast-forward only", group: "Workflows",
			setFlags: syncFlags, run: runPush, operands: []valueKind{kindRemote}},
		{name: "sync", args: "[<remote>]", summary: "Fetch, merge and push refs/hegel/*", group: "Workflows",
			setFlags: syncFlags, run: runSync, operands: []valueKind{kindRemote}},
		{name: "trust", args: "[<task>] {...}", alt: []string{"{workflow} [{yes}] [{dry-run}] [{json}]", "{list} [{json}]"}, summary: "Review what differs in a task's workflow definition and trust it on this machine, so it may run commands and instruct your agent", group: "Workflows",
			setFlags: flags(trustFlags, func(fs *pflag.FlagSet) { altFlags(fs, "yes", "dry-run") }), run: runTrust, operands: []valueKind{kindAnyTask}},
		{name: "upgrade", args: "[<task>]", summary: "Show how the worktree's workflow file differs from the definition a running task holds, and adopt it", group: "Workflows",
			setFlags: flags(upgradeFlags, func(fs *pflag.FlagSet) { altFlags(fs, "yes", "dry-run") }), run: runUpgrade, operands: []valueKind{kindTask}},

		{name: "run", args: "[<workflow>]",
			summary: "Run a workflow's steps through their handlers (adapters, commands), or continue the active task's run", group: "Running steps",
			setFlags: runFlags, run: runRun, operands: []valueKind{kindRunWorkflow}},
		{name: "cancel", readOnly: true, summary: "Stop a running 'git hegel run' (from another terminal); the task is kept", group: "Running steps",
			setFlags: flags(func(fs *pflag.FlagSet) {
				fs.Bool("force", false, "remove the record of a run on another host, which cannot be signalled from here")
			}, taskFlag), run: runCancel},
		{name: "result", readOnly: true, args: "<node>", summary: "Print the stored result of a step", group: "Running steps",
			setFlags: flags(jsonFlag, taskFlag), run: runResult, operands: []valueKind{kindResultNode}},

		{name: "fail", summary: "Record a failed attempt at the current node", group: "Failures and gates",
			setFlags: flags(messageFlag("REASON", "why the attempt failed"), ownerForce, taskFlag), run: runFail},
		{name: "approve", summary: "Approve the move an approval gate holds, and go on", group: "Failures and gates",
			setFlags: flags(messageFlag("COMMENT", "a comment kept with the approval"), func(fs *pflag.FlagSet) {
				fs.Bool("force", false, "decide although the node names other approvers (recorded)")
				fs.Bool("unseen", false, "approve artifacts whose content this clone has not shown or written")
			}, taskFlag), run: runApprove},
		{name: "reject", args: "{message}", summary: "Reject at an approval gate and send the task back", group: "Failures and gates",
			setFlags: flags(messageFlag("REASON", "why (required)"), func(fs *pflag.FlagSet) {
				fs.String("to", "", "the node to send the task back to (default: the node before)")
				valueName(fs, "to", "NODE")
				completeValues(fs, "to", kindTaskNode)
				fs.Bool("force", false, "decide although the node names other approvers, or go back past the task's max_rollbacks (recorded)")
			}, taskFlag), run: runReject},
		{name: "ask", args: "<question>", summary: "Ask the human a question; the task waits for the answer", group: "Failures and gates",
			setFlags: flags(ownerForce, taskFlag), run: runAsk},
		{name: "answer", args: "<text>", summary: "Answer the open question and make the task active again", group: "Failures and gates",
			setFlags: taskFlag, run: runAnswer},
		{name: "pause", summary: "Pause the task", group: "Failures and gates",
			setFlags: flags(messageFlag("REASON", "why it is paused"), ownerForce, taskFlag), run: runPause},
		{name: "resume", summary: "Resume a paused or failed task (retry-current, retry-previous, skip-current, from-checkpoint)", group: "Failures and gates",
			setFlags: flags(func(fs *pflag.FlagSet) {
				fs.String("strategy", "", "retry-current, retry-previous, skip-current or from-checkpoint (default: retry-current for a paused task; asked on a terminal for a failed one)")
				completeValues(fs, "strategy", kindStrategy)
				fs.String("checkpoint", "", "the checkpoint for from-checkpoint (default: the task's first)")
				valueName(fs, "checkpoint", "ID")
				completeValues(fs, "checkpoint", kindCheckpoint)
				fs.BoolP("yes", "y", false, "do not ask before rolling back to the checkpoint")
			}, messageFlag("REASON", "why (kept with a skip)"), backForce, taskFlag), run: runResume},

		{name: "tasks", readOnly: true, summary: "List the repository's tasks", group: "Tasks",
			setFlags: flags(func(fs *pflag.FlagSet) {
				fs.Bool("all", false, "also list finished tasks not archived yet")
				fs.Bool("archived", false, "also list archived tasks")
				fs.Bool("mine", false, "only the tasks a worktree of this clone holds (by this clone's record)")
			}, jsonFlag), run: runTasks},
		{name: "show", readOnly: true, args: "[<task> | {task}]", summary: "Show everything about a task (default: the active one), archived ones too", group: "Tasks",
			setFlags: flags(jsonFlag, taskFlag), run: runShow, operands: []valueKind{kindAnyTask}},
		{name: "artifact", readOnly: true, args: "<task> <name>", summary: "Print an artifact of a task as its node submitted it", group: "Tasks",
			setFlags: flags(jsonFlag, func(fs *pflag.FlagSet) {
				fs.String("node", "", "the node whose copy to print, when several submitted the name")
				valueName(fs, "node", "NODE")
			}), run: runArtifact, operands: []valueKind{kindAnyTask, kindArtifact}},
		{name: "describe", args: "[<task> | {task}] <text>", summary: "Change a task's description", group: "Tasks", run: runDescribe,
			setFlags: flags(ownerForce, taskFlag)},
		{name: "delete", args: "<task>", summary: "Delete a finished task and its checkpoints (restore-task brings it back)", group: "Tasks",
			setFlags: func(fs *pflag.FlagSet) { fs.BoolP("yes", "y", false, "do not ask for confirmation") }, run: runDelete,
			operands: []valueKind{kindAnyTask}},
		{name: "lock", args: "<path>...", summary: "Lock files for the task: another task is stopped before it edits them", group: "Tasks",
			setFlags: flags(lockFlags, taskFlag), run: runLock},
		{name: "unlock", args: "<path>... {...}", alt: []string{"{all} [{force}] [{task}]"}, summary: "Remove the task's locks on files", group: "Tasks",
			setFlags: flags(unlockFlags, ownerForce, taskFlag), run: runUnlock},
		{name: "restore-task", args: "[<task>]", summary: "Bring back a deleted task, or list the ones that can be", group: "Tasks",
			setFlags: jsonFlag, run: runRestoreTask, operands: []valueKind{kindDeletedTask}},

		{name: "status", readOnly: true, summary: "Show the active workflow", group: "Inspect",
			setFlags: flags(func(fs *pflag.FlagSet) {
				fs.BoolP("verbose", "v", false, "also count uncommitted files (scans the working tree)")
				jsonFlag(fs)
				fs.BoolP("watch", "w", false, "show it again every --interval, in place on a terminal, until Ctrl-C")
				fs.Duration("interval", 2*time.Second, "how often --watch refreshes")
				valueName(fs, "interval", "DURATION")
				nestFlag(fs, "watch", "interval")
			}, taskFlag),
			run: runStatus},
		{name: "workflows", readOnly: true, args: "[<name>]", summary: "List the workflows you can start, or show one", group: "Inspect",
			setFlags: flags(jsonFlag, func(fs *pflag.FlagSet) {
				fs.Bool("yaml", false, "print the workflow's definition as it is stored, built-ins too, to start a customisation from")
			}), run: runWorkflows, operands: []valueKind{kindWorkflow}},
		{name: "log", readOnly: true, args: "[<task>]",
			summary: "List the runs that ended (and the open ones), newest first; or one task's operations", group: "Inspect",
			setFlags: logFlags, run: runLog, operands: []valueKind{kindAnyTask}},
		{name: "stats", readOnly: true,
			summary: "Summarize the runs of a day or period: counts, durations, success rate, per-node time and failures", group: "Inspect",
			setFlags: statsFlags, run: runStats},
		{name: "web", summary: "Serve a dashboard of the tasks, their gates and workflow graphs on 127.0.0.1", group: "Inspect",
			setFlags: webFlags, run: runWeb},
		{name: "hook", args: "<EventName>", summary: "Record one coding-agent hook event (JSON on stdin); agents run this", group: "Agents",
			setFlags: hookFlags, run: runHook, operands: []valueKind{kindHookEvent}},
		{name: "hooks", summary: "Install or remove git-hegel's hooks and MCP server in Claude Code, Codex or Cursor", group: "Agents",
			setFlags: flags(hooksFlags, func(fs *pflag.FlagSet) { altFlags(fs, "project", "user") }), defaultSub: "status", subs: []*subcommand{
				{name: "status", flags: []string{"agent", "project", "user"}, run: runHooksStatus},
				{name: "install", flags: []string{"agent", "project", "user", "dry-run", "no-mcp"}, run: runHooksInstall},
				{name: "uninstall", flags: []string{"agent", "project", "user", "dry-run", "no-mcp"}, run: runHooksUninstall},
			}},
		{name: "guides", readOnly: true, args: "[<name>]", summary: "List the prompt guides, or print one", group: "Agents",
			setFlags: jsonFlag, run: runGuides, operands: []valueKind{kindGuide}},
		{name: "metrics", readOnly: true, alt: []string{"{graph} [{task}]"}, summary: "Per-phase time, tool calls, commands, edits, tokens, commits and rule violations", group: "Agents",
			setFlags: metricsFlags, run: runMetrics},
		{name: "mcp", summary: "Serve the Model Context Protocol on stdin and stdout, so a coding agent drives the workflow through typed tools", group: "Agents",
			run: runMCP},
		{name: "gc", summary: "Remove history entries, archived tasks and dropped stashes older than the retention, so git gc reclaims them", group: "Maintenance",
			setFlags: gcFlags, run: runGC},
		{name: "doctor", readOnly: true, writeFlag: "fix", summary: "Check refs/hegel/, the session file, locks, rollbacks, task owners and stashed tasks; --fix repairs what it can", group: "Maintenance",
			setFlags: doctorFlags, run: runDoctor},
		{name: "init", summary: "Prepare .hegel/ in this worktree (start does this too)", group: "Setup", run: runInit},
		{name: "help", args: "[<command>]", summary: "Show help for git-hegel or a command", group: "Setup", run: runHelp,
			operands: []valueKind{kindCommand}},
		{name: "version", summary: "Print the version", group: "Setup", run: runVersion},
		{name: "completion", args: "bash|zsh|fish", summary: "Print the completion script for bash, zsh or fish (bash: source <(git hegel completion bash); README.md has zsh and fish)", group: "Setup", run: runCompletion,
			operands: []valueKind{kindShell}},
		{name: "remote", summary: "Make plain git fetch and git push carry refs/hegel/* for a remote", group: "Setup",
			setFlags: remoteFlags, subs: remoteSubs},
		{name: completeCommand, readOnly: true, args: "<word>...", summary: "Print the completions of the last word (used by the completion scripts)", run: runComplete, hidden: true, rawArgs: true},
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
		var out []string
		for _, form := range renderForms(append([]string{cmd.args}, cmd.alt...), cmd.flagSet(&Env{}), nil) {
			out = append(out, strings.TrimSpace("git hegel "+cmd.name+" "+form))
		}
		return out
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
	form := renderForms([]string{s.args}, cmd.flagSet(&Env{}), s)[0]
	return strings.Join(strings.Fields("git hegel "+cmd.name+" "+verb+" "+form), " ")
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
	if cmd.aliases != nil {
		fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
			if to, ok := cmd.aliases[name]; ok {
				return pflag.NormalizedName(to)
			}
			return pflag.NormalizedName(name)
		})
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
		return unknownCommand(name)
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
	if env.pipe != nil && len(cmd.subs) == 0 && c.readOnly() {
		env.pipe.stopNow.Store(true)
	}
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
	if c.pipe != nil && c.readOnly() {
		c.pipe.stopNow.Store(true)
	}
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
	// The names' column fits the longest, so a long name never pushes
	// its summary out of line.
	width := 12
	for _, c := range commands {
		if !c.hidden {
			width = max(width, len(c.name))
		}
	}
	for _, g := range groups {
		fmt.Fprintf(w, "\n%s:\n", g)
		for _, c := range commands {
			if c.group == g && !c.hidden {
				fmt.Fprintf(w, "   %-*s %s\n", width, c.name, c.summary)
			}
		}
	}
	fmt.Fprint(w, "\nEvery command takes --color[=<when>] and --no-color, before or after its name.\n")
	fmt.Fprint(w, "Run 'git hegel <command> -h' for a command's options, 'git hegel --help' for the manual (installed by make install).\n")
}

func printCommandUsage(w io.Writer, cmd *command, fs *pflag.FlagSet) {
	fmt.Fprintf(w, "usage: %s\n\n%s\n", strings.Join(cmd.synopses(), "\n   or: "), cmd.summary)
	if u := optionsText(fs, nil); u != "" {
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
		return unknownCommand(args[0])
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

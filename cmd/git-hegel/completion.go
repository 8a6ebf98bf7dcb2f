package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/agent"
	"github.com/git-hegel/git-hegel/engine/workflow"
	"github.com/git-hegel/git-hegel/gitstore"
)

// Shell completion. The scripts `git hegel completion bash|zsh|fish`
// prints are thin: for every word they ask the hidden command
// `git hegel __complete <words>...`, which answers from the dispatch table
// (commands, subcommands, flags, what each operand is) and, for names that
// live in the repository, from the refs and the configuration. So a new
// command, flag or operand kind is completed by the binary that has it,
// with no change to the scripts and no need to regenerate them.
//
// __complete must stay cheap, it runs on every TAB: it reads refs, the
// stash tree, the checkpoint chain and the configuration, never the work
// tree.

// completeCommand is the hidden helper the scripts call.
const completeCommand = "__complete"

// valueKind says what an operand or a flag's value is.
type valueKind string

const (
	kindWorkflow         valueKind = "workflow"           // a workflow that can be started
	kindNode             valueKind = "node"               // a node of the workflow named by the operand before it
	kindClaim            valueKind = "claim"              // a claim the current node has a transition for
	kindRollbackNode     valueKind = "rollback-node"      // a node the active task has a checkpoint for
	kindTask             valueKind = "task"               // a task under refs/hegel/tasks/
	kindStash            valueKind = "stash"              // stash@{N}
	kindDroppedStash     valueKind = "dropped-stash"      // the id of a dropped stash
	kindCheckpoint       valueKind = "checkpoint"         // a checkpoint id of the active task
	kindCheckpointOrNode valueKind = "checkpoint-or-node" // either
	kindRemote           valueKind = "remote"             // a git remote
	kindCommand          valueKind = "command"            // a git hegel command
	kindShell            valueKind = "shell"              // bash, zsh, fish
	kindWhen             valueKind = "when"               // always, never, auto
	kindAnyTask          valueKind = "any-task"           // a task, live or archived
	kindDeletedTask      valueKind = "deleted-task"       // a task delete removed
	kindTaskNode         valueKind = "task-node"          // a node of the active task's workflow
	kindStrategy         valueKind = "strategy"           // a resume strategy
	kindTaskType         valueKind = "task-type"          // a task type of the workflow named by the operand before it
	kindPriority         valueKind = "priority"           // low, normal, high, urgent
	kindGuide            valueKind = "guide"              // a guide's NAME
	kindAgent            valueKind = "agent"              // claude, codex, cursor
	kindRuleType         valueKind = "rule-type"          // a guard rule type
	kindGraphFormat      valueKind = "graph-format"       // dot, mermaid
	kindHookEvent        valueKind = "hook-event"         // an agent's hook event name
	kindAdapter          valueKind = "adapter"            // an adapter configured in git config
	kindRunWorkflow      valueKind = "run-workflow"       // a workflow git hegel run can run
	kindResultNode       valueKind = "result-node"        // a node with a stored result in the active task
	kindArtifact         valueKind = "artifact"           // an artifact the task named by the operand before it submitted
	kindMetaMode         valueKind = "meta-mode"          // a meta-mode
	kindNextWorkflow     valueKind = "next-workflow"      // a workflow that follows the done task in its meta-mode
)

// completeAnnotation marks a flag whose value completion knows.
const completeAnnotation = "git-hegel-complete"

// completeValues declares what the value of flag is, for completion.
func completeValues(fs *pflag.FlagSet, flag string, kind valueKind) {
	_ = fs.SetAnnotation(flag, completeAnnotation, []string{string(kind)})
}

// shells are the shells completion scripts are written for.
var shells = map[string]string{"bash": bashCompletion, "zsh": zshCompletion, "fish": fishCompletion}

func runCompletion(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 1, 1); err != nil {
		return err
	}
	script, ok := shells[args[0]]
	if !ok {
		return usagef(c.name, "unsupported shell '%s' (supported: bash, zsh, fish)", args[0])
	}
	_, err := io.WriteString(c.Stdout, script)
	return err
}

// candidate is one completion: the word and, for the shells that show it,
// what it is.
type candidate struct{ word, desc string }

// runComplete prints the completions of the last of args (the words after
// "hegel", the last one being completed, possibly ""), one a line, with a
// tab and a description where there is one. It never fails: what cannot be
// computed is not offered.
func runComplete(c *cmdCtx, args []string) error {
	bw := bufio.NewWriter(c.Stdout)
	for _, cand := range c.completions(args) {
		if cand.desc != "" {
			fmt.Fprintf(bw, "%s\t%s\n", cand.word, oneLineDesc(cand.desc))
		} else {
			fmt.Fprintln(bw, cand.word)
		}
	}
	return bw.Flush()
}

func oneLineDesc(s string) string { return strings.Join(strings.Fields(s), " ") }

func (c *cmdCtx) completions(words []string) []candidate {
	for len(words) > 1 && isCommonOption(words[0]) {
		words = words[1:]
	}
	if len(words) == 0 {
		words = []string{""}
	}
	cur := words[len(words)-1]
	if len(words) == 1 {
		if strings.HasPrefix(cur, "--") && strings.Contains(cur, "=") {
			if name, _, _ := strings.Cut(cur[2:], "="); isCommonFlag(name) {
				return matching(cur, c.flagValues((&command{}).flagSet(&Env{}).Lookup(name), "--"+name+"=", nil))
			}
		}
		if strings.HasPrefix(cur, "-") {
			opts := []candidate{{"--help", "show the usage"}, {"--version", "print the version"}}
			return matching(cur, append(opts, flagCandidates((&command{}).flagSet(&Env{}), nil)...))
		}
		return matching(cur, c.values(kindCommand, nil))
	}
	cmd := lookup(words[0])
	if cmd == nil || cmd.hidden {
		return nil
	}
	fs := cmd.flagSet(&Env{})
	var operands []string
	var pending *pflag.Flag // a flag whose value is the word being completed
	dashdash := false
	for i := 1; i < len(words)-1; i++ {
		w := words[i]
		pending = nil
		switch {
		case dashdash || w == "-" || !strings.HasPrefix(w, "-"):
			operands = append(operands, w)
		case w == "--":
			dashdash = true
		case strings.HasPrefix(w, "--"):
			name, _, hasValue := strings.Cut(w[2:], "=")
			if f := fs.Lookup(name); f != nil && !hasValue && takesValue(f) {
				pending = f
				i++
			}
		default:
			for j := 1; j < len(w); j++ {
				if f := fs.ShorthandLookup(w[j : j+1]); f != nil && takesValue(f) {
					if j == len(w)-1 {
						pending = f
						i++
					}
					break
				}
			}
		}
		if pending != nil && i == len(words)-1 {
			// The word being completed is this flag's value.
			return matching(cur, c.flagValues(pending, "", operands))
		}
	}
	if !dashdash && strings.HasPrefix(cur, "--") && strings.Contains(cur, "=") {
		name, _, _ := strings.Cut(cur[2:], "=")
		if f := fs.Lookup(name); f != nil {
			return matching(cur, c.flagValues(f, "--"+name+"=", operands))
		}
		return nil
	}
	var sub *subcommand
	if len(cmd.subs) > 0 {
		sub = cmd.findSub(cmd.defaultSub)
		if len(operands) > 0 {
			sub = cmd.findSub(operands[0])
		}
	}
	if !dashdash && strings.HasPrefix(cur, "-") {
		return matching(cur, flagCandidates(fs, sub))
	}
	kinds, at := cmd.operands, len(operands)
	if len(cmd.subs) > 0 {
		if len(operands) == 0 {
			var out []candidate
			for _, s := range cmd.subs {
				if s.name != "" {
					out = append(out, candidate{s.name, cmd.subSynopsis(s)})
				}
			}
			return matching(cur, out)
		}
		if sub == nil || sub.name == "" {
			return nil
		}
		kinds, at = sub.operands, len(operands)-1
	}
	if at >= len(kinds) {
		return nil
	}
	return matching(cur, c.values(kinds[at], operands))
}

// takesValue reports whether a flag needs a value (given as --f=v or --f v).
func takesValue(f *pflag.Flag) bool { return f.NoOptDefVal == "" }

// flagCandidates are the flags that apply (to sub, for a command with
// verbs): --name for a switch, --name= for an option with a value, both
// for one whose value is optional (--color).
func flagCandidates(fs *pflag.FlagSet, sub *subcommand) []candidate {
	var out []candidate
	fs.VisitAll(func(f *pflag.Flag) {
		if sub != nil && !isCommonFlag(f.Name) && !contains(sub.flags, f.Name) {
			return
		}
		if !takesValue(f) {
			out = append(out, candidate{"--" + f.Name, f.Usage})
		}
		if takesValue(f) || f.Value.Type() != "bool" {
			out = append(out, candidate{"--" + f.Name + "=", f.Usage})
		}
	})
	return out
}

// flagValues completes a flag's value, each prefixed with prefix.
func (c *cmdCtx) flagValues(f *pflag.Flag, prefix string, operands []string) []candidate {
	kinds := f.Annotations[completeAnnotation]
	if len(kinds) == 0 {
		return nil
	}
	vals := c.values(valueKind(kinds[0]), operands)
	for i := range vals {
		vals[i].word = prefix + vals[i].word
	}
	return vals
}

// matching keeps the candidates that start with prefix, each once.
func matching(prefix string, cands []candidate) []candidate {
	var out []candidate
	seen := map[string]bool{}
	for _, cand := range cands {
		if strings.HasPrefix(cand.word, prefix) && !seen[cand.word] {
			seen[cand.word] = true
			out = append(out, cand)
		}
	}
	return out
}

// values lists the names of one kind. operands are the operands before
// the word being completed (start's node completion reads the workflow).
func (c *cmdCtx) values(kind valueKind, operands []string) []candidate {
	switch kind {
	case kindWhen:
		return []candidate{{"always", ""}, {"never", ""}, {"auto", "only on a terminal"}}
	case kindShell:
		return []candidate{{"bash", ""}, {"fish", ""}, {"zsh", ""}}
	case kindStrategy:
		var out []candidate
		for _, st := range engine.Strategies {
			out = append(out, candidate{st.Name, st.Explain})
		}
		return out
	case kindPriority:
		var out []candidate
		for _, p := range engine.Priorities {
			out = append(out, candidate{p, ""})
		}
		return out
	case kindTaskType:
		return c.workflowValues(kind, operands)
	case kindAgent:
		return []candidate{{agent.Claude, "Claude Code"}, {agent.Codex, "OpenAI Codex CLI"}, {agent.Cursor, "Cursor"}}
	case kindRuleType:
		var out []candidate
		for _, t := range forceRuleTypes() {
			out = append(out, candidate{t, "bypass only this rule type"})
		}
		return out
	case kindGraphFormat:
		return []candidate{{agent.GraphDot, "Graphviz"}, {agent.GraphMermaid, "Mermaid"}}
	case kindHookEvent:
		var out []candidate
		for _, a := range agent.AllSettings() {
			for _, ev := range a.Events {
				out = append(out, candidate{ev, a.Agent})
			}
		}
		return out
	case kindGuide:
		r, err := gitstore.Open(c.Dir, c.Getenv)
		var src workflow.GuideSource
		if err == nil {
			src = r.Sessions()
		}
		gs, _ := workflow.Guides(src, "")
		var out []candidate
		for _, g := range gs {
			out = append(out, candidate{g.Name, g.Title})
		}
		return out
	case kindCommand:
		var out []candidate
		for _, cmd := range commands {
			if !cmd.hidden {
				out = append(out, candidate{cmd.name, cmd.summary})
			}
		}
		return out
	case kindWorkflow, kindNode:
		return c.workflowValues(kind, operands)
	case kindMetaMode, kindNextWorkflow:
		return c.metaValues(kind)
	case kindRunWorkflow:
		reg, _, err := c.workflowRegistry()
		if err != nil {
			return nil
		}
		var out []candidate
		for _, cand := range c.workflowValues(kindWorkflow, operands) {
			if wf, ok := reg.Get(cand.word); ok && wf.Runnable() {
				out = append(out, cand)
			}
		}
		return out
	case kindAdapter:
		r, err := gitstore.Open(c.Dir, c.Getenv)
		if err != nil {
			return nil
		}
		var out []candidate
		for _, sub := range r.Config().Subsections("hegel") {
			if name, ok := strings.CutPrefix(sub, "adapter."); ok && workflow.ValidAdapterName(name) {
				cmd, _ := r.Config().Get("hegel", sub, "command")
				out = append(out, candidate{name, cmd})
			}
		}
		return out
	case kindRemote:
		r, err := gitstore.Open(c.Dir, c.Getenv)
		if err != nil {
			return nil
		}
		var out []candidate
		for _, name := range r.Config().Subsections("remote") {
			out = append(out, candidate{name, ""})
		}
		return out
	}
	e, r, err := c.engine()
	if err != nil {
		return nil
	}
	switch kind {
	case kindArtifact:
		if len(operands) == 0 {
			return nil
		}
		return artifactNames(e, operands[0])
	case kindTask:
		names, _ := e.Tasks.ListTasks()
		out := make([]candidate, 0, len(names))
		for _, n := range names {
			out = append(out, candidate{n, ""})
		}
		return out
	case kindAnyTask:
		names, _ := e.Tasks.ListTasks()
		archived, _ := e.Archive.ListArchived()
		var out []candidate
		for _, n := range names {
			out = append(out, candidate{n, ""})
		}
		for _, n := range archived {
			out = append(out, candidate{n, "archived"})
		}
		return out
	case kindDeletedTask:
		list, _ := e.DeletedTasks()
		var out []candidate
		for _, d := range list {
			out = append(out, candidate{d.Task, d.Workflow + " " + d.Status})
		}
		return out
	case kindStash:
		list, _ := e.StashList()
		var out []candidate
		for _, ent := range list {
			out = append(out, candidate{ent.Ref(), ent.Label()})
		}
		return out
	case kindDroppedStash:
		list, _ := e.StashDropped()
		var out []candidate
		for _, d := range list {
			out = append(out, candidate{d.ID, d.Label()})
		}
		return out
	}
	t, err := e.Current(c.selected())
	if err != nil {
		return nil
	}
	if kind == kindResultNode {
		wf, err := workflow.Parse(t.State.Workflow, "", t.Definition)
		if err != nil {
			return nil
		}
		var out []candidate
		for _, n := range engine.ResultNodes(t.State, wf) {
			desc := ""
			if m, ok := engine.StepResultOf(t.State, n); ok {
				desc = m.Handler + ", " + engine.Size(m.Bytes)
			}
			out = append(out, candidate{n, desc})
		}
		return out
	}
	if kind == kindTaskNode {
		wf, err := workflow.Parse(t.State.Workflow, "", t.Definition)
		if err != nil {
			return nil
		}
		var out []candidate
		for _, n := range wf.Order {
			out = append(out, candidate{n, wf.Nodes[n].Summary})
		}
		return out
	}
	if kind == kindClaim {
		wf, err := workflow.Parse(t.State.Workflow, "", t.Definition)
		if err != nil {
			return nil
		}
		var out []candidate
		if n, ok := wf.Nodes[t.State.CurrentNode]; ok {
			for _, tr := range n.Transitions {
				out = append(out, candidate{tr.When, "go to " + tr.To})
			}
		}
		return out
	}
	cps, err := c.snapshots(r).Checkpoints(t.State.Task)
	if err != nil {
		return nil
	}
	slices.Reverse(cps) // newest first
	var ids, nodes []candidate
	for _, cp := range cps {
		desc := fmt.Sprintf("%s, %s, %s", cp.Node, cp.Kind, c.age(cp.CreatedAt))
		ids = append(ids, candidate{cp.ID, desc})
		nodes = append(nodes, candidate{cp.Node, "checkpoint " + cp.ID + ", " + c.age(cp.CreatedAt)})
	}
	switch kind {
	case kindCheckpoint:
		return ids
	case kindRollbackNode:
		return nodes
	case kindCheckpointOrNode:
		return append(nodes, ids...)
	}
	return nil
}

// workflowValues lists the workflows that can be started (the built-ins
// outside a repository), or the nodes of the one named by operands[0].
func (c *cmdCtx) workflowValues(kind valueKind, operands []string) []candidate {
	reg, _, err := c.workflowRegistry()
	if err != nil {
		return nil
	}
	var out []candidate
	if kind == kindWorkflow {
		for _, wf := range reg.List() {
			out = append(out, candidate{wf.Name, mainPath(wf)})
		}
		return out
	}
	if len(operands) == 0 {
		return nil
	}
	wf, ok := reg.Get(operands[0])
	if !ok {
		return nil
	}
	if kind == kindTaskType {
		for _, t := range wf.TaskTypes {
			out = append(out, candidate{t, "skips " + strings.Join(wf.Skips()[t], ", ")})
		}
		return out
	}
	for _, n := range wf.Order {
		out = append(out, candidate{n, wf.Nodes[n].Summary})
	}
	return out
}

// completionNames lists every name completion can offer for kind, sorted;
// tests use it.
func completionNames(cands []candidate) []string {
	out := make([]string, len(cands))
	for i, c := range cands {
		out[i] = c.word
	}
	sort.Strings(out)
	return out
}

const bashCompletion = `# bash completion for git hegel.
# Load it after git's own completion, which calls _git_hegel for
# "git hegel ...", for example in ~/.bashrc:
#     source <(git hegel completion bash)
# Every word is completed by "git hegel __complete", from the git-hegel on
# your PATH, so new commands and options need no new script.

_git_hegel ()
{
	local c="${__git_cmd_idx-}"
	if [ -z "$c" ]; then
		# git before 2.31 does not say where its subcommand is.
		for ((c = 1; c < cword; c++)); do
			[ "${words[c]}" = hegel ] && break
		done
	fi
	local IFS=$'\n' line list="" eq="" pfx="" cur_="$cur"
	case "$cur" in
	--*=*)
		# bash completes only what follows the "=".
		pfx="${cur%%=*}="
		cur_="${cur#*=}"
		;;
	esac
	for line in $(__git hegel __complete "${words[@]:c+1:cword-c}"); do
		line="${line%%$'\t'*}"
		line="${line#"$pfx"}"
		case "$line" in
		*=) eq+="$line"$'\n' ;;
		*) list+="$line"$'\n' ;;
		esac
	done
	__gitcomp_nl "$list" "" "$cur_"
	__gitcomp_nl_append "$eq" "" "$cur_" ""
}

# "git-hegel ..." typed directly.
if declare -F __git_complete >/dev/null; then
	__git_complete git-hegel _git_hegel
fi
`

const zshCompletion = `#compdef git-hegel
#description run stage-gated workflows whose state lives in the repository

# zsh completion for git hegel. Save it as _git-hegel in a directory on
# $fpath, before compinit runs; zsh's git completion then completes
# "git hegel ..." with it too:
#     mkdir -p ~/.zfunc && git hegel completion zsh > ~/.zfunc/_git-hegel
#     # in ~/.zshrc, before compinit:  fpath=(~/.zfunc $fpath)
# Or source it after compinit. Every word is completed by
# "git hegel __complete", from the git-hegel on your PATH, so new commands
# and options need no new script.

_git-hegel() {
	local -a lines plain eq
	local line word desc
	# words[1] is "hegel" (under git) or "git-hegel".
	lines=("${(@f)$(_call_program hegel-complete git hegel __complete "${(@q)words[2,CURRENT]}" 2>/dev/null)}")
	for line in $lines; do
		[[ -n $line ]] || continue
		word=${line%%$'\t'*}
		desc=${word//:/\\:}
		[[ $line == *$'\t'* ]] && desc+=":${line#*$'\t'}"
		if [[ $word == *= ]]; then
			eq+=("$desc")
		else
			plain+=("$desc")
		fi
	done
	local ret=1
	(( $#plain )) && _describe -t hegel 'git hegel' plain && ret=0
	(( $#eq )) && _describe -t hegel-options 'option' eq -S '' && ret=0
	return ret
}

if [[ $funcstack[1] == _git-hegel ]]; then
	_git-hegel "$@"
elif (( $+functions[compdef] )); then
	compdef _git-hegel git-hegel
fi
`

const fishCompletion = `# fish completion for git hegel. Save it as
#     ~/.config/fish/conf.d/git-hegel.fish
# so that both "git hegel ..." and "git-hegel ..." complete (fish's own
# hand-over of "git hegel" to git-hegel's completion is broken in fish
# 3.6.0). Every word is completed by "git hegel __complete", from the
# git-hegel on your PATH, so new commands and options need no new script.

# __git_hegel_command prints the index of git's subcommand on the command
# line (after git's own options), or nothing when there is none yet.
function __git_hegel_command
    set -l tokens (commandline -opc)
    set -l i 2
    while test $i -le (count $tokens)
        switch $tokens[$i]
            case -C -c --git-dir --work-tree --namespace --exec-path --config-env
                set i (math $i + 2)
            case '-*'
                set i (math $i + 1)
            case '*'
                echo $i
                return 0
        end
    end
    return 1
end

# __git_hegel_args prints the words after "hegel" (or "git-hegel"), the
# last being the one completed.
function __git_hegel_args
    set -l tokens (commandline -opc)
    set -l i 1
    if test "$tokens[1]" = git
        set i (__git_hegel_command); or return 1
        test "$tokens[$i]" = hegel; or return 1
    end
    if test $i -lt (count $tokens)
        printf '%s\n' $tokens[(math $i + 1)..-1]
    end
    commandline -ct
end

function __git_hegel_using
    __git_hegel_args >/dev/null
end

function __git_hegel_needs_command
    test (commandline -opc)[1] = git; and not __git_hegel_command >/dev/null
end

function __git_hegel_complete
    set -l args (__git_hegel_args); or return
    git hegel __complete $args 2>/dev/null
end

complete -c git-hegel -f -a '(__git_hegel_complete)'
complete -c git -f -n __git_hegel_using -a '(__git_hegel_complete)'
complete -c git -f -n __git_hegel_needs_command -a hegel -d 'Run stage-gated workflows (git-hegel)'
`

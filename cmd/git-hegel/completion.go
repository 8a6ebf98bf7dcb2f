package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/pflag"
)

// runCompletion prints a bash completion script generated from the dispatch
// table, so completion always knows every command and flag. git's own
// completion calls _git_hegel for `git hegel <TAB>`.
func runCompletion(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 1, 1); err != nil {
		return err
	}
	if args[0] != "bash" {
		return usagef(c.name, "unsupported shell '%s' (supported: bash)", args[0])
	}
	writeBashCompletion(c.Stdout)
	return nil
}

func writeBashCompletion(w io.Writer) {
	var names []string
	flags := map[string][]string{}
	for _, cmd := range commands {
		names = append(names, cmd.name)
		fs := pflag.NewFlagSet(cmd.name, pflag.ContinueOnError)
		if cmd.setFlags != nil {
			cmd.setFlags(fs)
		}
		fs.VisitAll(func(f *pflag.Flag) {
			opt := "--" + f.Name
			if f.Value.Type() != "bool" {
				opt += "="
			}
			flags[cmd.name] = append(flags[cmd.name], opt)
		})
		sort.Strings(flags[cmd.name])
	}
	fmt.Fprintf(w, `# bash completion for git hegel; load it with:
#   source <(git hegel completion bash)
# (after git's own completion, which calls _git_hegel).
_git_hegel ()
{
	local subcommands=%q
	local subcommand="$(__git_find_on_cmdline "$subcommands")"
	if [ -z "$subcommand" ]; then
		__gitcomp "$subcommands"
		return
	fi
	case "$cur" in
	--strategy=*)
		__gitcomp "%s" "" "${cur##--strategy=}"
		return
		;;
	--type=*)
		__gitcomp "feature bug_fix refactor chore docs hotfix" "" "${cur##--type=}"
		return
		;;
	--priority=*)
		__gitcomp "low normal high urgent" "" "${cur##--priority=}"
		return
		;;
	--task=*)
		__gitcomp_nl "$(git for-each-ref --format='%%(refname:lstrip=3)' refs/hegel/tasks refs/hegel/archive 2>/dev/null)" "" "${cur##--task=}"
		return
		;;
	--*)
		case "$subcommand" in
`, strings.Join(names, " "), strategyNames(" "))
	for _, n := range names {
		if len(flags[n]) > 0 {
			fmt.Fprintf(w, "\t\t%s) __gitcomp %q ;;\n", n, strings.Join(flags[n], " "))
		}
	}
	fmt.Fprint(w, `		esac
		return
		;;
	esac
	case "$subcommand" in
	start|workflows)
		__gitcomp_nl "$(git hegel workflows 2>/dev/null | cut -d' ' -f1)"
		;;
	switch|show|describe|delete)
		__gitcomp_nl "$(git for-each-ref --format='%(refname:lstrip=3)' refs/hegel/tasks refs/hegel/archive 2>/dev/null)"
		;;
	restore-task)
		__gitcomp_nl "$(git for-each-ref --format='%(refname:lstrip=3)' refs/hegel/deleted 2>/dev/null)"
		;;
	help)
		__gitcomp "$subcommands"
		;;
	completion)
		__gitcomp "bash"
		;;
	esac
}
`)
}

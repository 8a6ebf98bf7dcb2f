package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The error table: every way a command can be misused or fail that the
// user sees, with its exit code and the first line of stderr, in git's
// style (errors.go): "error: ..." and exit 1 when the operation failed;
// "error: ... (see 'git hegel X -h')" or "usage: git hegel X ..." and
// exit 2 for misuse, including a name that cannot be right; "fatal: ..."
// and exit 128 when there is no repository git-hegel can work in. A new
// command adds its rows here.
var errorTable = []struct {
	where string // a fixture of errorFixtures
	args  []string
	code  int
	first string // the first line of stderr, exactly
}{
	// Misuse: exit 2, before the repository is looked at.
	{"norepo", []string{"bogus"}, 2, "error: 'bogus' is not a git hegel command (see 'git hegel help')"},
	{"norepo", []string{"--bogus"}, 2, "error: unknown option 'bogus' (see 'git hegel help')"},
	{"norepo", []string{"--color=maybe", "status"}, 2, `error: option 'color' expects "always", "auto", or "never" (see 'git hegel help')`},
	{"norepo", []string{"--no-color", "bogus"}, 2, "error: 'bogus' is not a git hegel command (see 'git hegel help')"},
	{"norepo", []string{"help", "bogus"}, 2, "error: 'bogus' is not a git hegel command (see 'git hegel help')"},
	{"norepo", []string{"status", "--bogus"}, 2, "error: unknown option 'bogus' (see 'git hegel status -h')"},
	{"norepo", []string{"next", "-x"}, 2, "error: unknown switch 'x' (see 'git hegel next -h')"},
	{"norepo", []string{"status", "---x"}, 2, "error: unknown option 'x' (see 'git hegel status -h')"},
	{"norepo", []string{"start", "minimal", "--task"}, 2, "error: option 'task' requires a value (see 'git hegel start -h')"},
	{"norepo", []string{"stash", "-m"}, 2, "error: switch 'm' requires a value (see 'git hegel stash -h')"},
	{"norepo", []string{"status", "--json=maybe"}, 2, "error: option 'json' takes a schema, 1 or 2, not 'maybe' (see 'git hegel status -h')"},
	{"norepo", []string{"log", "-n", "x"}, 2, "error: option 'max-count' expects a whole number, not 'x' (see 'git hegel log -h')"},
	{"norepo", []string{"status", "--color=maybe"}, 2, `error: option 'color' expects "always", "auto", or "never" (see 'git hegel status -h')`},
	{"norepo", []string{"start"}, 2, "usage: git hegel start <workflow> [<node>] [--type TYPE] [-d TEXT] [--priority PRIORITY] [-q] [--task NAME]"},
	{"norepo", []string{"next", "a", "b"}, 2, "usage: git hegel next [<claim>] [--force[=RULE_TYPE]]... [-y] [-q] [--task NAME]"},
	{"norepo", []string{"prev", "x"}, 2, "usage: git hegel prev [--force] [-q] [--task NAME]"},
	{"norepo", []string{"switch"}, 2, "usage: git hegel switch <task>"},
	{"norepo", []string{"version", "extra"}, 2, "usage: git hegel version"},
	{"norepo", []string{"completion"}, 2, "usage: git hegel completion bash|zsh|fish"},
	{"norepo", []string{"completion", "tcsh"}, 2, "error: unsupported shell 'tcsh' (supported: bash, zsh, fish) (see 'git hegel completion -h')"},
	{"norepo", []string{"stash", "bogus"}, 2, "error: 'bogus' is not a stash subcommand (push, save, list, show, pop, apply, drop, clear, restore) (see 'git hegel stash -h')"},
	{"norepo", []string{"stash", "pop", "--json"}, 2, "error: --json does not apply to 'stash pop' (see 'git hegel stash -h')"},
	{"norepo", []string{"stash", "pop", "1", "2"}, 2, "usage: git hegel stash pop [<stash>] [-f]"},
	{"norepo", []string{"stash", "restore"}, 2, "usage: git hegel stash restore <id>"},
	{"norepo", []string{"checkpoint", "bogus"}, 2, "error: 'bogus' is not a checkpoint subcommand (list, show, drop) (see 'git hegel checkpoint -h')"},
	{"norepo", []string{"checkpoint", "--json"}, 2, "error: --json does not apply to 'checkpoint' (see 'git hegel checkpoint -h')"},
	{"norepo", []string{"checkpoint", "show"}, 2, "usage: git hegel checkpoint show <id|node> [--json | -z] [--task NAME]"},
	{"norepo", []string{"checkpoint", "show", "x", "-z", "--json"}, 2, "error: --json and -z cannot be used together (see 'git hegel checkpoint -h')"},
	{"norepo", []string{"rollback", "spec", "--to", "abcd"}, 2, "error: give a node or --to <checkpoint>, not both (see 'git hegel rollback -h')"},
	{"norepo", []string{"rollback", "--undo", "spec"}, 2, "error: --undo takes no node, no --to and no --all (see 'git hegel rollback -h')"},
	{"norepo", []string{"rollback", "-z"}, 2, "error: -z needs --dry-run (see 'git hegel rollback -h')"},
	{"norepo", []string{"start", "minimal", "--task="}, 2, "error: --task needs a name (see 'git hegel start -h')"},
	{"norepo", []string{"trust", "a", "b"}, 2, "usage: git hegel trust [<task>] [-y | -n] [--json]"},
	{"norepo", []string{"trust", "--list", "t"}, 2, "error: --list takes no task, -y or --dry-run (see 'git hegel trust -h')"},
	{"norepo", []string{"trust", "-y", "--dry-run"}, 2, "error: -y and --dry-run exclude each other (see 'git hegel trust -h')"},
	{"norepo", []string{"trust", "a..b"}, 2, "error: Invalid task name 'a..b': use letters, digits, '-' and '_' (at most 100)"},
	// Names that cannot be right are misuse too.
	{"norepo", []string{"start", "minimal", "--task", "bad name"}, 2, "error: Invalid task name 'bad name': use letters, digits, '-' and '_' (at most 100)"},
	{"norepo", []string{"switch", "a..b"}, 2, "error: Invalid task name 'a..b': use letters, digits, '-' and '_' (at most 100)"},
	{"fresh", []string{"start", "bogus"}, 2, "error: Unknown workflow 'bogus'. Run 'git hegel workflows' to list them"},
	{"fresh", []string{"start", "minimal", "nosuch"}, 2, "error: Workflow 'minimal' has no node 'nosuch' (nodes: 'spec', 'plan')"},
	{"active", []string{"rollback", "nosuch", "-y"}, 2, "error: Workflow 'minimal' has no node 'nosuch' (nodes: 'spec', 'plan')"},
	{"active", []string{"rollback", "done", "-y"}, 2, "error: Cannot roll back to 'done': it ends the workflow"},
	{"norepo", []string{"stash", "pop", "nonsense"}, 2, "error: Invalid stash reference 'nonsense': use N, stash@{N} or a stash id (see 'git hegel stash list')"},
	{"norepo", []string{"stash", "restore", "0"}, 2, "error: Invalid stash id '0' (see 'git hegel stash list --dropped')"},

	// The operation failed: exit 1.
	{"fresh", []string{"next"}, 1, "error: No active workflow. Start one with 'git hegel start <workflow>' (see 'git hegel workflows')"},
	{"fresh", []string{"prev"}, 1, "error: No active workflow. Start one with 'git hegel start <workflow>' (see 'git hegel workflows')"},
	{"fresh", []string{"abort"}, 1, "error: No active workflow to abort"},
	{"fresh", []string{"approve"}, 1, "error: No active workflow here, and no task waits for approval (see 'git hegel tasks')"},
	{"fresh", []string{"stash"}, 1, "error: No active workflow to stash"},
	{"fresh", []string{"stash", "pop"}, 1, "error: No stashes to restore"},
	{"fresh", []string{"stash", "drop", "-y"}, 1, "error: No stashes to drop"},
	{"fresh", []string{"checkpoint", "list"}, 1, "error: No active workflow. Start one with 'git hegel start <workflow>' (see 'git hegel workflows')"},
	{"fresh", []string{"rollback"}, 1, "error: No active workflow. Start one with 'git hegel start <workflow>' (see 'git hegel workflows')"},
	{"fresh", []string{"switch", "nosuch"}, 1, "error: No task named 'nosuch' (see 'git hegel tasks'; 'git hegel fetch' brings other clones' tasks)"},
	{"fresh", []string{"show", "nosuch"}, 1, "error: No task named 'nosuch' (see 'git hegel tasks --all --archived')"},
	{"fresh", []string{"status", "--task", "nosuch"}, 1, "error: No task named 'nosuch' (see 'git hegel tasks --all --archived')"},
	{"fresh", []string{"start", "pipeline", "--type", "epic"}, 2, "error: Unknown task type 'epic' for workflow 'pipeline' (types: 'feature', 'bug_fix', 'refactor', 'chore', 'docs', 'hotfix')"},
	{"fresh", []string{"start", "pipeline", "--priority", "asap"}, 2, "error: unknown priority 'asap' (use low, normal, high or urgent) (see 'git hegel start -h')"},
	{"fresh", []string{"resume", "--strategy", "retry"}, 2, "error: unknown strategy 'retry' (use retry-current, retry-previous, skip-current, from-checkpoint) (see 'git hegel resume -h')"},
	{"fresh", []string{"workflows", "nosuch"}, 2, "error: Unknown workflow 'nosuch'. Run 'git hegel workflows' to list them"},
	{"norepo", []string{"delete", "a b"}, 2, "error: Invalid task name 'a b': use letters, digits, '-' and '_' (at most 100)"},
	{"fresh", []string{"fetch", "nosuch"}, 1, "error: no such remote: 'nosuch' is not a git remote (see 'git remote -v'; set another with 'git config hegel.remote <name>')"},
	{"active", []string{"start", "minimal", "--type", "x"}, 2, "error: Workflow 'minimal' has no task types, so --type does not apply (the pipeline workflow has them)"},
	{"active", []string{"approve"}, 1, "error: Cannot approve: task t is active. It is not waiting for approval; 'git hegel next' moves it on"},
	{"active", []string{"answer", "x"}, 1, "error: Cannot answer: task t is active. No question is open; 'git hegel ask QUESTION' asks one"},
	{"active", []string{"resume", "--strategy", "retry-current"}, 1, "error: Cannot resume workflow with status: active (task t). It is running; 'git hegel pause' pauses it"},
	{"active", []string{"delete", "t", "-y"}, 1, "error: Task 't' is active; abort it first with 'git hegel abort --task t'"},
	{"active", []string{"next", "bogus"}, 1, "error: No transition from 'spec' matches 'bogus'; staying at 'spec' (try: 'spec_complete')"},
	{"active", []string{"prev"}, 1, "error: Already at the first node 'spec'; nothing to go back to"},
	{"stashed", []string{"stash", "pop", "5"}, 1, "error: Stash index 5 not found. Available stashes: 0"},
	{"active", []string{"stash", "drop"}, 1, "error: No answer on standard input; nothing was changed (answer y on a terminal, or use -y to drop without asking)"},
	{"active", []string{"checkpoint", "show", "nosuch"}, 1, "error: Task t has no checkpoint 'nosuch'. Run 'git hegel checkpoint list' to see them"},
	{"active", []string{"rollback", "--undo", "-y"}, 1, "error: Task t has no rollback to undo"},
	{"fresh", []string{"trust"}, 1, "error: No active workflow; name the task: git hegel trust <task>"},
	{"fresh", []string{"trust", "nosuch"}, 1, "error: No task named 'nosuch' (see 'git hegel tasks --all --archived')"},

	// No repository git-hegel can work in: fatal, exit 128.
	{"norepo", []string{"status"}, 128, "fatal: not a git repository (or any of the parent directories): .git"},
	{"norepo", []string{"start", "minimal"}, 128, "fatal: not a git repository (or any of the parent directories): .git"},
	{"norepo", []string{"stash", "list"}, 128, "fatal: not a git repository (or any of the parent directories): .git"},
	{"norepo", []string{"trust", "--list"}, 128, "fatal: not a git repository (or any of the parent directories): .git"},
	{"bare", []string{"status"}, 128, "fatal: this operation must be run in a work tree"},
	{"sha256", []string{"status"}, 128, "fatal: sha256 repositories are not supported: go-git reads only sha1 object names"},
	{"splitindex", []string{"next"}, 128, "fatal: split index is not supported: run 'git config core.splitIndex false && git update-index --no-split-index'"},
	{"sparse", []string{"stash", "list"}, 128, "fatal: sparse index is not supported: run 'git sparse-checkout init --no-sparse-index'"},
	{"skiphash", []string{"checkpoint"}, 128, "fatal: index.skipHash is not supported: run 'git config index.skipHash false && git update-index --force-write-index'"},
	{"extension", []string{"rollback"}, 128, "fatal: unsupported repository extension 'foo'"},
	{"badcolor", []string{"status"}, 128, "fatal: bad boolean config value 'maybe' for 'color.ui'"},
	{"badparams", []string{"status"}, 128, "fatal: bogus format in GIT_CONFIG_PARAMETERS"},

	// Not errors: workflows works anywhere, like git help, with a hint.
	{"norepo", []string{"workflows"}, 0, "hint: not in a git repository: only the built-in workflows are listed"},
	{"bare", []string{"workflows"}, 0, "hint: not in a work tree: only the built-in workflows are listed"},
}

// errorFixtures builds the directories the table names, and the
// environment each runs with.
func errorFixtures(t *testing.T) (dirs map[string]string, env map[string][]string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	base := isolatedEnv(t)
	root := t.TempDir()
	base = append(base, "GIT_CEILING_DIRECTORIES="+root)
	dirs, env = map[string]string{}, map[string][]string{}
	mk := func(name string, setup ...[]string) {
		d := filepath.Join(root, name)
		os.MkdirAll(d, 0o755)
		for _, cmd := range setup {
			mustSh(t, base, d, cmd...)
		}
		dirs[name], env[name] = d, base
	}
	mk("norepo")
	mk("fresh", []string{"git", "init", "-q"})
	mk("active", []string{"git", "init", "-q"}, []string{"git", "hegel", "start", "minimal", "--task", "s1"},
		[]string{"git", "hegel", "stash"}, []string{"git", "hegel", "start", "minimal", "--task", "t"})
	mk("stashed", []string{"git", "init", "-q"}, []string{"git", "hegel", "start", "minimal", "--task", "s1"},
		[]string{"git", "hegel", "stash"})
	mk("bare", []string{"git", "init", "-q", "--bare"})
	mk("sha256", []string{"git", "init", "-q", "--object-format=sha256"})
	mk("splitindex", []string{"git", "init", "-q"}, []string{"git", "config", "core.splitIndex", "true"})
	mk("sparse", []string{"git", "init", "-q"}, []string{"git", "config", "index.sparse", "true"})
	mk("skiphash", []string{"git", "init", "-q"}, []string{"git", "config", "index.skipHash", "true"})
	mk("extension", []string{"git", "init", "-q"}, []string{"git", "config", "core.repositoryformatversion", "1"},
		[]string{"git", "config", "extensions.foo", "bar"})
	mk("badcolor", []string{"git", "init", "-q"})
	env["badcolor"] = append(append([]string(nil), base...), "GIT_CONFIG_PARAMETERS='color.ui'='maybe'")
	mk("badparams", []string{"git", "init", "-q"})
	env["badparams"] = append(append([]string(nil), base...), "GIT_CONFIG_PARAMETERS='color.ui")
	return dirs, env
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func TestErrorTable(t *testing.T) {
	dirs, env := errorFixtures(t)
	for _, row := range errorTable {
		dir, ok := dirs[row.where]
		if !ok {
			t.Fatalf("no fixture %q", row.where)
		}
		var out, errb bytes.Buffer
		code := run(row.args, envFrom(dir, env[row.where], &out, &errb, nil))
		if code != row.code || firstLine(errb.String()) != row.first {
			t.Errorf("%s: git hegel %s\n  got  %d %s\n  want %d %s", row.where, strings.Join(row.args, " "), code, firstLine(errb.String()), row.code, row.first)
		}
		if row.code != 0 && strings.Contains(out.String(), strings.TrimPrefix(row.first, "error: ")) {
			t.Errorf("%s: git hegel %s: the error is printed on stdout: %q", row.where, strings.Join(row.args, " "), out.String())
		}
	}
}

// TestEveryCommandErrorStyle checks what the dispatch gives every command,
// including ones added after this test was written: an unknown option is
// misuse, and outside a repository a command either needs arguments first
// (usage, 2) or says there is no repository (fatal, 128), or works
// anyway (0).
func TestEveryCommandErrorStyle(t *testing.T) {
	dirs, env := errorFixtures(t)
	for _, cmd := range commands {
		if cmd.hidden || cmd.rawArgs {
			continue
		}
		// The common options are accepted, an unknown one is misuse.
		for _, common := range [][]string{nil, {"--color=never"}, {"--no-color"}, {"--color"}} {
			var out, errb bytes.Buffer
			args := append(append([]string{cmd.name}, common...), "--no-such-option")
			code := run(args, envFrom(dirs["norepo"], env["norepo"], &out, &errb, nil))
			if want := "error: unknown option 'no-such-option' (see 'git hegel " + cmd.name + " -h')\n"; code != 2 || errb.String() != want {
				t.Errorf("%v: exit %d, %q", args, code, errb.String())
			}
		}
		var out, errb bytes.Buffer
		code := run([]string{cmd.name}, envFrom(dirs["norepo"], env["norepo"], &out, &errb, nil))
		first := firstLine(errb.String())
		switch {
		case code == 2 && strings.HasPrefix(first, "usage: git hegel "+cmd.name):
		case code == 128 && first == "fatal: not a git repository (or any of the parent directories): .git":
		case code == 0:
		default:
			t.Errorf("%s outside a repository: exit %d, %q", cmd.name, code, errb.String())
		}
		if code != 0 && strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%s outside a repository: more than one line: %q", cmd.name, errb.String())
		}
	}
}

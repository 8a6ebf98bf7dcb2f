package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// The completion tests run one table of command lines through the
// in-process completer and through bash, zsh and fish with the scripts
// `git hegel completion <shell>` prints (TestMain puts the test binary on
// PATH as git-hegel, which the scripts call). A shell that is missing is
// skipped with a message; one whose git completion is missing gets a
// syntax check of its script instead.

const reviewWorkflow = `mode: review
start_node: draft
nodes:
  draft:
    summary: Write the first draft
    prompt: Write DRAFT.md.
    transitions:
      - when: draft_complete
        to: done
`

// completionRepo is a repository with a stash (task s1), an active task t
// at plan (checkpoints at spec and plan), a user workflow and two
// remotes. It returns the checkpoint ids, newest first.
func completionRepo(t *testing.T) (dir string, env []string, ids []string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	env = append(isolatedEnv(t), "GIT_HEGEL_DATE=2026-01-02T03:04:05Z", "GIT_AUTHOR_DATE=2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2026-01-02T03:04:05Z")
	dir = t.TempDir()
	mustSh(t, env, dir, "git", "init", "-q")
	mustSh(t, env, dir, "git", "commit", "-q", "--allow-empty", "-m", "init")
	os.MkdirAll(filepath.Join(dir, ".hegel", "workflows"), 0o755)
	os.WriteFile(filepath.Join(dir, ".hegel", "workflows", "review.yaml"), []byte(reviewWorkflow), 0o644)
	mustSh(t, env, dir, "git", "hegel", "start", "minimal", "--task", "s1")
	mustSh(t, env, dir, "git", "hegel", "stash", "-m", "parked")
	mustSh(t, env, dir, "git", "hegel", "start", "minimal", "--task", "t")
	mustSh(t, env, dir, "git", "hegel", "next")
	mustSh(t, env, dir, "git", "config", "hegel.adapter.claude.command", "claude -p")
	mustSh(t, env, dir, "git", "remote", "add", "origin", "/nowhere")
	mustSh(t, env, dir, "git", "remote", "add", "upstream", "/elsewhere")
	var list struct {
		Checkpoints []struct{ ID string } `json:"checkpoints"`
	}
	if err := json.Unmarshal([]byte(mustSh(t, env, dir, "git", "hegel", "checkpoint", "list", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	for _, cp := range list.Checkpoints {
		ids = append(ids, cp.ID)
	}
	if len(ids) != 2 {
		t.Fatalf("checkpoints: %v", ids)
	}
	return dir, env, ids
}

// completionCase is a command line (after "git", ending where TAB is
// pressed) and the words every shell must offer.
type completionCase struct {
	line string
	want []string
}

func completionCases(ids []string) []completionCase {
	var cmds []string
	for _, c := range commands {
		if !c.hidden {
			cmds = append(cmds, c.name)
		}
	}
	common := []string{"--color", "--color=", "--no-color"}
	return []completionCase{
		{"hegel ", cmds},
		{"hegel st", []string{"start", "stash", "stats", "status"}},
		{"hegel --no-color st", []string{"start", "stash", "stats", "status"}},
		{"hegel --color=n", []string{"--color=never"}},
		{"hegel start ", []string{"analyze-refactor", "ask", "cowboy", "discovery", "execution", "generate", "init-greenfield", "init-retrofit", "minimal", "multi_file", "pipeline", "refactor", "research", "review", "summarize"}},
		{"hegel run ", []string{"analyze-refactor", "ask", "generate", "multi_file", "summarize"}},
		{"hegel run ask --adapter ", []string{"claude"}},
		{"hegel start pipeline --type=b", []string{"--type=bug_fix"}},
		{"hegel start pipeline --priority ", []string{"low", "normal", "high", "urgent"}},
		{"hegel resume --strategy=retry", []string{"--strategy=retry-current", "--strategy=retry-previous"}},
		{"hegel next --task ", []string{"s1", "t"}},
		{"hegel show ", []string{"s1", "t"}},
		{"hegel reject --to ", []string{"spec", "plan"}},
		{"hegel restore", []string{"restore-task"}},
		{"hegel start minimal ", []string{"spec", "plan"}},
		{"hegel start --task x review ", []string{"draft"}},
		{"hegel next ", []string{"plan_complete"}},
		{"hegel rollback ", []string{"spec", "plan"}},
		{"hegel rollback --to ", ids},
		{"hegel rollback --to=", []string{"--to=" + ids[0], "--to=" + ids[1]}},
		{"hegel rollback -y --dry", []string{"--dry-run"}},
		{"hegel checkpoint ", []string{"drop", "list", "show"}},
		{"hegel checkpoint show ", append([]string{"spec", "plan"}, ids...)},
		{"hegel switch ", []string{"s1", "t"}},
		{"hegel stash ", []string{"push", "save", "list", "show", "pop", "apply", "drop", "clear", "restore"}},
		{"hegel stash pop ", []string{"stash@{0}"}},
		{"hegel stash drop -", append([]string{"--yes"}, common...)},
		{"hegel fetch ", []string{"origin", "upstream"}},
		{"hegel sync up", []string{"upstream"}},
		{"hegel status -", append([]string{"--interval=", "--json", "--task=", "--verbose", "--watch"}, common...)},
		{"hegel status --color=", []string{"--color=always", "--color=auto", "--color=never"}},
		{"hegel completion ", []string{"bash", "fish", "zsh"}},
		{"hegel help che", []string{"check", "checkpoint"}},
		{"hegel bogus ", nil},
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	if len(out) == 0 {
		return nil
	}
	return out
}

// lineWords splits a command line as a shell would, keeping a final empty
// word when it ends in a space.
func lineWords(line string) []string {
	w := strings.Fields(line)
	if strings.HasSuffix(line, " ") {
		w = append(w, "")
	}
	return w
}

func TestCompletions(t *testing.T) {
	dir, env, ids := completionRepo(t)
	for _, tc := range completionCases(ids) {
		words := lineWords(tc.line)[1:] // after "hegel"
		var out, errb bytes.Buffer
		code := run(append([]string{completeCommand}, words...), envFrom(dir, env, &out, &errb, nil))
		if code != 0 || errb.Len() > 0 {
			t.Errorf("%q: exit %d: %s", tc.line, code, errb.String())
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if w, _, _ := strings.Cut(l, "\t"); w != "" {
				got = append(got, w)
			}
		}
		if !reflect.DeepEqual(sorted(got), sorted(tc.want)) {
			t.Errorf("git %s<TAB> = %q, want %q", tc.line, sorted(got), sorted(tc.want))
		}
	}
}

// TestCompletionFollowsTheTable adds a command to the dispatch table and
// finds it, its flags and its operands completed, with no script changed.
func TestCompletionFollowsTheTable(t *testing.T) {
	saved := commands
	defer func() { commands = saved }()
	commands = append(append([]*command(nil), saved...), &command{
		name: "zz-new", summary: "a command added later", group: "Setup",
		setFlags: func(fs *pflag.FlagSet) {
			fs.Bool("frob", false, "frobnicate")
			fs.String("shell", "", "a shell")
			completeValues(fs, "shell", kindShell)
		},
		operands: []valueKind{kindWhen},
		run:      func(*cmdCtx, []string) error { return nil },
	})
	c := &cmdCtx{Env: &Env{Dir: t.TempDir(), Getenv: func(string) string { return "" }}}
	for words, want := range map[string][]string{
		"zz":              {"zz-new"},
		"zz-new --f":      {"--frob"},
		"zz-new --shell ": {"bash", "fish", "zsh"},
		"zz-new --frob a": {"always", "auto"},
	} {
		if got := completionNames(c.completions(lineWords(words))); !reflect.DeepEqual(got, sorted(want)) {
			t.Errorf("%q: %q, want %q", words, got, want)
		}
	}
}

// TestCompletionKinds: every kind of value the table declares is one the
// completer knows how to list.
func TestCompletionKinds(t *testing.T) {
	known := map[valueKind]bool{kindWorkflow: true, kindNode: true, kindClaim: true, kindRollbackNode: true,
		kindTask: true, kindStash: true, kindDroppedStash: true, kindCheckpoint: true, kindCheckpointOrNode: true,
		kindRemote: true, kindCommand: true, kindShell: true, kindWhen: true,
		kindAnyTask: true, kindDeletedTask: true, kindTaskNode: true, kindStrategy: true, kindTaskType: true, kindPriority: true,
		kindGuide: true, kindAgent: true, kindRuleType: true, kindGraphFormat: true, kindHookEvent: true,
		kindAdapter: true, kindRunWorkflow: true, kindResultNode: true, kindArtifact: true, kindMetaMode: true, kindNextWorkflow: true}
	check := func(where string, kinds []valueKind) {
		for _, k := range kinds {
			if !known[k] {
				t.Errorf("%s: unknown value kind %q", where, k)
			}
		}
	}
	for _, cmd := range commands {
		check(cmd.name, cmd.operands)
		for _, s := range cmd.subs {
			check(cmd.name+" "+s.name, s.operands)
			for _, f := range s.flags {
				if cmd.flagSet(&Env{}).Lookup(f) == nil {
					t.Errorf("%s %s: flag --%s is not one of the command's", cmd.name, s.name, f)
				}
			}
		}
		cmd.flagSet(&Env{}).VisitAll(func(f *pflag.Flag) {
			for _, k := range f.Annotations[completeAnnotation] {
				check(cmd.name+" --"+f.Name, []valueKind{valueKind(k)})
			}
		})
	}
}

func TestCompletionScriptUnknownShell(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"completion", "tcsh"}, &Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}); code != 2 {
		t.Fatalf("exit %d", code)
	}
	if got := errb.String(); got != "error: unsupported shell 'tcsh' (supported: bash, zsh, fish) (see 'git hegel completion -h')\n" {
		t.Errorf("stderr %q", got)
	}
}

// completionScript writes `git hegel completion <shell>` to a file.
func completionScript(t *testing.T, shell, name string) string {
	t.Helper()
	var out bytes.Buffer
	if code := run([]string{"completion", shell}, &Env{Stdout: &out, Stderr: io.Discard, Getenv: func(string) string { return "" }}); code != 0 {
		t.Fatalf("completion %s: exit %d", shell, code)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// shellOrSkip skips the test when shell is not installed.
func shellOrSkip(t *testing.T, shell string) {
	t.Helper()
	if _, err := exec.LookPath(shell); err != nil {
		t.Skipf("%s is not installed: its completion is not tested (CI installs it: .ci/run)", shell)
	}
}

// syntaxCheck runs the shell's own parser over the script.
func syntaxCheck(t *testing.T, shell, script string) {
	t.Helper()
	args := map[string][]string{"bash": {"-n"}, "zsh": {"-n"}, "fish": {"--no-execute"}}[shell]
	if out, err := exec.Command(shell, append(args, script)...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v %s: %v\n%s", shell, args, script, err, out)
	}
}

func checkShell(t *testing.T, shell string, ids []string, complete func(line string) ([]string, error)) {
	t.Helper()
	for _, tc := range completionCases(ids) {
		got, err := complete(tc.line)
		if err != nil {
			t.Errorf("%s: git %s<TAB>: %v", shell, tc.line, err)
			continue
		}
		if !reflect.DeepEqual(sorted(got), sorted(tc.want)) {
			t.Errorf("%s: git %s<TAB> = %q, want %q", shell, tc.line, sorted(got), sorted(tc.want))
		}
	}
}

func TestBashCompletion(t *testing.T) {
	shellOrSkip(t, "bash")
	script := completionScript(t, "bash", "hegel.bash")
	syntaxCheck(t, "bash", script)
	gitCompletion := "/usr/share/bash-completion/completions/git"
	if _, err := os.Stat(gitCompletion); err != nil {
		t.Skipf("git's bash completion is not installed (%s): only the script's syntax was checked", gitCompletion)
	}
	dir, env, ids := completionRepo(t)
	// The words and the cursor as bash hands them to git's completion,
	// which calls _git_hegel; "git-hegel ..." goes through the wrapper
	// __git_complete made.
	harness := `source "$1"; source "$2"; shift 2
COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
COMPREPLY=()
if [ "$1" = git-hegel ]; then __git_wrap_git_hegel; else __git_wrap__git_main; fi
for w in "${COMPREPLY[@]}"; do printf '%s\n' "${w% }"; done`
	complete := func(words []string) ([]string, error) {
		cmd := exec.Command("bash", append([]string{"-c", harness, "bash", gitCompletion, script}, words...)...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("%v\n%s", err, out)
		}
		return strings.Fields(string(out)), nil
	}
	checkShell(t, "bash", ids, func(line string) ([]string, error) {
		words := append([]string{"git"}, lineWords(line)...)
		got, err := complete(words)
		// bash completes only what follows the "=" of --opt=value.
		if cur := words[len(words)-1]; strings.HasPrefix(cur, "--") && strings.Contains(cur, "=") {
			pfx, _, _ := strings.Cut(cur, "=")
			for i := range got {
				got[i] = pfx + "=" + got[i]
			}
		}
		return got, err
	})
	// Typed as git-hegel, and after git's own options.
	for words, want := range map[string][]string{
		"git-hegel sta":           {"start", "stash", "stats", "status"},
		"git -C . hegel sw":       {"switch"},
		"git-hegel stash p":       {"pop", "push"},
		"git --no-pager hegel st": {"start", "stash", "stats", "status"},
	} {
		got, err := complete(lineWords(words))
		if err != nil || !reflect.DeepEqual(sorted(got), sorted(want)) {
			t.Errorf("bash: %s<TAB> = %q, %v; want %q", words, got, err, want)
		}
	}
}

// zshHarness completes a command line in an interactive zsh on a
// pseudo-terminal (zsh/zpty) with zsh's own git completion, and prints the
// matches zsh would offer, one a line (how zsh-capture-completion does it).
const zshHarness = `zmodload zsh/zpty
fdir=$1; wdir=$2; shift 2
zpty z zsh -f -i
zpty -w z "PS1=''; fpath=(${(q)fdir} \$fpath); autoload -Uz compinit; compinit -u -d ${(q)fdir}/.zcompdump; cd ${(q)wdir}"
zpty -w z 'compadd () {
  if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return $?; fi
  typeset -a __hits; builtin compadd -A __hits "$@"; local h
  for h in $__hits; do print -r -- "<<${h}>>"; done
}'
zpty -w z 'start-mark () { print -r -- "START-OF-""COMPLETION" }; end-mark () { print -r -- "END-OF-""COMPLETION" }'
zpty -w z 'compprefuncs=( start-mark ); comppostfuncs=( end-mark exit )'
zpty -w z "bindkey '^M' undefined; bindkey '^J' undefined; bindkey '^I' complete-word"
zpty -w -n z "$*"$'\t'
out=""
while zpty -r z chunk; do
  out+=$chunk; [[ $out == *END-OF-COMPLETION* ]] && break
done
out=${out//$'\r'/}
out=${out#*START-OF-COMPLETION}
for l in ${(f)out}; do [[ $l == *'<<'*'>>'* ]] && { l=${l#*<<}; print -r -- ${l%>>*} }; done
zpty -d z
`

func TestZshCompletion(t *testing.T) {
	shellOrSkip(t, "zsh")
	fpath := filepath.Dir(completionScript(t, "zsh", "_git-hegel"))
	syntaxCheck(t, "zsh", filepath.Join(fpath, "_git-hegel"))
	if err := exec.Command("zsh", "-f", "-c", "zmodload zsh/zpty && autoload -Uz compinit && compinit -u -D && (( $+functions[_git] ))").Run(); err != nil {
		t.Skip("zsh lacks zsh/zpty or its git completion: only the script's syntax was checked")
	}
	dir, env, ids := completionRepo(t)
	harness := filepath.Join(t.TempDir(), "complete.zsh")
	os.WriteFile(harness, []byte(zshHarness), 0o644)
	complete := func(line string) ([]string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "zsh", "-f", harness, fpath, dir, line)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("%v\n%s", err, out)
		}
		return strings.Fields(string(out)), nil
	}
	// zsh quotes what it inserts: stash@\{0\}.
	unquote := func(words []string, err error) ([]string, error) {
		for i := range words {
			words[i] = strings.ReplaceAll(words[i], `\`, "")
		}
		return words, err
	}
	checkShell(t, "zsh", ids, func(line string) ([]string, error) { return unquote(complete("git " + line)) })
	for line, want := range map[string][]string{
		"git-hegel sta":     {"start", "stash", "stats", "status"},
		"git-hegel stash p": {"pop", "push"},
	} {
		got, err := complete(line)
		if err != nil || !reflect.DeepEqual(sorted(got), sorted(want)) {
			t.Errorf("zsh: %s<TAB> = %q, %v; want %q", line, got, err, want)
		}
	}
}

func TestFishCompletion(t *testing.T) {
	shellOrSkip(t, "fish")
	script := completionScript(t, "fish", "git-hegel.fish")
	syntaxCheck(t, "fish", script)
	dir, env, ids := completionRepo(t)
	home := t.TempDir()
	env = append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_DATA_HOME="+filepath.Join(home, ".local"))
	complete := func(line string) ([]string, error) {
		cmd := exec.Command("fish", "-c", "source $argv[1]; complete -C $argv[2]", script, line)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("%v\n%s", err, out)
		}
		var words []string
		for _, l := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
			// fish's git completion offers -h and --help after any git command.
			if w, _, _ := strings.Cut(l, "\t"); w != "" && w != "-h" && w != "--help" {
				words = append(words, w)
			}
		}
		return words, nil
	}
	checkShell(t, "fish", ids, func(line string) ([]string, error) { return complete("git " + line) })
	for line, want := range map[string][]string{
		"git-hegel sta":              {"start", "stash", "stats", "status"},
		"git -C . hegel sw":          {"switch"},
		"git -c a.b=c hegel stash p": {"pop", "push"},
		"git commit -m hegel":        nil,
	} {
		got, err := complete(line)
		if err != nil || !reflect.DeepEqual(sorted(got), sorted(want)) {
			t.Errorf("fish: %s<TAB> = %q, %v; want %q", line, got, err, want)
		}
	}
	// "git he<TAB>" offers hegel next to git's own help.
	if got, err := complete("git hege"); err != nil || !reflect.DeepEqual(got, []string{"hegel"}) {
		t.Errorf("fish: git hege<TAB> = %q, %v", got, err)
	}
}

// envFrom is an in-process Env for dir with the variables of env.
func envFrom(dir string, env []string, stdout, stderr io.Writer, terminal func(io.Writer) bool) *Env {
	vars := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	getenv := func(k string) string { return vars[k] }
	return &Env{Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr, Getenv: getenv, Dir: dir, Now: clock(getenv), Terminal: terminal}
}

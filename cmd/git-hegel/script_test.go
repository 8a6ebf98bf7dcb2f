package main

// End-to-end tests: testdata/script/*.txtar run the real binary through the
// real git ("exec git hegel ..."), with a hermetic environment so the
// output is byte-for-byte reproducible. Run with -update to rewrite the
// golden sections of a script after an intended output change.

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// scriptDate is the fixed instant every script starts at: git's author and
// committer dates and git-hegel's own clock (GIT_HEGEL_DATE). Scripts move
// the clock with "env GIT_HEGEL_DATE=...".
const scriptDate = "2026-01-02T03:04:05Z"

func TestMain(m *testing.M) {
	// Registered here rather than at package level so another test file in
	// this package defining the same flag cannot make the binary panic.
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden sections of testdata/script/*.txtar")
	}
	testscript.Main(m, map[string]func(){
		"git-hegel": main,
	})
}

func updateScripts() bool {
	f := flag.Lookup("update")
	if f == nil {
		return false
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return false
	}
	b, _ := g.Get().(bool)
	return b
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("..", "..", "testdata", "script"),
		UpdateScripts:       updateScripts(),
		RequireExplicitExec: true,
		Setup:               setupScriptEnv,
		Condition:           gitServerCondition,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"deadlock":    cmdDeadLock,
			"livelock":    cmdLiveLock,
			"exits":       cmdExits,
			"envstdout":   cmdEnvStdout,
			"fingerprint": cmdFingerprint,
			"gitserver":   cmdGitServer,
			"payload":     cmdPayload,
			"waitfor":     cmdWaitFor,
		},
	})
}

// cmdExits runs a program and requires a given exit status, which plain
// "exec" (zero or non-zero only) cannot check. stdout and stderr are kept
// for the commands that follow, as with exec:
//
//	exits 2 git hegel bogus
//	stderr '^error: .bogus. is not a git hegel command'
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("usage: exits <code> <program> [<args>...] (cannot be negated)")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exits <code> <program> [<args>...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: bad exit code %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d", got, want)
	}
}

// cmdEnvStdout sets an environment variable to the previous command's
// stdout, without its trailing newline, so a generated name can be used
// later in the script:
//
//	exec git for-each-ref --format=%(refname:lstrip=3) refs/hegel/tasks/
//	envstdout TASK
func cmdEnvStdout(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: envstdout <name>")
	}
	v := strings.TrimRight(ts.ReadFile("stdout"), "\n")
	if v == "" || strings.Contains(v, "\n") {
		ts.Fatalf("envstdout: want one non-empty line on stdout, got %q", v)
	}
	ts.Setenv(args[0], v)
}

// cmdDeadLock writes a lock file holding git-hegel's owner marker
// (docs/storage.md, "Lock files") for a process that ran on this host and
// has exited, as a git-hegel killed while holding the lock leaves it. The
// marker is built here from the documented format, not by gitstore, so
// the format is what is tested. Linux only (it reads /proc):
//
//	[linux] deadlock .hegel/state.json.lock
func cmdDeadLock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: deadlock <path>")
	}
	marker, err := deadMarker()
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(marker), 0o644))
}

// cmdLiveLock writes a lock file whose marker names a process that runs
// (the test binary itself), as a git-hegel holding the lock right now
// leaves it. Linux only:
//
//	[linux] livelock .git/refs/hegel/tasks/t.lock
func cmdLiveLock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: livelock <path>")
	}
	marker, err := markerFor(os.Getpid())
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(marker), 0o644))
}

// deadMarker is the lock marker a git-hegel process on this host that has
// exited would have left.
func deadMarker() (string, error) {
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		return "", err
	}
	return markerFor(gone.Process.Pid)
}

// markerFor is the lock marker of process pid on this host.
func markerFor(pid int) (string, error) {
	host, err := os.Hostname()
	if err != nil {
		return "", err
	}
	for _, p := range []string{"/etc/machine-id", "/var/lib/dbus/machine-id"} {
		if b, err := os.ReadFile(p); err == nil && strings.TrimSpace(string(b)) != "" {
			host += "/" + strings.TrimSpace(string(b))
			break
		}
	}
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", err
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return "", err
	}
	ns = strings.TrimSuffix(strings.TrimPrefix(ns, "pid:["), "]")
	return fmt.Sprintf("git-hegel lock pid=%d host=%s boot=%s ns=%s\n", pid, host, strings.TrimSpace(string(boot)), ns), nil
}

// cmdFingerprint writes to a file everything a rollback must restore
// exactly, as git shows it, so that a script can compare two moments with
// cmp: HEAD (symbolic or detached), every branch and where it points, the
// index (entries, modes, stages, and the assume-unchanged, skip-worktree
// and intent-to-add flags), and every file in the working tree, ignored
// ones included, with its executable bit or link target (but .git and the
// session file). Run it at the top of the working tree:
//
//	fingerprint $WORK/before.txt
func cmdFingerprint(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: fingerprint <file>")
	}
	var b strings.Builder
	git := func(args ...string) (string, error) {
		err := ts.Exec("git", args...)
		return ts.ReadFile("stdout"), err
	}
	if head, err := git("symbolic-ref", "-q", "HEAD"); err == nil {
		b.WriteString("HEAD " + head)
	} else {
		head, _ := git("rev-parse", "HEAD")
		b.WriteString("HEAD detached " + head)
	}
	for _, a := range [][]string{
		{"for-each-ref", "--format=branch %(refname) %(objectname)", "refs/heads/"},
		{"ls-files", "--stage"},
		{"ls-files", "-v"},
		{"diff", "--cached", "--name-status", "--ita-visible-in-index"},
	} {
		out, err := git(a...)
		if err != nil {
			ts.Fatalf("fingerprint: git %s: %v", strings.Join(a, " "), err)
		}
		b.WriteString(out)
	}
	top := ts.MkAbs(".")
	var lines []string
	err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(top, p)
		rel = filepath.ToSlash(rel)
		if rel == ".git" || strings.HasPrefix(rel, ".hegel/state.json") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			t, _ := os.Readlink(p)
			lines = append(lines, fmt.Sprintf("link %s -> %s", rel, t))
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			lines = append(lines, fmt.Sprintf("file %s %o %q", rel, fi.Mode().Perm()&0o111, data))
		}
		return nil
	})
	if err != nil {
		ts.Fatalf("fingerprint: %v", err)
	}
	sort.Strings(lines)
	b.WriteString(strings.Join(lines, "\n") + "\n")
	if err := os.WriteFile(ts.MkAbs(args[0]), []byte(b.String()), 0o644); err != nil {
		ts.Fatalf("fingerprint: %v", err)
	}
}

// cmdPayload writes a sample hook payload from testdata/agents to a file,
// with the sample's paths moved into the script: /home/dev/project becomes
// the current directory and /home/dev the script's HOME.
//
//	payload claude/PostToolUse-Bash.json p.json
//	stdin p.json
//	exec git hegel hook PostToolUse
func cmdPayload(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: payload <agent/file> <dst>")
	}
	b, err := os.ReadFile(filepath.Join(ts.Getenv("AGENTS"), args[0]))
	ts.Check(err)
	s := strings.ReplaceAll(string(b), "/home/dev/project", ts.MkAbs("."))
	s = strings.ReplaceAll(s, "/home/dev", ts.Getenv("HOME"))
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(s), 0o644))
}

// setupScriptEnv isolates a script from the machine it runs on: its own
// HOME and global git config, no system config, fixed dates and time zone,
// no colour, C locale. PATH is kept so git is found, and testscript puts
// the git-hegel command first on it.
func setupScriptEnv(env *testscript.Env) error {
	home := filepath.Join(env.WorkDir, "home")
	if err := os.MkdirAll(filepath.Join(home, ".config"), 0o755); err != nil {
		return err
	}
	gitconfig := filepath.Join(home, ".gitconfig")
	const cfg = "[user]\n" +
		"\tname = Hegel Test\n" +
		"\temail = hegel@example.com\n" +
		"[init]\n" +
		"\tdefaultBranch = main\n" +
		"[advice]\n" +
		"\tdetachedHead = false\n"
	if err := os.WriteFile(gitconfig, []byte(cfg), 0o644); err != nil {
		return err
	}
	agents, err := filepath.Abs(filepath.Join("..", "..", "testdata", "agents"))
	if err != nil {
		return err
	}
	adapters, err := filepath.Abs(filepath.Join("..", "..", "testdata", "adapters"))
	if err != nil {
		return err
	}
	hegelFiles, err := filepath.Abs(filepath.Join("..", "..", "testdata", "hegel"))
	if err != nil {
		return err
	}
	for k, v := range map[string]string{
		"AGENTS":              agents,
		"HEGELFILES":          hegelFiles,
		"ADAPTERS":            adapters,
		"HOME":                home,
		"XDG_CONFIG_HOME":     filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM": "1",
		"GIT_CONFIG_GLOBAL":   gitconfig,
		"GIT_AUTHOR_DATE":     scriptDate,
		"GIT_COMMITTER_DATE":  scriptDate,
		"GIT_HEGEL_DATE":      scriptDate,
		"TZ":                  "UTC",
		"NO_COLOR":            "1",
		"LANG":                "C",
		"LC_ALL":              "C",
	} {
		env.Setenv(k, v)
	}
	return nil
}

// cmdWaitFor waits until a file exists (a process started in the
// background created it), for at most 30 seconds:
//
//	exec sh -c 'git hegel run three; echo $? > code' &run&
//	waitfor started-two
func cmdWaitFor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfor <file>")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(ts.MkAbs(args[0])); err == nil {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitfor: %s did not appear in 30s", args[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

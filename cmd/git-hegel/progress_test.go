package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// runStderr runs a command with stderr on a pseudo-terminal (tty) or a
// pipe and returns what it wrote there; it must succeed.
func runStderr(t *testing.T, env []string, dir string, tty bool, args ...string) string {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, env
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	var got bytes.Buffer
	if !tty {
		cmd.Stderr = &got
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), got.String())
		}
		return got.String()
	}
	m, s := openPty(t)
	defer m.Close()
	cmd.Stderr = s
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		io.Copy(&got, m) // ends with EIO once no process holds the terminal
	}()
	err := cmd.Run()
	s.Close()
	wg.Wait()
	if err != nil {
		t.Fatalf("%s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), got.String())
	}
	// The terminal turns \n into \r\n.
	return strings.ReplaceAll(got.String(), "\r\n", "\n")
}

// Progress shows on stderr when it is a terminal and the command has run
// for the delay (GIT_PROGRESS_DELAY, 0 here so that a small repository
// shows it), never when stderr is a file or a pipe, never with --quiet,
// and with --progress wherever stderr goes (and in spite of --quiet), as
// git's --progress; --no-progress wins when it comes last.
func TestProgressOnlyOnATerminal(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	env := isolatedEnv(t)
	dir := t.TempDir()
	mustSh(t, env, dir, "git", "init", "-q")
	for i := 0; i < 30; i++ {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.txt", i)), []byte(fmt.Sprintf("file %d\n", i)), 0o644)
	}
	mustSh(t, env, dir, "git", "add", ".")
	mustSh(t, env, dir, "git", "commit", "-q", "-m", "files")
	mustSh(t, env, dir, "git", "hegel", "start", "minimal", "--task", "t")
	now := append(env[:len(env):len(env)], "GIT_PROGRESS_DELAY=0")
	change := func(round int) {
		for i := 0; i < 30; i += 3 {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.txt", i)), []byte(fmt.Sprintf("file %d changed %d\n", i, round)), 0o644)
		}
	}
	scanning := regexp.MustCompile(`(?m)(^|\r)Scanning files: \d+, done\.$`)
	writing := regexp.MustCompile(`(?m)(^|\r)Writing objects: 100% \(10/10\), done\.$`)
	shows := func(stderr string) bool { return scanning.MatchString(stderr) && writing.MatchString(stderr) }

	cases := []struct {
		tty  bool
		env  []string
		args []string
		want bool
	}{
		{true, now, nil, true},
		{false, now, nil, false},
		{true, now, []string{"--quiet"}, false},
		{true, now, []string{"-q"}, false},
		{true, now, []string{"-q", "--progress"}, true},
		{false, now, []string{"--progress"}, true},
		{true, now, []string{"--no-progress"}, false},
		{true, now, []string{"--progress", "--no-progress"}, false},
		{false, now, []string{"--no-progress", "--progress"}, true},
		// The delay: a command that ends before it shows nothing.
		{true, append(now, "GIT_PROGRESS_DELAY=3600"), nil, false},
	}
	for k, c := range cases {
		change(k)
		args := append([]string{"git", "hegel", "checkpoint", "-m", fmt.Sprint("round ", k)}, c.args...)
		stderr := runStderr(t, c.env, dir, c.tty, args...)
		if shows(stderr) != c.want {
			t.Errorf("checkpoint %v, stderr a terminal: %v: progress shown %v, want %v; stderr:\n%q", c.args, c.tty, !c.want, c.want, stderr)
		}
	}

	// Rollback: its safety checkpoint's lines, then git's "Updating files".
	id := strings.Fields(strings.Split(mustSh(t, env, dir, "git", "hegel", "checkpoint", "list"), "\n")[1])[0]
	change(99)
	stderr := runStderr(t, now, dir, true, "git", "hegel", "rollback", "--to", id, "-y", "--force")
	if !regexp.MustCompile(`(?m)(^|\r)Updating files: 100% \(10/10\), done\.$`).MatchString(stderr) || !shows(stderr) {
		t.Errorf("rollback on a terminal: stderr:\n%q", stderr)
	}
	change(100)
	if stderr := runStderr(t, now, dir, false, "git", "hegel", "rollback", "--to", id, "-y", "--force"); stderr != "" {
		t.Errorf("rollback, stderr a pipe: %q", stderr)
	}

	// Sync: objects written to the remote, then received by a clone.
	remote := filepath.Join(t.TempDir(), "remote.git")
	mustSh(t, env, dir, "git", "init", "-q", "--bare", remote)
	mustSh(t, env, dir, "git", "remote", "add", "origin", remote)
	mustSh(t, env, dir, "git", "push", "-q", "origin", "HEAD")
	stderr = runStderr(t, now, dir, true, "git", "hegel", "push", "origin")
	// git push's own progress.
	if !regexp.MustCompile(`(?m)(^|\r)Writing objects: 100% \(\d+/\d+\), [0-9.]+ [KMG]?i?B?(ytes)?( \| [^,\r\n]+)?, done\.$`).MatchString(stderr) {
		t.Errorf("push on a terminal: stderr:\n%q", stderr)
	}
	clone := filepath.Join(t.TempDir(), "clone")
	mustSh(t, env, dir, "git", "clone", "-q", "--no-local", remote, clone)
	if stderr := runStderr(t, now, clone, false, "git", "hegel", "fetch", "origin"); strings.Contains(stderr, "objects") {
		t.Errorf("fetch, stderr a pipe: %q", stderr)
	}
	clone2 := filepath.Join(t.TempDir(), "clone2")
	mustSh(t, env, dir, "git", "clone", "-q", "--no-local", remote, clone2)
	stderr = runStderr(t, now, clone2, true, "git", "hegel", "fetch", "origin")
	// git fetch's own progress, the remote's lines included, and nothing
	// about the refs git wrote in the quarantine.
	if !regexp.MustCompile(`(?m)(^|\r)Receiving objects: 100% \(\d+/\d+\)(, [0-9.]+ [KMG]?i?B?(ytes)?( \| [^,\r\n]+)?)?, done\.$`).MatchString(stderr) ||
		!strings.Contains(stderr, "remote: ") || strings.Contains(stderr, "->") {
		t.Errorf("fetch on a terminal: stderr:\n%q", stderr)
	}
	if stderr := runStderr(t, now, clone2, true, "git", "hegel", "fetch", "-q", "origin"); strings.Contains(stderr, "objects") {
		t.Errorf("fetch -q on a terminal: %q", stderr)
	}
}

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBashCompletion loads git's own bash completion and ours, and asks
// for completions the way bash would.
func TestBashCompletion(t *testing.T) {
	gitCompletion := "/usr/share/bash-completion/completions/git"
	if _, err := os.Stat(gitCompletion); err != nil {
		t.Skip("git's bash completion is not installed")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	var script bytes.Buffer
	writeBashCompletion(&script)
	path := filepath.Join(t.TempDir(), "hegel.bash")
	os.WriteFile(path, script.Bytes(), 0o644)
	harness := `source "$1"; source "$2"; shift 2
COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
COMPREPLY=(); __git_wrap__git_main; printf '%s\n' "${COMPREPLY[@]}"`
	complete := func(words ...string) []string {
		args := append([]string{"-c", harness, "bash", gitCompletion, path}, words...)
		cmd := exec.Command("bash", args...)
		cmd.Dir = t.TempDir()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, out)
		}
		return strings.Fields(string(out))
	}
	if got := strings.Join(complete("git", "hegel", "st"), " "); got != "start stash status" && got != "start status" {
		t.Errorf("git hegel st<TAB> = %q", got)
	}
	all := strings.Join(complete("git", "hegel", ""), " ")
	for _, c := range commands {
		if !strings.Contains(" "+all+" ", " "+c.name+" ") {
			t.Errorf("git hegel <TAB> lacks %q: %s", c.name, all)
		}
	}
	if got := strings.Join(complete("git", "hegel", "status", "--j"), " "); got != "--json" {
		t.Errorf("git hegel status --j<TAB> = %q", got)
	}
	if got := strings.Join(complete("git", "hegel", "resume", "--strategy=retry"), " "); got != "retry-current retry-previous" {
		t.Errorf("git hegel resume --strategy=retry<TAB> = %q", got)
	}
	if got := strings.Join(complete("git", "hegel", "start", "pipeline", "--priority=u"), " "); got != "urgent" {
		t.Errorf("git hegel start pipeline --priority=u<TAB> = %q", got)
	}
	if got := strings.Join(complete("git", "hegel", "next", "--t"), " "); got != "--task=" {
		t.Errorf("git hegel next --t<TAB> = %q", got)
	}
}

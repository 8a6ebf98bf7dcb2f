package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const trustTestWF = `start_node: a
nodes:
  a:
    prompt: Do a.
    check: "true"
    transitions:
      - when: a_complete
        to: done
`

// TestTrustAsksOnATerminal: on a terminal, trust shows the diff with the
// lines that run commands in the command colour and asks; "n" trusts
// nothing, "y" records it, and --list shows the record.
func TestTrustAsksOnATerminal(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	env := isolatedEnv(t)
	dir := t.TempDir()
	mustSh(t, env, dir, "git", "init", "-q")
	os.MkdirAll(filepath.Join(dir, ".hegel", "workflows"), 0o755)
	os.WriteFile(filepath.Join(dir, ".hegel", "workflows", "w.yaml"), []byte(trustTestWF), 0o644)
	mustSh(t, env, dir, "git", "hegel", "start", "w", "--task", "t")
	// As a fetch would bring it: one more commit with another definition.
	evil := strings.Replace(trustTestWF, `    check: "true"`, "    check:\n      - \"true\"\n      - echo injected", 1)
	os.WriteFile(filepath.Join(dir, "evil.yaml"), []byte(evil), 0o644)
	mustSh(t, env, dir, "sh", "-c", `blob=$(git hash-object -w evil.yaml) &&
tree=$( (git ls-tree refs/hegel/tasks/t | grep -v '	workflow.yaml$'; printf '100644 blob %s\tworkflow.yaml\n' "$blob") | git mktree) &&
c=$(echo routine | git commit-tree "$tree" -p refs/hegel/tasks/t) && git update-ref refs/hegel/tasks/t "$c"`)
	trust := func(answer string, args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		e := envFrom(dir, env, &out, &errb, func(io.Writer) bool { return true })
		e.Stdin = ttyIn{strings.NewReader(answer)}
		code := run(append(args, "trust", "t"), e)
		return out.String(), errb.String(), code
	}
	out, errs, code := trust("n\n")
	if code != 0 || !strings.HasSuffix(out, "? (y/N) Nothing trusted\n") || errs != "" {
		t.Fatalf("declined: exit %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, "+      - echo injected\n") || !strings.Contains(out, "  a: check: echo injected  (new)\n") {
		t.Errorf("the review lacks the new check:\n%s", out)
	}
	if list := mustSh(t, env, dir, "git", "hegel", "trust", "--list"); strings.Contains(list, " trust ") {
		t.Fatalf("a declined trust was recorded:\n%s", list)
	}
	out, errs, code = trust("y\n", "--color=always")
	if code != 0 || !strings.Contains(out, "Trusted the definition of task t (blob ") {
		t.Fatalf("accepted: exit %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, palette["command"]+"+      - echo injected"+colorReset) {
		t.Errorf("the added check is not highlighted:\n%q", out)
	}
	if strings.Contains(out, palette["command"]+"     prompt: Do a.") {
		t.Errorf("a prompt line is highlighted:\n%q", out)
	}
	if list := mustSh(t, env, dir, "git", "hegel", "trust", "--list", "--json"); !strings.Contains(list, `"how": "trust"`) || !strings.Contains(list, `"task": "t"`) {
		t.Errorf("--list --json:\n%s", list)
	}
	if out := mustSh(t, env, dir, "git", "hegel", "next"); !strings.Contains(out, "Current node: done") {
		t.Errorf("next after trust:\n%s", out)
	}
}

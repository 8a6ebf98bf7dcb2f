package worktree

import (
	"bytes"
	"encoding/json"
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

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/workflow"
	"github.com/git-hegel/git-hegel/gitstore"
)

// These tests run the whole rollback sequence as a command does: the
// engine deciding and recording, Snapshots translating, rollback moving
// the files, on real repositories driven by real git.

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

type testRepo struct {
	t      *testing.T
	dir    string
	home   string
	now    time.Time
	r      *gitstore.Repo
	s      *Snapshots
	e      *engine.Engine
	warned []string
}

func gitEnv(home string) []string {
	env := []string{
		"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + filepath.Join(home, ".gitconfig"),
		"GIT_AUTHOR_DATE=2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2026-01-02T03:04:05Z",
		"LANG=C", "LC_ALL=C", "TZ=UTC",
	}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	return env
}

// newDiskRepo makes a repository in a temporary directory with real git.
func newDiskRepo(t *testing.T) *testRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	base := t.TempDir()
	tr := &testRepo{t: t, dir: filepath.Join(base, "repo"), home: filepath.Join(base, "home"), now: t0}
	os.MkdirAll(tr.home, 0o755)
	os.WriteFile(filepath.Join(tr.home, ".gitconfig"), []byte("[user]\n\tname = Test\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"), 0o644)
	runGit(t, base, gitEnv(tr.home), "init", "-q", tr.dir)
	tr.open()
	return tr
}

// open opens the repository again, as a new process would.
func (tr *testRepo) open() {
	t := tr.t
	env := map[string]string{}
	for _, kv := range gitEnv(tr.home) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	r, err := gitstore.Open(tr.dir, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	r.Now = func() time.Time { return tr.now }
	tr.r = r
	tr.s = New(r, Options{Now: func() time.Time { return tr.now }, Warn: func(s string) { tr.warned = append(tr.warned, s) }})
	t.Cleanup(tr.s.Close)
	tr.e = &engine.Engine{
		Tasks:     r.Tasks(),
		Session:   r.Sessions(),
		Workflows: func() (*workflow.Registry, error) { return workflow.NewRegistry(nil) },
		Worktree:  "/wt",
		Now:       func() time.Time { return tr.now },
		Snapshots: tr.s,
		Warn:      func(s string) { tr.warned = append(tr.warned, s) },
	}
}

func runGit(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

func gitCmd(tr *testRepo, args ...string) *exec.Cmd {
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = tr.dir, gitEnv(tr.home)
	return cmd
}

func (tr *testRepo) git(args ...string) string {
	tr.t.Helper()
	return runGit(tr.t, tr.dir, gitEnv(tr.home), args...)
}

func (tr *testRepo) write(p, content string) {
	tr.t.Helper()
	full := filepath.Join(tr.dir, filepath.FromSlash(p))
	os.MkdirAll(filepath.Dir(full), 0o755)
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		tr.t.Fatal(err)
	}
}

func (tr *testRepo) commitAll(msg string) {
	tr.t.Helper()
	tr.git("add", "-A")
	tr.git("commit", "-q", "--allow-empty", "-m", msg)
}

func (tr *testRepo) start(workflow string) {
	tr.t.Helper()
	if _, err := tr.e.Start(workflow, "", "t1"); err != nil {
		tr.t.Fatal(err)
	}
}

func (tr *testRepo) next() {
	tr.t.Helper()
	if _, err := tr.e.Next(""); err != nil {
		tr.t.Fatal(err)
	}
}

func (tr *testRepo) state() *engine.State {
	tr.t.Helper()
	cur, err := tr.e.Current("")
	if err != nil {
		tr.t.Fatal(err)
	}
	return cur.State
}

// rollback plans and carries out a confirmed rollback.
func (tr *testRepo) rollback(o engine.RollbackOptions) (*engine.RollbackResult, error) {
	tr.t.Helper()
	o.Yes = true
	p, err := tr.e.PlanRollback(o)
	if err != nil {
		return nil, err
	}
	return tr.e.Rollback(p)
}

func (tr *testRepo) mustRollback(o engine.RollbackOptions) *engine.RollbackResult {
	tr.t.Helper()
	res, err := tr.rollback(o)
	if err != nil {
		tr.t.Fatalf("rollback %+v: %v", o, err)
	}
	return res
}

// dying stops a restore as a killed process would: after the safety
// checkpoint and the journal, before any change, with the journal left.
type dying struct{ *Snapshots }

func (d dying) Restore(*engine.RestorePlan) error                { return errKilled }
func (d dying) Replay(rec *engine.RollbackRecord, fw bool) error { return errKilled }

var errKilled = fmt.Errorf("killed")

// interrupt leaves the repository as a rollback killed right after it
// stored its safety checkpoint and journal: nothing changed yet, and the
// next command must finish or undo it. The killed process leaves its
// index.lock with its owner marker (this process's, given a pid that no
// longer runs), and its journal names that pid. It returns the pid.
func (tr *testRepo) interrupt(o engine.RollbackOptions) int {
	tr.t.Helper()
	tr.e.Snapshots = dying{tr.s}
	if _, err := tr.rollback(o); err == nil {
		tr.t.Fatal("the killed rollback went through")
	}
	pid := deadPID(tr.t)
	lock := filepath.Join(tr.dir, ".git", "index.lock")
	if err := os.WriteFile(lock, markerFor(tr.t, lock, pid), 0o644); err != nil {
		tr.t.Fatal(err)
	}
	tr.setJournal(func(j map[string]any) { j["pid"] = pid })
	tr.open() // the next command
	return pid
}

// setJournal edits the rollback journal on disk.
func (tr *testRepo) setJournal(edit func(map[string]any)) {
	tr.t.Helper()
	p := filepath.Join(tr.dir, ".git", "hegel-rollback.json")
	b, err := os.ReadFile(p)
	if err != nil {
		tr.t.Fatal(err)
	}
	var j map[string]any
	if err := json.Unmarshal(b, &j); err != nil {
		tr.t.Fatal(err)
	}
	edit(j)
	b, _ = json.MarshalIndent(j, "", "  ")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		tr.t.Fatal(err)
	}
}

// markerFor is the owner marker in lock (written by this process)
// rewritten for pid, another process on this host.
func markerFor(t testing.TB, lock string, pid int) []byte {
	b, err := os.ReadFile(lock)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range strings.Fields(string(b)) {
		switch {
		case strings.HasPrefix(f, "pid="):
			f = "pid=" + strconv.Itoa(pid)
		case strings.HasPrefix(f, "start="):
			continue
		}
		out = append(out, f)
	}
	return []byte(strings.Join(out, " ") + "\n")
}

// deadPID returns the pid of a process that has ended.
func deadPID(t testing.TB) int {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func bootID() string {
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(b))
}

// fingerprint is everything a rollback must restore exactly, as git shows
// it: HEAD, every branch, the index with its flags, and every file of the
// working tree (ignored ones too) with executable bits and link targets.
func (tr *testRepo) fingerprint() string {
	tr.t.Helper()
	var b strings.Builder
	head, err := exec.Command("git", "-C", tr.dir, "symbolic-ref", "-q", "HEAD").Output()
	if err != nil {
		head = []byte("detached " + tr.git("rev-parse", "HEAD"))
	}
	b.WriteString("HEAD " + string(head))
	b.WriteString(tr.git("for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/"))
	b.WriteString(tr.git("ls-files", "--stage"))
	b.WriteString(tr.git("ls-files", "-v", "-t"))
	var files []string
	filepath.WalkDir(tr.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(tr.dir, p)
		rel = filepath.ToSlash(rel)
		if rel == ".git" || rel == ".hegel" {
			return filepath.SkipDir
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			files = append(files, fmt.Sprintf("link %s -> %s", rel, target))
		case d.Type().IsRegular():
			data, _ := os.ReadFile(p)
			fi, _ := d.Info()
			files = append(files, fmt.Sprintf("file %s %o %q", rel, fi.Mode().Perm()&0o100, data))
		}
		return nil
	})
	sort.Strings(files)
	b.WriteString(strings.Join(files, "\n"))
	return b.String()
}

// diffLines shows the lines of a that b lacks (-) and the other way (+).
func diffLines(a, b string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	ma, mb := in(a), in(b)
	var out strings.Builder
	for _, l := range strings.Split(a, "\n") {
		if !mb[l] {
			out.WriteString("- " + l + "\n")
		}
	}
	for _, l := range strings.Split(b, "\n") {
		if !ma[l] {
			out.WriteString("+ " + l + "\n")
		}
	}
	return out.String()
}

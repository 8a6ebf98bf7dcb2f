package rollback

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/util"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/git-hegel/git-hegel/gitstore"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// testRepo is a repository for these tests: on disk (driven by real git)
// or in memory (go-billy memfs and go-git's memory storage).
type testRepo struct {
	t      testing.TB
	r      *gitstore.Repo
	dir    string // "" in memory
	now    time.Time
	m      *Manager
	warned []string
	noted  []string
	task   *testTask
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

func needGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
}

// newDiskRepo makes a repository in a temporary directory with real git.
func newDiskRepo(t *testing.T) *testRepo {
	t.Helper()
	needGit(t)
	base := t.TempDir()
	home := filepath.Join(base, "home")
	dir := filepath.Join(base, "repo")
	os.MkdirAll(home, 0o755)
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = Test\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"), 0o644)
	tr := &testRepo{t: t, dir: dir, now: t0}
	runGit(t, base, gitEnv(home), "init", "-q", dir)
	tr.open(home)
	return tr
}

func (tr *testRepo) open(home string) {
	t := tr.t
	env := map[string]string{}
	for _, kv := range gitEnv(home) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	r, err := gitstore.Open(tr.dir, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	tr.r = r
	tr.wire()
}

func (tr *testRepo) home() string { return filepath.Join(filepath.Dir(tr.dir), "home") }

// reopen reads the configuration again (after git config).
func (tr *testRepo) reopen() { tr.open(tr.home()) }

func newMemRepo(t *testing.T) *testRepo {
	t.Helper()
	r, err := gitstore.NewMemory()
	if err != nil {
		t.Fatal(err)
	}
	tr := &testRepo{t: t, r: r, now: t0}
	tr.wire()
	return tr
}

func (tr *testRepo) wire() {
	tr.r.Now = func() time.Time { return tr.now }
	if tr.m != nil {
		tr.m.Close()
	}
	tr.m = newTestManager(tr)
	m := tr.m
	tr.t.Cleanup(m.Close)
	if tr.task != nil {
		tr.task.auto = tr.r.Config().Bool("hegel", "checkpoints", true)
	}
}

// newTestManager is the Manager these tests drive, its evictions noted.
func newTestManager(tr *testRepo) *Manager {
	return New(tr.r, Options{Now: func() time.Time { return tr.now }, Warn: func(s string) { tr.warned = append(tr.warned, s) },
		Evicted: func(cp *Checkpoint) {
			tr.noted = append(tr.noted, "Evicted oldest snapshot (FIFO): checkpoint "+cp.ID+" at "+cp.Meta.String("node"))
		}})
}

func gitCmd(dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = env
	return cmd
}

func runGit(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := gitCmd(dir, env, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

func (tr *testRepo) git(args ...string) string {
	tr.t.Helper()
	if tr.dir == "" {
		tr.t.Fatal("git on an in-memory repository")
	}
	return runGit(tr.t, tr.dir, gitEnv(tr.home()), args...)
}

func (tr *testRepo) write(p, content string) {
	tr.t.Helper()
	if tr.dir != "" {
		full := filepath.Join(tr.dir, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			tr.t.Fatal(err)
		}
		return
	}
	fs := tr.r.WorkTreeFS()
	fs.MkdirAll(filepath.Dir(p), 0o755)
	if err := util.WriteFile(fs, p, []byte(content), 0o644); err != nil {
		tr.t.Fatal(err)
	}
}

func (tr *testRepo) remove(p string) {
	tr.t.Helper()
	var err error
	if tr.dir != "" {
		err = os.RemoveAll(filepath.Join(tr.dir, filepath.FromSlash(p)))
	} else {
		err = util.RemoveAll(tr.r.WorkTreeFS(), p)
	}
	if err != nil {
		tr.t.Fatal(err)
	}
}

func (tr *testRepo) symlink(target, p string) {
	tr.t.Helper()
	if tr.dir != "" {
		if err := os.Symlink(target, filepath.Join(tr.dir, filepath.FromSlash(p))); err != nil {
			tr.t.Fatal(err)
		}
		return
	}
	if err := tr.r.WorkTreeFS().Symlink(target, p); err != nil {
		tr.t.Fatal(err)
	}
}

func (tr *testRepo) chmod(p string, mode os.FileMode) {
	tr.t.Helper()
	if tr.dir != "" {
		if err := os.Chmod(filepath.Join(tr.dir, filepath.FromSlash(p)), mode); err != nil {
			tr.t.Fatal(err)
		}
		return
	}
	if err := tr.r.WorkTreeFS().(interface {
		Chmod(string, os.FileMode) error
	}).Chmod(p, mode); err != nil {
		tr.t.Fatal(err)
	}
}

// add stages paths (go-git for memory repositories).
func (tr *testRepo) add(paths ...string) {
	tr.t.Helper()
	if tr.dir != "" {
		tr.git(append([]string{"add", "-A", "--"}, paths...)...)
		return
	}
	g, _ := git.Open(tr.r.Storage(), tr.r.WorkTreeFS())
	w, _ := g.Worktree()
	for _, p := range paths {
		if _, err := w.Add(p); err != nil {
			tr.t.Fatalf("add %s: %v", p, err)
		}
	}
}

func (tr *testRepo) commit(msg string) {
	tr.t.Helper()
	if tr.dir != "" {
		tr.git("commit", "-q", "--allow-empty", "-m", msg)
		return
	}
	g, _ := git.Open(tr.r.Storage(), tr.r.WorkTreeFS())
	w, _ := g.Worktree()
	sig := &object.Signature{Name: "T", Email: "t@example.com", When: tr.now}
	if _, err := w.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig, AllowEmptyCommits: true}); err != nil {
		tr.t.Fatal(err)
	}
}

// files returns every file below the top (but .git and the session file):
// path -> content, with "-> target" for links and a trailing "*" on the
// path of executables.
func (tr *testRepo) files() map[string]string {
	tr.t.Helper()
	out := map[string]string{}
	var fsys wtFS = osFS{root: tr.dir}
	if tr.dir == "" {
		fsys = billyFS{tr.r.WorkTreeFS()}
	}
	var walk func(dir string)
	walk = func(dir string) {
		ents, err := fsys.readDir(dir)
		if err != nil {
			tr.t.Fatal(err)
		}
		for _, d := range ents {
			p := join(dir, d.name)
			if p == ".git" || reservedPath(p) {
				continue
			}
			st, err := fsys.lstat(p)
			if err != nil {
				tr.t.Fatal(err)
			}
			switch st.kind {
			case kindDir:
				walk(p)
			case kindSymlink:
				target, _ := fsys.readlink(p)
				out[p] = "-> " + target
			case kindFile:
				b, _ := fsys.readFile(p)
				if st.exec {
					p += "*"
				}
				out[p] = string(b)
			}
		}
	}
	walk("")
	return out
}

func (tr *testRepo) status() string {
	tr.t.Helper()
	return tr.git("status", "--porcelain=v1", "--untracked-files=all", "--ignored")
}

func diffMaps(a, b map[string]string) string {
	var keys []string
	seen := map[string]bool{}
	for k := range a {
		keys, seen[k] = append(keys, k), true
	}
	for k := range b {
		if !seen[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out strings.Builder
	for _, k := range keys {
		va, oka := a[k]
		vb, okb := b[k]
		switch {
		case !oka:
			out.WriteString("+ " + k + "\n")
		case !okb:
			out.WriteString("- " + k + "\n")
		case va != vb:
			out.WriteString("~ " + k + "\n")
		}
	}
	return out.String()
}

// testTask plays the caller's part for these tests, as far as the
// mechanism needs one: a task going through a workflow's nodes, a
// checkpoint taken as each node is entered, and the restore sequence
// (the target chosen as the engine chooses it). What a rollback means to
// the task (events, the loop guard) is the engine's, tested with it.
type testTask struct {
	name, workflowID string
	nodes            []string
	history          []string
	auto             bool // hegel.checkpoints
}

// testWorkflows are the node orders of the workflows these tests walk.
var testWorkflows = map[string][]string{
	"minimal":   {"spec", "plan", "done"},
	"discovery": {"spec", "plan", "code", "learnings", "readme", "done"},
}

// testState is the task as a checkpoint records it.
type testState struct {
	Task, WorkflowID, CurrentNode string
	History                       []string
}

func (tr *testRepo) start(workflow string) {
	tr.t.Helper()
	nodes := testWorkflows[workflow]
	tr.task = &testTask{name: "t1", workflowID: workflow + "-" + tr.now.Format("150405"), nodes: nodes,
		history: []string{nodes[0]}, auto: tr.r.Config().Bool("hegel", "checkpoints", true)}
	tr.entered()
}

func (tr *testRepo) next() {
	tr.t.Helper()
	tt := tr.task
	cur := tt.history[len(tt.history)-1]
	for i, n := range tt.nodes {
		if n == cur {
			tt.history = append(tt.history, tt.nodes[i+1])
			break
		}
	}
	tr.entered()
}

// entered takes the automatic checkpoint of a node just entered.
func (tr *testRepo) entered() {
	tr.t.Helper()
	if !tr.task.auto {
		return
	}
	if _, _, err := tr.take(KindEnter, ""); err != nil {
		tr.t.Fatal(err)
	}
}

func (tr *testRepo) state() *testState {
	tt := tr.task
	return &testState{Task: tt.name, WorkflowID: tt.workflowID, CurrentNode: tt.history[len(tt.history)-1],
		History: append([]string(nil), tt.history...)}
}

// template describes a checkpoint of the task now.
func (tr *testRepo) template(kind, message, rollbackTo string) Template {
	st := tr.state()
	meta := Meta{}
	meta.Set("task", st.Task)
	meta.Set("workflow_id", st.WorkflowID)
	meta.Set("node", st.CurrentNode)
	if message != "" {
		meta.Set("message", message)
	}
	meta.Set("history", st.History)
	if rollbackTo != "" {
		meta.Set("rollback_to", rollbackTo)
	}
	return Template{Kind: kind, Label: kind + " " + st.CurrentNode, Meta: meta}
}

func (tr *testRepo) chain() *Chain { return tr.m.Chain(RefPrefix+"t1", "task t1") }

// take takes a checkpoint of the task at its node (a message, or none
// when nothing changed, as the engine's Snapshots does).
func (tr *testRepo) take(kind, message string) (*Checkpoint, bool, error) {
	t := tr.template(kind, message, "")
	if kind != KindManual || message == "" {
		node := tr.state().CurrentNode
		t.Same = func(prev *Checkpoint) bool { return nodeOf(prev) == node }
	}
	return tr.chain().Take(t)
}

// list is the chain, newest first.
func (tr *testRepo) list() []*Checkpoint {
	tr.t.Helper()
	cps, err := tr.chain().List()
	if err != nil {
		tr.t.Fatal(err)
	}
	slices.Reverse(cps)
	return cps
}

func nodeOf(cp *Checkpoint) string { return cp.Meta.String("node") }

func historyOf(cp *Checkpoint) []string {
	var h []string
	cp.Meta.Get("history", &h)
	return h
}

// Request names the checkpoint a rollback goes back to: the newest taken
// on entering Node (the current node when nothing is given), the one
// with id To, or the newest safety checkpoint (Undo).
type Request struct {
	Node, To string
	Undo     bool
	Reason   string
	// Recurse checks the submodules' commits out too.
	RecurseSubmodules bool
}

// Result is what a rollback did.
type Result struct {
	Plan   *Plan
	Safety *Checkpoint
}

// target finds the checkpoint req names.
func (tr *testRepo) target(req Request) (*Checkpoint, error) {
	cps, err := tr.chain().List()
	if err != nil {
		return nil, err
	}
	node := req.Node
	if node == "" {
		node = tr.state().CurrentNode
	}
	for i := len(cps) - 1; i >= 0; i-- {
		c := cps[i]
		switch {
		case req.Undo && c.Kind == KindSafety,
			req.To != "" && strings.HasPrefix(c.ID, req.To),
			!req.Undo && req.To == "" && c.Kind == KindEnter && nodeOf(c) == node:
			return c, nil
		}
	}
	return nil, ErrNoCheckpoint
}

// rollback runs a confirmed rollback: plan, begin, restore, settle (and
// the task goes back to the target's node).
func (tr *testRepo) rollback(req Request) (*Result, error) {
	tr.t.Helper()
	cp, err := tr.target(req)
	if err != nil {
		return nil, err
	}
	p, err := tr.chain().Plan(cp, PlanOptions{Store: true, Recurse: req.RecurseSubmodules})
	if err != nil {
		return nil, err
	}
	record := Meta{}
	record.Set("node", nodeOf(cp))
	safety, err := p.Begin(tr.template(KindSafety, "", nodeOf(cp)), record)
	if err != nil {
		return nil, err
	}
	j := p.Journal()
	if err := p.Restore("hegel rollback: back to " + nodeOf(cp)); err != nil {
		if uerr := tr.m.Replay(j, false, "undone"); uerr != nil {
			return nil, fmt.Errorf("rollback failed: %v; putting things back failed too: %v", err, uerr)
		}
		if err := tr.chain().Settle(j, false); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("rollback failed, nothing was changed: %w", err)
	}
	tr.task.history = historyOf(cp)
	if err := tr.chain().Settle(j, true); err != nil {
		return nil, err
	}
	return &Result{Plan: p, Safety: safety}, nil
}

func (tr *testRepo) mustRollback(req Request) *Result {
	tr.t.Helper()
	res, err := tr.rollback(req)
	if err != nil {
		tr.t.Fatalf("rollback %+v: %v", req, err)
	}
	return res
}

// fingerprint is everything a rollback must restore exactly, as git shows
// it: HEAD (symbolic or detached), every branch, the index (entries,
// modes, stages, and the assume-unchanged, skip-worktree and
// intent-to-add flags), and every file in the working tree, ignored ones
// included, with executable bits and link targets.
func (tr *testRepo) fingerprint() string {
	tr.t.Helper()
	var b strings.Builder
	head, err := tryGit(tr, "symbolic-ref", "-q", "HEAD")
	if err != nil {
		head = "detached " + tr.git("rev-parse", "HEAD")
	}
	b.WriteString("HEAD " + head)
	b.WriteString(tr.git("for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/"))
	b.WriteString(tr.git("ls-files", "--stage"))
	b.WriteString(tr.git("ls-files", "-v", "-t"))
	b.WriteString(tr.git("diff", "--name-only", "--ita-visible-in-index", "--cached"))
	files := tr.files()
	var keys []string
	for k := range files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "file %s %q\n", k, files[k])
	}
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

package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// HTTP(S) remotes: go-git's transport reads no credential helpers, so
// git-hegel asks `git credential fill` when the server answers 401. The
// server here is git's own http-backend behind basic authentication.
func TestSyncHTTPCredentials(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	if out, err := exec.Command(git, "--exec-path").Output(); err != nil {
		t.Skip("git --exec-path failed")
	} else if _, err := os.Stat(filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")); err != nil {
		t.Skip("this git installation has no git http-backend: smart HTTP sync not tested")
	}
	root := t.TempDir()
	syncGit(t, root, "init", "-q", "--bare", "r.git")
	syncGit(t, filepath.Join(root, "r.git"), "config", "http.receivepack", "true")
	var requests, unauthorized int
	backend := &cgi.Handler{Path: git, Args: []string{"http-backend"}, Dir: root,
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + root}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		if u, p, ok := r.BasicAuth(); !ok || u != "alice" || p != "s3cret" {
			unauthorized++
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		r.Header.Set("REMOTE_USER", "alice")
		backend.ServeHTTP(w, r)
	}))
	defer srv.Close()

	// git credential fill runs with this process's environment: point it
	// at a global config whose helper knows the password, and record what
	// it is told to store and erase.
	home := t.TempDir()
	log := filepath.Join(home, "helper.log")
	helper := filepath.Join(home, "helper.sh")
	script := "#!/bin/sh\necho \"$1\" >> " + log + "\ncase \"$1\" in get) echo username=alice; echo password=$(cat " + filepath.Join(home, "pw") + ");; esac\n"
	if err := os.WriteFile(helper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(home, "gitconfig")
	if err := os.WriteFile(cfg, []byte("[credential]\n\thelper = "+helper+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("GIT_CONFIG_GLOBAL", cfg)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_TERMINAL_PROMPT", "0")
	setPassword := func(pw string) {
		if err := os.WriteFile(filepath.Join(home, "pw"), []byte(pw), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	rem := &Remote{Name: "origin", FetchURL: srv.URL + "/r.git", PushURL: srv.URL + "/r.git"}
	a, b := syncDiskRepo(t), syncDiskRepo(t)

	setPassword("wrong")
	stash(t, a, "over http")
	_, err = a.Push(context.Background(), rem, SyncOptions{})
	if err == nil || !strings.Contains(err.Error(), "credentials were rejected") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("wrong password: %v", err)
	}
	if got := readLines(t, log); !reflect.DeepEqual(got, []string{"get", "erase"}) {
		t.Errorf("helper calls %v, want get then erase", got)
	}

	setPassword("s3cret")
	_ = os.Remove(log)
	rep, err := a.Push(context.Background(), rem, SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Pushed) == 0 {
		t.Errorf("nothing pushed: %+v", rep)
	}
	if got := readLines(t, log); len(got) == 0 || got[0] != "get" || got[len(got)-1] != "store" {
		t.Errorf("helper calls %v, want get ... store", got)
	}
	rep, err = b.Fetch(context.Background(), rem, SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.FetchSummary(); got != "1 stash added" {
		t.Errorf("B fetched %q", got)
	}
	if unauthorized == 0 || requests <= unauthorized {
		t.Errorf("requests %d, unauthorized %d", requests, unauthorized)
	}
}

func readLines(t *testing.T, p string) []string {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	return strings.Fields(string(b))
}

// syncGit runs git in dir with no user or system configuration.
func syncGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// syncDiskRepo makes and opens a repository with one commit on disk.
func syncDiskRepo(t testing.TB) *Repo {
	t.Helper()
	dir := t.TempDir()
	syncGit(t, dir, "init", "-q", "-b", "main")
	syncGit(t, dir, "commit", "-q", "--allow-empty", "-m", "init")
	r, err := Open(dir, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// On disk through file:// (git-upload-pack and git-receive-pack): a fetch
// of 100 objects or more keeps the pack (git's fetch.unpackLimit), a
// smaller one is stored loose, the quarantine is removed either way, and
// git fsck --strict is clean.
func TestSyncDiskFile(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	root := t.TempDir()
	syncGit(t, root, "init", "-q", "--bare", "origin.git")
	u := "file://" + filepath.Join(root, "origin.git")
	rem := &Remote{Name: "origin", FetchURL: u, PushURL: u}
	a, b := syncDiskRepo(t), syncDiskRepo(t)
	for i := 0; i < 40; i++ {
		stash(t, a, "s"+strings.Repeat("x", i%3)+string(rune('a'+i%26)))
	}
	if _, err := a.Sync(context.Background(), rem, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	packs := func(r *Repo) int {
		m, _ := filepath.Glob(filepath.Join(r.CommonDir, "objects", "pack", "*.pack"))
		return len(m)
	}
	rep, err := b.Fetch(context.Background(), rem, SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("first: %+v", rep)
	if rep.Received < 100 || packs(b) != 1 {
		t.Errorf("received %d objects, %d packs", rep.Received, packs(b))
	}
	stash(t, a, "one more")
	if _, err := a.Sync(context.Background(), rem, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	if rep, err = b.Fetch(context.Background(), rem, SyncOptions{}); err != nil || rep.Received != 4 || packs(b) != 1 {
		t.Errorf("incremental: %+v %v, %d packs", rep, err, packs(b))
	}
	if ids, _ := b.Stashes().StashIDs(); len(ids) != 41 {
		t.Errorf("B has %d stashes", len(ids))
	}
	if left, _ := filepath.Glob(filepath.Join(b.CommonDir, quarantinePrefix+"*")); len(left) != 0 {
		t.Errorf("quarantine left behind: %v", left)
	}
	for _, dir := range []string{a.CommonDir, b.CommonDir, filepath.Join(root, "origin.git")} {
		if out := syncGit(t, dir, "fsck", "--strict", "--no-dangling"); strings.Contains(out, "error") || strings.Contains(out, "warning") {
			t.Errorf("fsck %s: %s", dir, out)
		}
	}
}

// A remote task whose newest commit carries a 100 MB message is refused
// without git-hegel reading the message: the fetch allocates a small
// fraction of it (before the limit, it allocated several times its size).
func TestSyncHugeCommitMessage(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	if testing.Short() {
		t.Skip("builds a 100 MB commit")
	}
	root := t.TempDir()
	syncGit(t, root, "init", "-q", "--bare", "origin.git")
	origin := filepath.Join(root, "origin.git")
	u := "file://" + origin
	rem := &Remote{Name: "origin", FetchURL: u, PushURL: u}
	a, b := syncDiskRepo(t), syncDiskRepo(t)
	saveTask(t, a, "t", "spec", "start")
	stash(t, a, "parked")
	if _, err := a.Sync(context.Background(), rem, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	tip := strings.TrimSpace(syncGit(t, origin, "rev-parse", "refs/hegel/tasks/t"))
	tree := strings.TrimSpace(syncGit(t, origin, "rev-parse", "refs/hegel/tasks/t^{tree}"))
	msg := filepath.Join(root, "commit")
	f, err := os.Create(msg)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "tree %s\nparent %s\nauthor A <a@x> 1 +0000\ncommitter A <a@x> 1 +0000\n\n", tree, tip)
	if _, err := f.Write(bytes.Repeat([]byte("m"), 100<<20)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	huge := strings.TrimSpace(syncGit(t, origin, "hash-object", "-t", "commit", "-w", msg))
	syncGit(t, origin, "update-ref", "refs/hegel/tasks/t", huge)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rep, err := b.Fetch(context.Background(), rem, SyncOptions{})
	runtime.ReadMemStats(&after)
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "over the 1 MiB limit (git config hegel.syncMaxCommitSize)") {
		t.Fatalf("got %v", err)
	}
	if got := rep.FetchSummary(); got != "1 stash added" {
		t.Errorf("fetched %q", got)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 16<<20 {
		t.Errorf("the fetch allocated %d MiB for a refused 100 MiB message", n>>20)
	}
	if out := syncGit(t, b.CommonDir, "fsck", "--strict"); out != "" {
		t.Errorf("fsck: %s", out)
	}
}

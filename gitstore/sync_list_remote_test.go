package gitstore

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// listingRepo makes and opens a repository on disk, with one commit,
// that lists the remote's refs before every fetch (hegel.syncListRefs 0).
func listingRepo(t *testing.T) *Repo {
	t.Helper()
	dir := t.TempDir()
	syncGit(t, dir, "init", "-q", "-b", "main")
	syncGit(t, dir, "commit", "-q", "--allow-empty", "-m", "init")
	syncGit(t, dir, "config", "hegel.syncListRefs", "0")
	r, err := Open(dir, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// refsUnder lists the refs under prefix in the repository at dir, with
// the prefix cut (name → value).
func refsUnder(t *testing.T, dir, prefix string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(syncGit(t, dir, "for-each-ref", "--format=%(objectname) %(refname)", prefix)), "\n") {
		if h, n, ok := strings.Cut(l, " "); ok {
			out[strings.TrimPrefix(n, prefix)] = h
		}
	}
	return out
}

// gitRuns returns the git commands GIT_TRACE logged to file whose
// subcommand is sub, each as its arguments after the subcommand, and
// empties the file.
func gitRuns(t *testing.T, file, sub string) [][]string {
	t.Helper()
	b, _ := os.ReadFile(file)
	_ = os.WriteFile(file, nil, 0o644)
	var out [][]string
	for _, l := range strings.Split(string(b), "\n") {
		_, cmd, ok := strings.Cut(l, "trace: built-in: git ")
		if !ok {
			continue
		}
		f := strings.Fields(cmd)
		for i, a := range f {
			if a == sub {
				out = append(out, f[i+1:])
				break
			}
			if a == "-c" || a == "--git-dir" || strings.HasPrefix(a, "-") || i > 0 && (f[i-1] == "-c" || f[i-1] == "--git-dir") {
				continue
			}
			break
		}
	}
	return out
}

// With the listing, a fetch runs git fetch only for the refs that differ,
// by exact name and without --prune; nothing differing runs no git fetch
// at all; a ref deleted upstream loses its tracking ref (the local ref
// stays); and the tracking refs end as the remote's, as a fetch of the
// whole namespace leaves them.
func TestSyncListedFetch(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	root := t.TempDir()
	syncGit(t, root, "init", "-q", "--bare", "origin.git")
	origin := filepath.Join(root, "origin.git")
	u := "file://" + origin
	rem := &Remote{Name: "origin", FetchURL: u, PushURL: u}
	a, b := syncDiskRepo(t), listingRepo(t)
	for _, n := range []string{"t1", "t2", "t3"} {
		saveTask(t, a, n, "spec", "start")
	}
	stash(t, a, "parked")
	if _, err := a.Sync(context.Background(), rem, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(root, "trace")
	t.Setenv("GIT_TRACE", trace)
	sameAsOrigin := func(step string) {
		t.Helper()
		if got, want := refsUnder(t, b.CommonDir, "refs/hegel-remotes/origin/"), refsUnder(t, origin, "refs/hegel/"); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: tracking refs %v, remote %v", step, got, want)
		}
		if left, _ := filepath.Glob(filepath.Join(b.CommonDir, quarantinePrefix+"*")); len(left) != 0 {
			t.Errorf("%s: quarantine left behind: %v", step, left)
		}
	}

	rep, err := b.Fetch(context.Background(), rem, SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.FetchSummary(); got != "1 stash added, task t1 added, task t2 added, task t3 added" {
		t.Errorf("first fetch: %q", got)
	}
	if n := len(gitRuns(t, trace, "fetch")); n != 1 {
		t.Errorf("first fetch ran git fetch %d times", n)
	}
	sameAsOrigin("first fetch")

	// Nothing changed: one listing, no git fetch.
	rep, err = b.Fetch(context.Background(), rem, SyncOptions{})
	if err != nil || rep.FetchSummary() != "" {
		t.Errorf("nothing changed: %q %v", rep.FetchSummary(), err)
	}
	_ = os.WriteFile(trace, nil, 0o644)
	if _, err := b.Sync(context.Background(), rem, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	b2, _ := os.ReadFile(trace)
	if f, l, p := gitRuns(t, trace, "fetch"), strings.Count(string(b2), "built-in: git ls-remote"), strings.Count(string(b2), "built-in: git push"); len(f) != 0 || l != 1 || p != 0 {
		t.Errorf("sync with nothing changed: %d git fetch, %d git ls-remote, %d git push", len(f), l, p)
	}

	// One changed, one new, one deleted upstream.
	saveTask(t, a, "t1", "done", "finish")
	saveTask(t, a, "t4", "spec", "start")
	if _, err := a.Sync(context.Background(), rem, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	syncGit(t, origin, "update-ref", "-d", "refs/hegel/tasks/t2")
	_ = os.WriteFile(trace, nil, 0o644)
	rep, err = b.Fetch(context.Background(), rem, SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.FetchSummary(); got != "task t4 added, task t1 fast-forwarded" {
		t.Errorf("second fetch: %q", got)
	}
	fetches := gitRuns(t, trace, "fetch")
	if len(fetches) != 1 {
		t.Fatalf("second fetch ran git fetch %d times", len(fetches))
	}
	var specs []string
	for _, a := range fetches[0] {
		if a == "--prune" {
			t.Errorf("git fetch %v prunes", fetches[0])
		}
		if strings.HasPrefix(a, "+") {
			specs = append(specs, a)
		}
	}
	sort.Strings(specs)
	if want := []string{"+refs/hegel/tasks/t1:refs/hegel/tasks/t1", "+refs/hegel/tasks/t4:refs/hegel/tasks/t4"}; !reflect.DeepEqual(specs, want) {
		t.Errorf("git fetch of %v, want %v", specs, want)
	}
	sameAsOrigin("second fetch")
	if _, err := b.refs.Read(plumbing.ReferenceName("refs/hegel/tasks/t2")); err != nil {
		t.Errorf("the local ref of a task deleted upstream: %v", err)
	}
	if out := syncGit(t, b.CommonDir, "fsck", "--strict", "--no-dangling"); strings.Contains(out, "error") || strings.Contains(out, "warning") {
		t.Errorf("fsck: %s", out)
	}
}

// A ref that moves upstream between the listing and git fetch arrives at
// its newer value; one that vanishes in between makes the fetch list
// again and find it deleted. Either way the tracking refs end as the
// remote's, validated, and nothing is left behind.
func TestSyncListedMovedMeanwhile(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	root := t.TempDir()
	syncGit(t, root, "init", "-q", "--bare", "origin.git")
	origin := filepath.Join(root, "origin.git")
	u := "file://" + origin
	rem := &Remote{Name: "origin", FetchURL: u, PushURL: u}
	a, b := syncDiskRepo(t), listingRepo(t)
	for _, n := range []string{"t1", "t2", "t3"} {
		saveTask(t, a, n, "spec", "start")
	}
	if _, err := a.Sync(context.Background(), rem, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Fetch(context.Background(), rem, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	check := func(step string) {
		t.Helper()
		if got, want := refsUnder(t, b.CommonDir, "refs/hegel-remotes/origin/"), refsUnder(t, origin, "refs/hegel/"); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: tracking refs %v, remote %v", step, got, want)
		}
		if left, _ := filepath.Glob(filepath.Join(b.CommonDir, quarantinePrefix+"*")); len(left) != 0 {
			t.Errorf("%s: quarantine left behind: %v", step, left)
		}
		if out := syncGit(t, b.CommonDir, "fsck", "--strict", "--no-dangling"); strings.Contains(out, "error") || strings.Contains(out, "warning") {
			t.Errorf("%s: fsck: %s", step, out)
		}
	}

	// Moved: t1 changed upstream; after the listing saw it, it changes
	// again.
	saveTask(t, a, "t1", "done", "finish")
	if _, err := a.Push(context.Background(), rem, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	newer := saveTask(t, a, "t1", "done", "once more")
	lists := 0
	b.syncTransport = &gitTransport{r: b, afterList: func(attempt int) {
		lists++
		if attempt == 1 {
			syncGit(t, a.WorkTree, "push", "-q", u, "refs/hegel/tasks/t1:refs/hegel/tasks/t1")
		}
	}}
	if _, err := b.Fetch(context.Background(), rem, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	if lists != 1 {
		t.Errorf("moved: listed %d times", lists)
	}
	if h, _ := b.refs.Read("refs/hegel/tasks/t1"); h.String() != newer {
		t.Errorf("moved: local t1 at %s, want the newer %s", h, newer)
	}
	check("moved")

	// Vanished: t2 changed upstream; after the listing saw it, it is
	// deleted there.
	saveTask(t, a, "t2", "done", "finish")
	if _, err := a.Push(context.Background(), rem, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	lists = 0
	b.syncTransport = &gitTransport{r: b, afterList: func(attempt int) {
		lists++
		if attempt == 1 {
			syncGit(t, origin, "update-ref", "-d", "refs/hegel/tasks/t2")
		}
	}}
	rep, err := b.Fetch(context.Background(), rem, SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lists != 2 || rep.FetchSummary() != "" {
		t.Errorf("vanished: listed %d times, fetched %q", lists, rep.FetchSummary())
	}
	if _, err := b.refs.Read(plumbing.ReferenceName(trackingRoot + "origin/tasks/t2")); err == nil {
		t.Errorf("vanished: the tracking ref of t2 is still there")
	}
	check("vanished")
}

// The listing is the remote's word: a line that is not a hash and a ref
// name, a zero hash or a name listed twice makes it unusable; a name git
// would not store (a path out of the namespace, control characters) is
// left out, as git fetch leaves it out; names outside the prefixes (ls-remote
// matches a pattern against a name's tail) are not the fetch's.
func TestParseListing(t *testing.T) {
	const h1, h2 = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	prefixes := []string{"stashes", "tasks/"}
	got, err := parseListing(strings.Join([]string{
		h1 + "\trefs/hegel/tasks/one",
		h2 + "\trefs/hegel/stashes",
		h1 + "\trefs/hegel/tasks/../../heads/main",
		h1 + "\trefs/hegel/tasks/a\x01b",
		h1 + "\trefs/hegel/tasks/.hidden",
		h1 + "\trefs/hegel/tasks/x.lock",
		h1 + "\trefs/hegel/tasks/a b",
		h1 + "\trefs/hegel/tasks/a/b",
		h1 + "\trefs/other/refs/hegel/tasks/two",
		h1 + "\trefs/hegel/checkpoints/one",
		h1 + "\trefs/hegel/tasks/",
		"",
	}, "\n"), prefixes, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]plumbing.Hash{
		"refs/hegel/tasks/one": plumbing.NewHash(h1),
		"refs/hegel/stashes":   plumbing.NewHash(h2),
		"refs/hegel/tasks/a/b": plumbing.NewHash(h1), // a valid git name: the fetch skips it, saying so
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if d := differing(got, nil); !reflect.DeepEqual(d, []string{"refs/hegel/stashes", "refs/hegel/tasks/one"}) {
		t.Errorf("differing: %v", d)
	}
	for _, bad := range []string{
		"not a listing",
		h1 + " refs/hegel/tasks/one",
		strings.ToUpper("abcdef1111111111111111111111111111111111") + "\trefs/hegel/tasks/one",
		"0000000000000000000000000000000000000000\trefs/hegel/tasks/one",
		h1[:39] + "\trefs/hegel/tasks/one",
		h1[:39] + "g\trefs/hegel/tasks/one",
		h1[:39] + ":\trefs/hegel/tasks/one",
		"\x00" + h1[1:] + "\trefs/hegel/tasks/one",
		h1 + "\trefs/hegel/tasks/one\n" + h2 + "\trefs/hegel/tasks/one",
	} {
		if _, err := parseListing(bad+"\n", prefixes, nil); err == nil || !strings.Contains(err.Error(), "the remote's list of refs is damaged") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// hegel.syncListRefs decides when a fetch lists first; a value the
// command refuses does not reach here, and a negative one is the default.
func TestSyncListRefsSetting(t *testing.T) {
	for v, want := range map[string]int{"": defaultSyncListRefs, "0": 0, "1k": 1024, "-3": defaultSyncListRefs, "x": defaultSyncListRefs} {
		r := syncDiskRepo(t)
		if v != "" {
			syncGit(t, r.CommonDir, "config", "hegel.syncListRefs", v)
			r = reopen(t, r)
		}
		if got := r.syncListRefs(); got != want {
			t.Errorf("%q: %d, want %d", v, got, want)
		}
	}
}

// A clone that lists first and one that fetches the whole namespaces end
// in the same place, with the same report, through changes, additions,
// deletions upstream and hostile refs (a name git-hegel never writes, a
// task ref that is not a commit).
func TestSyncListedSameAsWhole(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	root := t.TempDir()
	syncGit(t, root, "init", "-q", "--bare", "origin.git")
	origin := filepath.Join(root, "origin.git")
	u := "file://" + origin
	rem := &Remote{Name: "origin", FetchURL: u, PushURL: u}
	a, listing, whole := syncDiskRepo(t), listingRepo(t), syncDiskRepo(t)
	for _, n := range []string{"t1", "t2", "t3"} {
		saveTask(t, a, n, "spec", "start")
	}
	stash(t, a, "parked")
	if _, err := a.Sync(context.Background(), rem, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	round := func(step string) {
		t.Helper()
		var reps [2]string
		for i, r := range []*Repo{listing, whole} {
			rep, err := r.Fetch(context.Background(), rem, SyncOptions{})
			reps[i] = fmt.Sprintf("%q %+v %+v %v %v", rep.FetchSummary(), rep.Refused, rep.Skipped, rep.Warnings, err)
		}
		if reps[0] != reps[1] {
			t.Errorf("%s: listing first: %s\nwhole namespace: %s", step, reps[0], reps[1])
		}
		for _, prefix := range []string{"refs/hegel/", "refs/hegel-remotes/"} {
			l, w := refsUnder(t, listing.CommonDir, prefix), refsUnder(t, whole.CommonDir, prefix)
			if len(l) == 0 || !reflect.DeepEqual(l, w) {
				t.Errorf("%s: refs under %s differ:\nlisting first %v\nwhole namespace %v", step, prefix, l, w)
			}
		}
		t.Logf("%s: %s", step, reps[0])
	}
	round("first")
	round("nothing changed")

	saveTask(t, a, "t1", "done", "finish")
	saveTask(t, a, "t4", "spec", "start")
	stash(t, a, "again")
	if _, err := a.Sync(context.Background(), rem, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	syncGit(t, origin, "update-ref", "-d", "refs/hegel/tasks/t2")
	syncGit(t, origin, "update-ref", "refs/hegel/tasks/a/b", "refs/hegel/tasks/t3")
	syncGit(t, origin, "update-ref", "refs/hegel/tasks/broken", "refs/hegel/tasks/t3^{tree}")
	round("changed, new, deleted, hostile")
	round("hostile again")
	syncGit(t, origin, "update-ref", "-d", "refs/hegel/tasks/broken")
	round("hostile gone")
}

// More refs differing than one git fetch names on its command line: the
// listing is followed by one fetch of the whole namespaces, seeded with
// every tracking ref, with --prune.
func TestSyncListedManyDiffer(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	root := t.TempDir()
	syncGit(t, root, "init", "-q", "--bare", "origin.git")
	origin := filepath.Join(root, "origin.git")
	u := "file://" + origin
	rem := &Remote{Name: "origin", FetchURL: u, PushURL: u}
	a, b := syncDiskRepo(t), listingRepo(t)
	for i := 0; i <= listedFetchMax; i++ {
		saveTask(t, a, fmt.Sprintf("t%03d", i), "spec", "start")
	}
	if _, err := a.Sync(context.Background(), rem, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(root, "trace")
	t.Setenv("GIT_TRACE", trace)
	rep, err := b.Fetch(context.Background(), rem, SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rep.FetchSummary(), fmt.Sprintf("%d tasks added", listedFetchMax+1); got != want {
		t.Errorf("fetched %q, want %q", got, want)
	}
	fetches := gitRuns(t, trace, "fetch")
	if len(fetches) != 1 || !strings.Contains(strings.Join(fetches[0], " "), "--prune") || !strings.Contains(strings.Join(fetches[0], " "), "+refs/hegel/tasks/*:refs/hegel/tasks/*") {
		t.Errorf("git fetch runs: %v", fetches)
	}
	if got, want := refsUnder(t, b.CommonDir, "refs/hegel-remotes/origin/"), refsUnder(t, origin, "refs/hegel/"); !reflect.DeepEqual(got, want) {
		t.Errorf("tracking refs %d, remote %d", len(got), len(want))
	}
}

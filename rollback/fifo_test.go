package rollback

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

func objectCount(tr *testRepo) int {
	n := 0
	for _, line := range strings.Split(tr.git("count-objects", "-v"), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		if k == "count" || k == "in-pack" {
			c, _ := strconv.Atoi(v)
			n += c
		}
	}
	return n
}

// TestFIFOEvictionFreesObjects takes 100 automatic checkpoints, each with
// a file of its own: the default bound keeps the newest
// DefaultMaxCheckpoints, and git gc then removes everything the others held. Each eviction says so.
func TestFIFOEvictionFreesObjects(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write("base", "base\n")
	tr.add("base")
	tr.commit("c1")
	tr.git("config", "hegel.checkpoints", "off")
	tr.reopen()
	tr.start("minimal")
	tr.git("gc", "-q", "--prune=now")
	baseline := objectCount(tr)
	blobs := make([]string, 100)
	for i := 0; i < 100; i++ {
		if i > 0 {
			tr.remove(fmt.Sprintf("u%03d", i-1))
		}
		content := fmt.Sprintf("only checkpoint %d has this\n", i)
		tr.write(fmt.Sprintf("u%03d", i), content)
		blobs[i] = hashObject(plumbing.BlobObject, []byte(content)).String()
		tr.now = tr.now.Add(time.Second)
		if _, created, err := tr.take(KindEnter, fmt.Sprint(i)); err != nil || !created {
			t.Fatalf("checkpoint %d: created=%v err=%v", i, created, err)
		}
	}
	cps := tr.list()
	if len(cps) != DefaultMaxCheckpoints {
		t.Fatalf("%d checkpoints kept, want %d", len(cps), DefaultMaxCheckpoints)
	}
	evictedN := 100 - DefaultMaxCheckpoints
	if len(tr.noted) != evictedN || !strings.HasPrefix(tr.noted[0], "Evicted oldest snapshot (FIFO): checkpoint ") || !strings.HasSuffix(tr.noted[0], " at spec") {
		t.Errorf("%d eviction lines, first %q", len(tr.noted), tr.noted)
	}
	for i, cp := range cps {
		if want := fmt.Sprint(99 - i); cp.Meta.String("message") != want {
			t.Errorf("checkpoint %d is %q, want %q (newest first)", i, cp.Meta.String("message"), want)
		}
	}
	// The oldest checkpoint's only parent is the HEAD commit it recorded.
	if n := strings.Count(tr.git("log", "--first-parent", "--format=%s", RefPrefix+"t1"), "checkpoint "); n != DefaultMaxCheckpoints {
		t.Errorf("the chain has %d checkpoint commits, want %d", n, DefaultMaxCheckpoints)
	}
	tr.git("gc", "-q", "--prune=now")
	for i, b := range blobs {
		_, err := tryGit(tr, "cat-file", "-e", b)
		if kept := i >= evictedN; kept != (err == nil) {
			t.Errorf("blob of checkpoint %d: present=%v, want %v", i, err == nil, kept)
		}
	}
	// Each kept checkpoint adds a commit, a root tree, its metadata blob,
	// a worktree tree and its own blob (the index tree, version blob and
	// base file are shared): at most 5 each beyond the baseline.
	if got, limit := objectCount(tr), baseline+5*DefaultMaxCheckpoints+2; got > limit {
		t.Errorf("%d objects after gc, want at most %d (baseline %d)", got, limit, baseline)
	}
	tr.git("fsck", "--strict", "--no-dangling")
}

func tryGit(tr *testRepo, args ...string) (string, error) {
	cmd := gitCmd(tr.dir, gitEnv(tr.home()), args...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestEvictionKeepsTheLastSafetyCheckpoint(t *testing.T) {
	tr := newMemRepo(t)
	tr.write("f", "0")
	tr.add("f")
	tr.commit("c1")
	tr.start("minimal")
	tr.write("f", "1")
	tr.next()
	tr.write("f", "2")
	tr.now = tr.now.Add(time.Minute)
	res := tr.mustRollback(Request{Node: "plan"})
	for i := 0; i < 2*DefaultMaxCheckpoints; i++ {
		tr.write("f", fmt.Sprint("later ", i))
		tr.now = tr.now.Add(time.Minute)
		if _, _, err := tr.take(KindEnter, ""); err != nil {
			t.Fatal(err)
		}
	}
	cps := tr.list()
	found := false
	for _, c := range cps {
		found = found || c.ID == res.Safety.ID
	}
	// The newest safety checkpoint is kept besides the bound.
	if len(cps) != DefaultMaxCheckpoints+1 || !found {
		t.Fatalf("%d checkpoints, safety kept: %v", len(cps), found)
	}
	tr.mustRollback(Request{Undo: true})
	if got := tr.files()["f"]; got != "2" {
		t.Errorf("undo after %d more checkpoints: f = %q, want 2", 2*DefaultMaxCheckpoints, got)
	}
}

// TestUndoRedoKeepsTheNodeCheckpoints: rolling back and undoing again and
// again brings older safety checkpoints back each time; the bound evicts
// those before the checkpoints taken on entering nodes.
func TestUndoRedoKeepsTheNodeCheckpoints(t *testing.T) {
	tr := newMemRepo(t)
	tr.write("f", "0")
	tr.add("f")
	tr.commit("c1")
	tr.start("minimal")
	tr.write("f", "1")
	for i := 0; i < 12; i++ {
		tr.now = tr.now.Add(time.Minute)
		req := Request{Node: "spec"}
		if i%2 == 1 {
			req = Request{Undo: true}
		}
		tr.mustRollback(req)
	}
	cps := tr.list()
	spec := false
	for _, c := range cps {
		spec = spec || (c.Kind == KindEnter && nodeOf(c) == "spec")
	}
	if !spec {
		t.Fatalf("the checkpoint taken on entering spec was evicted: %d left", len(cps))
	}
	if len(cps) > DefaultMaxCheckpoints+1 {
		t.Errorf("%d checkpoints, bound %d+1", len(cps), DefaultMaxCheckpoints)
	}
}

// TestEvictionCountsOnlyNewSnapshots: a checkpoint that holds what the one
// before it holds is not counted and leaves with it; a pinned one is never
// evicted nor counted.
func TestEvictionCountsOnlyNewSnapshots(t *testing.T) {
	snap := func(id, tree string, pinned bool) *Checkpoint {
		return &Checkpoint{ID: id, Kind: KindEnter, WorkTree: plumbing.NewHash(tree), Pinned: pinned}
	}
	a, b, c := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)
	ids := func(cps []*Checkpoint) string {
		var out []string
		for _, c := range cps {
			out = append(out, c.ID)
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		name          string
		chain         []*Checkpoint
		max           int
		kept, evicted string
	}{
		{"moves without edits evict nothing", []*Checkpoint{snap("s", a, true), snap("1", a, false), snap("2", a, false),
			snap("3", a, false), snap("4", a, false), snap("5", a, false)}, 1, "s 1 2 3 4 5", ""},
		{"the pinned start stays", []*Checkpoint{snap("s", a, true), snap("1", b, false), snap("2", c, false)}, 1, "s 2", "1"},
		{"repeats leave with what they repeat", []*Checkpoint{snap("s", a, true), snap("1", b, false), snap("1r", b, false),
			snap("2", c, false)}, 1, "s 2", "1 1r"},
		{"unpinned start is counted", []*Checkpoint{snap("0", a, false), snap("1", b, false), snap("2", c, false)}, 2, "1 2", "0"},
	} {
		kept, evicted := evictOldest(tc.chain, tc.max, 20)
		if ids(kept) != tc.kept || ids(evicted) != tc.evicted {
			t.Errorf("%s: kept %q evicted %q, want %q and %q", tc.name, ids(kept), ids(evicted), tc.kept, tc.evicted)
		}
	}
}

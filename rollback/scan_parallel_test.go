package rollback

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestParallelScanMatchesSerial scans a working tree holding every kind
// of entry and change once on one goroutine and once with the workers and
// the split lstat forced on (every directory's files shared out, however
// few), with and without the directory cache, and requires the same
// verdicts, stat data, untracked, skipped and nested lists, and the same
// snapshot trees.
func TestParallelScanMatchesSerial(t *testing.T) {
	tr := newDiskRepo(t)
	for d := 0; d < 6; d++ {
		for f := 0; f < 40; f++ {
			tr.write(fmt.Sprintf("d%d/f%02d", d, f), fmt.Sprintf("file %d %d\n", d, f))
		}
	}
	tr.write("top", "top\n")
	tr.write("exec.sh", "#!/bin/sh\n")
	tr.chmod("exec.sh", 0o755)
	tr.symlink("top", "link")
	tr.write("typechange/dir-to-be", "x\n")
	tr.write("skip/w", "skip-worktree\n")
	tr.write("assume/u", "assume-unchanged\n")
	tr.write(".gitignore", "*.log\nbuild/\n")
	tr.write("big/keep", "k\n")
	tr.add(".")
	tr.commit("c1")
	// A submodule: a gitlink entry and a checkout with its own .git.
	sub := filepath.Join(tr.dir, "sub")
	runGit(t, tr.dir, gitEnv(tr.home()), "init", "-q", sub)
	runGit(t, sub, gitEnv(tr.home()), "commit", "-q", "--allow-empty", "-m", "s")
	head := strings.TrimSpace(runGit(t, sub, gitEnv(tr.home()), "rev-parse", "HEAD"))
	tr.git("update-index", "--add", "--cacheinfo", "160000,"+head+",sub")
	tr.write("ita", "intent to add\n")
	tr.git("add", "-N", "ita")
	tr.git("update-index", "--skip-worktree", "skip/w")
	tr.remove("skip/w")
	tr.git("update-index", "--assume-unchanged", "assume/u")
	time.Sleep(10 * time.Millisecond)
	tr.git("update-index", "-q", "--refresh")

	// Changes since: modified (in several directories), deleted, a file
	// become a link and one become a directory, a mode change, an edit
	// the assume-unchanged flag hides from git, untracked, ignored, an
	// ignored directory, a nested repository, and a file too large.
	for d := 0; d < 6; d++ {
		tr.write(fmt.Sprintf("d%d/f%02d", d, 3+d), "changed\n")
	}
	tr.remove("d1/f10")
	tr.remove("d2/f11")
	tr.symlink("top", "d3/f12x")
	tr.remove("d3/f12")
	tr.symlink("top", "d3/f12")
	tr.remove("typechange/dir-to-be")
	tr.write("typechange/dir-to-be/inner", "now a directory\n")
	tr.chmod("d4/f20", 0o755)
	tr.write("assume/u", "edited behind the flag\n")
	tr.write("d5/new1", "untracked\n")
	tr.write("new/deep/file", "untracked\n")
	tr.write("d0/debug.log", "ignored\n")
	tr.write("build/out", "ignored directory\n")
	tr.write("big/huge", strings.Repeat("x", 5000))
	runGit(t, tr.dir, gitEnv(tr.home()), "init", "-q", filepath.Join(tr.dir, "nested"))
	// A racily clean entry: same size, its mtime the index file's own.
	idx0, err := tr.m.w.readIndex()
	if err != nil {
		t.Fatal(err)
	}
	tr.write("d5/f30", "FILE 5 30\n")
	os.Chtimes(filepath.Join(tr.dir, "d5/f30"), idx0.ModTime, idx0.ModTime)

	idx, err := tr.m.w.readIndex()
	if err != nil {
		t.Fatal(err)
	}
	cfg := tr.m.w.cfg
	cfg.maxSize = 1000

	type outcome struct {
		state, dirty []uint8
		dirtyStat    map[int]fstat
		untracked    []untrackedFile
		skipped      []SkippedFile
		nested       []string
		attributes   bool
	}
	run := func(workers int, cache bool) outcome {
		t.Helper()
		c := cfg
		c.workers = workers
		if cache {
			c.dirs = newDirCache(tr.r.GitDir, time.Now())
		}
		res, err := scan(tr.m.w.fs, idx, tr.m.w.rules, c)
		if err != nil {
			t.Fatal(err)
		}
		if cache {
			c.dirs.save(tr.r.GitDir, tr.r.Shared(), time.Now())
		}
		return outcome{res.state, res.dirty, res.dirtyStat, res.untracked, res.skipped, res.nested, res.attributes.Load()}
	}

	defer func(n int) { lstatThreadCost = n }(lstatThreadCost)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	want := run(1, false)
	// The serial scan must have met every case, or the comparison proves
	// little.
	count := map[uint8]int{}
	for _, s := range want.state {
		count[s]++
	}
	if count[entryDirty] < 8 || count[entryUnseen] < 2 || count[entryClean] < 200 {
		t.Fatalf("serial scan verdicts %v: the tree lacks the changes it was given", count)
	}
	if len(want.untracked) < 2 || len(want.skipped) != 1 || len(want.nested) != 1 {
		t.Fatalf("serial scan: untracked %v, skipped %v, nested %v", want.untracked, want.skipped, want.nested)
	}
	lstatThreadCost = 1 // every directory's lstats shared out
	for _, cache := range []bool{false, true, true} {
		for _, workers := range []int{0, 3} {
			got := run(workers, cache)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("workers %d, directory cache %t: the parallel scan differs from the serial one\n got %+v\nwant %+v", workers, cache, got, want)
			}
		}
	}

	// The snapshot built on each is the same.
	trees := func(workers int) string {
		sn := tr.m.snapshotter()
		sn.cfg.workers = workers
		sn.cfg.maxSize = cfg.maxSize
		snap, err := sn.take(idx, false)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(snap.worktree, snap.indexTree, snap.skipped, snap.nested, snap.intentToAdd, snap.assumeUnchanged)
	}
	if a, b := trees(1), trees(0); a != b {
		t.Fatalf("snapshot on one goroutine %s, in parallel %s", a, b)
	}
}

// TestScanChildren: the sorted list of a directory's kids says what a map
// from name to kid built in the index's order says, for names that sort
// apart in the index ("a", "a.b", "a/x"), a name that is both a file and
// a directory, and a conflicted file's stages; lookups hit in any order.
func TestScanChildren(t *testing.T) {
	names := []struct {
		name  string
		stage int
	}{
		{"d/a", 0}, {"d/a-b", 0}, {"d/a.b", 0}, {"d/a/x", 0}, {"d/a/y", 0},
		{"d/b", 1}, {"d/b", 2}, {"d/b", 3}, {"d/c", 2}, {"d/c", 3},
		{"d/e", 0}, {"d/e.txt", 0}, {"d/e/f/g", 0},
	}
	// A directory long enough to be bisected for its end.
	for k := 0; k < 30; k++ {
		names = append(names, struct {
			name  string
			stage int
		}{fmt.Sprintf("d/m/%02d", k), 0})
	}
	names = append(names, struct {
		name  string
		stage int
	}{"d/z", 0})
	idx := &gitIndex{}
	for _, n := range names {
		idx.Entries = append(idx.Entries, idxEntry{Name: n.name, Flags: uint16(n.stage) << 12})
	}
	s := &scanner{idx: idx}
	j := scanJob{dir: "d", lo: 0, hi: len(idx.Entries)}
	want := map[string]child{}
	for i := range idx.Entries {
		rest := idx.Entries[i].Name[2:]
		name, _, below := strings.Cut(rest, "/")
		c, ok := want[name]
		if !ok {
			c = child{file: -1}
		}
		if below {
			if c.hi == 0 {
				c.lo = i
			}
			c.hi = i + 1
		} else if idx.Entries[i].stage() == 0 || c.file < 0 {
			c.file = i
		}
		want[name] = c
	}
	kids := s.children(j, nil)
	if len(kids) != len(want) {
		t.Fatalf("%d kids, want %d: %+v", len(kids), len(want), kids)
	}
	l := kidList{kids: kids}
	for _, order := range [][]string{{"a", "a-b", "a.b", "b", "c", "e", "e.txt", "m", "z"}, {"z", "e.txt", "a", "nope", "m", "c", "a.b", "e", "b", "a-b"}} {
		for _, name := range order {
			got, ok := l.find(name)
			w, wok := want[name]
			if !wok {
				w = child{file: -1}
			}
			if ok != wok || got != w {
				t.Errorf("find(%q) = %+v %t, want %+v %t", name, got, ok, w, wok)
			}
		}
	}
}

package rollback

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

const cachedRef = RefPrefix + "cached"

// cachedManager is a Manager that keeps the chain cache, as the agent
// actions' does.
func cachedManager(tr *testRepo) *Manager {
	m := newTestManager(tr)
	m.ChainCache = true
	m.MaxCheckpoints = 6
	tr.t.Cleanup(m.Close)
	return m
}

// takeOn changes a file and appends a snapshot to the cached chain.
func takeOn(tr *testRepo, m *Manager, i int) *Checkpoint {
	tr.t.Helper()
	tr.write("f.txt", "version "+strconv.Itoa(i)+"\n")
	tr.now = tr.now.Add(time.Second)
	cp, created, err := m.Chain(cachedRef, "the cached chain").Take(Template{Kind: KindEnter, Label: "action " + strconv.Itoa(i)})
	if err != nil || !created {
		tr.t.Fatalf("take %d: created %v, %v", i, created, err)
	}
	return cp
}

// chainDump is the chain as a manager without the cache reads it from
// the object database.
func chainDump(tr *testRepo) string {
	tr.t.Helper()
	m := newTestManager(tr)
	defer m.Close()
	cps, err := m.Chain(cachedRef, "the cached chain").List()
	if err != nil {
		tr.t.Fatal(err)
	}
	var b strings.Builder
	for _, cp := range cps {
		b.WriteString(cp.ID + " prev=" + cp.Previous + " " + cp.Commit.String() + " " + cp.WorkTree.String() + " " + cp.Label + "\n")
	}
	return b.String()
}

// cacheFile reads and checks the chain's cache file: it parses, every
// object matches its name, and it was written for the ref's tip.
func cacheFile(tr *testRepo, m *Manager) (path string, memo *chainMemo) {
	tr.t.Helper()
	c := m.Chain(cachedRef, "the cached chain")
	path = c.cachePath()
	if _, err := os.Stat(c.summaryPath()); err == nil && !bytes.Contains(mustRead(tr.t, c.summaryPath()), []byte(strings.TrimSpace(tr.git("rev-parse", cachedRef)))) {
		tr.t.Errorf("the chain summary is not for the ref's tip")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		tr.t.Fatal(err)
	}
	memo, err = parseChainCache(data, cachedRef)
	if err != nil {
		tr.t.Fatalf("the cache file does not parse: %v", err)
	}
	if tip := strings.TrimSpace(tr.git("rev-parse", cachedRef)); memo.tip.String() != tip {
		tr.t.Errorf("the cache is for %s, the ref is at %s", memo.tip, tip)
	}
	return path, memo
}

// TestChainCacheReadsTheSameChain: appends through the cache, evictions
// included, make the chain a manager without it reads; a new process
// reads the chain from the cache file alone.
func TestChainCacheReadsTheSameChain(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write("f.txt", "base\n")
	tr.add("f.txt")
	tr.commit("base")
	m := cachedManager(tr)
	var last *Checkpoint
	for i := 0; i < 9; i++ {
		cp := takeOn(tr, m, i)
		if last != nil && cp.Previous != last.ID {
			t.Fatalf("take %d: previous %q, want %q", i, cp.Previous, last.ID)
		}
		last = cp
	}
	want := chainDump(tr)
	if n := strings.Count(want, "\n"); n != 6 {
		t.Fatalf("the bound kept %d snapshots, want 6:\n%s", n, want)
	}
	_, memo := cacheFile(tr, m)
	for _, l := range strings.Split(strings.TrimSpace(want), "\n") {
		if _, ok := memo.objs[plumbing.NewHash(strings.Fields(l)[2])]; !ok {
			t.Errorf("the cache lacks the commit of %s", l)
		}
	}

	// With the object database out of the way, only the cache can give
	// the chain.
	objs := filepath.Join(tr.dir, ".git", "objects")
	if err := os.Rename(objs, objs+".away"); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"info", "pack"} {
		if err := os.MkdirAll(filepath.Join(objs, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tr.reopen() // a new process: nothing of the chain in memory
	m2 := cachedManager(tr)
	cps, err := m2.Chain(cachedRef, "the cached chain").List()
	if err := os.RemoveAll(objs); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(objs+".away", objs); err != nil {
		t.Fatal(err)
	}
	if err != nil || len(cps) != 6 || cps[5].ID != last.ID {
		t.Fatalf("reading from the cache alone: %d snapshots, %v", len(cps), err)
	}
}

// TestChainCacheDamaged: a cache file that is cut short, altered, holds
// an object under another's name, or names another ref is ignored whole:
// the append reads the chain from the object database, links the new
// snapshot to the real newest one, and writes a good cache.
func TestChainCacheDamaged(t *testing.T) {
	cases := map[string]func(data []byte) []byte{
		"truncated": func(d []byte) []byte { return d[:len(d)-7] },
		"garbage":   func(d []byte) []byte { return []byte("not a cache\x00\xff") },
		"altered": func(d []byte) []byte {
			// A byte inside the last object's content.
			d = bytes.Clone(d)
			d[len(d)-3] ^= 0x20
			return d
		},
		"swapped": func(d []byte) []byte {
			// Two commits' names exchanged: each object is well formed but
			// not the one its name says.
			lines := bytes.Split(d, []byte("\n"))
			var idx []int
			for i, l := range lines {
				if bytes.HasPrefix(l, []byte("c ")) && len(l) > 43 {
					idx = append(idx, i)
				}
			}
			a, b := lines[idx[0]], lines[idx[1]]
			la, lb := bytes.Clone(a), bytes.Clone(b)
			copy(la[2:42], b[2:42])
			copy(lb[2:42], a[2:42])
			lines[idx[0]], lines[idx[1]] = la, lb
			return bytes.Join(lines, []byte("\n"))
		},
		"other ref": func(d []byte) []byte {
			return bytes.Replace(d, []byte(cachedRef+"\n"), []byte(RefPrefix+"other\n"), 1)
		},
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			tr := newDiskRepo(t)
			tr.write("f.txt", "base\n")
			tr.add("f.txt")
			tr.commit("base")
			m := cachedManager(tr)
			var last *Checkpoint
			for i := 0; i < 4; i++ {
				last = takeOn(tr, m, i)
			}
			// Appends on the chain's summary leave the cache behind; a
			// read of the whole chain writes it.
			if _, err := m.Chain(cachedRef, "the cached chain").List(); err != nil {
				t.Fatal(err)
			}
			path, _ := cacheFile(tr, m)
			// Without its summary, the append reads the chain whole.
			if err := os.Remove(m.Chain(cachedRef, "").summaryPath()); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			bad := damage(data)
			if _, err := parseChainCache(bad, cachedRef); err == nil {
				t.Fatal("the damaged cache parses")
			}
			if err := os.WriteFile(path, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			before := chainDump(tr)
			cp := takeOn(tr, cachedManager(tr), 4)
			if cp.Previous != last.ID {
				t.Errorf("the new snapshot follows %q, want %q", cp.Previous, last.ID)
			}
			after := chainDump(tr)
			if !strings.HasPrefix(after, before) || strings.Count(after, "\n") != 5 {
				t.Errorf("chain before:\n%s\nafter:\n%s", before, after)
			}
			cacheFile(tr, m)
			tr.git("fsck", "--strict", "--no-dangling")
		})
	}
}

// TestChainCacheStaleTip: when another process moved the ref after the
// cache was written, the append reads what the cache lacks, follows the
// real tip and writes the cache again for the new one.
func TestChainCacheStaleTip(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write("f.txt", "base\n")
	tr.add("f.txt")
	tr.commit("base")
	m := cachedManager(tr)
	for i := 0; i < 3; i++ {
		takeOn(tr, m, i)
	}
	if _, err := m.Chain(cachedRef, "the cached chain").List(); err != nil {
		t.Fatal(err)
	}
	_, old := cacheFile(tr, m)
	// Another process, without the cache, appends twice.
	other := newTestManager(tr)
	other.MaxCheckpoints = 6
	defer other.Close()
	var last *Checkpoint
	for i := 3; i < 5; i++ {
		last = takeOn(tr, other, i)
	}
	if strings.TrimSpace(tr.git("rev-parse", cachedRef)) == old.tip.String() {
		t.Fatal("setup: the ref did not move")
	}
	cp := takeOn(tr, cachedManager(tr), 5)
	if cp.Previous != last.ID {
		t.Errorf("the new snapshot follows %q, want %q (the ref's tip)", cp.Previous, last.ID)
	}
	if d := chainDump(tr); strings.Count(d, "\n") != 6 || !strings.HasSuffix(d, "action 5\n") {
		t.Errorf("chain:\n%s", d)
	}
	cacheFile(tr, m)
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

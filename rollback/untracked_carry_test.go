package rollback

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// untrackedWorld drives random changes in a real repository with the
// untracked cache on.
type untrackedWorld struct {
	t   *testing.T
	tr  *testRepo
	rng *rand.Rand
	// back is the next time directories are backdated to (each time a
	// second later, so that git never sees the same mtime twice).
	back time.Time
}

var (
	untrDirNames  = []string{"a", "b", "c"}
	untrSubNames  = []string{"x", "y", "p"}
	untrFileNames = []string{"f1", "f2", "g.log"}
	untrIgnores   = []string{"*.log\n", "f1\n", "x/\n", "y\n", "!f2\n*\n", "p\n", ""}
)

func (u *untrackedWorld) randomDir() string {
	d := untrDirNames[u.rng.Intn(len(untrDirNames))]
	for n := u.rng.Intn(3); n > 0; n-- {
		d += "/" + untrSubNames[u.rng.Intn(len(untrSubNames))]
	}
	return d
}

func (u *untrackedWorld) randomPath() string {
	if u.rng.Intn(5) == 0 {
		return untrFileNames[u.rng.Intn(len(untrFileNames))]
	}
	return u.randomDir() + "/" + untrFileNames[u.rng.Intn(len(untrFileNames))]
}

func (u *untrackedWorld) abs(p string) string { return filepath.Join(u.tr.dir, filepath.FromSlash(p)) }

// existing lists the worktree's files and directories (.git left out).
func (u *untrackedWorld) existing() (files, dirs []string) {
	filepath.WalkDir(u.tr.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == u.tr.dir {
			return nil
		}
		rel := filepath.ToSlash(p[len(u.tr.dir)+1:])
		if d.IsDir() {
			if rel == ".git" {
				return filepath.SkipDir
			}
			dirs = append(dirs, rel)
		} else {
			files = append(files, rel)
		}
		return nil
	})
	return files, dirs
}

func (u *untrackedWorld) pick(list []string) string {
	if len(list) == 0 {
		return ""
	}
	return list[u.rng.Intn(len(list))]
}

// writeFile writes p, replacing a file in the way of its directory, or a
// directory where the file goes.
func (u *untrackedWorld) writeFile(p, content string) {
	parts := strings.Split(p, "/")
	for i := 1; i < len(parts); i++ {
		d := u.abs(strings.Join(parts[:i], "/"))
		if st, err := os.Lstat(d); err == nil && !st.IsDir() {
			os.Remove(d)
		}
	}
	if st, err := os.Lstat(u.abs(p)); err == nil && st.IsDir() {
		os.RemoveAll(u.abs(p))
	}
	if err := os.MkdirAll(filepath.Dir(u.abs(p)), 0o755); err != nil {
		u.t.Fatal(err)
	}
	if err := os.WriteFile(u.abs(p), []byte(content), 0o644); err != nil {
		u.t.Fatal(err)
	}
}

// change makes n random changes: files and directories created, modified
// and deleted, files staged, unstaged (made untracked) and committed,
// .gitignore files written, empty directories, a directory replaced by a
// file and the reverse.
func (u *untrackedWorld) change(n int) {
	tr := u.tr
	for i := 0; i < n; i++ {
		files, dirs := u.existing()
		switch u.rng.Intn(11) {
		case 0, 1, 2:
			u.writeFile(u.randomPath(), strconv.Itoa(u.rng.Intn(1000))+"\n")
		case 3:
			if f := u.pick(files); f != "" {
				os.Remove(u.abs(f))
			}
		case 4:
			if d := u.pick(dirs); d != "" {
				os.RemoveAll(u.abs(d))
			}
		case 5:
			if d := u.pick(dirs); d != "" {
				os.RemoveAll(u.abs(d))
				u.writeFile(d, "was a directory\n")
			}
		case 6:
			if f := u.pick(files); f != "" {
				u.writeFile(f+"/"+untrFileNames[0], "was a file\n")
			}
		case 7:
			os.MkdirAll(u.abs(u.randomDir()+"/empty"), 0o755)
		case 8:
			if u.rng.Intn(3) == 0 {
				tryGit(tr, "add", "-A")
			} else if f := u.pick(files); f != "" {
				tryGit(tr, "add", "--", f)
			}
		case 9:
			if f := u.pick(strings.Fields(tr.git("ls-files"))); f != "" {
				tryGit(tr, "rm", "-q", "--cached", "--", f)
			}
		case 10:
			d := u.randomDir()
			if u.rng.Intn(4) == 0 {
				d = ""
			}
			p := ".gitignore"
			if d != "" {
				p = d + "/.gitignore"
			}
			u.writeFile(p, untrIgnores[u.rng.Intn(len(untrIgnores))])
		}
		if u.rng.Intn(8) == 0 {
			tryGit(tr, "commit", "-q", "--allow-empty", "-m", "change "+strconv.Itoa(i))
		}
	}
}

// freshCache brings the index's untracked cache up to date with a git
// status over directories whose stat data is older than the index (not
// racy), as after a git status run a while before the restore: half the
// time built from scratch, else the cache the index has (after the first
// restore, the one the restore carried, as git status updated it).
func (u *untrackedWorld) freshCache() {
	tr := u.tr
	if u.rng.Intn(2) == 0 {
		tr.git("-c", "core.untrackedCache=keep", "update-index", "--no-untracked-cache")
	}
	backdateDirs(u.t, tr.dir, u.back)
	u.back = u.back.Add(time.Second)
	tr.git("status", "--porcelain")
	if _, ok := untrackedOf(u.t, tr); !ok {
		u.t.Fatal("git status wrote no untracked cache")
	}
}

// restoreOnly restores cp's state of the paths only (an undo of agent
// actions).
func (tr *testRepo) restoreOnly(cp *Checkpoint, only []string) error {
	p, err := tr.chain().Plan(cp, PlanOptions{Store: true, Only: only})
	if err != nil {
		return err
	}
	record := Meta{}
	record.Set("node", nodeOf(cp))
	if _, err := p.Begin(tr.template(KindSafety, "", nodeOf(cp)), record); err != nil {
		return err
	}
	j := p.Journal()
	if err := p.Restore("hegel undo"); err != nil {
		return err
	}
	return tr.chain().Settle(j, true)
}

// untrackedDirPath joins a cache directory's path.
func untrackedDirPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "/" + name
}

// checkCarried checks the index a restore wrote: it carries an untracked
// cache; every directory the cache keeps valid exists and lists exactly
// the untracked names git finds in it now (compared with a cache git
// builds from scratch for the same index, wherever git would trust ours:
// same check_only mode, and no per-directory exclude file that git would
// find changed); and git status says the same with and without it, in
// both untracked modes.
func checkCarried(t *testing.T, tr *testRepo, what string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(tr.dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	ext, ok := indexExtension(t, data, "UNTR")
	if !ok {
		t.Fatalf("%s: the index lost its untracked cache", what)
	}
	ours, err := parseUntracked(ext)
	if err != nil {
		t.Fatalf("%s: the untracked cache written does not parse: %v", what, err)
	}
	if !bytes.Equal(appendUntracked(nil, ours), ext) {
		t.Fatalf("%s: the untracked cache written does not write back the same", what)
	}
	// The same entries without the cache; git status builds one.
	idx, err := decodeIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	bare := bytes.Clone(data[:idx.extOff])
	sum := sha1.Sum(bare)
	bare = append(bare, sum[:]...)
	plain := filepath.Join(t.TempDir(), "index")
	if err := os.WriteFile(plain, bare, 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(gitEnv(tr.home()), "GIT_INDEX_FILE="+plain)
	runGit(t, tr.dir, env, "-c", "core.untrackedCache=true", "status", "--porcelain")
	fdata, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	fext, ok := indexExtension(t, fdata, "UNTR")
	if !ok {
		t.Fatalf("%s: git wrote no untracked cache from scratch", what)
	}
	fresh, err := parseUntracked(fext)
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	var walk func(o, f *untrDir, path string)
	walk = func(o, f *untrDir, path string) {
		if o.valid {
			if st, err := os.Lstat(filepath.Join(tr.dir, filepath.FromSlash(path))); err != nil || !st.IsDir() {
				problems = append(problems, fmt.Sprintf("%q is valid in the cache but is no directory", path))
			}
		}
		if f == nil {
			return // git does not reach it now
		}
		if o.oid != f.oid {
			if o.valid && o.oid == ([20]byte{}) {
				problems = append(problems, fmt.Sprintf("%q: a .gitignore appeared in a directory the cache keeps valid", path))
			}
			return // git reads the exclude file, and invalidates all below
		}
		if o.valid && f.valid && o.checkOnly == f.checkOnly {
			a, b := slices.Sorted(slices.Values(o.untracked)), slices.Sorted(slices.Values(f.untracked))
			if !slices.Equal(a, b) {
				problems = append(problems, fmt.Sprintf("%q is valid in the cache with untracked %q; git finds %q", path, a, b))
			}
		}
		for _, s := range o.subs {
			var fs *untrDir
			if m := f.named(s.name); len(m) > 0 {
				fs = m[0]
			}
			walk(s, fs, untrackedDirPath(path, s.name))
		}
	}
	walk(ours.root, fresh.root, "")
	if len(problems) > 0 {
		t.Fatalf("%s: the carried untracked cache is wrong:\n%s", what, strings.Join(problems, "\n"))
	}
	// git status with the cache (which may update it) and without it (on a
	// copy of the index: with the cache off git would drop it).
	without := func(args ...string) string {
		cp := filepath.Join(t.TempDir(), "index")
		b, err := os.ReadFile(filepath.Join(tr.dir, ".git", "index"))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(cp, b, 0o644)
		env := append(gitEnv(tr.home()), "GIT_INDEX_FILE="+cp)
		return runGit(t, tr.dir, env, append([]string{"-c", "core.untrackedCache=false"}, args...)...)
	}
	for _, mode := range [][]string{{"status", "--porcelain"}, {"status", "--porcelain", "-uall"}} {
		want := without(mode...)
		got := tr.git(append([]string{"-c", "core.untrackedCache=true"}, mode...)...)
		if got != want {
			t.Fatalf("%s: git %s with the untracked cache:\n%s\nwithout:\n%s", what, strings.Join(mode, " "), got, want)
		}
	}
}

// untrackedCases is how many random cases TestUntrackedCacheCarried runs
// (GIT_HEGEL_UNTRACKED_CASES sets it).
func untrackedCases(t *testing.T) int {
	if v, err := strconv.Atoi(os.Getenv("GIT_HEGEL_UNTRACKED_CASES")); err == nil && v > 0 {
		return v
	}
	if testing.Short() {
		return 3
	}
	return 12
}

// TestUntrackedCacheCarried is a differential test on real repositories:
// random changes, a checkpoint, more random changes, git's own untracked
// cache, then a rollback, an undo and a restore of some paths only; after
// each, the index carries an untracked cache that git can trust
// (checkCarried).
func TestUntrackedCacheCarried(t *testing.T) {
	for seed := 1; seed <= untrackedCases(t); seed++ {
		t.Run(strconv.Itoa(seed), func(t *testing.T) {
			tr := newDiskRepo(t)
			tr.git("config", "core.untrackedCache", "true")
			u := &untrackedWorld{t: t, tr: tr, rng: rand.New(rand.NewSource(int64(seed))), back: time.Now().Add(-time.Hour)}
			for _, d := range untrDirNames {
				u.writeFile(d+"/x/f1", "base\n")
				u.writeFile(d+"/f2", "base\n")
			}
			tr.add(".")
			tr.commit("initial")
			u.change(8)
			tr.start("minimal")
			u.change(12)
			tr.now = tr.now.Add(time.Minute)
			tr.next()
			u.change(12)
			restored := 0
			try := func(what string, run func() error) {
				t.Helper()
				u.freshCache()
				if err := run(); err != nil {
					if errors.Is(err, ErrInTheWay) || errors.Is(err, ErrNothingToRestore) || errors.Is(err, ErrNoCheckpoint) {
						t.Logf("%s: %v", what, err)
						return
					}
					t.Fatalf("%s: %v", what, err)
				}
				restored++
				checkCarried(t, tr, what)
			}
			node := "plan"
			if u.rng.Intn(3) == 0 {
				node = "spec"
			}
			try("rollback to "+node, func() error { _, err := tr.rollback(Request{Node: node}); return err })
			u.change(6)
			tr.now = tr.now.Add(time.Minute)
			try("undo", func() error { _, err := tr.rollback(Request{Undo: true}); return err })
			tr.now = tr.now.Add(time.Minute)
			cp, _, err := tr.take(KindManual, "before the actions")
			if err != nil {
				t.Fatal(err)
			}
			u.change(8)
			files, _ := u.existing()
			only := strings.Fields(tr.git("ls-files"))
			for _, f := range files {
				if u.rng.Intn(2) == 0 {
					only = append(only, f)
				}
			}
			try("restore of some paths", func() error { return tr.restoreOnly(cp, only) })
			if restored == 0 {
				t.Log("no restore could be made in this case")
			}
		})
	}
}

// traceData returns the value of a trace2 data event (category, key)
// git wrote to path, or -1.
func traceData(t *testing.T, path, category, key string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	val := -1
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev struct {
			Event, Category, Key string
			Value                json.RawMessage
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Event != "data" || ev.Category != category || ev.Key != key {
			continue
		}
		s := strings.Trim(string(ev.Value), `"`)
		if v, err := strconv.Atoi(s); err == nil {
			val = v
		}
	}
	return val
}

// TestUntrackedCacheReused: the first git status after a rollback opens
// only the directories the rollback touched (and those above them), where
// with the cache dropped it opens every directory.
func TestUntrackedCacheReused(t *testing.T) {
	tr := newDiskRepo(t)
	tr.git("config", "core.untrackedCache", "true")
	for d := 0; d < 40; d++ {
		tr.write("src/d"+strconv.Itoa(d)+"/f.txt", "one\n")
		tr.write("lib/e"+strconv.Itoa(d)+"/g.txt", "one\n")
	}
	tr.add(".")
	tr.commit("initial")
	tr.write("src/d3/untracked.txt", "u\n")
	tr.start("minimal")
	tr.now = tr.now.Add(time.Minute)
	tr.next()
	tr.write("src/d7/f.txt", "two\n")
	tr.add("src/d7/f.txt")
	tr.write("lib/e9/new.txt", "new\n")
	backdateDirs(t, tr.dir, time.Now().Add(-time.Hour))
	tr.git("status", "--porcelain")
	tr.mustRollback(Request{Node: "plan"})

	data, err := os.ReadFile(filepath.Join(tr.dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := decodeIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	bare := bytes.Clone(data[:idx.extOff])
	sum := sha1.Sum(bare)
	dropped := filepath.Join(t.TempDir(), "index")
	os.WriteFile(dropped, append(bare, sum[:]...), 0o644)

	opened := func(index string) (int, string) {
		trace := filepath.Join(t.TempDir(), "trace.json")
		env := append(gitEnv(tr.home()), "GIT_TRACE2_EVENT="+trace, "GIT_TRACE2_EVENT_NESTING=10", "GIT_INDEX_FILE="+index)
		out := runGit(t, tr.dir, env, "status", "--porcelain")
		return traceData(t, trace, "read_directory", "opendir"), out
	}
	carried, outCarried := opened(filepath.Join(tr.dir, ".git", "index"))
	rebuilt, outRebuilt := opened(dropped)
	t.Logf("first git status after the rollback opens %d directories with the cache carried, %d with it dropped", carried, rebuilt)
	if outCarried != outRebuilt || !strings.Contains(outCarried, "?? src/d3/untracked.txt") {
		t.Fatalf("git status differs:\ncarried:\n%s\ndropped:\n%s", outCarried, outRebuilt)
	}
	// Dropped: the top, src, lib and their 80 directories. Carried: the
	// top, src and lib, src/d7 and lib/e9.
	if rebuilt < 83 || carried < 0 || carried > 5 {
		t.Fatalf("directories opened: %d with the cache carried, %d without", carried, rebuilt)
	}
}

// TestUntrackedCacheInvalidation: a path invalidates every directory on
// its way and, when it is a directory of the cache, all of it; a
// directory recorded in the second the old index was written or later is
// invalidated (git's racy rule); the others stay valid, names and all.
func TestUntrackedCacheInvalidation(t *testing.T) {
	dir := func(name string, mtime uint32, subs ...*untrDir) *untrDir {
		return &untrDir{name: name, valid: true, stat: statData{MtimeSec: mtime}, untracked: []string{"u"}, subs: subs}
	}
	root := dir("", 50,
		dir("a", 50, dir("b", 50, dir("c", 50, dir("deep", 50))), dir("side", 50)),
		dir("racy", 100), dir("later", 101), dir("kept", 99))
	c := &untrackedCarry{cache: &untrCache{root: root}, modTime: time.Unix(100, 5)}
	c.apply(&gitIndex{}, []change{{path: "a/b/c"}}, nil)
	state := map[string]bool{}
	var walk func(d *untrDir, path string)
	walk = func(d *untrDir, path string) {
		state[path] = d.valid
		if !d.valid && (len(d.untracked) > 0 || d.checkOnly) {
			t.Errorf("%q is invalid but keeps its names", path)
		}
		for _, s := range d.subs {
			walk(s, untrackedDirPath(path, s.name))
		}
	}
	walk(root, "")
	want := map[string]bool{"": false, "a": false, "a/b": false, "a/b/c": false, "a/b/c/deep": false, "a/side": true,
		"racy": false, "later": false, "kept": true}
	for p, v := range want {
		if state[p] != v {
			t.Errorf("%q: valid %v, want %v", p, state[p], v)
		}
	}
}

// TestChangedIndexPaths: every name whose entries differ in any way, and
// only those.
func TestChangedIndexPaths(t *testing.T) {
	h := func(b byte) (x [20]byte) { x[0] = b; return }
	old := []idxEntry{
		{Name: "a", Hash: h(1), Mode: 0o100644},
		{Name: "b", Hash: h(2), Mode: 0o100644},
		{Name: "c", Hash: h(3), Mode: 0o100644, Flags: 1 << 12},
		{Name: "c", Hash: h(4), Mode: 0o100644, Flags: 2 << 12},
		{Name: "d", Hash: h(5), Mode: 0o100644},
		{Name: "e", Hash: h(6), Mode: 0o100644},
		{Name: "f", Hash: h(7), Mode: 0o100644},
	}
	keys := make([]indexKey, len(old))
	for i, e := range old {
		keys[i] = indexKey{name: e.Name, hash: e.Hash, mode: e.Mode, flags: e.Flags, ext: e.ExtFlags}
	}
	new := []idxEntry{
		{Name: "a", Hash: h(1), Mode: 0o100644},
		{Name: "b", Hash: h(9), Mode: 0o100644},
		{Name: "c", Hash: h(3), Mode: 0o100644},
		{Name: "d", Hash: h(5), Mode: 0o100755},
		{Name: "d0", Hash: h(5), Mode: 0o100644},
		{Name: "f", Hash: h(7), Mode: 0o100644, ExtFlags: extIntentToAdd},
	}
	var got []string
	changedIndexPaths(keys, new, func(p string) {
		if !slices.Contains(got, p) {
			got = append(got, p)
		}
	})
	if want := []string{"b", "c", "d", "d0", "e", "f"}; !slices.Equal(got, want) {
		t.Fatalf("changed %q, want %q", got, want)
	}
}

// TestUntrackedCacheDropped: the cache is not carried when it is not
// understood or git would use it in ways the invalidation does not
// cover; then the new index has none, as before.
func TestUntrackedCacheDropped(t *testing.T) {
	tr := newDiskRepo(t)
	tr.git("config", "core.untrackedCache", "true")
	tr.write("a/f.txt", "one\n")
	tr.add(".")
	tr.commit("initial")
	tr.write("a/u.txt", "u\n")
	tr.git("status", "--porcelain")
	idx, err := tr.m.w.readIndex()
	if err != nil {
		t.Fatal(err)
	}
	if tr.m.w.untrackedCarryFor(idx, false) == nil {
		t.Fatal("git's own cache is not carried")
	}
	good := idx.untracked
	uc, err := parseUntracked(good)
	if err != nil {
		t.Fatal(err)
	}
	variant := func(change func(uc *untrCache)) []byte {
		c, _ := parseUntracked(good)
		change(c)
		return appendUntracked(nil, c)
	}
	cases := map[string][]byte{
		"garbage":            []byte("garbage\x00"),
		"truncated":          good[:len(good)-3],
		"another worktree":   variant(func(c *untrCache) { c.ident = []byte("Location /elsewhere, system Linux\x00") }),
		"two idents":         variant(func(c *untrCache) { c.ident = append(bytes.Clone(c.ident), c.ident...) }),
		"ignored shown":      variant(func(c *untrCache) { c.flags |= 1 }),
		"unknown flag":       variant(func(c *untrCache) { c.flags |= 1 << 12 }),
		"other exclude file": variant(func(c *untrCache) { c.perDir = ".hgignore" }),
	}
	for what, b := range cases {
		i := *idx
		i.untracked = b
		if tr.m.w.untrackedCarryFor(&i, false) != nil {
			t.Errorf("%s: carried", what)
		}
	}
	i := *idx
	i.fsmonitor = true
	if tr.m.w.untrackedCarryFor(&i, false) != nil {
		t.Error("with an FSMN extension: carried")
	}
	if tr.m.w.untrackedCarryFor(idx, true) != nil {
		t.Error("on a file system that folds case: carried")
	}
	for _, kv := range [][2]string{{"core.fsmonitor", "true"}, {"core.fsmonitor", ".git/hooks/query-watchman"}, {"core.untrackedCache", "false"}} {
		tr.git("config", kv[0], kv[1])
		tr.reopen()
		if tr.m.w.untrackedCarryFor(idx, false) != nil {
			t.Errorf("with %s=%s: carried", kv[0], kv[1])
		}
		tr.git("config", "--unset", kv[0])
	}
	tr.git("config", "core.untrackedCache", "true")
	tr.reopen()
	if tr.m.w.untrackedCarryFor(idx, false) == nil || uc.root == nil {
		t.Fatal("the cache is no longer carried with the settings back")
	}

	// A replayed restore (finishing one that was interrupted) drops it.
	tr.start("minimal")
	tr.now = tr.now.Add(time.Minute)
	tr.next()
	tr.write("a/later.txt", "later\n")
	tr.add("a/later.txt")
	tr.commit("later")
	tr.git("status", "--porcelain")
	cp, err := tr.target(Request{Node: "plan"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := tr.chain().Plan(cp, PlanOptions{Store: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Begin(tr.template(KindSafety, "", "plan"), Meta{}); err != nil {
		t.Fatal(err)
	}
	j := p.Journal()
	tr.m.w.unlockIndex() // as a killed process leaves it (Replay takes it over)
	if _, ok := untrackedOf(t, tr); !ok {
		t.Fatal("no untracked cache before the replay")
	}
	if err := tr.m.Replay(j, true, "finished"); err != nil {
		t.Fatal(err)
	}
	if err := tr.chain().Settle(j, true); err != nil {
		t.Fatal(err)
	}
	if _, ok := untrackedOf(t, tr); ok {
		t.Error("a replayed restore carried the untracked cache")
	}
	if got := tr.git("status", "--porcelain"); got != "?? a/u.txt\n" {
		t.Errorf("git status after the replay:\n%s", got)
	}
}

// BenchmarkUntrackedCarry: what carrying the cache adds to a restore of
// 200 files on 100,000 entries in 2,000 directories: parsing the cache,
// checking it writes back the same and the entries' keys (prepare), then
// the index diff, the invalidation and the new cache's bytes (apply).
func BenchmarkUntrackedCarry(b *testing.B) {
	var es []idxEntry
	root := &untrDir{valid: true}
	uc := &untrCache{ident: []byte("Location /repo, system Linux\x00"), flags: dirShowOtherDirectories | dirHideEmptyDirectories, perDir: ".gitignore", root: root}
	for t := 0; t < 40; t++ {
		top := &untrDir{name: fmt.Sprintf("t%02d", t), valid: true, stat: statData{MtimeSec: 1}}
		root.subs = append(root.subs, top)
		for s := 0; s < 50; s++ {
			top.subs = append(top.subs, &untrDir{name: fmt.Sprintf("s%02d", s), valid: true, stat: statData{MtimeSec: 1}, untracked: []string{"u.txt"}})
			for f := 0; f < 50; f++ {
				e := idxEntry{Name: fmt.Sprintf("t%02d/s%02d/f%02d.txt", t, s, f), Mode: 0o100644}
				e.Hash[0], e.Hash[1] = byte(t), byte(f)
				es = append(es, e)
			}
		}
	}
	data := appendUntracked(nil, uc)
	var wt []change
	for i := 0; i < 200; i++ {
		wt = append(wt, change{path: fmt.Sprintf("t%02d/s%02d/f%02d.txt", i%40, i*13%50, i%50)})
	}
	prepare := func() *untrackedCarry {
		c, err := parseUntracked(data)
		if err != nil || !bytes.Equal(appendUntracked(nil, c), data) {
			b.Fatal("does not write back")
		}
		keys := make([]indexKey, len(es))
		for k := range es {
			e := &es[k]
			keys[k] = indexKey{name: e.Name, hash: e.Hash, mode: e.Mode, flags: e.Flags, ext: e.ExtFlags}
		}
		return &untrackedCarry{cache: c, keys: keys, modTime: time.Unix(100, 0)}
	}
	// Parsed and checked, and the keys taken, while the files are
	// written (restoreFiles).
	b.Run("prepare", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			prepare()
		}
	})
	// After the new index is built, before it is written.
	b.Run("apply", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			carry := prepare()
			b.StartTimer()
			carry.apply(&gitIndex{Entries: es}, wt, nil)
		}
	})
}

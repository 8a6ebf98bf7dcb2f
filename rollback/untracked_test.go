package rollback

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// untrackedOf returns the untracked cache of the repository's index file,
// and whether it has one.
func untrackedOf(t testing.TB, tr *testRepo) ([]byte, bool) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(tr.dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	return indexExtension(t, data, "UNTR")
}

// backdateDirs sets every directory's mtime (the .git directory's
// excepted) to at, so that git records stat data older than the index it
// writes next (not racy).
func backdateDirs(t testing.TB, root string, at time.Time) {
	t.Helper()
	var dirs []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			dirs = append(dirs, p)
		}
		return nil
	})
	for _, d := range dirs {
		if err := os.Chtimes(d, at, at); err != nil {
			t.Fatal(err)
		}
	}
}

// TestUntrackedCacheRoundTrip: the untracked cache git writes, parsed and
// written again unchanged, is the same bytes; on a tree with enough
// directories that the bitmaps need runs and several words, directories
// valid and invalid (an index change invalidates one), untracked
// directories git only checked (check_only), and .gitignore files (object
// ids).
func TestUntrackedCacheRoundTrip(t *testing.T) {
	tr := newDiskRepo(t)
	tr.git("config", "core.untrackedCache", "true")
	for d := 0; d < 150; d++ {
		dir := "d" + strconv.Itoa(d)
		tr.write(dir+"/tracked.txt", "t\n")
		if d%7 == 0 {
			tr.write(dir+"/.gitignore", "*.log\n")
		}
		if d%3 == 0 {
			tr.write(dir+"/sub/deeper/x.txt", "x\n")
		}
	}
	tr.add(".")
	tr.commit("initial")
	for d := 0; d < 150; d += 4 {
		dir := "d" + strconv.Itoa(d)
		tr.write(dir+"/untracked.txt", "u\n")
		tr.write(dir+"/new/inside.txt", "u\n") // an untracked directory
		tr.write(dir+"/ignored.log", "i\n")
	}
	backdateDirs(t, tr.dir, time.Now().Add(-time.Hour))
	for _, args := range [][]string{{"status", "--porcelain"}, {"update-index", "--add", "d5/untracked.txt"}} {
		if args[0] == "update-index" {
			tr.write("d5/untracked.txt", "now tracked\n")
		}
		tr.git(args...)
		ext, ok := untrackedOf(t, tr)
		if !ok {
			t.Fatalf("git %s wrote no untracked cache", args[0])
		}
		uc, err := parseUntracked(ext)
		if err != nil {
			t.Fatalf("after git %s: %v", args[0], err)
		}
		if got := appendUntracked(nil, uc); !bytes.Equal(got, ext) {
			t.Fatalf("after git %s: written again, the cache differs:\ngit  %q\nours %q", args[0], ext, got)
		}
		valid, checkOnly, oids := 0, 0, 0
		var count func(d *untrDir)
		count = func(d *untrDir) {
			if d.valid {
				valid++
			}
			if d.checkOnly {
				checkOnly++
			}
			if d.oid != ([20]byte{}) {
				oids++
			}
			for _, s := range d.subs {
				count(s)
			}
		}
		count(uc.root)
		if valid < 64 || checkOnly == 0 || oids == 0 || uc.flags != dirShowOtherDirectories|dirHideEmptyDirectories {
			t.Fatalf("after git %s: %d directories, %d valid, %d check_only, %d with .gitignore, flags %#x: not the cache the test needs",
				args[0], uc.dirs, valid, checkOnly, oids, uc.flags)
		}
		t.Logf("%s: %d dirs %d valid %d check_only %d oids, %d bytes", args[0], uc.dirs, valid, checkOnly, oids, len(ext))
		if args[0] == "update-index" && valid == uc.dirs {
			t.Fatal("git update-index --add invalidated no directory")
		}
	}
	// The whole index, decoded and encoded again with its cache, keeps it.
	data, err := os.ReadFile(filepath.Join(tr.dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := decodeIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := encodeIndex(&out, idx); err != nil {
		t.Fatal(err)
	}
	want, _ := indexExtension(t, data, "UNTR")
	if got, ok := indexExtension(t, out.Bytes(), "UNTR"); !ok || !bytes.Equal(got, want) {
		t.Fatal("the index written again lost its untracked cache or changed it")
	}
}

// TestEWAHWriterReadsBack: bitmaps built bit by bit read back as the bits
// set: sparse, dense (runs of ones that fold into marker words), long
// gaps.
func TestEWAHWriterReadsBack(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for n := 0; n < 500; n++ {
		size := rng.Intn(2000) + 1
		density := rng.Float64()
		var want []int
		for i := 0; i < size; i++ {
			if rng.Float64() < density {
				want = append(want, i)
			}
		}
		var e ewahWriter
		e.init()
		for _, i := range want {
			e.set(i)
		}
		b := e.appendTo(nil)
		got, w, err := readEWAH(b, size)
		if err != nil || w != len(b) || !slices.Equal(got, want) {
			t.Fatalf("case %d (%d bits, density %.2f): read %v (%d of %d bytes, %v), want %v", n, size, density, got, w, len(b), err, want)
		}
	}
}

// TestParseUntrackedDamaged: every truncation of a cache git wrote, and
// every single changed byte, is parsed or refused without a panic; what
// parses is written back (the caller keeps a cache only when that gives
// the same bytes).
func TestParseUntrackedDamaged(t *testing.T) {
	tr := newDiskRepo(t)
	tr.git("config", "core.untrackedCache", "true")
	tr.write("a/b/t.txt", "t\n")
	tr.write("c/.gitignore", "x\n")
	tr.add(".")
	tr.commit("initial")
	tr.write("a/u.txt", "u\n")
	tr.write("e/f/u.txt", "u\n")
	tr.git("status", "--porcelain")
	ext, ok := untrackedOf(t, tr)
	if !ok {
		t.Fatal("no untracked cache")
	}
	for n := 0; n < len(ext); n++ {
		if uc, err := parseUntracked(ext[:n]); err == nil {
			appendUntracked(nil, uc)
		}
	}
	for i := range ext {
		for _, v := range []byte{0, 1, 0x80, 0xff} {
			bad := bytes.Clone(ext)
			if bad[i] == v {
				continue
			}
			bad[i] = v
			if uc, err := parseUntracked(bad); err == nil {
				appendUntracked(nil, uc) // must not panic
			}
		}
	}
}

// TestUntrackedCacheWithoutTree: git status --untracked-files=all with
// the cache on writes a cache with no directory yet (its flags are for
// the normal mode); it round-trips, and a rollback carries it as it is.
func TestUntrackedCacheWithoutTree(t *testing.T) {
	tr := newDiskRepo(t)
	tr.git("config", "core.untrackedCache", "true")
	tr.write("a/f.txt", "one\n")
	tr.add(".")
	tr.commit("initial")
	tr.write("a/u.txt", "u\n")
	tr.start("minimal")
	tr.now = tr.now.Add(time.Minute)
	tr.next()
	tr.write("a/f.txt", "two\n")
	tr.git("status", "--porcelain", "-uall")
	ext, ok := untrackedOf(t, tr)
	if !ok {
		t.Fatal("git status -uall wrote no untracked cache")
	}
	uc, err := parseUntracked(ext)
	if err != nil || uc.root != nil {
		t.Fatalf("parsed %+v, %v; want a cache without directories", uc, err)
	}
	if got := appendUntracked(nil, uc); !bytes.Equal(got, ext) {
		t.Fatalf("written again, the cache differs:\ngit  %q\nours %q", ext, got)
	}
	tr.mustRollback(Request{Node: "plan"})
	if got, ok := untrackedOf(t, tr); !ok || !bytes.Equal(got, ext) {
		t.Fatalf("after the rollback: %q (%v), want %q", got, ok, ext)
	}
	if got := tr.git("status", "--porcelain"); got != "?? a/u.txt\n" {
		t.Fatalf("git status after the rollback:\n%s", got)
	}
}

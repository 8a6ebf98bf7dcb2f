//go:build linux

package rollback

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gitobjects "github.com/git-hegel/git-hegel/gitstore/objects"
)

// dirCacheRepo is a repository with tracked, untracked and ignored files
// in a few directories, and a short racy window so that the directories
// the setup wrote are trusted by the second scan.
func dirCacheRepo(t *testing.T) *testRepo {
	t.Helper()
	old := dirCacheRacy
	dirCacheRacy = 20 * time.Millisecond
	t.Cleanup(func() { dirCacheRacy = old })
	tr := newDiskRepo(t)
	tr.write(".gitignore", "*.log\nbuild/\n")
	tr.write("a/one", "one\n")
	tr.write("a/two", "two\n")
	tr.write("a/b/three", "three\n")
	tr.write("c/four", "four\n")
	tr.add(".")
	tr.commit("base")
	tr.write("a/untracked", "u\n")
	tr.write("a/b/note.log", "ignored\n")
	tr.write("build/out", "ignored dir\n")
	tr.write("d/new", "untracked dir\n")
	return tr
}

// dirSnap takes a stored snapshot of the working tree, with or without
// the directory cache.
func dirSnap(tr *testRepo, cached bool) *snapshot {
	tr.t.Helper()
	idx, err := tr.m.w.readIndex()
	if err != nil {
		tr.t.Fatal(err)
	}
	sn := tr.m.snapshotter()
	sn.dirCache = cached
	snap, err := sn.take(idx, true)
	if err != nil {
		tr.t.Fatal(err)
	}
	return snap
}

// settle waits out the racy window, so that what was just written is
// trusted once recorded.
func settle() { time.Sleep(60 * time.Millisecond) }

// checkDirCache takes a snapshot with the cache and one without and
// requires the same work tree; it returns the cached one.
func checkDirCache(tr *testRepo, what string) *snapshot {
	tr.t.Helper()
	got := dirSnap(tr, true)
	want := dirSnap(tr, false)
	if got.worktree != want.worktree {
		tr.t.Fatalf("%s: work tree with the directory cache %s, without %s:\n%s\nwant:\n%s", what, got.worktree, want.worktree,
			tr.git("ls-tree", "-r", got.worktree.String()), tr.git("ls-tree", "-r", want.worktree.String()))
	}
	return got
}

// primeDirCache records every directory and checks that the next scan
// reads none of them.
func primeDirCache(tr *testRepo) {
	tr.t.Helper()
	settle()
	dirSnap(tr, true)
	if s := checkDirCache(tr, "unchanged"); s.dirsUnread == 0 {
		tr.t.Fatal("an unchanged working tree: every directory read again")
	}
}

func TestDirCacheChanges(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(tr *testRepo)
		want   []string // paths the new work tree must hold
		gone   []string // and must not
	}{
		{"file created in an old directory", func(tr *testRepo) { tr.write("a/b/created", "new\n") }, []string{"a/b/created"}, nil},
		{"file deleted", func(tr *testRepo) { tr.remove("a/untracked"); tr.remove("a/two") }, nil, []string{"a/untracked", "a/two"}},
		{"file renamed within a directory", func(tr *testRepo) {
			os.Rename(filepath.Join(tr.dir, "a/untracked"), filepath.Join(tr.dir, "a/renamed"))
		}, []string{"a/renamed"}, []string{"a/untracked"}},
		{"new subdirectory with files", func(tr *testRepo) {
			tr.write("c/sub/deeper/x", "x\n")
			tr.write("c/sub/y", "y\n")
		}, []string{"c/sub/deeper/x", "c/sub/y"}, nil},
		{".gitignore edited to un-ignore", func(tr *testRepo) {
			// Rewritten in place: the top directory's listing is unchanged.
			tr.write(".gitignore", "build/\n")
		}, []string{"a/b/note.log"}, nil},
		{"ignored directory un-ignored", func(tr *testRepo) { tr.write(".gitignore", "*.log\n") }, []string{"build/out"}, nil},
		{"file becomes tracked", func(tr *testRepo) { tr.add("a/untracked") }, []string{"a/untracked"}, nil},
		{"file becomes untracked", func(tr *testRepo) { tr.git("rm", "-q", "--cached", "c/four") }, []string{"c/four"}, nil},
		{"directory replaced by a file", func(tr *testRepo) {
			tr.remove("a/b")
			tr.write("a/b", "now a file\n")
		}, []string{"a/b"}, []string{"a/b/three"}},
		{"file replaced by a directory", func(tr *testRepo) {
			tr.remove("c/four")
			tr.write("c/four/inside", "now a directory\n")
		}, []string{"c/four/inside"}, nil},
		{"file created, directory mtime set back (as tar does)", func(tr *testRepo) {
			dir := filepath.Join(tr.dir, "a/b")
			fi, err := os.Stat(dir)
			if err != nil {
				tr.t.Fatal(err)
			}
			tr.write("a/b/extracted", "x\n")
			os.Chtimes(dir, fi.ModTime(), fi.ModTime())
		}, []string{"a/b/extracted"}, nil},
		{"untracked directory removed", func(tr *testRepo) { tr.remove("d") }, nil, []string{"d/new"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := dirCacheRepo(t)
			primeDirCache(tr)
			tc.change(tr)
			snap := checkDirCache(tr, "changed")
			ls := tr.git("ls-tree", "-r", "--name-only", snap.worktree.String())
			has := map[string]bool{}
			for _, p := range strings.Split(strings.TrimSpace(ls), "\n") {
				has[p] = true
			}
			for _, p := range tc.want {
				if !has[p] {
					t.Errorf("%s missing from the snapshot:\n%s", p, ls)
				}
			}
			for _, p := range tc.gone {
				if has[p] {
					t.Errorf("%s still in the snapshot", p)
				}
			}
			// And once settled, from the cache alone.
			settle()
			dirSnap(tr, true)
			if s := checkDirCache(tr, "settled"); s.dirsUnread == 0 {
				t.Error("every directory read again after the change")
			}
		})
	}
}

// rewriteDirCache changes the recorded listings, keeping the cache's
// times.
func rewriteDirCache(t *testing.T, tr *testRepo, edit func(map[string]dirListing)) {
	t.Helper()
	p := filepath.Join(tr.dir, ".git", dirCacheFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	m, _, ok := decodeDirCache(string(b), fi.ModTime())
	if !ok {
		t.Fatal("the cache written does not load")
	}
	edit(m)
	c := &dirCache{start: time.Unix(0, int64(binary.BigEndian.Uint64(b[8:]))), next: m}
	c.save(filepath.Join(tr.dir, ".git"), gitobjects.SharedPerm{}, time.Unix(0, int64(binary.BigEndian.Uint64(b[16:]))))
}

func dropName(m map[string]dirListing, dir, name string) {
	l := m[dir]
	var kept []dirent
	for _, e := range l.entries() {
		if e.name != name {
			kept = append(kept, e)
		}
	}
	l.ents, l.raw = kept, ""
	m[dir] = l
}

// A directory changed in the second before the scan that recorded it may
// have changed again, unseen, within its timestamp's tick: it is read
// again whatever the cache says. One that changed long before is trusted.
func TestDirCacheRacy(t *testing.T) {
	tr := dirCacheRepo(t)
	dirCacheRacy = time.Second
	time.Sleep(1100 * time.Millisecond)
	dirSnap(tr, true)
	// Right after the cache was written, in the same second.
	tr.write("a/racy", "r\n")
	dirSnap(tr, true)
	// The cache now holds a's listing with a/racy; make it lie as a
	// listing read just before a/racy was created would, with a's stat
	// data unchanged.
	rewriteDirCache(t, tr, func(m map[string]dirListing) { dropName(m, "a", "racy") })
	snap := checkDirCache(tr, "racy directory")
	if !strings.Contains(tr.git("ls-tree", "-r", "--name-only", snap.worktree.String()), "a/racy") {
		t.Error("a/racy missing")
	}
	// The same lie about an old directory is believed: the cache is
	// trusted where it should be.
	rewriteDirCache(t, tr, func(m map[string]dirListing) { dropName(m, "d", "new") })
	got := dirSnap(tr, true)
	if strings.Contains(tr.git("ls-tree", "-r", "--name-only", got.worktree.String()), "d/new") {
		t.Error("an old directory was read again: the cache is not used")
	}
}

// A damaged or foreign cache file is ignored: every directory is read.
func TestDirCacheDamaged(t *testing.T) {
	tr := dirCacheRepo(t)
	primeDirCache(tr)
	p := filepath.Join(tr.dir, ".git", dirCacheFile)
	good, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	flip := append([]byte(nil), good...)
	flip[40] ^= 1
	for name, b := range map[string][]byte{
		"garbage":   []byte("HGDC garbage"),
		"truncated": good[:len(good)-9],
		"flipped":   flip,
		"empty":     nil,
	} {
		os.WriteFile(p, b, 0o644)
		tr.write("a/b/after-"+name, "x\n")
		if s := checkDirCache(tr, name); s.dirsUnread != 0 {
			t.Errorf("%s: %d directories taken from a damaged cache", name, s.dirsUnread)
		}
	}
}

// rawDirCache encodes listings as a cache file, without the checks save
// applies: a hostile file.
func rawDirCache(dirs []string, names [][]string, kind byte) []byte {
	var b bytes.Buffer
	w32 := func(v uint32) { binary.Write(&b, binary.BigEndian, v) }
	b.WriteString(dirCacheMagic)
	w32(dirCacheVersion)
	binary.Write(&b, binary.BigEndian, uint64(time.Now().Add(-time.Hour).UnixNano()))
	binary.Write(&b, binary.BigEndian, uint64(time.Now().Add(-time.Hour).UnixNano()))
	w32(uint32(len(dirs)))
	for i, d := range dirs {
		binary.Write(&b, binary.BigEndian, uint16(len(d)))
		b.WriteString(d)
		for k := 0; k < 9; k++ {
			w32(1)
		}
		w32(uint32(len(names[i])))
		for _, n := range names[i] {
			b.WriteByte(kind)
			binary.Write(&b, binary.BigEndian, uint16(len(n)))
			b.WriteString(n)
		}
	}
	out := b.Bytes()
	return binary.BigEndian.AppendUint32(out, crc32.Checksum(out, crc32.MakeTable(crc32.Castagnoli)))
}

func TestDirCacheHostile(t *testing.T) {
	now := time.Now()
	if _, _, ok := decodeDirCache(string(rawDirCache([]string{"", "a/b"}, [][]string{{".git", "x"}, {"y"}}, byte(kindFile))), now); !ok {
		t.Fatal("a well-formed cache is refused")
	}
	for name, b := range map[string][]byte{
		"dotdot dir":      rawDirCache([]string{"../x"}, [][]string{{"y"}}, byte(kindFile)),
		"absolute dir":    rawDirCache([]string{"/etc"}, [][]string{{"y"}}, byte(kindFile)),
		"NUL in dir":      rawDirCache([]string{"a\x00b"}, [][]string{{"y"}}, byte(kindFile)),
		"empty component": rawDirCache([]string{"a//b"}, [][]string{{"y"}}, byte(kindFile)),
		"dotdot name":     rawDirCache([]string{"a"}, [][]string{{".."}}, byte(kindFile)),
		"slash in name":   rawDirCache([]string{"a"}, [][]string{{"x/y"}}, byte(kindFile)),
		"NUL in name":     rawDirCache([]string{"a"}, [][]string{{"x\x00"}}, byte(kindFile)),
		"empty name":      rawDirCache([]string{"a"}, [][]string{{""}}, byte(kindFile)),
		"duplicate name":  rawDirCache([]string{"a"}, [][]string{{"x", "x"}}, byte(kindFile)),
		"unsorted names":  rawDirCache([]string{"a"}, [][]string{{"y", "x"}}, byte(kindFile)),
		"duplicate dir":   rawDirCache([]string{"a", "a"}, [][]string{{"x"}, {"y"}}, byte(kindFile)),
		"unknown kind":    rawDirCache([]string{"a"}, [][]string{{"x"}}, 9),
		"kind none":       rawDirCache([]string{"a"}, [][]string{{"x"}}, byte(kindNone)),
	} {
		if _, _, ok := decodeDirCache(string(b), now); ok {
			t.Errorf("%s: accepted", name)
		}
	}
}

// Over its bound the cache is not kept: the file goes, every directory is
// read, and the snapshot is the same.
func TestDirCacheBound(t *testing.T) {
	tr := dirCacheRepo(t)
	primeDirCache(tr)
	old := dirCacheMaxNames
	dirCacheMaxNames = 5
	t.Cleanup(func() { dirCacheMaxNames = old })
	if _, err := os.Stat(filepath.Join(tr.dir, ".git", dirCacheFile)); err != nil {
		t.Fatal(err)
	}
	tr.write("a/over", "x\n")
	if s := checkDirCache(tr, "over the bound"); s.dirsUnread != 0 {
		t.Errorf("%d directories from a cache over its bound", s.dirsUnread)
	}
	if _, err := os.Stat(filepath.Join(tr.dir, ".git", dirCacheFile)); !os.IsNotExist(err) {
		t.Errorf("the cache over its bound is kept: %v", err)
	}
	if s := checkDirCache(tr, "without a cache"); s.dirsUnread != 0 {
		t.Errorf("%d directories from no cache", s.dirsUnread)
	}
}

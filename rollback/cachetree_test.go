package rollback

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// indexExtension returns the payload of the extension sig in an index
// file, and whether it is there.
func indexExtension(t testing.TB, data []byte, sig string) ([]byte, bool) {
	t.Helper()
	idx, err := decodeIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	body := data[:len(data)-sha1.Size]
	for off := idx.extOff; off+8 <= len(body); {
		size := int(binary.BigEndian.Uint32(body[off+4:]))
		if string(body[off:off+4]) == sig {
			return body[off+8 : off+8+size], true
		}
		off += 8 + size
	}
	return nil, false
}

// gitCacheTree is the TREE extension git itself writes for the entries of
// the index file at path: they are loaded into an empty temporary index
// and git write-tree computes every tree from scratch.
func gitCacheTree(t *testing.T, tr *testRepo, path string) []byte {
	t.Helper()
	list := tr.git("ls-files", "-s", "-z")
	tmp := filepath.Join(t.TempDir(), "index")
	env := append(gitEnv(tr.home()), "GIT_INDEX_FILE="+tmp)
	runGit(t, tr.dir, env, "read-tree", "--empty")
	cmd := gitCmd(tr.dir, env, "update-index", "-z", "--index-info")
	cmd.Stdin = strings.NewReader(list)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("update-index: %v\n%s", err, out)
	}
	runGit(t, tr.dir, env, "write-tree")
	data, err := os.ReadFile(tmp)
	if err != nil {
		t.Fatal(err)
	}
	ext, ok := indexExtension(t, data, "TREE")
	if !ok {
		t.Fatal("git write-tree wrote no TREE extension")
	}
	return ext
}

// checkCacheTree checks that the repository's index carries a cache-tree,
// that it is byte for byte the one git computes from the same entries,
// and that git status says the same with and without it.
func checkCacheTree(t *testing.T, tr *testRepo, what string) {
	t.Helper()
	indexFile := filepath.Join(tr.dir, ".git", "index")
	data, err := os.ReadFile(indexFile)
	if err != nil {
		t.Fatal(err)
	}
	ours, ok := indexExtension(t, data, "TREE")
	if !ok {
		t.Fatalf("%s: the index has no TREE extension", what)
	}
	if want := gitCacheTree(t, tr, indexFile); !bytes.Equal(ours, want) {
		t.Errorf("%s: cache-tree differs from git's:\nours %q\ngit  %q", what, ours, want)
	}
	// The same entries without any extension: git status must agree.
	idx, err := decodeIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	var bare bytes.Buffer
	bare.Write(data[:idx.extOff])
	sum := sha1.Sum(bare.Bytes())
	bare.Write(sum[:])
	plain := filepath.Join(t.TempDir(), "index")
	if err := os.WriteFile(plain, bare.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(gitEnv(tr.home()), "GIT_INDEX_FILE="+plain)
	want := runGit(t, tr.dir, env, "status", "--porcelain=v1", "--untracked-files=all")
	if got := tr.git("status", "--porcelain=v1", "--untracked-files=all"); got != want {
		t.Errorf("%s: git status with the cache-tree:\n%s\nwithout:\n%s", what, got, want)
	}
	// git write-tree trusts the cache-tree where its trees exist; it must
	// name the tree a fresh index makes.
	wt := tr.git("write-tree")
	fresh := filepath.Join(t.TempDir(), "index")
	fenv := append(gitEnv(tr.home()), "GIT_INDEX_FILE="+fresh)
	runGit(t, tr.dir, fenv, "read-tree", "--empty")
	cmd := gitCmd(tr.dir, fenv, "update-index", "-z", "--index-info")
	cmd.Stdin = strings.NewReader(tr.git("ls-files", "-s", "-z"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("update-index: %v\n%s", err, out)
	}
	if ft := runGit(t, tr.dir, fenv, "write-tree"); ft != wt {
		t.Errorf("%s: git write-tree gives %s, a fresh index %s", what, wt, ft)
	}
}

// TestCacheTreeMatchesGit compares the TREE extension with the one git
// write-tree writes, on names that sort differently as paths and as tree
// entries, modes, deep and empty-named levels.
func TestCacheTreeMatchesGit(t *testing.T) {
	tr := newDiskRepo(t)
	for _, p := range []string{"a-b", "a.txt", "a/b", "a/c/d", "a0", "ab/c", "b/x/y/z", "bb/1", "b.c/2", "z"} {
		tr.write(p, p+"\n")
	}
	tr.write("run.sh", "#!/bin/sh\n")
	tr.chmod("run.sh", 0o755)
	tr.symlink("a.txt", "link")
	tr.add(".")
	tr.git("update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("12", 20)+",sub/module")
	idx, err := tr.m.w.readIndex()
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.m.w.writeIndex(idx); err != nil {
		t.Fatal(err)
	}
	checkCacheTree(t, tr, "index written again")
}

// TestCacheTreeInvalidatesWhatGitCannotWrite: conflicted and
// intent-to-add entries make their directory and every one above it
// invalid, with no hash; the others keep theirs.
func TestCacheTreeInvalidatesWhatGitCannotWrite(t *testing.T) {
	h := func(b byte) (x [20]byte) { x[0] = b; return }
	es := []idxEntry{
		{Name: "a/conflict", Hash: h(1), Mode: 0o100644, Flags: 1 << 12},
		{Name: "a/conflict", Hash: h(2), Mode: 0o100644, Flags: 2 << 12},
		{Name: "a/ok", Hash: h(3), Mode: 0o100644},
		{Name: "b/ita", Hash: h(4), Mode: 0o100644, ExtFlags: extIntentToAdd},
		{Name: "c/d/file", Hash: h(5), Mode: 0o100644},
		{Name: "e/none", Mode: 0o100644},
	}
	root := buildCacheTree(es)
	if root.count != -1 || len(root.subs) != 4 {
		t.Fatalf("root: count %d, %d subtrees", root.count, len(root.subs))
	}
	want := map[string]int{"a": -1, "b": -1, "c": 1, "e": -1}
	for _, s := range root.subs {
		if s.count != want[s.name] {
			t.Errorf("%s: count %d, want %d", s.name, s.count, want[s.name])
		}
	}
	ext := appendCacheTree(nil, root)
	// An invalid node carries no hash: the root's record is its name
	// (empty), "-1 4\n" and straight on to the first subtree.
	if !bytes.HasPrefix(ext[8:], []byte("\x00-1 4\na\x00-1 0\nb\x00-1 0\nc\x001 1\n")) {
		t.Errorf("extension starts %q", ext[8:min(len(ext), 60)])
	}
}

// TestRollbackWritesValidCacheTree: after a rollback and its undo, the
// index carries the cache-tree git would compute, git status says what it
// says without it, and the repository is fsck-clean.
func TestRollbackWritesValidCacheTree(t *testing.T) {
	tr := newDiskRepo(t)
	for i := 0; i < 5; i++ {
		for j := 0; j < 4; j++ {
			tr.write(filepath.Join("d"+string(rune('a'+i)), "s"+string(rune('0'+j)), "f.txt"), "one\n")
		}
	}
	tr.write("top.txt", "top\n")
	tr.add(".")
	tr.commit("initial")
	tr.start("minimal")
	tr.write("da/s1/f.txt", "staged\n")
	tr.add("da/s1/f.txt")
	tr.write("db/new.txt", "new, staged\n")
	tr.add("db/new.txt")
	tr.write("dc/untracked.txt", "u\n")
	tr.now = tr.now.Add(time.Minute)
	tr.next()

	tr.write("da/s1/f.txt", "later\n")
	tr.add("da/s1/f.txt")
	tr.remove("dd/s2/f.txt")
	tr.git("rm", "-q", "--cached", "db/new.txt")
	tr.write("de/s3/more.txt", "more\n")
	tr.add("de/s3/more.txt")
	tr.commit("work in plan")
	tr.write("dc/s0/f.txt", "unstaged\n")
	tr.now = tr.now.Add(time.Minute)

	tr.mustRollback(Request{Node: "plan"})
	checkCacheTree(t, tr, "after rollback")
	tr.now = tr.now.Add(time.Minute)
	tr.mustRollback(Request{Undo: true})
	checkCacheTree(t, tr, "after undo")
	tr.git("fsck", "--strict", "--no-dangling")
}

// BenchmarkCacheTree: the cache-tree of a 100,000-entry index in 2,000
// directories, what each index write adds.
func BenchmarkCacheTree(b *testing.B) {
	var es []idxEntry
	for d := 0; d < 2000; d++ {
		for f := 0; f < 50; f++ {
			e := idxEntry{Name: "src/d" + strconv.Itoa(d/100) + "/e" + strconv.Itoa(d%100) + "/file" + strconv.Itoa(f) + ".go", Mode: 0o100644}
			e.Hash[0], e.Hash[1] = byte(d), byte(f)
			es = append(es, e)
		}
	}
	sortEntries(es)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		appendCacheTree(nil, buildCacheTree(es))
	}
}

package objects

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// objectsRepo makes a repository whose history has many versions of a few
// files (so that a repack stores most of them as deltas) and returns it
// with every object name git knows there.
func objectsRepo(t *testing.T) (string, []plumbing.Hash) {
	t.Helper()
	dir := gitRepo(t)
	var body strings.Builder
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&body, "line %d of a file that changes a little at a time\n", i)
		for _, f := range []string{"a.txt", "b.txt", "dir/c.txt"} {
			os.MkdirAll(filepath.Join(dir, "dir"), 0o755)
			os.WriteFile(filepath.Join(dir, f), []byte(f+"\n"+body.String()), 0o644)
		}
		git(t, dir, "add", "-A")
		git(t, dir, "commit", "-q", "-m", fmt.Sprint("version ", i))
	}
	return dir, allObjects(t, dir)
}

func allObjects(t *testing.T, dir string) []plumbing.Hash {
	t.Helper()
	var out []plumbing.Hash
	for _, line := range strings.Split(strings.TrimSpace(git(t, dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")), "\n") {
		out = append(out, plumbing.NewHash(line))
	}
	return out
}

// catFile returns what git says each object is.
func catFile(t *testing.T, dir string, hs []plumbing.Hash) map[plumbing.Hash][]byte {
	t.Helper()
	cmd := exec.Command("git", "cat-file", "--batch")
	cmd.Dir, cmd.Env = dir, gitEnv(dir)
	var in bytes.Buffer
	for _, h := range hs {
		in.WriteString(h.String() + "\n")
	}
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(bytes.NewReader(out))
	m := map[plumbing.Hash][]byte{}
	for range hs {
		head, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(head)
		n, _ := strconv.Atoi(f[2])
		data := make([]byte, n+1)
		if _, err := io.ReadFull(br, data); err != nil {
			t.Fatal(err)
		}
		m[plumbing.NewHash(f[0])] = append([]byte(f[1]+" "), data[:n]...)
	}
	return m
}

func checkAllObjects(t *testing.T, o *Objects, dir string, hs []plumbing.Hash) {
	t.Helper()
	want := catFile(t, dir, hs)
	for _, h := range hs {
		typ, data, err := o.ReadAny(h)
		if err != nil {
			t.Fatalf("%s: %v", h, err)
		}
		if got := append([]byte(typ.String()+" "), data...); !bytes.Equal(got, want[h]) {
			t.Fatalf("%s differs from git's", h)
		}
		if n, err := o.Size(h); err != nil || n != int64(len(data)) {
			t.Fatalf("%s: size %d, %v; want %d", h, n, err, len(data))
		}
	}
}

// Every object reads back as git reads it: loose, packed with deltas (at
// any depth, with offset and ref deltas), and with a version 1 index.
func TestObjectsReadLikeGit(t *testing.T) {
	dir, hs := objectsRepo(t)
	open := func() *Objects { return openRepo(t, dir) }
	t.Run("loose", func(t *testing.T) { checkAllObjects(t, open(), dir, hs) })
	git(t, dir, "repack", "-a", "-d", "-q", "--depth=50", "--window=50")
	git(t, dir, "prune-packed")
	t.Run("ofs-delta", func(t *testing.T) {
		if out := git(t, dir, "count-objects", "-v"); !strings.Contains(out, "count: 0") {
			t.Fatalf("objects left loose:\n%s", out)
		}
		checkAllObjects(t, open(), dir, hs)
	})
	git(t, dir, "-c", "repack.useDeltaBaseOffset=false", "repack", "-a", "-d", "-f", "-q")
	t.Run("ref-delta", func(t *testing.T) { checkAllObjects(t, open(), dir, hs) })
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*.pack"))
	for _, p := range packs {
		idx := strings.TrimSuffix(p, ".pack") + ".idx"
		os.Remove(idx)
		git(t, dir, "index-pack", "--index-version=1", "-o", idx, p)
	}
	t.Run("index-v1", func(t *testing.T) { checkAllObjects(t, open(), dir, hs) })
}

// What the layer writes, git reads, and fsck accepts.
func TestObjectsWriteForGit(t *testing.T) {
	dir := gitRepo(t)
	o, objDir := openRepo(t, dir), objectDir(dir)
	var objs []Object
	for i := 0; i < 50; i++ {
		data := []byte(fmt.Sprintf("blob %d\n", i))
		objs = append(objs, Object{plumbing.BlobObject, HashObject(plumbing.BlobObject, data), data})
	}
	if err := o.WriteAll(objs); err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		if got := git(t, dir, "cat-file", "blob", obj.Hash.String()); got != string(obj.Data) {
			t.Fatalf("git reads %q, want %q", got, obj.Data)
		}
		fi, err := os.Stat(loosePath(objDir, obj.Hash))
		if err != nil || fi.Mode().Perm()&0o222 != 0 {
			t.Fatalf("%s: %v %v (want read-only)", obj.Hash, fi.Mode(), err)
		}
	}
	if tmp, _ := filepath.Glob(filepath.Join(objDir, "*", "tmp_obj_*")); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
	git(t, dir, "fsck", "--strict")
}

// TestObjectsLooseStoredOrDeflated: a loose object that fits one
// filesystem block is stored without compression, a larger one deflated
// at the repository's level; git reads both, and fsck accepts them, at
// the edges of the bound too.
func TestObjectsLooseStoredOrDeflated(t *testing.T) {
	dir := gitRepo(t)
	o, objDir := openRepo(t, dir), objectDir(dir)
	hdr := func(n int) int { return len(objectHeader(plumbing.BlobObject, n)) }
	var edge int // the largest content stored
	for n := storedLooseMax; n > 0; n-- {
		if hdr(n)+n <= storedLooseMax {
			edge = n
			break
		}
	}
	for _, n := range []int{0, 10, edge, edge + 1, 100000} {
		data := []byte(strings.Repeat("compressible line\n", n/18+1)[:n])
		h, err := o.Write(plumbing.BlobObject, data)
		if err != nil {
			t.Fatal(err)
		}
		if got := git(t, dir, "cat-file", "blob", h.String()); got != string(data) {
			t.Fatalf("%d bytes: git reads %d bytes back", n, len(got))
		}
		fi, err := os.Stat(loosePath(objDir, h))
		if err != nil {
			t.Fatal(err)
		}
		stored := fi.Size() >= int64(hdr(n)+n)
		if want := n <= edge; stored != want {
			t.Errorf("%d bytes: a file of %d bytes (stored %v, want %v)", n, fi.Size(), stored, want)
		}
		if fi.Size() > 4096 && n <= edge {
			t.Errorf("%d bytes: a stored object of %d bytes passes one block", n, fi.Size())
		}
	}
	git(t, dir, "fsck", "--strict")
}

// An object that exists is freshened, not rewritten: its loose file's
// mtime, or its pack's, becomes now (git's freshen), so a prune running
// meanwhile keeps it.
func TestObjectsFreshen(t *testing.T) {
	dir := gitRepo(t)
	o, objDir := openRepo(t, dir), objectDir(dir)
	old := time.Now().Add(-48 * time.Hour)
	loose := []byte("loose and old\n")
	h, err := o.Write(plumbing.BlobObject, loose)
	if err != nil {
		t.Fatal(err)
	}
	p := loosePath(objDir, h)
	os.Chtimes(p, old, old)
	before, _ := os.Stat(p)
	if _, err := o.Write(plumbing.BlobObject, loose); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); time.Since(fi.ModTime()) > time.Minute {
		t.Errorf("loose object not freshened: mtime %v", fi.ModTime())
	}
	if after, _ := os.Stat(p); !os.SameFile(before, after) {
		t.Errorf("loose object rewritten instead of freshened")
	}

	packed := []byte("packed and old\n")
	ph, _ := o.Write(plumbing.BlobObject, packed)
	git(t, dir, "tag", "keep-blob", ph.String())
	git(t, dir, "repack", "-a", "-d", "-q")
	git(t, dir, "prune-packed")
	packs, _ := filepath.Glob(filepath.Join(objDir, "pack", "pack-*.pack"))
	for _, pk := range packs {
		os.Chtimes(pk, old, old)
	}
	o2 := openRepo(t, dir)
	if !o2.Freshen(ph) {
		t.Fatal("packed object not found")
	}
	if o2.IsLoose(ph) {
		t.Error("freshening a packed object wrote it loose")
	}
	fresh := 0
	for _, pk := range packs {
		if fi, _ := os.Stat(pk); time.Since(fi.ModTime()) < time.Minute {
			fresh++
		}
	}
	if fresh != 1 {
		t.Errorf("%d packs freshened, want 1", fresh)
	}
}

// A pack deleted by git repack after the layer mapped the old packs: the
// object is found in the new pack after the pack directory is read again.
func TestObjectsRescanAfterRepack(t *testing.T) {
	dir, _ := objectsRepo(t)
	git(t, dir, "repack", "-a", "-d", "-q")
	o := openRepo(t, dir)
	head := plumbing.NewHash(strings.TrimSpace(git(t, dir, "rev-parse", "HEAD")))
	if _, err := o.Read(plumbing.CommitObject, head); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "new.txt"), []byte("only in the new pack\n"), 0o644)
	git(t, dir, "add", "new.txt")
	git(t, dir, "commit", "-q", "-m", "new")
	git(t, dir, "repack", "-a", "-d", "-q")
	git(t, dir, "prune-packed")
	blob := plumbing.NewHash(strings.TrimSpace(git(t, dir, "rev-parse", "HEAD:new.txt")))
	if !o.Has(blob) {
		t.Fatal("Has: the object of the new pack is not found")
	}
	if b, err := o.Read(plumbing.BlobObject, blob); err != nil || string(b) != "only in the new pack\n" {
		t.Fatalf("Read: %q, %v", b, err)
	}
	// The old pack is gone from the directory but stays readable.
	if _, err := o.Read(plumbing.CommitObject, head); err != nil {
		t.Fatal(err)
	}
}

// A write whose fan-out directory a prune removed creates it again.
func TestObjectsWriteRecreatesPrunedDirectory(t *testing.T) {
	dir := gitRepo(t)
	o := openRepo(t, dir)
	data := []byte("written after a prune\n")
	h := HashObject(plumbing.BlobObject, data)
	os.RemoveAll(filepath.Join(objectDir(dir), h.String()[:2]))
	if err := o.WriteHashed(plumbing.BlobObject, h, data); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "cat-file", "-e", h.String())
}

// ParseLowerHex takes what git writes (40 lowercase hex digits) and
// refuses anything else; ParseHex takes either case.
func TestParseLowerHex(t *testing.T) {
	const s = "0123456789abcdef0123456789abcdef01234567"
	h, ok := ParseLowerHex(s)
	if !ok || h.String() != s {
		t.Fatalf("ParseLowerHex(%q) = %s, %v", s, h, ok)
	}
	for _, bad := range []string{"", s[:39], s + "0", "0123456789ABCDEF0123456789abcdef01234567",
		"g123456789abcdef0123456789abcdef01234567", "0123456789abcdef0123456789abcdef0123456/"} {
		if _, ok := ParseLowerHex(bad); ok {
			t.Errorf("ParseLowerHex(%q) accepted", bad)
		}
	}
	if h2, ok := ParseHex("0123456789ABCDEF0123456789abcdef01234567"); !ok || h2 != h {
		t.Errorf("ParseHex of upper case = %s, %v", h2, ok)
	}
}

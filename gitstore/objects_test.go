package gitstore

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
	_, dir := stashDiskRepo(t)
	var body strings.Builder
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&body, "line %d of a file that changes a little at a time\n", i)
		for _, f := range []string{"a.txt", "b.txt", "dir/c.txt"} {
			os.MkdirAll(filepath.Join(dir, "dir"), 0o755)
			os.WriteFile(filepath.Join(dir, f), []byte(f+"\n"+body.String()), 0o644)
		}
		stashGit(t, dir, "add", "-A")
		stashGit(t, dir, "commit", "-q", "-m", fmt.Sprint("version ", i))
	}
	return dir, allObjects(t, dir)
}

func allObjects(t *testing.T, dir string) []plumbing.Hash {
	t.Helper()
	var out []plumbing.Hash
	for _, line := range strings.Split(strings.TrimSpace(stashGit(t, dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")), "\n") {
		out = append(out, plumbing.NewHash(line))
	}
	return out
}

// catFile returns what git says each object is.
func catFile(t *testing.T, dir string, hs []plumbing.Hash) map[plumbing.Hash][]byte {
	t.Helper()
	cmd := exec.Command("git", "cat-file", "--batch")
	cmd.Dir, cmd.Env = dir, stashGitEnv(dir)
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
	open := func() *Objects {
		r, err := Open(dir, stashNoEnv)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.objects.Close)
		return r.objects
	}
	t.Run("loose", func(t *testing.T) { checkAllObjects(t, open(), dir, hs) })
	stashGit(t, dir, "repack", "-a", "-d", "-q", "--depth=50", "--window=50")
	stashGit(t, dir, "prune-packed")
	t.Run("ofs-delta", func(t *testing.T) {
		if out := stashGit(t, dir, "count-objects", "-v"); !strings.Contains(out, "count: 0") {
			t.Fatalf("objects left loose:\n%s", out)
		}
		checkAllObjects(t, open(), dir, hs)
	})
	stashGit(t, dir, "-c", "repack.useDeltaBaseOffset=false", "repack", "-a", "-d", "-f", "-q")
	t.Run("ref-delta", func(t *testing.T) { checkAllObjects(t, open(), dir, hs) })
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*.pack"))
	for _, p := range packs {
		idx := strings.TrimSuffix(p, ".pack") + ".idx"
		os.Remove(idx)
		stashGit(t, dir, "index-pack", "--index-version=1", "-o", idx, p)
	}
	t.Run("index-v1", func(t *testing.T) { checkAllObjects(t, open(), dir, hs) })
}

// What the layer writes, git reads, and fsck accepts.
func TestObjectsWriteForGit(t *testing.T) {
	r, dir := stashDiskRepo(t)
	var objs []Object
	for i := 0; i < 50; i++ {
		data := []byte(fmt.Sprintf("blob %d\n", i))
		objs = append(objs, Object{plumbing.BlobObject, HashObject(plumbing.BlobObject, data), data})
	}
	if err := r.objects.WriteAll(objs); err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if got := stashGit(t, dir, "cat-file", "blob", o.Hash.String()); got != string(o.Data) {
			t.Fatalf("git reads %q, want %q", got, o.Data)
		}
		fi, err := os.Stat(loosePath(r.ObjectDir, o.Hash))
		if err != nil || fi.Mode().Perm()&0o222 != 0 {
			t.Fatalf("%s: %v %v (want read-only)", o.Hash, fi.Mode(), err)
		}
	}
	if tmp, _ := filepath.Glob(filepath.Join(r.ObjectDir, "*", "tmp_obj_*")); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
	stashGit(t, dir, "fsck", "--strict")
}

// An object that exists is freshened, not rewritten: its loose file's
// mtime, or its pack's, becomes now (git's freshen), so a prune running
// meanwhile keeps it.
func TestObjectsFreshen(t *testing.T) {
	r, dir := stashDiskRepo(t)
	old := time.Now().Add(-48 * time.Hour)
	loose := []byte("loose and old\n")
	h, err := r.objects.Write(plumbing.BlobObject, loose)
	if err != nil {
		t.Fatal(err)
	}
	p := loosePath(r.ObjectDir, h)
	os.Chtimes(p, old, old)
	before, _ := os.Stat(p)
	if _, err := r.objects.Write(plumbing.BlobObject, loose); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); time.Since(fi.ModTime()) > time.Minute {
		t.Errorf("loose object not freshened: mtime %v", fi.ModTime())
	}
	if after, _ := os.Stat(p); !os.SameFile(before, after) {
		t.Errorf("loose object rewritten instead of freshened")
	}

	packed := []byte("packed and old\n")
	ph, _ := r.objects.Write(plumbing.BlobObject, packed)
	stashGit(t, dir, "tag", "keep-blob", ph.String())
	stashGit(t, dir, "repack", "-a", "-d", "-q")
	stashGit(t, dir, "prune-packed")
	packs, _ := filepath.Glob(filepath.Join(r.ObjectDir, "pack", "pack-*.pack"))
	for _, pk := range packs {
		os.Chtimes(pk, old, old)
	}
	r2, err := Open(dir, stashNoEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.objects.Close()
	if !r2.objects.Freshen(ph) {
		t.Fatal("packed object not found")
	}
	if r2.objects.IsLoose(ph) {
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
	stashGit(t, dir, "repack", "-a", "-d", "-q")
	r, err := Open(dir, stashNoEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer r.objects.Close()
	head := plumbing.NewHash(strings.TrimSpace(stashGit(t, dir, "rev-parse", "HEAD")))
	if _, err := r.objects.Read(plumbing.CommitObject, head); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "new.txt"), []byte("only in the new pack\n"), 0o644)
	stashGit(t, dir, "add", "new.txt")
	stashGit(t, dir, "commit", "-q", "-m", "new")
	stashGit(t, dir, "repack", "-a", "-d", "-q")
	stashGit(t, dir, "prune-packed")
	blob := plumbing.NewHash(strings.TrimSpace(stashGit(t, dir, "rev-parse", "HEAD:new.txt")))
	if !r.objects.Has(blob) {
		t.Fatal("Has: the object of the new pack is not found")
	}
	if b, err := r.objects.Read(plumbing.BlobObject, blob); err != nil || string(b) != "only in the new pack\n" {
		t.Fatalf("Read: %q, %v", b, err)
	}
	// The old pack is gone from the directory but stays readable.
	if _, err := r.objects.Read(plumbing.CommitObject, head); err != nil {
		t.Fatal(err)
	}
}

// A write whose fan-out directory a prune removed creates it again.
func TestObjectsWriteRecreatesPrunedDirectory(t *testing.T) {
	r, dir := stashDiskRepo(t)
	data := []byte("written after a prune\n")
	h := HashObject(plumbing.BlobObject, data)
	os.RemoveAll(filepath.Join(r.ObjectDir, h.String()[:2]))
	if err := r.objects.WriteHashed(plumbing.BlobObject, h, data); err != nil {
		t.Fatal(err)
	}
	stashGit(t, dir, "cat-file", "-e", h.String())
}

// GIT_OBJECT_DIRECTORY takes the writes; GIT_ALTERNATE_OBJECT_DIRECTORIES
// and the object directory's info/alternates are read. (As git does, the
// alternates file read is the one in GIT_OBJECT_DIRECTORY: the test had
// it in .git/objects, and passed only when the three repositories' empty
// commits were made in the same second and so were one object.)
func TestObjectsEnvironment(t *testing.T) {
	_, src := stashDiskRepo(t)
	stashGit(t, src, "commit", "-q", "--allow-empty", "-m", "only in src")
	h1 := strings.TrimSpace(stashGit(t, src, "rev-parse", "HEAD"))
	_, alt2 := stashDiskRepo(t)
	stashGit(t, alt2, "commit", "-q", "--allow-empty", "-m", "only in alt2")
	h2 := strings.TrimSpace(stashGit(t, alt2, "rev-parse", "HEAD"))
	_, dir := stashDiskRepo(t)
	objdir := t.TempDir()
	os.MkdirAll(filepath.Join(objdir, "info"), 0o755)
	os.WriteFile(filepath.Join(objdir, "info", "alternates"), []byte(filepath.Join(src, ".git", "objects")+"\n"), 0o644)
	env := map[string]string{
		"GIT_OBJECT_DIRECTORY":             objdir,
		"GIT_ALTERNATE_OBJECT_DIRECTORIES": filepath.Join(alt2, ".git", "objects"),
	}
	r, err := Open(dir, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	defer r.objects.Close()
	for _, h := range []string{h1, h2} {
		if _, err := r.objects.Read(plumbing.CommitObject, plumbing.NewHash(h)); err != nil {
			t.Errorf("alternate object %s: %v", h, err)
		}
	}
	h, err := r.objects.Write(plumbing.BlobObject, []byte("goes to GIT_OBJECT_DIRECTORY\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(loosePath(objdir, h)); err != nil {
		t.Errorf("not written to GIT_OBJECT_DIRECTORY: %v", err)
	}
	if _, err := os.Stat(loosePath(filepath.Join(dir, ".git", "objects"), h)); err == nil {
		t.Errorf("written to the repository's own objects")
	}
}

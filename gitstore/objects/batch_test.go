package objects

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// A batch of many objects is one pack git reads, verifies and fscks; a
// small one is loose objects; either way every object reads back.
func TestBatchWritesAPackGitAccepts(t *testing.T) {
	for _, n := range []int{3, batchPackMin - 1, 250} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			dir := gitRepo(t)
			o := openRepo(t, dir)
			b := o.NewBatch()
			blobs := make([]plumbing.Hash, n)
			var wg sync.WaitGroup
			for w := 0; w < 4; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := w; i < n; i += 4 {
						data := []byte(fmt.Sprintf("file %d\n%s", i, strings.Repeat("x", i*37)))
						h := HashObject(plumbing.BlobObject, data)
						blobs[i] = h
						if err := b.Write(plumbing.BlobObject, h, data); err != nil {
							t.Error(err)
						}
						// The same object twice is stored once.
						if err := b.Write(plumbing.BlobObject, h, data); err != nil {
							t.Error(err)
						}
					}
				}()
			}
			wg.Wait()
			trees := map[plumbing.Hash][]byte{}
			paths := make([]string, n)
			for i := range paths {
				paths[i] = fmt.Sprintf("d%02d/f%04d", i%7, i)
			}
			order := make([]int, n)
			for i := range order {
				order[i] = i
			}
			sort.Slice(order, func(a, b int) bool { return paths[order[a]] < paths[order[b]] })
			root, err := BuildTree(n, func(k int) string { return paths[order[k]] },
				func(k int) (filemode.FileMode, plumbing.Hash) { return filemode.Regular, blobs[order[k]] }, trees)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.WriteTrees(root, func(h plumbing.Hash) ([]byte, bool) { d, ok := trees[h]; return d, ok }); err != nil {
				t.Fatal(err)
			}
			if err := b.Finish(); err != nil {
				t.Fatal(err)
			}
			packs, _ := filepath.Glob(filepath.Join(objectDir(dir), "pack", "pack-*.pack"))
			tmps, _ := filepath.Glob(filepath.Join(objectDir(dir), "pack", "tmp_*"))
			wantPacks := 0
			if n+len(trees) >= batchPackMin {
				wantPacks = 1
			}
			if len(packs) != wantPacks || len(tmps) != 0 {
				t.Fatalf("%d objects: packs %v, temporary files %v", n+len(trees), packs, tmps)
			}
			for _, p := range packs {
				git(t, dir, "verify-pack", strings.TrimSuffix(p, ".pack")+".idx")
				if fi, err := os.Stat(p); err != nil || fi.Mode().Perm()&0o222 != 0 {
					t.Errorf("pack not read-only: %v %v", fi.Mode(), err)
				}
			}
			commit := strings.TrimSpace(git(t, dir, "commit-tree", root.String(), "-m", "batch"))
			git(t, dir, "update-ref", "refs/heads/batch", commit)
			git(t, dir, "fsck", "--strict", "--no-dangling")
			if got := git(t, dir, "ls-tree", "-r", "batch"); strings.Count(got, "\n") != n {
				t.Errorf("git ls-tree lists %d files, want %d", strings.Count(got, "\n"), n)
			}
			fresh := openRepo(t, dir)
			for i, h := range blobs {
				data, err := fresh.Read(plumbing.BlobObject, h)
				if err != nil || !strings.HasPrefix(string(data), fmt.Sprintf("file %d\n", i)) {
					t.Fatalf("blob %d: %q %v", i, data, err)
				}
			}
		})
	}
}

// An object the repository has is freshened, not written again.
func TestBatchSkipsWhatTheRepositoryHas(t *testing.T) {
	dir := gitRepo(t)
	o := openRepo(t, dir)
	h, err := o.Write(plumbing.BlobObject, []byte("kept\n"))
	if err != nil {
		t.Fatal(err)
	}
	b := o.NewBatch()
	for i := 0; i < batchPackMin; i++ {
		data := []byte(fmt.Sprint(i))
		if err := b.Write(plumbing.BlobObject, HashObject(plumbing.BlobObject, data), data); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Write(plumbing.BlobObject, h, []byte("kept\n")); err != nil {
		t.Fatal(err)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	idx, _ := filepath.Glob(filepath.Join(objectDir(dir), "pack", "pack-*.idx"))
	if len(idx) != 1 {
		t.Fatalf("packs: %v", idx)
	}
	if got := git(t, dir, "verify-pack", "-v", idx[0]); strings.Contains(got, h.String()) {
		t.Errorf("the pack holds %s, which was loose already", h)
	}
}

// Trees go into a batch's pack stored, not deflated (a rollback inflates
// every tree of its checkpoint it diffs): the stream must still be one
// zlib and git accept, whatever the size, including several blocks.
func TestStoredZlibRoundTrips(t *testing.T) {
	for _, n := range []int{0, 1, 3540, 0xffff, 0xffff + 1, 3*0xffff + 17} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(i*7 + i>>8)
		}
		var buf bytes.Buffer
		writeStoredZlib(&buf, data)
		zr, err := zlib.NewReader(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		got, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: read back %d bytes, %v", n, len(got), err)
		}
		if err := zr.Close(); err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
	}
}

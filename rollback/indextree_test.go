package rollback

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestIndexTreeCache: a stored snapshot records its index tree under the
// index file's checksum, and the next snapshot of the same index takes it
// from there; a record for another index, one naming a tree the
// repository lacks, or a damaged file, is not used.
func TestIndexTreeCache(t *testing.T) {
	tr := newDiskRepo(t)
	tr.write("a/b", "b\n")
	tr.write("c", "c\n")
	tr.add(".")
	tr.commit("c1")
	file := filepath.Join(tr.r.GitDir, indexTreeFile)
	take := func() plumbing.Hash { return tr.snapshot().indexTree }
	gitTree := func() plumbing.Hash { return plumbing.NewHash(strings.TrimSpace(tr.git("write-tree"))) }

	if got, want := take(), gitTree(); got != want {
		t.Fatalf("index tree %s, git write-tree %s", got, want)
	}
	rec, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("no index tree cache written: %v", err)
	}
	idx, _ := tr.m.w.readIndex()
	if want := indexTreeHeader + idx.sum.String() + " " + gitTree().String() + "\n"; string(rec) != want {
		t.Fatalf("cache %q, want %q", rec, want)
	}

	// The record is what the next snapshot uses: one naming another tree
	// the repository has (here the tree of a/) is taken as it is.
	other := plumbing.NewHash(strings.TrimSpace(tr.git("rev-parse", "HEAD:a")))
	saveIndexTree(tr.r.GitDir, tr.r.Shared(), idx.sum, other)
	if got := take(); got != other {
		t.Fatalf("index tree %s, want the cached %s", got, other)
	}

	// A tree the repository does not have is not used.
	saveIndexTree(tr.r.GitDir, tr.r.Shared(), idx.sum, plumbing.NewHash("1234567890123456789012345678901234567890"))
	if got, want := take(), gitTree(); got != want {
		t.Fatalf("with a missing tree cached: %s, want %s", got, want)
	}
	// Nor a damaged record.
	os.WriteFile(file, []byte(indexTreeHeader+idx.sum.String()+" "+other.String()), 0o644) // no newline
	if got, want := take(), gitTree(); got != want {
		t.Fatalf("with a damaged record: %s, want %s", got, want)
	}
	// Nor one for another index.
	saveIndexTree(tr.r.GitDir, tr.r.Shared(), idx.sum, other)
	tr.write("d", "d\n")
	tr.add("d")
	if got, want := take(), gitTree(); got != want {
		t.Fatalf("after git add: %s, want %s", got, want)
	}
	tr.git("fsck", "--strict", "--no-dangling")
}

package rollback

import (
	"bytes"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"

	gitobjects "github.com/git-hegel/git-hegel/gitstore/objects"
)

// The index tree cache remembers the tree of the index's stage-0 entries
// that the last stored snapshot built, under the index file's own
// checksum (the SHA-1 of its content that closes it): the index tree is a
// function of the entries alone, so while the index file is the same, so
// is its tree. An agent's snapshot before and after every tool call mostly
// sees the same index, and building its tree (100,000 entries, 1,000
// directories) was half of the snapshot's tree building.
//
// The tree is used only while the repository has it: the snapshots that
// stored it may have been dropped and the tree pruned since. The object
// graph is closed (a tree is written after all its subtrees), so the root
// stored means every subtree is.
//
// It lives in the worktree's git directory as hegel-indextree, one line:
// "hegel index tree 1 <index checksum> <tree>". It is only a cache: a
// missing, damaged or foreign file is ignored and rewritten.

const (
	indexTreeFile   = "hegel-indextree"
	indexTreeHeader = "hegel index tree 1 "
)

// loadIndexTree returns the tree recorded for an index with checksum sum.
func loadIndexTree(gitDir string, sum plumbing.Hash) (plumbing.Hash, bool) {
	if gitDir == "" || sum.IsZero() {
		return plumbing.ZeroHash, false
	}
	b, err := os.ReadFile(filepath.Join(gitDir, indexTreeFile))
	if err != nil || len(b) > 256 {
		return plumbing.ZeroHash, false
	}
	rest, ok := bytes.CutPrefix(b, []byte(indexTreeHeader))
	if !ok {
		return plumbing.ZeroHash, false
	}
	f := bytes.Fields(rest)
	if len(f) != 2 || len(f[0]) != 40 || len(f[1]) != 40 || !bytes.HasSuffix(rest, []byte("\n")) {
		return plumbing.ZeroHash, false
	}
	if !plumbing.IsHash(string(f[0])) || !plumbing.IsHash(string(f[1])) {
		return plumbing.ZeroHash, false
	}
	s, t := plumbing.NewHash(string(f[0])), plumbing.NewHash(string(f[1]))
	if s != sum || t.IsZero() {
		return plumbing.ZeroHash, false
	}
	return t, true
}

// saveIndexTree records tree as the index tree of an index with checksum
// sum (best effort: it is only a cache).
func saveIndexTree(gitDir string, perm gitobjects.SharedPerm, sum, tree plumbing.Hash) {
	if gitDir == "" || sum.IsZero() {
		return
	}
	line := indexTreeHeader + sum.String() + " " + tree.String() + "\n"
	_ = perm.WriteFile(filepath.Join(gitDir, indexTreeFile), []byte(line), false)
}

package gitstore

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// Head describes HEAD: the branch it is on ("" when detached) and the commit
// it resolves to (zero on an unborn branch).
type Head struct {
	Branch string
	Commit plumbing.Hash
}

// Head reads HEAD without touching the index or the working tree.
func (r *Repo) Head() (Head, error) {
	if r.GitDir != "" {
		return r.headOnDisk()
	}
	ref, err := r.storage.Reference(plumbing.HEAD)
	if err != nil {
		return Head{}, fmt.Errorf("cannot read HEAD: %s", oneLine(err.Error()))
	}
	var h Head
	if ref.Type() == plumbing.SymbolicReference {
		target := ref.Target()
		if target.IsBranch() {
			h.Branch = target.Short()
		} else {
			h.Branch = target.String()
		}
		if t, err := r.storage.Reference(target); err == nil {
			h.Commit = t.Hash()
		}
		return h, nil
	}
	h.Commit = ref.Hash()
	return h, nil
}

// headOnDisk is Head read as git reads it: the worktree's HEAD file, then
// the branch it names through the ref reader (go-git's storage stats every
// path component of both, twice).
func (r *Repo) headOnDisk() (Head, error) {
	b, err := os.ReadFile(filepath.Join(r.GitDir, "HEAD"))
	if err != nil {
		return Head{}, fmt.Errorf("cannot read HEAD: %s", oneLine(err.Error()))
	}
	hs, ok := refs.ParseHead(b)
	if !ok {
		return Head{}, fmt.Errorf("cannot read HEAD: malformed: %q", truncate(b, 80))
	}
	if hs.Branch == "" {
		return Head{Commit: hs.Commit}, nil
	}
	name := hs.Branch
	h := Head{Branch: name.String()}
	if name.IsBranch() {
		h.Branch = name.Short()
	}
	if c, err := r.refs.Read(name); err == nil {
		h.Commit = c
	}
	return h, nil
}

// SetHead points HEAD (in this worktree's git dir) at a branch or detaches
// it, with git's lock protocol and compare-and-swap against old
// (refs.Files.SetHead). It moves no branch; see UpdateRef for that.
func (r *Repo) SetHead(old, new refs.HeadState) error {
	if err := new.Check(); err != nil {
		return err
	}
	if r.GitDir != "" {
		return r.gitDirRefs().SetHead(old, new)
	}
	cur, err := r.storage.Reference(plumbing.HEAD)
	if err != nil {
		return fmt.Errorf("cannot read HEAD: %w", err)
	}
	now := refs.HeadState{Commit: cur.Hash()}
	if cur.Type() == plumbing.SymbolicReference {
		now = refs.HeadState{Branch: cur.Target()}
	}
	if now != old {
		return fmt.Errorf("update HEAD: %w: expected %s, but it is %s", ErrConflict, old, now)
	}
	if new.Branch != "" {
		return r.storage.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, new.Branch))
	}
	return r.storage.SetReference(plumbing.NewHashReference(plumbing.HEAD, new.Commit))
}

// gitDirRefs updates what lives in this worktree's git dir (its HEAD)
// with the repository's lock owner, permissions and fsync settings, and
// no reflog.
func (r *Repo) gitDirRefs() *refs.Files {
	return refs.NewFiles(osfsAt(r.GitDir), refs.Options{Perm: r.shared, Warn: r.warnf,
		Durability: r.dur, Flush: r.objects.Flush, Owner: r.owner})
}

// GitInfo is Head in the shape the session caches.
func (r *Repo) GitInfo() *engine.GitInfo {
	h, err := r.Head()
	if err != nil {
		return nil
	}
	gi := &engine.GitInfo{Branch: h.Branch}
	if !h.Commit.IsZero() {
		gi.Head = h.Commit.String()
	}
	return gi
}

// CountUncommitted counts the paths git status would list (tracked changes
// and untracked files that are not ignored). It asks git itself: go-git's
// status rehashes files and is many times slower on large trees.
func (r *Repo) CountUncommitted() (int, error) {
	if r.WorkTree == "" {
		// An in-memory repository (or a bare one) has no files git
		// could look at.
		return 0, ErrNoWorkTree
	}
	cmd := exec.Command("git", "--git-dir", r.GitDir, "--work-tree", r.WorkTree,
		"status", "--porcelain=v1", "-z", "--untracked-files=all")
	cmd.Dir = r.WorkTree
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("git status failed: %s", oneLine(err.Error()))
	}
	n := 0
	recs := bytes.Split(out, []byte{0})
	for i := 0; i < len(recs); i++ {
		rec := recs[i]
		if len(rec) < 4 {
			continue
		}
		n++
		if rec[0] == 'R' || rec[0] == 'C' || rec[1] == 'R' || rec[1] == 'C' {
			i++ // the rename's source path follows as its own record
		}
	}
	return n, nil
}

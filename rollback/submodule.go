package rollback

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Submodules. The index records a submodule as a gitlink (mode 160000)
// and the commit the superproject expects; the submodule's own checkout
// may be at another commit and have local changes, which git status
// reports. A checkpoint records, in its worktree tree, the commit the
// submodule had checked out (its HEAD), like git diff shows it, and in its
// index tree the gitlink as the index had it. A rollback lists each
// submodule whose checked-out commit differs from the checkpoint's, or
// that has local changes; it restores the index's gitlink always, and the
// submodule's checkout only with --recurse-submodules (as git reset does),
// after checking that the submodule has the commit and no local changes.
// Otherwise it leaves the submodule's files alone and says so. The
// submodule's own files are never in a checkpoint.

// SubmoduleChange is a submodule a rollback reports.
type SubmoduleChange struct {
	Path string
	// From is the commit checked out now, To the one the checkpoint
	// recorded (zero: not checked out, or not in the checkpoint).
	From, To plumbing.Hash
	// LocalChanges: the submodule's own files differ from its HEAD.
	LocalChanges bool
}

// submoduleHead returns the commit checked out in the submodule at p
// (zero when it is not checked out or cannot be read).
func (w *workspace) submoduleHead(p string) plumbing.Hash {
	if w.memory {
		return plumbing.ZeroHash
	}
	gitDir := submoduleGitDir(filepath.Join(w.r.WorkTree, filepath.FromSlash(p)))
	if gitDir == "" {
		return plumbing.ZeroHash
	}
	b, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return plumbing.ZeroHash
	}
	s := strings.TrimSpace(string(b))
	ref, symbolic := strings.CutPrefix(s, "ref:")
	if !symbolic {
		return hashOf(s)
	}
	ref = strings.TrimSpace(ref)
	common := gitDir
	if c, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		common = strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
	}
	if b, err := os.ReadFile(filepath.Join(common, filepath.FromSlash(ref))); err == nil {
		return hashOf(strings.TrimSpace(string(b)))
	}
	packed, _ := os.ReadFile(filepath.Join(common, "packed-refs"))
	for _, line := range strings.Split(string(packed), "\n") {
		if h, name, ok := strings.Cut(line, " "); ok && name == ref {
			return hashOf(h)
		}
	}
	return plumbing.ZeroHash
}

// submoduleGitDir returns the git directory of the checkout at dir: its
// .git directory, or where its .git file points.
func submoduleGitDir(dir string) string {
	dotgit := filepath.Join(dir, ".git")
	fi, err := os.Lstat(dotgit)
	switch {
	case err != nil:
		return ""
	case fi.IsDir():
		return dotgit
	case !fi.Mode().IsRegular():
		return ""
	}
	b, err := os.ReadFile(dotgit)
	if err != nil {
		return ""
	}
	gd, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return ""
	}
	gd = strings.TrimSpace(gd)
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(dir, gd)
	}
	return gd
}

// submoduleHeads reads the checked-out commit of every submodule of idx
// that differs from its gitlink: what the worktree tree records.
func (w *workspace) submoduleHeads(idx *gitIndex) map[int]plumbing.Hash {
	var out map[int]plumbing.Hash
	for i := range idx.Entries {
		e := &idx.Entries[i]
		if e.stage() != 0 || e.mode() != filemode.Submodule {
			continue
		}
		if h := w.submoduleHead(e.Name); !h.IsZero() && h != e.Hash {
			if out == nil {
				out = map[int]plumbing.Hash{}
			}
			out[i] = h
		}
	}
	return out
}

// splitSubmodules takes out of wt the changes of submodules' checked-out
// commits (a gitlink on both sides, or one in the current working tree
// that the checkpoint does not have), and lists them with the submodules
// that have local changes.
func (w *workspace) splitSubmodules(wt []change, idx *gitIndex) ([]change, []SubmoduleChange) {
	var subs []SubmoduleChange
	listed := map[string]bool{}
	out := wt[:0:0]
	for _, c := range wt {
		if c.from.mode == filemode.Submodule && (c.to.mode == filemode.Submodule || c.to.mode == 0) {
			subs = append(subs, SubmoduleChange{Path: c.path, From: c.from.hash, To: c.to.hash})
			listed[c.path] = true
			continue
		}
		out = append(out, c)
	}
	if w.memory {
		return out, subs
	}
	for i := range subs {
		subs[i].LocalChanges = w.submoduleDirty(subs[i].Path)
	}
	for i := range idx.Entries {
		e := &idx.Entries[i]
		if e.stage() != 0 || e.mode() != filemode.Submodule || listed[e.Name] {
			continue
		}
		if w.submoduleDirty(e.Name) {
			h := w.submoduleHead(e.Name)
			subs = append(subs, SubmoduleChange{Path: e.Name, From: h, To: h, LocalChanges: true})
		}
	}
	return out, subs
}

// submoduleDirty reports whether the submodule checked out at p has files
// that differ from its HEAD (git status in it, untracked files included).
func (w *workspace) submoduleDirty(p string) bool {
	dir := filepath.Join(w.r.WorkTree, filepath.FromSlash(p))
	if submoduleGitDir(dir) == "" {
		return false
	}
	out, err := subGit(dir, "status", "--porcelain", "--ignore-submodules=none")
	return err == nil && len(bytes.TrimSpace(out)) > 0
}

// subGit runs git in the submodule checked out at dir.
func subGit(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	env := os.Environ()
	clean := env[:0]
	for _, kv := range env {
		// the superproject's GIT_DIR or GIT_WORK_TREE must not leak in
		if !strings.HasPrefix(kv, "GIT_DIR=") && !strings.HasPrefix(kv, "GIT_WORK_TREE=") && !strings.HasPrefix(kv, "GIT_INDEX_FILE=") {
			clean = append(clean, kv)
		}
	}
	cmd.Env = clean
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		return nil, fmt.Errorf("git %s in %s: %s", args[0], dir, msg)
	}
	return out, nil
}

// ErrSubmodule reports a submodule --recurse-submodules cannot restore.
var ErrSubmodule = errors.New("submodule cannot be restored")

// submoduleCheckouts returns the checkouts --recurse-submodules makes, and
// refuses, before anything changes, a submodule with local changes or
// without the commit.
func (w *workspace) submoduleCheckouts(subs []SubmoduleChange) ([]SubmoduleChange, error) {
	var out []SubmoduleChange
	for _, s := range subs {
		if s.To.IsZero() || s.From == s.To {
			continue
		}
		dir := filepath.Join(w.r.WorkTree, filepath.FromSlash(s.Path))
		if submoduleGitDir(dir) == "" {
			continue // not checked out: nothing to check out in
		}
		if s.LocalChanges {
			return nil, userErr(ErrSubmodule, "Submodule %s has local changes; commit or stash them there first (nothing was changed)", quotePath(s.Path))
		}
		if _, err := subGit(dir, "cat-file", "-e", s.To.String()+"^{commit}"); err != nil {
			return nil, userErr(ErrSubmodule, "Submodule %s does not have commit %s; fetch it there first ('git -C %s fetch'); nothing was changed",
				quotePath(s.Path), s.To.String()[:7], quotePath(s.Path))
		}
		out = append(out, s)
	}
	return out, nil
}

// checkoutSubmodules checks out each submodule's recorded commit, detached
// (as git submodule update and git reset --recurse-submodules do). A
// submodule already there is left alone, so running it again is harmless.
func (w *workspace) checkoutSubmodules(subs []SubmoduleChange) error {
	for _, s := range subs {
		if w.submoduleHead(s.Path) == s.To {
			continue
		}
		dir := filepath.Join(w.r.WorkTree, filepath.FromSlash(s.Path))
		if _, err := subGit(dir, "checkout", "-q", "--detach", s.To.String()); err != nil {
			return err
		}
	}
	return nil
}

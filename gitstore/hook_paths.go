package gitstore

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore/gitdir"
)

// WorktreePath names the file an agent's tool call names as locks and
// events name files: relative to the top of the worktree,
// slash-separated. The agent may name it by another way to the same
// file (a path through a symbolic link to the worktree, as a temporary
// directory often is; a link inside it; "./" or ".." steps), and a lock
// compared by its text alone would let such an edit through: so the
// path is read the way the file system reads it. A relative path is
// relative to the top of the worktree. A path that stays outside the
// worktree either way is returned cleaned, slash-separated.
func (t *HookTarget) WorktreePath(p string) string {
	top := t.Layout.WorkTree
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(top, abs)
	}
	if t.realTop == "" {
		t.realTop = resolveExisting(top)
	}
	abs = filepath.Clean(abs)
	real := resolveExisting(abs)
	if rel, ok := inside(real, t.realTop); ok && rel != "." {
		return rel
	}
	if rel, ok := inside(abs, top); ok && rel != "." {
		// A link below top that leads out of the worktree: named by its
		// own path, and where it leads kept for LinkedOut.
		if t.linkedOut == nil {
			t.linkedOut = map[string]string{}
		}
		t.linkedOut[rel] = real
		return rel
	}
	if t.foldCase() {
		if rel, ok := worktreeRelFolded(abs, real, top, t.realTop); ok && rel != "." {
			return rel
		}
	}
	if filepath.IsAbs(p) {
		return filepath.ToSlash(abs)
	}
	return filepath.ToSlash(filepath.Clean(p))
}

// foldCase reports core.ignorecase (read once, only when a path is
// outside the worktree as written): git sets it where the file system
// takes names that differ only in case for one file. A configuration
// that cannot be read counts as true: a path then names the worktree's
// file in more spellings, never in fewer.
func (t *HookTarget) foldCase() bool {
	if t.ignoreCase == "" {
		t.ignoreCase = "true"
		if t.getenv != nil {
			if cfg, err := LayoutConfig(t.Layout, t.getenv); err == nil {
				v, ok := cfg.Get("core", "", "ignorecase")
				if b, valid := gitdir.ParseBool(v); !ok || valid && !b {
					t.ignoreCase = "false"
				}
			}
		}
	}
	return t.ignoreCase == "true"
}

// insideFolded is inside comparing the names of top's directories
// without regard to case, as the lock check folds them.
func insideFolded(p, top string) (string, bool) {
	sep := string(os.PathSeparator)
	ps := strings.Split(filepath.Clean(p), sep)
	ts := strings.Split(filepath.Clean(top), sep)
	if len(ps) < len(ts) {
		return "", false
	}
	for i := range ts {
		if ps[i] != ts[i] && engine.FoldName(ps[i]) != engine.FoldName(ts[i]) {
			return "", false
		}
	}
	if len(ps) == len(ts) {
		return ".", true
	}
	return strings.Join(ps[len(ts):], "/"), true
}

// WorktreeRel names the file at abs (an absolute path) relative to the
// top of the worktree, slash-separated ("." for the top itself), reading
// it as the file system does: the links of the part of it that exists
// are resolved, and the result is compared with realTop, the top with
// its links resolved. A link inside the worktree to a file outside it is
// named by its own path, below top. ok is false for a file outside the
// worktree. Locks name files this way, and so does the agent hook.
func WorktreeRel(abs, top, realTop string) (rel string, ok bool) {
	abs = filepath.Clean(abs)
	if rel, ok := inside(resolveExisting(abs), realTop); ok {
		return rel, true
	}
	return inside(abs, top)
}

// WorktreeRelFold is what names a file WorktreeRel finds outside the
// worktree where names that differ only in case name one file
// (core.ignorecase): a path that spells the top, or a directory above
// it, in another case is inside the worktree all the same. `lock` names
// a file by it as the agent hook (WorktreePath) does.
func WorktreeRelFold(abs, top, realTop string) (rel string, ok bool) {
	abs = filepath.Clean(abs)
	return worktreeRelFolded(abs, resolveExisting(abs), top, realTop)
}

// worktreeRelFolded names abs (cleaned; real, the same with its links
// resolved) relative to the top, comparing the top's names without
// regard to case: the file as the file system reads it first, then as
// written.
func worktreeRelFolded(abs, real, top, realTop string) (string, bool) {
	if rel, ok := insideFolded(real, realTop); ok && rel != "." {
		return rel, true
	}
	return insideFolded(abs, top)
}

// ResolveExisting is p with the links of the part of it that exists
// resolved: a worktree's real top, for WorktreeRel.
func ResolveExisting(p string) string { return resolveExisting(filepath.Clean(p)) }

// resolveExisting resolves the symbolic links of the longest part of p
// that exists (a file about to be written may not exist yet, nor its
// directory) and keeps the rest as it is. A link whose target does not
// exist yet is followed all the same: a write through it creates the
// target, so the file written is the target's.
func resolveExisting(p string) string { return resolveLinks(p, 0) }

// maxLinkHops bounds the dangling links followed in a row (a loop of
// links ends there), as the system's own limit does.
const maxLinkHops = 40

func resolveLinks(p string, hops int) string {
	rest := ""
	for dir := p; ; {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		if target, err := os.Readlink(dir); err == nil && hops < maxLinkHops {
			parent := filepath.Dir(dir)
			if r, err := filepath.EvalSymlinks(parent); err == nil {
				parent = r
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(parent, target)
			}
			return resolveLinks(filepath.Join(target, rest), hops+1)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// inside makes p relative to top when it is top or below it.
func inside(p, top string) (string, bool) {
	rel, err := filepath.Rel(top, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(os.PathSeparator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// LinkedOut returns where the file WorktreePath named rel really is when
// a symbolic link below the top leads out of the worktree (an absolute
// path, resolved): a write there lands in that file, which may be
// another worktree's (OtherWorktreePath).
func (t *HookTarget) LinkedOut(rel string) (string, bool) {
	real, ok := t.linkedOut[rel]
	return real, ok
}

// OtherWorktreePath names a file outside this worktree that is inside
// another worktree of the repository relative to that worktree's top: a
// lock names a path in every worktree, and an agent that writes into
// the worktree where the holder works edits the very file locked. ok is
// false when abs (an absolute path) is in no worktree of the repository.
// The worktrees are git's own list (<common dir>/worktrees/*/gitdir, and
// the main worktree beside the common dir), never a task's say-so; the
// innermost one that holds the file names it.
func (t *HookTarget) OtherWorktreePath(abs string) (rel string, ok bool) {
	if !filepath.IsAbs(abs) {
		return "", false
	}
	best, realAbs := "", ""
	for _, top := range worktreeTops(t.Layout.CommonDir) {
		real := resolveExisting(top)
		r, in := WorktreeRel(abs, top, real)
		if !in && t.foldCase() {
			if realAbs == "" {
				realAbs = resolveExisting(filepath.Clean(abs))
			}
			r, in = worktreeRelFolded(filepath.Clean(abs), realAbs, top, real)
		}
		if in && r != "." && len(real) > len(best) {
			best, rel, ok = real, r, true
		}
	}
	return rel, ok
}

// WorktreeTop is where git's record says the worktree named name (as in
// a worktree id: "main" or "worktrees/<dir>") is now; false when git
// records no such worktree (a bare repository's "main", a pruned one).
func (r *Repo) WorktreeTop(name string) (string, bool) {
	common := r.Layout.CommonDir
	if common == "" {
		return "", false
	}
	if name == "main" {
		if filepath.Base(common) == ".git" {
			return filepath.Dir(common), true
		}
		return "", false
	}
	dir, ok := strings.CutPrefix(name, "worktrees/")
	if !ok || dir == "" || strings.ContainsAny(dir, `/\`) || dir == "." || dir == ".." {
		return "", false
	}
	return linkedTop(filepath.Join(common, "worktrees", dir))
}

// linkedTop is the top of the linked worktree whose entry in the common
// dir is dir (<common>/worktrees/<name>), as its gitdir file records it.
func linkedTop(dir string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(dir, "gitdir"))
	if err != nil {
		return "", false
	}
	p := strings.TrimSpace(string(b))
	if p == "" {
		return "", false
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p) // worktree.useRelativePaths
	}
	return filepath.Dir(filepath.Clean(p)), true
}

// worktreeTops lists the tops of the repository's worktrees as git
// records them: the directory holding a common dir named .git, and the
// directory of each linked worktree's .git file.
func worktreeTops(commonDir string) []string {
	var tops []string
	if filepath.Base(commonDir) == ".git" {
		tops = append(tops, filepath.Dir(commonDir))
	}
	dir := filepath.Join(commonDir, "worktrees")
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if top, ok := linkedTop(filepath.Join(dir, e.Name())); ok {
			tops = append(tops, top)
		}
	}
	return tops
}

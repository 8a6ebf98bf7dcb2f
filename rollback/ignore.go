package rollback

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// ignoreRules is the stack of exclude patterns in effect in one directory:
// core.excludesFile, then info/exclude, then each .gitignore from the top
// down to the directory (later patterns win, as in git). It is never
// modified once built, so directories scanned in parallel share parents'.
type ignoreRules struct {
	patterns []gitignore.Pattern
}

func parsePatterns(data []byte, domain []string) []gitignore.Pattern {
	var ps []gitignore.Pattern
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}

// with returns the rules of a subdirectory that has a .gitignore.
func (r *ignoreRules) with(ps []gitignore.Pattern) *ignoreRules {
	if len(ps) == 0 {
		return r
	}
	all := make([]gitignore.Pattern, 0, len(r.patterns)+len(ps))
	all = append(all, r.patterns...)
	all = append(all, ps...)
	return &ignoreRules{patterns: all}
}

// ignored applies the patterns to a path (its components) the way git's
// last-match-wins rule does.
func (r *ignoreRules) ignored(parts []string, isDir bool) bool {
	for i := len(r.patterns) - 1; i >= 0; i-- {
		if m := r.patterns[i].Match(parts, isDir); m != gitignore.NoMatch {
			return m == gitignore.Exclude
		}
	}
	return false
}

// globalExcludes reads core.excludesFile (default: $XDG_CONFIG_HOME/git/ignore)
// and info/exclude in the common git directory.
func globalExcludes(excludesFile, home, xdg, commonDir string) []gitignore.Pattern {
	var ps []gitignore.Pattern
	if excludesFile == "" {
		if xdg == "" && home != "" {
			xdg = filepath.Join(home, ".config")
		}
		if xdg != "" {
			excludesFile = filepath.Join(xdg, "git", "ignore")
		}
	} else if strings.HasPrefix(excludesFile, "~/") && home != "" {
		excludesFile = filepath.Join(home, excludesFile[2:])
	}
	if excludesFile != "" {
		if b, err := os.ReadFile(excludesFile); err == nil {
			ps = append(ps, parsePatterns(b, nil)...)
		}
	}
	if commonDir != "" {
		if b, err := os.ReadFile(filepath.Join(commonDir, "info", "exclude")); err == nil {
			ps = append(ps, parsePatterns(b, nil)...)
		}
	}
	return ps
}

// keepIgnored takes out of wt the removals of files that the ignore rules
// of the tree being restored (target: its .gitignore files, with
// info/exclude and core.excludesFile) ignore, and returns their paths.
// Files ignored before the rollback never reach wt (the snapshot leaves
// them out); this keeps those that the restore would otherwise delete
// because the checkpoint, taken under rules that ignored them, does not
// hold them. A rollback never deletes a file that is ignored before it or
// after it.
func (w *workspace) keepIgnored(wt []change, target plumbing.Hash) ([]change, []string, error) {
	ti := &treeIgnore{r: &treeReader{o: w.obj}, root: target, base: w.rules, rules: map[string]*ignoreRules{}, trees: map[string]plumbing.Hash{}}
	var kept []string
	out := wt[:0:0]
	for _, c := range wt {
		if c.to.mode == 0 && c.from.mode != 0 && c.from.mode != filemode.Submodule {
			ign, err := ti.ignored(c.path)
			if err != nil {
				return nil, nil, err
			}
			if ign {
				kept = append(kept, c.path)
				continue
			}
		}
		out = append(out, c)
	}
	return out, kept, nil
}

// treeIgnore answers "is this path ignored?" for a tree that is not on
// disk, reading its .gitignore files from the object store.
type treeIgnore struct {
	r     *treeReader
	root  plumbing.Hash
	base  *ignoreRules
	rules map[string]*ignoreRules  // per directory of the tree
	trees map[string]plumbing.Hash // per directory: its tree (zero: none)
}

func (t *treeIgnore) tree(dir string) (plumbing.Hash, error) {
	if dir == "" {
		return t.root, nil
	}
	if h, ok := t.trees[dir]; ok {
		return h, nil
	}
	parent, name := "", dir
	if i := strings.LastIndexByte(dir, '/'); i >= 0 {
		parent, name = dir[:i], dir[i+1:]
	}
	ph, err := t.tree(parent)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	var h plumbing.Hash
	if !ph.IsZero() {
		ents, err := t.r.entries(ph, parent)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		for _, e := range ents {
			if e.Name == name && e.Mode == filemode.Dir {
				h = e.Hash
			}
		}
	}
	t.trees[dir] = h
	return h, nil
}

// rulesIn returns the rules in force in dir: its parent's plus its own
// .gitignore.
func (t *treeIgnore) rulesIn(dir string, parts []string) (*ignoreRules, error) {
	if r, ok := t.rules[dir]; ok {
		return r, nil
	}
	rules := t.base
	if dir != "" {
		parent := strings.Join(parts[:len(parts)-1], "/")
		var err error
		if rules, err = t.rulesIn(parent, parts[:len(parts)-1]); err != nil {
			return nil, err
		}
	}
	h, err := t.tree(dir)
	if err != nil {
		return nil, err
	}
	if !h.IsZero() {
		ents, err := t.r.entries(h, dir)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if e.Name == ".gitignore" && e.Mode == filemode.Regular {
				b, err := t.r.o.read(plumbing.BlobObject, e.Hash)
				if err != nil {
					return nil, err
				}
				rules = rules.with(parsePatterns(b, parts))
			}
		}
	}
	t.rules[dir] = rules
	return rules, nil
}

// ignored applies git's rules to p: a path below an ignored directory is
// ignored, else the last pattern that matches it decides.
func (t *treeIgnore) ignored(p string) (bool, error) {
	parts := strings.Split(p, "/")
	for i := 1; i <= len(parts); i++ {
		dirParts := parts[:i-1]
		rules, err := t.rulesIn(strings.Join(dirParts, "/"), dirParts)
		if err != nil {
			return false, err
		}
		if rules.ignored(parts[:i], i < len(parts)) {
			return true, nil
		}
	}
	return false, nil
}

package rollback

import (
	"os"
	"path/filepath"
	"strings"
)

// A sparse checkout (core.sparseCheckout, patterns in
// $GIT_DIR/info/sparse-checkout) keeps only some paths in the working
// tree; the others are in the index with the skip-worktree flag. git reset
// --hard applies the patterns to the entries it adds, and so does a
// restore: an entry new to the index outside the patterns gets the flag
// and its file is not written. Entries already in the index keep their
// flag (skipWorktree leaves their files alone).

// sparseSkips returns the paths that ix adds to the index outside the
// sparse-checkout patterns (nil when the checkout is not sparse).
func (w *workspace) sparseSkips(ix []change) map[string]bool {
	if w.memory || len(ix) == 0 || !w.r.Config().Bool("core", "sparsecheckout", false) {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(w.r.GitDir, "info", "sparse-checkout"))
	if err != nil {
		return nil
	}
	// The patterns have gitignore's syntax, a match meaning "in the
	// checkout"; cone mode writes patterns of the same syntax.
	rules := &ignoreRules{patterns: parsePatterns(b, nil)}
	var out map[string]bool
	for _, c := range ix {
		if c.from.mode != 0 || c.to.mode == 0 {
			continue
		}
		if !rules.ignored(strings.Split(c.path, "/"), false) {
			if out == nil {
				out = map[string]bool{}
			}
			out[c.path] = true
		}
	}
	return out
}

// dropPaths removes from wt the files that are created at paths in skip.
func dropPaths(wt []change, skip map[string]bool) []change {
	if len(skip) == 0 {
		return wt
	}
	out := wt[:0:0]
	for _, c := range wt {
		if skip[c.path] && c.from.mode == 0 {
			continue
		}
		out = append(out, c)
	}
	return out
}

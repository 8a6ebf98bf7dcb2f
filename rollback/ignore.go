package rollback

import (
	"os"
	"path/filepath"
	"strings"

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

package rollback

import (
	"fmt"
	"regexp"
	"strings"
)

// Paths a stash never parks and never writes back: git-hegel's own
// directory (custom workflows, guides, the session) and the settings of
// the coding agents (their hooks call git-hegel), with the MCP servers'
// configuration. Parking them would make custom workflows and agent hooks
// vanish until the pop; writing them from a stash fetched from a remote
// would let someone else's ref decide which hooks run here. Instruction
// files (CLAUDE.md, AGENTS.md, …) are the project's content, parked like
// any other file.
var DefaultStashKeep = []string{".hegel", ".claude", ".cursor", ".codex", ".gemini", ".windsurf", ".mcp.json"}

// StashKeep matches the paths a stash leaves alone: DefaultStashKeep and
// the patterns of hegel.stash.keep.
type StashKeep struct {
	prefixes []string
	globs    []*regexp.Regexp
}

// NewStashKeep builds the matcher of DefaultStashKeep plus patterns, git
// pathspecs in their default form: a path, which matches itself and
// everything under it, or a pattern with *, ? or [...], matched against
// the whole path (a * matches across slashes, as in git's pathspecs) and
// against each leading directory. A pattern that is empty, absolute, goes
// up (..), uses pathspec magic (a leading ':') or has an unclosed [ is an
// error naming it.
func NewStashKeep(patterns []string) (*StashKeep, error) {
	k := &StashKeep{}
	for _, p := range patterns {
		if err := k.add(p); err != nil {
			return nil, fmt.Errorf("bad config value '%s' for 'hegel.stash.keep': %v (it takes a path or a pattern inside the repository, such as 'notes/' or '*.local.json')", p, err)
		}
	}
	return k, nil
}

// CheckStashKeep says what is wrong with one value of hegel.stash.keep
// (nil: nothing).
func CheckStashKeep(p string) error {
	_, err := NewStashKeep([]string{p})
	return err
}

func (k *StashKeep) add(p string) error {
	p = strings.TrimSpace(p)
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	p = strings.TrimRight(p, "/")
	switch {
	case p == "" || p == ".":
		return fmt.Errorf("it is empty")
	case strings.HasPrefix(p, ":"):
		return fmt.Errorf("pathspec magic is not supported")
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("it is absolute")
	case strings.Contains(p, "\\"):
		return fmt.Errorf("it has a backslash")
	}
	for _, c := range strings.Split(p, "/") {
		if c == ".." || c == "" {
			return fmt.Errorf("it is not a plain relative path")
		}
	}
	if !strings.ContainsAny(p, "*?[") {
		k.prefixes = append(k.prefixes, p)
		return nil
	}
	re, err := globRegexp(p)
	if err != nil {
		return err
	}
	k.globs = append(k.globs, re)
	return nil
}

// globRegexp turns a pathspec glob into an anchored regexp.
func globRegexp(p string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString(`\A(?:`)
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`[^/]`)
		case '[':
			j := strings.IndexByte(p[i+1:], ']')
			if j < 0 || (j == 0 && !strings.Contains(p[i+2:], "]")) {
				return nil, fmt.Errorf("it has an unclosed [")
			}
			if j == 0 { // "[]...]": the first ] is a member
				j = 1 + strings.IndexByte(p[i+2:], ']')
			}
			set := p[i+1 : i+1+j]
			neg := strings.HasPrefix(set, "!") || strings.HasPrefix(set, "^")
			if neg {
				set = set[1:]
			}
			b.WriteByte('[')
			if neg {
				b.WriteByte('^')
			}
			for _, r := range set {
				if r == '-' {
					b.WriteByte('-')
				} else {
					b.WriteString(regexp.QuoteMeta(string(r)))
				}
			}
			b.WriteByte(']')
			i += 1 + j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`)\z`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("it is not a valid pattern")
	}
	return re, nil
}

// Match reports whether a stash leaves path p (slash-separated, relative
// to the top of the working tree) alone.
func (k *StashKeep) Match(p string) bool {
	if k == nil {
		k = defaultStashKeep
	}
	if isDefaultKept(p) {
		return true
	}
	for _, pre := range k.prefixes {
		if p == pre || strings.HasPrefix(p, pre+"/") {
			return true
		}
	}
	for _, re := range k.globs {
		for q := p; ; {
			if re.MatchString(q) {
				return true
			}
			i := strings.LastIndexByte(q, '/')
			if i < 0 {
				break
			}
			q = q[:i]
		}
	}
	return false
}

var defaultStashKeep = &StashKeep{}

// isDefaultKept matches DefaultStashKeep on the path's first component as
// a case-insensitive filesystem (macOS, Windows) would resolve it:
// ignoring case, and on Windows trailing dots and spaces too, so a stash
// fetched from elsewhere cannot write .Claude/settings.json or
// ".hegel. /x" into the directory the list protects.
func isDefaultKept(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	first = strings.TrimRight(first, ". ")
	for _, d := range DefaultStashKeep {
		if strings.EqualFold(first, d) {
			return true
		}
	}
	return false
}

// splitKept separates the changes to paths k keeps from the others.
func splitKept(cs []change, k *StashKeep) (kept, rest []change) {
	for _, c := range cs {
		if k.Match(c.path) {
			kept = append(kept, c)
		} else {
			rest = append(rest, c)
		}
	}
	return kept, rest
}

// flip swaps each change's sides.
func flip(cs []change) []change {
	out := make([]change, len(cs))
	for i, c := range cs {
		out[i] = change{path: c.path, from: c.to, to: c.from}
	}
	return out
}

func appendOnce(list []string, p string) []string {
	for _, q := range list {
		if q == p {
			return list
		}
	}
	return append(list, p)
}

// keepSettings leaves out of a rollback's working tree changes the
// settings files (DefaultStashKeep's paths) that git tracks neither now
// (idx) nor in the checkpoint (no index change ix brings them in): hooks
// installed, an MCP server registered or a workflow written during a task
// are not the task's work, and a rollback that deleted them would take
// the agent's hooks away with it. Tracked settings are the project's
// files and are restored as any other. It returns the changes left and
// the paths kept.
func keepSettings(wt, ix []change, idx *gitIndex) (out []change, kept []string) {
	var tracked map[string]bool
	for _, c := range wt {
		if !defaultStashKeep.Match(c.path) {
			continue
		}
		if tracked == nil {
			tracked = map[string]bool{}
			for i := range idx.Entries {
				if n := idx.Entries[i].Name; defaultStashKeep.Match(n) {
					tracked[n] = true
				}
			}
			for _, x := range ix {
				if x.to.mode != 0 {
					tracked[x.path] = true
				}
			}
		}
		if !tracked[c.path] {
			kept = append(kept, c.path)
		}
	}
	if len(kept) == 0 {
		return wt, nil
	}
	out = wt[:0:0]
	for _, c := range wt {
		if !defaultStashKeep.Match(c.path) || tracked[c.path] {
			out = append(out, c)
		}
	}
	return out, kept
}

// keepAllSettings leaves every settings path (DefaultStashKeep's) out of
// a restore's working tree and index changes: what a checkpoint from
// another clone must never write. It returns what is left and the paths
// kept.
func keepAllSettings(wt, ix []change) (outWT, outIX []change, kept []string) {
	keptWT, outWT := splitKept(wt, defaultStashKeep)
	keptIX, outIX := splitKept(ix, defaultStashKeep)
	seen := map[string]bool{}
	for _, c := range append(keptWT, keptIX...) {
		if !seen[c.path] {
			seen[c.path] = true
			kept = append(kept, c.path)
		}
	}
	return outWT, outIX, kept
}

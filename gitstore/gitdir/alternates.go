package gitdir

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// maxAlternateDepth is how deep git follows alternates of alternates.
const maxAlternateDepth = 5

// Alternates lists the object directories objectDir borrows from: those
// in its info/alternates (relative to objectDir, recursively), then those
// in GIT_ALTERNATE_OBJECT_DIRECTORIES (env, colon-separated, relative to
// the current directory dir). Entries may be double-quoted as git quotes
// them; missing directories are skipped, as git skips them.
func Alternates(objectDir, dir, env string) []string {
	seen := map[string]bool{filepath.Clean(objectDir): true}
	var out []string
	var add func(entry, base string, depth int)
	addFile := func(od string, depth int) {
		b, err := os.ReadFile(filepath.Join(od, "info", "alternates"))
		if err != nil {
			return
		}
		for _, line := range strings.Split(string(b), "\n") {
			if line = strings.TrimRight(line, "\r"); line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			add(line, od, depth)
		}
	}
	add = func(entry, base string, depth int) {
		if strings.HasPrefix(entry, `"`) {
			if u, err := strconv.Unquote(entry); err == nil {
				entry = u
			}
		}
		p := absFrom(base, entry)
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		if seen[p] {
			return
		}
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			return
		}
		seen[p] = true
		out = append(out, p)
		if depth < maxAlternateDepth {
			addFile(p, depth+1)
		}
	}
	addFile(objectDir, 0)
	for _, e := range splitAltEnv(env) {
		add(e, dir, 0)
	}
	return out
}

// splitAltEnv splits GIT_ALTERNATE_OBJECT_DIRECTORIES on the path list
// separator, keeping separators inside double-quoted entries.
func splitAltEnv(v string) []string {
	var out []string
	for v != "" {
		if strings.HasPrefix(v, `"`) {
			end := 1
			for end < len(v) && v[end] != '"' {
				if v[end] == '\\' {
					end++
				}
				end++
			}
			if end < len(v) {
				out = append(out, v[:end+1])
				v = strings.TrimPrefix(v[end+1:], string(filepath.ListSeparator))
				continue
			}
		}
		e, rest, _ := strings.Cut(v, string(filepath.ListSeparator))
		if e != "" {
			out = append(out, e)
		}
		v = rest
	}
	return out
}

package gitdir

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	format "github.com/go-git/go-git/v5/plumbing/format/config"
)

// UserConfig is the configuration that applies outside any repository:
// the system and global files and the environment (see addEnvironment).
func UserConfig(getenv func(string) string) (*Config, error) {
	return Load(getenv, nil, nil)
}

// addEnvironment adds, as the last layer, the configuration git hands to
// the commands it runs: `git -c key=value hegel ...` arrives in
// GIT_CONFIG_PARAMETERS, and GIT_CONFIG_COUNT with GIT_CONFIG_KEY_<n> and
// GIT_CONFIG_VALUE_<n> set configuration from the environment. Both win
// over every file, as in git. Malformed values are refused as git refuses
// them.
func (c *Config) addEnvironment(getenv func(string) string) error {
	l := format.New()
	add := func(key string, value string) error {
		section, sub, name, ok := splitConfigKey(key)
		if !ok {
			return &UnsupportedError{fmt.Sprintf("invalid config key '%s' in the environment", key)}
		}
		l.AddOption(section, sub, name, value)
		return nil
	}
	if v := getenv("GIT_CONFIG_COUNT"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return &UnsupportedError{"bogus count in GIT_CONFIG_COUNT"}
		}
		for i := 0; i < n; i++ {
			k := getenv(fmt.Sprintf("GIT_CONFIG_KEY_%d", i))
			if k == "" {
				return &UnsupportedError{fmt.Sprintf("missing config key GIT_CONFIG_KEY_%d", i)}
			}
			if err := add(k, getenv(fmt.Sprintf("GIT_CONFIG_VALUE_%d", i))); err != nil {
				return err
			}
		}
	}
	if v := getenv("GIT_CONFIG_PARAMETERS"); v != "" {
		pairs, ok := parseConfigParameters(v)
		if !ok {
			return &UnsupportedError{"bogus format in GIT_CONFIG_PARAMETERS"}
		}
		for _, p := range pairs {
			if err := add(p[0], p[1]); err != nil {
				return err
			}
		}
	}
	if len(l.Sections) > 0 {
		c.layers = append(c.layers, l)
	}
	return nil
}

// parseConfigParameters reads GIT_CONFIG_PARAMETERS: whitespace-separated
// shell single-quoted words, either 'key'='value' (git 2.31 and later;
// 'key'= alone is a key without a value) or the older 'key=value'. A key
// without a value reads as "", which Bool takes as true, as git does.
func parseConfigParameters(s string) ([][2]string, bool) {
	var out [][2]string
	for {
		s = strings.TrimLeft(s, " \t\n")
		if s == "" {
			return out, true
		}
		key, rest, ok := sqWord(s)
		if !ok {
			return nil, false
		}
		if strings.HasPrefix(rest, "=") {
			rest = rest[1:]
			val := ""
			if strings.HasPrefix(rest, "'") {
				if val, rest, ok = sqWord(rest); !ok {
					return nil, false
				}
			}
			if rest != "" && !strings.ContainsAny(rest[:1], " \t\n") {
				return nil, false
			}
			out = append(out, [2]string{key, val})
		} else {
			if rest != "" && !strings.ContainsAny(rest[:1], " \t\n") {
				return nil, false
			}
			k, v, _ := strings.Cut(key, "=")
			out = append(out, [2]string{k, v})
		}
		s = rest
	}
}

// sqWord reads one shell single-quoted word at the start of s, where a
// quote inside is written '\” (and ! as '\!'), as git's sq_quote writes
// them. It returns the word and what follows it.
func sqWord(s string) (word, rest string, ok bool) {
	if !strings.HasPrefix(s, "'") {
		return "", "", false
	}
	var b strings.Builder
	s = s[1:]
	for {
		i := strings.IndexByte(s, '\'')
		if i < 0 {
			return "", "", false
		}
		b.WriteString(s[:i])
		s = s[i+1:]
		if len(s) >= 3 && s[0] == '\\' && (s[1] == '\'' || s[1] == '!') && s[2] == '\'' {
			b.WriteByte(s[1])
			s = s[3:]
			continue
		}
		return b.String(), s, true
	}
}

// splitConfigKey splits "section.key" or "section.sub.section.key" as git
// does: the section and key are case-insensitive, the subsection is not.
func splitConfigKey(k string) (section, sub, key string, ok bool) {
	first, last := strings.IndexByte(k, '.'), strings.LastIndexByte(k, '.')
	if first <= 0 || last == len(k)-1 {
		return "", "", "", false
	}
	section, key = strings.ToLower(k[:first]), strings.ToLower(k[last+1:])
	if first != last {
		sub = k[first+1 : last]
	}
	return section, sub, key, true
}

// Subsections lists the names of section's subsections in every layer
// (the remotes, for "remote"), sorted, each once.
func (c *Config) Subsections(section string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range c.layers {
		if !l.HasSection(section) {
			continue
		}
		for _, ss := range l.Section(section).Subsections {
			if !seen[ss.Name] {
				seen[ss.Name] = true
				out = append(out, ss.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// StrictBool reads a boolean as git does (yes/on/true, no/off/false, an
// integer, a key with no value is true) and refuses anything else as git
// does: "bad boolean config value".
func (c *Config) StrictBool(section, key string, def bool) (bool, error) {
	v, ok := c.Get(section, "", key)
	if !ok {
		return def, nil
	}
	if b, ok := ParseBool(v); ok {
		return b, nil
	}
	return def, &UnsupportedError{fmt.Sprintf("bad boolean config value '%s' for '%s.%s'", v, section, key)}
}

// ParseBool reads one boolean value as git's git_parse_maybe_bool does,
// with "" (a key with no value) true.
func ParseBool(v string) (value, ok bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "yes", "on", "true":
		return true, true
	case "no", "off", "false":
		return false, true
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(v), 0, 64); err == nil {
		return n != 0, true
	}
	return false, false
}

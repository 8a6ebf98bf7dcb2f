package gitdir

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-git/go-billy/v5"
	format "github.com/go-git/go-git/v5/plumbing/format/config"
)

// Config is git's configuration as git-hegel sees it: system, global,
// repository and (with extensions.worktreeConfig) worktree files, later ones
// winning. include directives are not followed.
type Config struct {
	layers []*format.Config
}

// Load reads the configuration files that apply to a repository: the
// system and global files, repo's config (the common git dir), gitDirFS's
// config.worktree when extensions.worktreeConfig is set, and the
// environment. Either filesystem may be nil. Files that are missing are
// skipped; a file that cannot be parsed is reported, because acting on
// half a configuration is worse.
func Load(getenv func(string) string, repo billy.Filesystem, gitDirFS billy.Filesystem) (*Config, error) {
	c := &Config{}
	var paths []string
	if getenv("GIT_CONFIG_NOSYSTEM") == "" {
		if p := getenv("GIT_CONFIG_SYSTEM"); p != "" {
			paths = append(paths, p)
		} else {
			paths = append(paths, "/etc/gitconfig")
		}
	}
	if p := getenv("GIT_CONFIG_GLOBAL"); p != "" {
		paths = append(paths, p)
	} else {
		xdg := getenv("XDG_CONFIG_HOME")
		home := getenv("HOME")
		if xdg == "" && home != "" {
			xdg = filepath.Join(home, ".config")
		}
		if xdg != "" {
			paths = append(paths, filepath.Join(xdg, "git", "config"))
		}
		if home != "" {
			paths = append(paths, filepath.Join(home, ".gitconfig"))
		}
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if err := c.add(p, b); err != nil {
			return nil, err
		}
	}
	if repo != nil {
		if err := c.addFile(repo, "config"); err != nil {
			return nil, err
		}
		if gitDirFS != nil && c.Bool("extensions", "worktreeconfig", false) {
			if err := c.addFile(gitDirFS, "config.worktree"); err != nil {
				return nil, err
			}
		}
	}
	if err := c.addEnvironment(getenv); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Config) addFile(fs billy.Filesystem, name string) error {
	f, err := fs.Open(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(f); err != nil {
		return err
	}
	return c.add(fs.Join(fs.Root(), name), buf.Bytes())
}

func (c *Config) add(path string, b []byte) error {
	cfg := format.New()
	if err := format.NewDecoder(bytes.NewReader(b)).Decode(cfg); err != nil {
		return &UnsupportedError{Reason: "bad git config file " + path + ": " + oneLine(err.Error())}
	}
	c.layers = append(c.layers, cfg)
	return nil
}

// Get returns the last value of section[.subsection].key, or "".
// "section.sub.key" style lookups: pass the subsection separately.
func (c *Config) Get(section, subsection, key string) (string, bool) {
	val, found := "", false
	for _, l := range c.layers {
		if !l.HasSection(section) {
			continue
		}
		s := l.Section(section)
		var opts format.Options
		if subsection == "" {
			opts = s.Options
		} else if s.HasSubsection(subsection) {
			opts = s.Subsection(subsection).Options
		}
		for _, o := range opts {
			if strings.EqualFold(o.Key, key) {
				val, found = o.Value, true
			}
		}
	}
	return val, found
}

// Bool reads a boolean the way git does (yes/on/true/1, no/off/false/0; a
// key with no value is true).
func (c *Config) Bool(section, key string, def bool) bool {
	v, ok := c.Get(section, "", key)
	if !ok {
		return def
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "yes", "on", "true", "1":
		return true
	case "no", "off", "false", "0":
		return false
	}
	return def
}

// Int reads an integer, accepting git's k/m/g suffixes.
func (c *Config) Int(section, key string, def int64) int64 {
	v, ok := c.Get(section, "", key)
	if !ok {
		return def
	}
	n, ok := ParseInt(v)
	if !ok {
		return def
	}
	return n
}

// ParseInt reads one integer value as git's git_parse_int64 does:
// decimal, with an optional k, m or g suffix.
func ParseInt(v string) (int64, bool) {
	v = strings.ToLower(strings.TrimSpace(v))
	mult := int64(1)
	switch {
	case strings.HasSuffix(v, "k"):
		mult, v = 1<<10, strings.TrimSuffix(v, "k")
	case strings.HasSuffix(v, "m"):
		mult, v = 1<<20, strings.TrimSuffix(v, "m")
	case strings.HasSuffix(v, "g"):
		mult, v = 1<<30, strings.TrimSuffix(v, "g")
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, false
	}
	return n * mult, true
}

// All returns every value of section.subsection.key, in file order.
func (c *Config) All(section, subsection, key string) []string {
	var out []string
	for _, l := range c.layers {
		if !l.HasSection(section) {
			continue
		}
		s := l.Section(section)
		opts := s.Options // subsection "": the section's own keys
		if subsection != "" {
			if !s.HasSubsection(subsection) {
				continue
			}
			opts = s.Subsection(subsection).Options
		}
		for _, o := range opts {
			if strings.EqualFold(o.Key, key) {
				out = append(out, o.Value)
			}
		}
	}
	return out
}

// SubsectionValues maps each subsection of section to its values of key.
func (c *Config) SubsectionValues(section, key string) map[string][]string {
	out := map[string][]string{}
	for _, l := range c.layers {
		if !l.HasSection(section) {
			continue
		}
		for _, ss := range l.Section(section).Subsections {
			for _, o := range ss.Options {
				if strings.EqualFold(o.Key, key) {
					out[ss.Name] = append(out[ss.Name], o.Value)
				}
			}
		}
	}
	return out
}

// Options returns every key and value of section[.subsection], in file
// order (keys as written).
func (c *Config) Options(section, subsection string) [][2]string {
	var out [][2]string
	for _, l := range c.layers {
		if !l.HasSection(section) {
			continue
		}
		s := l.Section(section)
		opts := s.Options
		if subsection != "" {
			if !s.HasSubsection(subsection) {
				continue
			}
			opts = s.Subsection(subsection).Options
		}
		for _, o := range opts {
			out = append(out, [2]string{o.Key, o.Value})
		}
	}
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

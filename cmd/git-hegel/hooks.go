package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/engine/agent"
)

// `git hegel hooks install|uninstall`: write git-hegel's hook commands
// into a coding agent's configuration, merging with what is there.
// engine/agent's settings.go decides the new text (an install adds only
// what is missing, an uninstall takes out exactly what an install added);
// this file finds, reads and writes the files and says what happened.
// docs/agents.md shows each result.

func hooksFlags(fs *pflag.FlagSet) {
	fs.StringArray("agent", nil, "the `agent` to configure: claude, codex or cursor (repeatable; default: the agents configured here, else claude)")
	completeValues(fs, "agent", kindAgent)
	fs.Bool("project", false, "the repository's settings (the default): .claude/settings.json, .codex/hooks.json, .cursor/hooks.json")
	fs.Bool("user", false, "your settings for every repository: ~/.claude/settings.json, ~/.codex/hooks.json, ~/.cursor/hooks.json")
	fs.BoolP("dry-run", "n", false, "show the change as a diff and write nothing")
	fs.Bool("no-mcp", false, "the hooks only: leave the agent's MCP server registration (git hegel mcp) as it is")
}

func runHooksStatus(c *cmdCtx, args []string) error    { return c.runHooks("status") }
func runHooksInstall(c *cmdCtx, args []string) error   { return c.runHooks("install") }
func runHooksUninstall(c *cmdCtx, args []string) error { return c.runHooks("uninstall") }

func (c *cmdCtx) runHooks(sub string) error {
	if c.boolFlag("project") && c.boolFlag("user") {
		return usagef(c.name, "--project and --user cannot be used together")
	}
	base, scope, err := c.hooksBase()
	if err != nil {
		return err
	}
	agents, err := c.hookAgents(base, sub)
	if err != nil {
		return err
	}
	dry := c.boolFlag("dry-run")
	if scope == "project" && sub != "status" {
		// A cloned repository decides what its work tree holds: never
		// write through a link it committed. All are checked before any
		// is written.
		for _, a := range agents {
			if err := noLinkBelow(base, a.Project); err != nil {
				return err
			}
			if err := noLinkBelow(base, agent.MCPConfigOf(a.Agent).Project); err != nil {
				return err
			}
		}
	}
	withMCP := !c.boolFlag("no-mcp")
	for _, a := range agents {
		path := filepath.Join(base, a.Project)
		if scope == "user" {
			path = userFile(base, a.UserPath(c.Getenv))
		}
		shown := c.displayPath(path, base, scope)
		m := agent.MCPConfigOf(a.Agent)
		mpath := filepath.Join(base, m.Project)
		if scope == "user" {
			mpath = userFile(base, m.UserPath(c.Getenv))
		}
		mshown := c.displayPath(mpath, base, scope)
		switch sub {
		case "status":
			c.hooksStatus(a, path, shown)
			c.mcpStatus(m, mpath, mshown)
		default:
			if err := c.editHooks(a, sub == "install", path, shown, dry); err != nil {
				return err
			}
			if withMCP {
				if err := c.editMCP(m, sub == "install", mpath, mshown, dry); err != nil {
					return err
				}
			}
		}
	}
	if dry && sub != "status" {
		fmt.Fprintln(c.Stdout, "Dry run: nothing changed")
	}
	return nil
}

// userFile is an agent's user file: relative to the home directory, or
// where an absolute CODEX_HOME says.
func userFile(home, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(home, p)
}

// hooksBase is the directory settings paths are relative to: the work
// tree's top, or the home directory with --user.
func (c *cmdCtx) hooksBase() (string, string, error) {
	if c.boolFlag("user") {
		home := c.Getenv("HOME")
		if home == "" {
			return "", "", errors.New("HOME is not set; cannot find your agent settings")
		}
		return home, "user", nil
	}
	r, err := c.openRepo()
	if err != nil {
		return "", "", err
	}
	return r.WorkTree, "project", nil
}

// hookAgents picks the agents: --agent, else those whose settings
// directory exists (for install: else Claude Code), else all for status.
func (c *cmdCtx) hookAgents(base, sub string) ([]*agent.Settings, error) {
	names, _ := c.flags.GetStringArray("agent")
	var out []*agent.Settings
	for _, n := range names {
		a := agent.SettingsOf(n)
		if a == nil {
			return nil, usagef(c.name, "unknown agent '%s' (supported: %s)", n, strings.Join(agent.Names, ", "))
		}
		out = append(out, a)
	}
	if len(out) > 0 {
		return out, nil
	}
	for _, a := range agent.AllSettings() {
		dir := filepath.Dir(filepath.Join(base, a.Project))
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		if sub == "install" {
			return []*agent.Settings{agent.SettingsOf(agent.Claude)}, nil
		}
		out = agent.AllSettings()
	}
	return out, nil
}

func (c *cmdCtx) displayPath(path, base, scope string) string {
	rel, err := filepath.Rel(base, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return path
	}
	if scope == "user" {
		return "~/" + filepath.ToSlash(rel)
	}
	return filepath.ToSlash(rel)
}

// readSettings reads a settings file: nil for a missing one, with the
// mode a new file gets.
func readSettings(path string) (data []byte, mode fs.FileMode, err error) {
	data, err = os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0o644, nil
	}
	if err != nil {
		return nil, 0, err
	}
	mode = 0o644
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	return data, mode, nil
}

// editHooks installs or removes the agent's entries in one file.
func (c *cmdCtx) editHooks(a *agent.Settings, install bool, path, shown string, dry bool) error {
	data, mode, err := readSettings(path)
	var ed *agent.Edit
	if err == nil {
		if install {
			ed, err = a.Install(data)
		} else {
			ed, err = a.Uninstall(data)
		}
	}
	if err != nil {
		return fmt.Errorf("cannot update %s: %v; fix the file first, nothing was changed", shown, err)
	}
	if len(ed.Events) == 0 {
		if install {
			fmt.Fprintf(c.Stdout, "%s: %s already has git-hegel's hooks\n", a.Agent, shown)
		} else {
			fmt.Fprintf(c.Stdout, "%s: no git-hegel hooks in %s\n", a.Agent, shown)
		}
		return nil
	}
	if dry {
		after := string(ed.Out)
		from, to := "a/"+shown, "b/"+shown
		if data == nil {
			from = "/dev/null" // a new file, as git diff names it
		}
		if ed.Remove {
			after, to = "", "/dev/null"
		}
		unifiedDiff(c.Stdout, from, to, string(data), after)
	} else {
		if ed.Remove {
			err = os.Remove(path)
		} else {
			err = writeFileAtomic(path, ed.Out, mode)
		}
		if err != nil {
			return fmt.Errorf("cannot write %s: %v", shown, err)
		}
	}
	verb, prep := "Installed", "in"
	switch {
	case install && dry:
		verb = "Would install"
	case !install && dry:
		verb, prep = "Would remove", "from"
	case !install:
		verb, prep = "Removed", "from"
	}
	fmt.Fprintf(c.Stdout, "%s git-hegel hooks for %s %s %s (%s)\n", verb, a.Agent, prep, shown, strings.Join(ed.Events, ", "))
	if ed.Remove && !dry {
		fmt.Fprintf(c.Stdout, "%s had nothing else in it and was removed\n", shown)
	}
	if ed.Note != "" {
		fmt.Fprintf(c.Stderr, "note: %s: %s\n", shown, ed.Note)
	}
	return nil
}

// hooksStatus prints which of the agent's events run git-hegel.
func (c *cmdCtx) hooksStatus(a *agent.Settings, path, shown string) {
	data, _, err := readSettings(path)
	var have, missing []string
	if err == nil {
		have, missing, err = a.Status(data)
	}
	switch {
	case err != nil:
		fmt.Fprintf(c.Stdout, "%-7s %s: unreadable (%v)\n", a.Agent, shown, err)
	case len(missing) == 0:
		fmt.Fprintf(c.Stdout, "%-7s %s: installed\n", a.Agent, shown)
	case len(have) == 0:
		fmt.Fprintf(c.Stdout, "%-7s %s: not installed\n", a.Agent, shown)
	default:
		fmt.Fprintf(c.Stdout, "%-7s %s: partly installed (missing %s)\n", a.Agent, shown, strings.Join(missing, ", "))
	}
}

// noLinkBelow refuses rel (relative to base, the work tree's top) when it
// or a directory on the way to it is a symbolic link: the repository's
// settings are written in the work tree only, never where a committed
// link points (.git/config, a file outside the work tree).
func noLinkBelow(base, rel string) error {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		fi, err := os.Lstat(filepath.Join(base, filepath.FromSlash(p)))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("cannot read %s: %v", p, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			to, _ := os.Readlink(filepath.Join(base, filepath.FromSlash(p)))
			return fmt.Errorf("%s is a symbolic link (to %s), and git-hegel writes the repository's agent settings only inside the work tree: remove the link, or use --user; nothing was changed", p, to)
		}
		if i < len(parts)-1 && !fi.IsDir() {
			return fmt.Errorf("%s is not a directory; nothing was changed", p)
		}
	}
	return nil
}

// writeFileAtomic writes through a temporary file and a rename, creating
// the directory if needed.
func writeFileAtomic(path string, data []byte, mode fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}

// editMCP registers git-hegel's MCP server with the agent, or removes that
// entry, in one file.
func (c *cmdCtx) editMCP(m *agent.MCPConfig, install bool, path, shown string, dry bool) error {
	data, mode, err := readSettings(path)
	var ed *agent.Edit
	if err == nil {
		if install {
			ed, err = m.Install(data)
		} else {
			ed, err = m.Uninstall(data)
		}
	}
	if err != nil {
		return fmt.Errorf("cannot update %s: %v; fix the file first, nothing more was changed", shown, err)
	}
	if ed.Note != "" {
		fmt.Fprintf(c.Stderr, "note: %s: %s\n", shown, ed.Note)
	}
	if len(ed.Events) == 0 {
		switch {
		case ed.Note != "":
		case install:
			fmt.Fprintf(c.Stdout, "%s: %s already registers git-hegel's MCP server\n", m.Agent, shown)
		default:
			fmt.Fprintf(c.Stdout, "%s: no git-hegel MCP server in %s\n", m.Agent, shown)
		}
		return nil
	}
	if dry {
		after := string(ed.Out)
		from, to := "a/"+shown, "b/"+shown
		if data == nil {
			from = "/dev/null"
		}
		if ed.Remove {
			after, to = "", "/dev/null"
		}
		unifiedDiff(c.Stdout, from, to, string(data), after)
	} else {
		if ed.Remove {
			err = os.Remove(path)
		} else {
			err = writeFileAtomic(path, ed.Out, mode)
		}
		if err != nil {
			return fmt.Errorf("cannot write %s: %v", shown, err)
		}
	}
	switch {
	case install && dry:
		fmt.Fprintf(c.Stdout, "Would register git-hegel's MCP server (git hegel mcp) for %s in %s\n", m.Agent, shown)
	case install:
		fmt.Fprintf(c.Stdout, "Registered git-hegel's MCP server (git hegel mcp) for %s in %s\n", m.Agent, shown)
	case dry:
		fmt.Fprintf(c.Stdout, "Would remove git-hegel's MCP server for %s from %s\n", m.Agent, shown)
	default:
		fmt.Fprintf(c.Stdout, "Removed git-hegel's MCP server for %s from %s\n", m.Agent, shown)
	}
	if ed.Remove && !dry {
		fmt.Fprintf(c.Stdout, "%s had nothing else in it and was removed\n", shown)
	}
	return nil
}

// mcpStatus prints whether the agent has git-hegel's MCP server.
func (c *cmdCtx) mcpStatus(m *agent.MCPConfig, path, shown string) {
	data, _, err := readSettings(path)
	st := agent.MCPMissing
	if err == nil {
		st, err = m.Status(data)
	}
	switch {
	case err != nil:
		fmt.Fprintf(c.Stdout, "%-7s %s: unreadable (%v)\n", m.Agent, shown, err)
	case st == agent.MCPRegistered:
		fmt.Fprintf(c.Stdout, "%-7s %s: MCP server registered\n", m.Agent, shown)
	case st == agent.MCPChanged:
		fmt.Fprintf(c.Stdout, "%-7s %s: MCP server entry of your own (left as it is)\n", m.Agent, shown)
	default:
		fmt.Fprintf(c.Stdout, "%-7s %s: MCP server not registered\n", m.Agent, shown)
	}
}

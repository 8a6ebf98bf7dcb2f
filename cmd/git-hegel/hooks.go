package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/engine"
)

// `git hegel hooks install|uninstall`: write git-hegel's hook commands
// into a coding agent's configuration, merging with what is there. An
// install adds only what is missing (running it twice changes nothing);
// an uninstall removes only git-hegel's own entries, and the containers
// they leave empty. docs/agents.md shows each result.

// hookCommandPrefix starts every command git-hegel installs; uninstall
// removes exactly the entries whose command starts with it.
const hookCommandPrefix = "git hegel hook "

// agentHooks is where and how one agent is configured.
type agentHooks struct {
	name string
	// project and user are the settings file, relative to the work tree's
	// top and to the home directory.
	project, user string
	// events are the hook events git-hegel uses. PreToolUse is not among
	// them: the matching PostToolUse records the call, and a hook process
	// before every tool call would only cost time.
	events []string
	// matcher marks the events whose entries take a tool matcher.
	matcher map[string]bool
	cursor  bool // Cursor's format: {"version": 1, "hooks": {EVENT: [{"command"}]}}
}

var agentConfigs = []agentHooks{
	{name: engine.AgentClaude, project: ".claude/settings.json", user: ".claude/settings.json",
		events:  []string{"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"},
		matcher: map[string]bool{"PostToolUse": true}},
	// Codex reads matchers as regular expressions and runs a group
	// without one for every tool.
	{name: engine.AgentCodex, project: ".codex/hooks.json", user: ".codex/hooks.json",
		events: []string{"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"}},
	{name: engine.AgentCursor, project: ".cursor/hooks.json", user: ".cursor/hooks.json",
		events: []string{"sessionStart", "beforeSubmitPrompt", "afterShellExecution", "afterFileEdit", "afterMCPExecution", "stop"},
		cursor: true},
}

func agentConfig(name string) *agentHooks {
	for i := range agentConfigs {
		if agentConfigs[i].name == name {
			return &agentConfigs[i]
		}
	}
	return nil
}

func hooksFlags(fs *pflag.FlagSet) {
	fs.StringArray("agent", nil, "the `agent` to configure: claude, codex or cursor (repeatable; default: the agents configured here, else claude)")
	completeValues(fs, "agent", kindAgent)
	fs.Bool("project", false, "the repository's settings (the default): .claude/settings.json, .codex/hooks.json, .cursor/hooks.json")
	fs.Bool("user", false, "your settings for every repository: ~/.claude/settings.json, ~/.codex/hooks.json, ~/.cursor/hooks.json")
	fs.BoolP("dry-run", "n", false, "show the change as a diff and write nothing")
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
			if err := noLinkBelow(base, a.project); err != nil {
				return err
			}
		}
	}
	for _, a := range agents {
		path := filepath.Join(base, a.project)
		if scope == "user" {
			path = filepath.Join(base, a.userPath(c.Getenv))
		}
		shown := c.displayPath(path, base, scope)
		switch sub {
		case "status":
			c.hooksStatus(a, path, shown)
		default:
			if err := c.editHooks(a, sub == "install", path, shown, dry); err != nil {
				return err
			}
		}
	}
	if dry && sub != "status" {
		fmt.Fprintln(c.Stdout, "Dry run: nothing changed")
	}
	return nil
}

// userPath is the agent's user settings file relative to the home
// directory; Codex honours CODEX_HOME.
func (a *agentHooks) userPath(getenv func(string) string) string {
	if a.name == engine.AgentCodex {
		if home := getenv("CODEX_HOME"); home != "" {
			return filepath.Join(home, "hooks.json")
		}
	}
	return a.user
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
func (c *cmdCtx) hookAgents(base, sub string) ([]*agentHooks, error) {
	names, _ := c.flags.GetStringArray("agent")
	var out []*agentHooks
	for _, n := range names {
		a := agentConfig(n)
		if a == nil {
			return nil, usagef(c.name, "unknown agent '%s' (supported: %s)", n, strings.Join(engine.Agents, ", "))
		}
		out = append(out, a)
	}
	if len(out) > 0 {
		return out, nil
	}
	for i := range agentConfigs {
		a := &agentConfigs[i]
		dir := filepath.Dir(filepath.Join(base, a.project))
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		if sub == "install" {
			return []*agentHooks{agentConfig(engine.AgentClaude)}, nil
		}
		for i := range agentConfigs {
			out = append(out, &agentConfigs[i])
		}
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

// hookCommand is the command installed for an event.
func (a *agentHooks) hookCommand(event string) string {
	if a.name == engine.AgentClaude {
		return hookCommandPrefix + event
	}
	// Codex's payloads look like Claude Code's; naming the agent keeps
	// its events apart in the metrics.
	return hookCommandPrefix + "--agent " + a.name + " " + event
}

// ours reports whether a hook entry's command is one git-hegel installs.
func ours(cmd string) bool { return strings.HasPrefix(strings.TrimSpace(cmd), hookCommandPrefix) }

// readSettings parses a settings file; a missing one is empty.
func readSettings(path string) (doc *jnode, raw []byte, mode fs.FileMode, err error) {
	raw, err = os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return jobject(), nil, 0o644, nil
	}
	if err != nil {
		return nil, nil, 0, err
	}
	mode = 0o644
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return jobject(), raw, mode, nil
	}
	doc, err = parseJSONDoc(raw)
	if err != nil {
		return nil, nil, 0, err
	}
	if !doc.isObj {
		return nil, nil, 0, errors.New("the top level is not a JSON object")
	}
	return doc, raw, mode, nil
}

// editHooks installs or removes the agent's entries in one file.
func (c *cmdCtx) editHooks(a *agentHooks, install bool, path, shown string, dry bool) error {
	doc, raw, mode, err := readSettings(path)
	if err != nil {
		return fmt.Errorf("cannot update %s: %v; fix the file first, nothing was changed", shown, err)
	}
	var changed []string
	if install {
		changed = a.install(doc)
	} else {
		changed = a.uninstall(doc)
	}
	if len(changed) == 0 {
		if install {
			fmt.Fprintf(c.Stdout, "%s: %s already has git-hegel's hooks\n", a.name, shown)
		} else {
			fmt.Fprintf(c.Stdout, "%s: no git-hegel hooks in %s\n", a.name, shown)
		}
		return nil
	}
	indent := "  "
	if raw != nil {
		indent = detectIndent(raw)
	}
	out := doc.encode(indent)
	remove := !install && a.isSkeleton(doc)
	if dry {
		after := string(out)
		from, to := "a/"+shown, "b/"+shown
		if raw == nil {
			from = "/dev/null" // a new file, as git diff names it
		}
		if remove {
			after, to = "", "/dev/null"
		}
		unifiedDiff(c.Stdout, from, to, string(raw), after)
	} else {
		if remove {
			err = os.Remove(path)
		} else {
			err = writeFileAtomic(path, out, mode)
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
	fmt.Fprintf(c.Stdout, "%s git-hegel hooks for %s %s %s (%s)\n", verb, a.name, prep, shown, strings.Join(changed, ", "))
	if remove && !dry {
		fmt.Fprintf(c.Stdout, "%s had nothing else in it and was removed\n", shown)
	}
	return nil
}

// install adds the missing entries and returns the events it added.
func (a *agentHooks) install(doc *jnode) []string {
	if a.cursor && doc.get("version") == nil {
		doc.obj = append([]jfield{{"version", &jnode{scalar: []byte("1")}}}, doc.obj...)
		doc.dirty = true
	}
	hooks := doc.get("hooks")
	if hooks == nil || !hooks.isObj {
		hooks = jobject()
		doc.set("hooks", hooks)
	}
	var added []string
	for _, ev := range a.events {
		list := hooks.get(ev)
		if list == nil || !list.isArr {
			list = jarray()
			hooks.set(ev, list)
		}
		if a.hasOurs(list) {
			continue
		}
		cmd := jfield{"command", jstring(a.hookCommand(ev))}
		if a.cursor {
			list.push(jobject(cmd))
		} else {
			entry := jobject(jfield{"type", jstring("command")}, cmd)
			group := jobject(jfield{"hooks", jarray(entry)})
			if a.matcher[ev] {
				group = jobject(jfield{"matcher", jstring("*")}, jfield{"hooks", jarray(entry)})
			}
			list.push(group)
		}
		added = append(added, ev)
	}
	return added
}

// hasOurs reports whether an event's list already runs git hegel hook.
func (a *agentHooks) hasOurs(list *jnode) bool {
	for _, item := range list.arr {
		if s, ok := item.get("command").str(); ok && ours(s) {
			return true
		}
		if inner := item.get("hooks"); inner != nil && inner.isArr {
			for _, h := range inner.arr {
				if s, ok := h.get("command").str(); ok && ours(s) {
					return true
				}
			}
		}
	}
	return false
}

// uninstall removes git-hegel's entries, and the groups, lists and
// objects that held only them; it returns the events it touched.
func (a *agentHooks) uninstall(doc *jnode) []string {
	hooks := doc.get("hooks")
	if hooks == nil || !hooks.isObj {
		return nil
	}
	var removed []string
	for _, f := range append([]jfield(nil), hooks.obj...) {
		list := f.val
		if !list.isArr {
			continue
		}
		touched := false
		var keep []*jnode
		for _, item := range list.arr {
			if s, ok := item.get("command").str(); ok && ours(s) {
				touched = true
				continue
			}
			if inner := item.get("hooks"); inner != nil && inner.isArr {
				var rest []*jnode
				for _, h := range inner.arr {
					if s, ok := h.get("command").str(); ok && ours(s) {
						touched = true
						continue
					}
					rest = append(rest, h)
				}
				if len(rest) != len(inner.arr) {
					if len(rest) == 0 && onlyKeys(item, "hooks", "matcher") {
						continue // the group was ours alone
					}
					inner.arr, inner.dirty = rest, true
				}
			}
			keep = append(keep, item)
		}
		if !touched {
			continue
		}
		removed = append(removed, f.key)
		if len(keep) == 0 {
			hooks.del(f.key)
		} else {
			list.arr, list.dirty = keep, true
		}
	}
	if len(removed) > 0 && len(hooks.obj) == 0 {
		doc.del("hooks")
	}
	return removed
}

// isSkeleton reports a document with nothing left but what an install
// into a new file would have added around the entries.
func (a *agentHooks) isSkeleton(doc *jnode) bool {
	if len(doc.obj) == 0 {
		return true
	}
	if a.cursor && len(doc.obj) == 1 {
		v := doc.get("version")
		return v != nil && string(v.scalar) == "1"
	}
	return false
}

func onlyKeys(n *jnode, keys ...string) bool {
	for _, f := range n.obj {
		if !contains(keys, f.key) {
			return false
		}
	}
	return true
}

// hooksStatus prints which of the agent's events run git-hegel.
func (c *cmdCtx) hooksStatus(a *agentHooks, path, shown string) {
	doc, _, _, err := readSettings(path)
	if err != nil {
		fmt.Fprintf(c.Stdout, "%-7s %s: unreadable (%v)\n", a.name, shown, err)
		return
	}
	var have, missing []string
	hooks := doc.get("hooks")
	for _, ev := range a.events {
		if list := hooks.get(ev); list != nil && list.isArr && a.hasOurs(list) {
			have = append(have, ev)
		} else {
			missing = append(missing, ev)
		}
	}
	switch {
	case len(missing) == 0:
		fmt.Fprintf(c.Stdout, "%-7s %s: installed\n", a.name, shown)
	case len(have) == 0:
		fmt.Fprintf(c.Stdout, "%-7s %s: not installed\n", a.name, shown)
	default:
		fmt.Fprintf(c.Stdout, "%-7s %s: partly installed (missing %s)\n", a.name, shown, strings.Join(missing, ", "))
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

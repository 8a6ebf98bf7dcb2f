package agent

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// The agents' settings files and what `git hegel hooks install` and
// `uninstall` do to them, as functions from the file's bytes to its new
// bytes (cmd/git-hegel reads, writes and prints). An install adds only
// what is missing; an uninstall takes out exactly what an install added,
// so install then uninstall gives back the file byte for byte: the user's
// layout is never re-encoded, and the user's own containers stay, empty
// or not. docs/agents.md shows each result.

// HookCommandPrefix starts every command git-hegel installs; uninstall
// removes exactly the entries whose command starts with it.
const HookCommandPrefix = "git hegel hook "

// IsHookCommand reports whether a hook entry's command is one git-hegel
// installs.
func IsHookCommand(cmd string) bool {
	return strings.HasPrefix(strings.TrimSpace(cmd), HookCommandPrefix)
}

// Settings is where and how one agent is configured.
type Settings struct {
	Agent string
	// Project and User are the settings file, relative to the work
	// tree's top and to the home directory.
	Project, User string
	// Events are the hook events git-hegel uses. PreToolUse is installed
	// for the tools that may change files only (a locked file is refused
	// before the edit, and an action snapshot is taken before the edit or
	// the shell command); every other call is recorded by its
	// PostToolUse, so a process before each of them would only cost time.
	Events []string
	// matcher is the tool matcher of the events whose entries take one.
	matcher map[string]string
	// flat is Cursor's format: {"hooks": {EVENT: [{"command"}]},
	// "version": 1}, where Claude Code and Codex wrap each command in a
	// group: {"hooks": {EVENT: [{"hooks": [{"type", "command"}]}]}}.
	flat bool
}

// EditMatcher selects the tools that write files (every agent's names),
// for the PreToolUse hook that refuses an edit of a locked file. Claude
// Code and Codex both read it as a regular expression.
const EditMatcher = "^(Edit|MultiEdit|Write|NotebookEdit|apply_patch)$"

// PreToolMatcher selects the tools the PreToolUse hook runs for: the
// file-editing tools (EditMatcher) and the shell tools, whose commands
// may change files too (an action snapshot is taken before each).
const PreToolMatcher = "^(Bash|Edit|MultiEdit|Write|NotebookEdit|apply_patch|shell|local_shell)$"

var allSettings = []*Settings{
	{Agent: Claude, Project: ".claude/settings.json", User: ".claude/settings.json",
		Events:  []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"},
		matcher: map[string]string{"PreToolUse": PreToolMatcher, "PostToolUse": "*"}},
	// Codex reads matchers as regular expressions and runs a group
	// without one for every tool.
	{Agent: Codex, Project: ".codex/hooks.json", User: ".codex/hooks.json",
		Events:  []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"},
		matcher: map[string]string{"PreToolUse": PreToolMatcher}},
	{Agent: Cursor, Project: ".cursor/hooks.json", User: ".cursor/hooks.json",
		Events: []string{"sessionStart", "beforeSubmitPrompt", "afterShellExecution", "afterFileEdit", "afterMCPExecution", "stop"},
		flat:   true},
}

// AllSettings lists every agent's settings, in the order of Names.
func AllSettings() []*Settings { return slices.Clone(allSettings) }

// SettingsOf returns the settings of the agent called name, or nil.
func SettingsOf(name string) *Settings {
	for _, s := range allSettings {
		if s.Agent == name {
			return s
		}
	}
	return nil
}

// UserPath is the agent's user settings file relative to the home
// directory; Codex honours CODEX_HOME.
func (s *Settings) UserPath(getenv func(string) string) string {
	if s.Agent == Codex {
		if home := getenv("CODEX_HOME"); home != "" {
			return filepath.Join(home, "hooks.json")
		}
	}
	return s.User
}

// Command is the command installed for an event.
func (s *Settings) Command(event string) string {
	if s.Agent == Claude {
		return HookCommandPrefix + event
	}
	// Codex's payloads look like Claude Code's; naming the agent keeps
	// its events apart in the metrics.
	return HookCommandPrefix + "--agent " + s.Agent + " " + event
}

// Edit is what an install or an uninstall does to a settings file.
type Edit struct {
	// Out is the file's new text (nil when Remove is set).
	Out []byte
	// Events are the events added (in the order of Settings.Events) or
	// removed (in file order); none means nothing changed.
	Events []string
	// Remove says the file holds nothing but what an install into a
	// missing file wrote: delete it.
	Remove bool
	// Note is something the person should know ("" when nothing).
	Note string
}

// ErrNotObject is a settings file whose top level is not a JSON object.
var ErrNotObject = errors.New("the top level is not a JSON object")

// document parses a settings file; a file holding only whitespace is nil.
func document(data []byte) (*jval, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	doc, err := parseJSON(data)
	if err != nil {
		return nil, err
	}
	if !doc.obj {
		return nil, ErrNotObject
	}
	return doc, nil
}

// group is the entry installed for event: Cursor's {"command"}, or a
// group holding one {"type": "command", "command"}.
func (s *Settings) group(event string) node {
	cmd := field{"command", str(s.Command(event))}
	if s.flat {
		return object(cmd)
	}
	hooks := field{"hooks", array(object(field{"type", str("command")}, cmd))}
	if m := s.matcher[event]; m != "" {
		return object(field{"matcher", str(m)}, hooks)
	}
	return object(hooks)
}

// newFile is what an install writes where there is no file: every event,
// and Cursor's version after the hooks (so uninstall can tell this file
// from a user's own file that holds a version and nothing else).
func (s *Settings) newFile(f format) []byte {
	top := object(field{"hooks", s.hooksObject(s.Events)})
	if s.flat {
		top.fields = append(top.fields, field{"version", raw("1")})
	}
	return []byte(f.render(top, 0) + f.nl)
}

func (s *Settings) hooksObject(events []string) node {
	h := object()
	for _, ev := range events {
		h.fields = append(h.fields, field{ev, array(s.group(ev))})
	}
	return h
}

// Install adds git-hegel's hooks that data (the file's text; nil or
// blank: there is no file) lacks. A "hooks" that is not an object, or an
// event that is not a list, is refused: replacing it would lose what the
// user wrote.
func (s *Settings) Install(data []byte) (*Edit, error) {
	doc, err := document(data)
	if err != nil {
		return nil, err
	}
	f := formatOf(data)
	if doc == nil {
		return &Edit{Out: s.newFile(f), Events: slices.Clone(s.Events)}, nil
	}
	ed := &Edit{}
	if s.flat && doc.get("version") == nil {
		ed.Note = `it has no "version"; Cursor's hooks.json format asks for "version": 1`
	}
	hooks := doc.get("hooks")
	if hooks == nil {
		ins := insertChildren(doc, 0, f, []string{f.member(field{"hooks", s.hooksObject(s.Events)}, 1)})
		ed.Out, ed.Events = insert(data, []insertion{ins}), slices.Clone(s.Events)
		return ed, nil
	}
	if !hooks.obj {
		return nil, errors.New(`"hooks" is not a JSON object`)
	}
	if up, events := s.upgradeMatchers(data, hooks, f); len(events) > 0 {
		// An earlier install's matcher is narrower than today's: it is
		// replaced in place, then the rest is installed as usual.
		ed, err := s.Install(up)
		if err != nil {
			return nil, err
		}
		for _, ev := range events {
			if !slices.Contains(ed.Events, ev) {
				ed.Events = append(ed.Events, ev)
			}
		}
		return ed, nil
	}
	var ins []insertion
	var added []string
	var newMembers []string
	for _, ev := range s.Events {
		list := hooks.get(ev)
		switch {
		case list == nil:
			newMembers = append(newMembers, f.member(field{ev, array(s.group(ev))}, 2))
		case !list.arr:
			return nil, fmt.Errorf("hooks.%s is not a JSON list", ev)
		case hasOurs(list):
			continue
		default:
			ins = append(ins, insertChildren(list, 2, f, []string{f.render(s.group(ev), 3)}))
		}
		added = append(added, ev)
	}
	if len(newMembers) > 0 {
		ins = append(ins, insertChildren(hooks, 1, f, newMembers))
	}
	if len(added) == 0 {
		return &Edit{Out: data}, nil
	}
	ed.Out, ed.Events = insert(data, ins), added
	return ed, nil
}

// upgradeMatchers returns data with the matcher of each entry git-hegel
// installed set to today's (s.matcher) where it differs, and the events
// whose matcher changed (none: data as it is). Entries the user changed
// beyond the matcher (whollyOurs is false) are left alone.
func (s *Settings) upgradeMatchers(data []byte, hooks *jval, f format) ([]byte, []string) {
	type repl struct {
		from, to int
		text     string
	}
	var rs []repl
	var events []string
	for _, ev := range s.Events {
		want := s.matcher[ev]
		list := hooks.get(ev)
		if want == "" || list == nil || !list.arr {
			continue
		}
		for _, item := range list.items {
			m := item.get("matcher")
			if m == nil || !whollyOurs(item) {
				continue
			}
			if have, ok := m.str(); ok && have != want {
				rs = append(rs, repl{m.start, m.end, f.render(str(want), 0)})
				if !slices.Contains(events, ev) {
					events = append(events, ev)
				}
			}
		}
	}
	if len(rs) == 0 {
		return data, nil
	}
	slices.SortFunc(rs, func(a, b repl) int { return b.from - a.from })
	out := append([]byte(nil), data...)
	for _, r := range rs {
		out = append(out[:r.from:r.from], append([]byte(r.text), out[r.to:]...)...)
	}
	return out, events
}

// Uninstall takes git-hegel's entries out of data: the lists and the
// "hooks" object an install created go with them, the user's own stay.
// A file that holds exactly what an install into a missing file wrote is
// to be removed.
func (s *Settings) Uninstall(data []byte) (*Edit, error) {
	doc, err := document(data)
	if err != nil || doc == nil {
		return &Edit{Out: data}, err
	}
	hooks := doc.get("hooks")
	if hooks == nil || !hooks.obj {
		return &Edit{Out: data}, nil
	}
	var removed []string
	for _, m := range hooks.members {
		if m.val.arr && (created(data, m.val) || slices.ContainsFunc(m.val.items, touched)) {
			removed = append(removed, m.key)
		}
	}
	if len(removed) == 0 {
		return &Edit{Out: data}, nil
	}
	if bytes.Equal(data, s.newFile(formatOf(nil))) {
		return &Edit{Events: removed, Remove: true}, nil
	}
	var spans []span
	if hooksCreated(data, hooks) {
		spans = append(spans, cutSpans(doc.children(), []int{memberIndex(doc, hooks)})...)
	} else {
		var drop []int
		for i, m := range hooks.members {
			if !m.val.arr {
				continue
			}
			if created(data, m.val) {
				drop = append(drop, i)
				continue
			}
			spans = append(spans, cutEntries(m.val)...)
		}
		spans = append(spans, cutSpans(hooks.children(), drop)...)
	}
	return &Edit{Out: cut(data, spans), Events: removed}, nil
}

// Status lists which of the agent's events run git-hegel in data.
func (s *Settings) Status(data []byte) (have, missing []string, err error) {
	doc, err := document(data)
	if err != nil {
		return nil, nil, err
	}
	hooks := doc.get("hooks")
	for _, ev := range s.Events {
		if list := hooks.get(ev); list != nil && list.arr && hasOurs(list) {
			have = append(have, ev)
		} else {
			missing = append(missing, ev)
		}
	}
	return have, missing, nil
}

// hasOurs reports whether an event's list already runs git hegel hook.
func hasOurs(list *jval) bool { return slices.ContainsFunc(list.items, touched) }

// touched reports an entry that is, or holds, one of git-hegel's.
func touched(item *jval) bool {
	if ours(item) {
		return true
	}
	if inner := item.get("hooks"); inner != nil && inner.arr {
		return slices.ContainsFunc(inner.items, ours)
	}
	return false
}

// ours reports an entry whose command is one git-hegel installs.
func ours(item *jval) bool {
	s, ok := item.get("command").str()
	return ok && IsHookCommand(s)
}

// whollyOurs reports an entry git-hegel installed as it stands: a
// command of ours, or a group (hooks and matcher only) whose hooks are all
// ours.
func whollyOurs(item *jval) bool {
	if ours(item) {
		return true
	}
	inner := item.get("hooks")
	if inner == nil || !inner.arr || len(inner.items) == 0 || !slices.ContainsFunc(inner.items, ours) {
		return false
	}
	for _, m := range item.members {
		if m.key != "hooks" && m.key != "matcher" {
			return false
		}
	}
	for _, h := range inner.items {
		if !ours(h) {
			return false
		}
	}
	return true
}

// created reports an event's list as an install creates it: one entry, of
// ours, with a line break before the closing bracket. An install that
// adds to a list of the user's puts its entry right before the bracket
// (or after the user's entries), so the user's lists never look like this.
func created(data []byte, list *jval) bool {
	return len(list.items) == 1 && whollyOurs(list.items[0]) && trailsBreak(data, list)
}

// hooksCreated reports a "hooks" object as an install creates it: every
// member a created list, and a line break before the closing brace.
func hooksCreated(data []byte, hooks *jval) bool {
	if len(hooks.members) == 0 || !trailsBreak(data, hooks) {
		return false
	}
	for _, m := range hooks.members {
		if !m.val.arr || !created(data, m.val) {
			return false
		}
	}
	return true
}

// cutEntries are the spans that take git-hegel's entries out of a list of
// the user's: whole entries of ours, and our commands inside the user's
// groups.
func cutEntries(list *jval) []span {
	var spans []span
	var drop []int
	for i, item := range list.items {
		switch {
		case whollyOurs(item):
			drop = append(drop, i)
		case touched(item):
			inner := item.get("hooks")
			var in []int
			for j, h := range inner.items {
				if ours(h) {
					in = append(in, j)
				}
			}
			spans = append(spans, cutSpans(inner.children(), in)...)
		}
	}
	return append(spans, cutSpans(list.children(), drop)...)
}

func memberIndex(obj, val *jval) int {
	for i, m := range obj.members {
		if m.val == val {
			return i
		}
	}
	return -1
}

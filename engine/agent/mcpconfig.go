package agent

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"strings"
)

// The agents' MCP server registrations: `git hegel hooks install` also
// registers `git hegel mcp` with the agent, and `uninstall` takes out
// exactly that entry. As with the hooks (settings.go), each edit is a
// function from the file's bytes to its new bytes, every byte of the
// user's stays as written, and install then uninstall gives back the file
// byte for byte. Claude Code and Cursor keep MCP servers in JSON
// ({"mcpServers": {NAME: {"command", "args"}}}), Codex in TOML
// ([mcp_servers.NAME] with command and args).

// MCPServerName is the name git-hegel's MCP server is registered under.
const MCPServerName = "git-hegel"

// The command the agent starts: git finds git-hegel as it does for every
// `git hegel` command.
const (
	mcpCommand = "git"
	mcpArgs    = `["hegel", "mcp"]`
)

// MCPConfig is where one agent registers MCP servers.
type MCPConfig struct {
	Agent string
	// Project and User are the file, relative to the work tree's top and
	// to the home directory.
	Project, User string
	toml          bool
}

var allMCPConfigs = []*MCPConfig{
	{Agent: Claude, Project: ".mcp.json", User: ".claude.json"},
	{Agent: Codex, Project: ".codex/config.toml", User: ".codex/config.toml", toml: true},
	{Agent: Cursor, Project: ".cursor/mcp.json", User: ".cursor/mcp.json"},
}

// MCPConfigOf returns the MCP registration file of the agent called name,
// or nil.
func MCPConfigOf(name string) *MCPConfig {
	for _, m := range allMCPConfigs {
		if m.Agent == name {
			return m
		}
	}
	return nil
}

// UserPath is the agent's user file relative to the home directory; Codex
// honours CODEX_HOME.
func (m *MCPConfig) UserPath(getenv func(string) string) string {
	if m.Agent == Codex {
		if home := getenv("CODEX_HOME"); home != "" {
			return filepath.Join(home, "config.toml")
		}
	}
	return m.User
}

// MCPState is what a file says about git-hegel's server.
type MCPState int

const (
	// MCPMissing: the file does not register it.
	MCPMissing MCPState = iota
	// MCPRegistered: it registers it as an install writes it.
	MCPRegistered
	// MCPChanged: an entry of that name is there, but not as an install
	// writes it (edited by hand, or the user's own): install leaves it,
	// uninstall too.
	MCPChanged
)

// changedByHand is the note for an entry install did not write as it is.
const changedByHand = "the " + MCPServerName + " MCP server entry is not as an install writes it (changed by hand?); it is left as it is"

// Install registers git-hegel's server in data (nil or blank: there is
// no file). Edit.Events is {MCPServerName} when it changed the file.
func (m *MCPConfig) Install(data []byte) (*Edit, error) {
	if m.toml {
		return tomlInstall(data)
	}
	doc, err := document(data)
	if err != nil {
		return nil, err
	}
	if doc == nil {
		// Nothing but whitespace counts as no file.
		return &Edit{Out: mcpJSONFile(formatOf(nil)), Events: []string{MCPServerName}}, nil
	}
	f := formatOf(data)
	servers := doc.get("mcpServers")
	var ins insertion
	switch {
	case servers == nil:
		ins = insertChildren(doc, 0, f, []string{f.member(field{"mcpServers", object(mcpJSONEntry())}, 1)})
	case !servers.obj:
		return nil, errors.New(`"mcpServers" is not a JSON object`)
	case servers.get(MCPServerName) != nil:
		ed := &Edit{Out: data}
		if !isOurMCPEntry(servers.get(MCPServerName)) {
			ed.Note = changedByHand
		}
		return ed, nil
	default:
		ins = insertChildren(servers, 1, f, []string{f.member(mcpJSONEntry(), 2)})
	}
	return &Edit{Out: insert(data, []insertion{ins}), Events: []string{MCPServerName}}, nil
}

// Uninstall takes git-hegel's entry out of data, and the "mcpServers"
// object with it when an install created that; a file that holds exactly
// what an install into a missing file wrote is to be removed.
func (m *MCPConfig) Uninstall(data []byte) (*Edit, error) {
	if m.toml {
		return tomlUninstall(data)
	}
	doc, err := document(data)
	if err != nil || doc == nil {
		return &Edit{Out: data}, err
	}
	servers := doc.get("mcpServers")
	if servers == nil || !servers.obj {
		return &Edit{Out: data}, nil
	}
	entry := servers.get(MCPServerName)
	if entry == nil {
		return &Edit{Out: data}, nil
	}
	if !isOurMCPEntry(entry) {
		return &Edit{Out: data, Note: changedByHand}, nil
	}
	done := []string{MCPServerName}
	if bytes.Equal(data, mcpJSONFile(formatOf(nil))) {
		return &Edit{Events: done, Remove: true}, nil
	}
	var spans []span
	if len(servers.members) == 1 && trailsBreak(data, servers) {
		// An install made the object for this entry alone.
		spans = cutSpans(doc.children(), []int{memberIndex(doc, servers)})
	} else {
		spans = cutSpans(servers.children(), []int{memberIndex(servers, entry)})
	}
	return &Edit{Out: cut(data, spans), Events: done}, nil
}

// Status says whether data registers git-hegel's server.
func (m *MCPConfig) Status(data []byte) (MCPState, error) {
	if m.toml {
		return tomlStatus(data)
	}
	doc, err := document(data)
	if err != nil {
		return MCPMissing, err
	}
	entry := doc.get("mcpServers").get(MCPServerName)
	switch {
	case entry == nil:
		return MCPMissing, nil
	case isOurMCPEntry(entry):
		return MCPRegistered, nil
	}
	return MCPChanged, nil
}

// mcpJSONEntry is the member an install writes.
func mcpJSONEntry() field {
	return field{MCPServerName, object(field{"command", str(mcpCommand)}, field{"args", raw(mcpArgs)})}
}

// mcpJSONFile is what an install writes where there is no file.
func mcpJSONFile(f format) []byte {
	return []byte(f.render(object(field{"mcpServers", object(mcpJSONEntry())}), 0) + f.nl)
}

// isOurMCPEntry reports an entry as an install writes it: command and
// args, nothing else, with those values.
func isOurMCPEntry(v *jval) bool {
	if v == nil || !v.obj || len(v.members) != 2 {
		return false
	}
	cmd, ok := v.get("command").str()
	args := v.get("args")
	if !ok || cmd != mcpCommand || args == nil || !args.arr || len(args.items) != 2 {
		return false
	}
	a0, ok0 := args.items[0].str()
	a1, ok1 := args.items[1].str()
	return ok0 && ok1 && a0 == "hegel" && a1 == "mcp"
}

// Codex's config.toml is edited as lines: git-hegel's table is appended as
// a block of its own, after a line break, and uninstall removes exactly
// that block and that line break.

// tomlBlock is the table an install appends.
func tomlBlock(nl string) []byte {
	return []byte("[mcp_servers." + MCPServerName + "]" + nl + `command = "` + mcpCommand + `"` + nl + "args = " + mcpArgs + nl)
}

// tomlNamed reports an entry of git-hegel's name, however written: the
// table ([mcp_servers.git-hegel], quoted or spaced), one of its
// sub-tables, or keys (mcp_servers.git-hegel.command = … at the top,
// git-hegel = {…} under [mcp_servers]). It reads lines, tables and keys,
// not the whole TOML grammar: a multi-line value is read line by line.
func tomlNamed(data []byte) bool {
	ours := func(name string) bool {
		const n = "mcp_servers." + MCPServerName
		return name == n || strings.HasPrefix(name, n+".")
	}
	table := ""
	for _, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "" || t[0] == '#':
			continue
		case t[0] == '[':
			end := strings.LastIndexByte(t, ']')
			if end < 0 {
				continue
			}
			table = tomlName(strings.Trim(t[:end+1], "[]"))
			if ours(table) {
				return true
			}
		default:
			key, _, ok := strings.Cut(t, "=")
			if !ok {
				continue
			}
			name := tomlName(key)
			if table != "" {
				name = table + "." + name
			}
			if ours(name) {
				return true
			}
		}
	}
	return false
}

// tomlName is a dotted name without its spaces and quotes.
func tomlName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '"' || r == '\'' {
			return -1
		}
		return r
	}, s)
}

// tomlOpenString reports text that ends inside a multi-line string, where
// an appended table would become part of the string.
func tomlOpenString(data []byte) bool {
	return bytes.Count(data, []byte(`"""`))%2 != 0 || bytes.Count(data, []byte(`'''`))%2 != 0
}

// tomlOurs is where the block an install appended is: -1 when it is not
// there as written, or when keys of the table follow it (text the user
// added under it, which would move to the table before it).
func tomlOurs(data []byte) (at int, nl string) {
	for _, nl := range []string{"\r\n", "\n"} {
		if at := tomlOursWith(data, nl); at >= 0 {
			return at, nl
		}
	}
	return -1, ""
}

// tomlOursWith is tomlOurs for the block written with line breaks nl.
func tomlOursWith(data []byte, nl string) int {
	block := tomlBlock(nl)
	at := bytes.LastIndex(data, block)
	if at < 0 || (at > 0 && data[at-1] != '\n') {
		return -1
	}
	for _, line := range bytes.Split(data[at+len(block):], []byte("\n")) {
		t := bytes.TrimSpace(line)
		if len(t) == 0 || t[0] == '#' {
			continue
		}
		if t[0] == '[' && !bytes.HasPrefix(bytes.ReplaceAll(t, []byte(" "), nil), []byte("[mcp_servers."+MCPServerName+".")) {
			break
		}
		return -1
	}
	return at
}

func tomlInstall(data []byte) (*Edit, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return &Edit{Out: tomlBlock("\n"), Events: []string{MCPServerName}}, nil
	}
	f := formatOf(data)
	if tomlNamed(data) {
		ed := &Edit{Out: data}
		if at, _ := tomlOurs(data); at < 0 {
			ed.Note = changedByHand
		}
		return ed, nil
	}
	if tomlOpenString(data) {
		return nil, errors.New("it ends inside a multi-line string")
	}
	out := append(append(slices.Clip(data), f.nl...), tomlBlock(f.nl)...)
	return &Edit{Out: out, Events: []string{MCPServerName}}, nil
}

func tomlUninstall(data []byte) (*Edit, error) {
	if !tomlNamed(data) {
		return &Edit{Out: data}, nil
	}
	at, nl := tomlOurs(data)
	if at < 0 {
		return &Edit{Out: data, Note: changedByHand}, nil
	}
	done := []string{MCPServerName}
	block := tomlBlock(nl)
	if at == 0 && len(data) == len(block) {
		return &Edit{Events: done, Remove: true}, nil
	}
	// The line break install put before the block goes with it.
	from := at
	if bytes.HasSuffix(data[:at], []byte(nl)) {
		from -= len(nl)
	}
	out := append(slices.Clip(data[:from]), data[at+len(block):]...)
	if tomlNamed(out) {
		// Another spelling of the entry stays: taking out ours would
		// leave it half there.
		return &Edit{Out: data, Note: changedByHand}, nil
	}
	return &Edit{Out: out, Events: done}, nil
}

func tomlStatus(data []byte) (MCPState, error) {
	switch {
	case !tomlNamed(data):
		return MCPMissing, nil
	case func() bool { at, _ := tomlOurs(data); return at >= 0 }():
		return MCPRegistered, nil
	}
	return MCPChanged, nil
}

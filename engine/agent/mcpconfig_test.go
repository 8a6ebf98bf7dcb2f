package agent

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestMCPConfigJSON(t *testing.T) {
	m := MCPConfigOf(Claude)
	ed, err := m.Install(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"mcpServers\": {\n    \"git-hegel\": {\n      \"command\": \"git\",\n      \"args\": [\"hegel\", \"mcp\"]\n    }\n  }\n}\n"
	if string(ed.Out) != want {
		t.Fatalf("new file:\n%s", ed.Out)
	}
	if un, _ := m.Uninstall(ed.Out); !un.Remove {
		t.Errorf("the file an install created is not removed")
	}
	for _, tc := range []struct{ name, in, out string }{
		{"other servers", "{\n\t\"mcpServers\": {\n\t\t\"db\": {\"command\": \"db-mcp\"}\n\t}\n}\n",
			"{\n\t\"mcpServers\": {\n\t\t\"db\": {\"command\": \"db-mcp\"},\n\t\t\"git-hegel\": {\n\t\t\t\"command\": \"git\",\n\t\t\t\"args\": [\"hegel\", \"mcp\"]\n\t\t}\n\t}\n}\n"},
		{"no servers", `{"theme": "dark"}`, "{\"theme\": \"dark\",\n  \"mcpServers\": {\n    \"git-hegel\": {\n      \"command\": \"git\",\n      \"args\": [\"hegel\", \"mcp\"]\n    }\n  }}"},
		{"empty servers", `{"mcpServers": {}}`, "{\"mcpServers\": {\"git-hegel\": {\n      \"command\": \"git\",\n      \"args\": [\"hegel\", \"mcp\"]\n    }}}"},
	} {
		ed, err := m.Install([]byte(tc.in))
		if err != nil || string(ed.Out) != tc.out || len(ed.Events) != 1 {
			t.Errorf("%s: install gave %v\n%s", tc.name, err, ed.Out)
			continue
		}
		if st, _ := m.Status(ed.Out); st != MCPRegistered {
			t.Errorf("%s: status %v", tc.name, st)
		}
		again, _ := m.Install(ed.Out)
		if len(again.Events) != 0 || !bytes.Equal(again.Out, ed.Out) {
			t.Errorf("%s: a second install changed the file", tc.name)
		}
		un, err := m.Uninstall(ed.Out)
		if err != nil || string(un.Out) != tc.in {
			t.Errorf("%s: uninstall gave %v\n%q", tc.name, err, un.Out)
		}
	}
	// An entry of that name the install did not write stays, both ways.
	own := `{"mcpServers": {"git-hegel": {"command": "/opt/git-hegel", "args": ["mcp"]}}}`
	for _, f := range []func([]byte) (*Edit, error){m.Install, m.Uninstall} {
		ed, err := f([]byte(own))
		if err != nil || string(ed.Out) != own || ed.Note == "" || len(ed.Events) != 0 {
			t.Errorf("the user's own entry: %v %+v", err, ed)
		}
	}
	if st, _ := m.Status([]byte(own)); st != MCPChanged {
		t.Errorf("status of the user's own entry: %v", st)
	}
	if _, err := m.Install([]byte(`{"mcpServers": []}`)); err == nil {
		t.Errorf("mcpServers that is not an object was overwritten")
	}
	if _, err := m.Install([]byte(`{"mcpServers": `)); err == nil {
		t.Errorf("a broken file was edited")
	}
}

func TestMCPConfigTOML(t *testing.T) {
	m := MCPConfigOf(Codex)
	block := "[mcp_servers.git-hegel]\ncommand = \"git\"\nargs = [\"hegel\", \"mcp\"]\n"
	for _, in := range []string{"", "model = \"o3\"\n", "model = \"o3\"", "[mcp_servers.db]\ncommand = \"db\"\n\n", "a = 1\r\n[b]\r\nc = 2\r\n"} {
		ed, err := m.Install([]byte(in))
		if err != nil || len(ed.Events) != 1 {
			t.Fatalf("%q: install: %v %+v", in, err, ed)
		}
		nl := "\n"
		if strings.Contains(in, "\r\n") {
			nl = "\r\n"
		}
		if !strings.HasSuffix(string(ed.Out), strings.ReplaceAll(block, "\n", nl)) {
			t.Errorf("%q: install gave %q", in, ed.Out)
		}
		if st, _ := m.Status(ed.Out); st != MCPRegistered {
			t.Errorf("%q: status %v", in, st)
		}
		if again, _ := m.Install(ed.Out); len(again.Events) != 0 {
			t.Errorf("%q: a second install changed the file", in)
		}
		un, err := m.Uninstall(ed.Out)
		if err != nil || (in == "" && !un.Remove) || (in != "" && string(un.Out) != in) {
			t.Errorf("%q: uninstall gave %v %q (remove %v)", in, err, un.Out, un.Remove)
		}
	}
	for _, in := range []string{
		"[mcp_servers.\"git-hegel\"]\ncommand = \"/opt/bin/git-hegel\"\n",
		"[mcp_servers]\ngit-hegel = { command = \"git\" }\n",
		"mcp_servers.git-hegel.command = \"git\"\n",
		block + "env = { A = \"1\" }\n",
		block + "[mcp_servers.git-hegel.env]\nA = \"1\"\n",
	} {
		for _, f := range []func([]byte) (*Edit, error){m.Install, m.Uninstall} {
			ed, err := f([]byte(in))
			if err != nil || string(ed.Out) != in || ed.Note == "" {
				t.Errorf("%q: an entry not as written was touched: %v %+v", in, err, ed)
			}
		}
	}
	// The same key in another table is not the server.
	if st, _ := m.Status([]byte("[profiles]\ngit-hegel = 1\n")); st != MCPMissing {
		t.Errorf("git-hegel in another table: %v", st)
	}
	if _, err := m.Install([]byte("x = \"\"\"\nopen")); err == nil {
		t.Errorf("appended into an open multi-line string")
	}
	// Tables after ours: uninstall takes out only the block.
	after := "a = 1\n\n" + block + "[other]\nb = 2\n"
	if un, _ := m.Uninstall([]byte(after)); string(un.Out) != "a = 1\n[other]\nb = 2\n" {
		t.Errorf("uninstall with a table after: %q", un.Out)
	}
}

// FuzzMCPConfigRoundTrip: for any file without git-hegel's server,
// install then uninstall gives back the input byte for byte (a file an
// install created is removed), in both formats.
func FuzzMCPConfigRoundTrip(f *testing.F) {
	for _, s := range []string{"", "{}", `{"mcpServers": {}}`, "{\n  \"mcpServers\": {\"a\": {}}\n}\n", "a = 1", "a = 1\n", "[x]\r\ny = 2\r\n", "# only a comment\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, m := range allMCPConfigs {
			if st, err := m.Status(data); err != nil || st != MCPMissing {
				continue
			}
			ed, err := m.Install(data)
			if err != nil {
				continue
			}
			if len(ed.Events) != 1 {
				t.Fatalf("%s: install of %q changed nothing", m.Agent, data)
			}
			if !m.toml && !json.Valid(ed.Out) {
				t.Fatalf("%s: invalid JSON:\n%s", m.Agent, ed.Out)
			}
			if st, err := m.Status(ed.Out); err != nil || st != MCPRegistered {
				t.Fatalf("%s: status %v %v after install of %q:\n%q", m.Agent, st, err, data, ed.Out)
			}
			un, err := m.Uninstall(ed.Out)
			blank := len(bytes.TrimSpace(data)) == 0
			if err != nil || un.Remove != blank || (!blank && !bytes.Equal(un.Out, data)) {
				t.Fatalf("%s: install then uninstall of\n%q\ngave (remove %v, %v)\n%q", m.Agent, data, un.Remove, err, un.Out)
			}
		}
	})
}

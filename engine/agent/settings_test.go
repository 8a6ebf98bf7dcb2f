package agent

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// roundTrip installs into in, checks the result, and uninstalls again: the
// file must come back byte for byte.
func roundTrip(t *testing.T, s *Settings, in string) string {
	t.Helper()
	ed, err := s.Install([]byte(in))
	if err != nil {
		t.Fatalf("install: %v", err)
	}
	if !json.Valid(ed.Out) {
		t.Fatalf("install wrote invalid JSON:\n%s", ed.Out)
	}
	if have, missing, err := s.Status(ed.Out); err != nil || len(missing) > 0 || !slices.Equal(have, s.Events) {
		t.Fatalf("after install: have %v, missing %v, %v", have, missing, err)
	}
	again, err := s.Install(ed.Out)
	if err != nil || len(again.Events) > 0 || !bytes.Equal(again.Out, ed.Out) {
		t.Fatalf("a second install changed %v: %v", again.Events, err)
	}
	un, err := s.Uninstall(ed.Out)
	if err != nil {
		t.Fatalf("uninstall: %v", err)
	}
	if un.Remove || string(un.Out) != in {
		t.Fatalf("uninstall (remove %v) gave\n%s\nwant\n%s", un.Remove, un.Out, in)
	}
	slices.Sort(un.Events)
	want := slices.Clone(ed.Events)
	slices.Sort(want)
	if !slices.Equal(un.Events, want) {
		t.Errorf("uninstall removed %v, install added %v", un.Events, ed.Events)
	}
	return string(ed.Out)
}

func TestSettingsRoundTripKeepsTheUsersBytes(t *testing.T) {
	claude := SettingsOf(Claude)
	for _, tc := range []struct {
		name, in string
		// kept is text of the user's that the installed file still holds
		// as it was written.
		kept []string
	}{
		{"one line with odd spacing and a number as written",
			`{"a": 1,  "n": 1.50e+3, "b": "x"}`, []string{`{"a": 1,  "n": 1.50e+3, "b": "x"`}},
		{"the user's own empty list",
			`{"hooks": {"Stop": [ ]}}`, []string{`{"hooks": {"Stop": [ `}},
		{"the user's own empty hooks, on lines of their own",
			"{\n  \"hooks\": {\n  }\n}\n", []string{"{\n  \"hooks\": {\n  "}},
		{"an empty object", "{}", []string{"{"}},
		{"an empty object on two lines, no final newline", "{\n}", []string{"{\n"}},
		{"hooks of the user's, tabs, CRLF",
			"{\r\n\t\"hooks\": {\r\n\t\t\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"make && make test\"}]}]\r\n\t}\r\n}\r\n",
			[]string{"[{\"hooks\": [{\"type\": \"command\", \"command\": \"make && make test\"}]}"}},
		{"keys escaped and repeated, values of every kind",
			`{"hooks": {"St\u006fp": [], "x": null}, "hooks2": [true, false, null, -0.5e-7], "a": {"b": {}}}`,
			[]string{`"St\u006fp": [`, `"hooks2": [true, false, null, -0.5e-7], "a": {"b": {}}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := roundTrip(t, claude, tc.in)
			for _, k := range tc.kept {
				if !strings.Contains(out, k) {
					t.Errorf("installed file lost %q:\n%s", k, out)
				}
			}
		})
	}
}

// TestSettingsInstallLayout: new entries follow the file's indentation,
// each on lines of their own, after the user's.
func TestSettingsInstallLayout(t *testing.T) {
	in := "{\n    \"hooks\": {\n        \"Stop\": [\n            {\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}\n        ]\n    }\n}\n"
	ed, err := SettingsOf(Codex).Install([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n    \"hooks\": {\n        \"Stop\": [\n            {\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]},\n" +
		"            {\n                \"hooks\": [\n                    {\n                        \"type\": \"command\",\n" +
		"                        \"command\": \"git hegel hook --agent codex Stop\"\n                    }\n                ]\n            }\n        ],\n" +
		"        \"SessionStart\": ["
	if !strings.HasPrefix(string(ed.Out), want) {
		t.Errorf("got\n%s", ed.Out)
	}
	if !slices.Equal(ed.Events, []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"}) {
		t.Errorf("added %v", ed.Events)
	}
}

// TestSettingsNewFile: where there is no file, install writes every event
// (Cursor's version last), and uninstall removes the file again.
func TestSettingsNewFile(t *testing.T) {
	for _, s := range AllSettings() {
		for _, in := range [][]byte{nil, []byte(" \n")} {
			ed, err := s.Install(in)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ed.Events, s.Events) || !json.Valid(ed.Out) || !bytes.HasPrefix(ed.Out, []byte("{\n  \"hooks\": {\n")) {
				t.Fatalf("%s: %v\n%s", s.Agent, ed.Events, ed.Out)
			}
			if s.Agent == Cursor && !bytes.HasSuffix(ed.Out, []byte("  },\n  \"version\": 1\n}\n")) {
				t.Errorf("cursor's version is not last:\n%s", ed.Out)
			}
			un, err := s.Uninstall(ed.Out)
			if err != nil || !un.Remove || un.Out != nil || len(un.Events) != len(s.Events) {
				t.Errorf("%s: uninstall of a new file: %+v %v", s.Agent, un, err)
			}
		}
	}
	// A file of the user's that holds only Cursor's version stays.
	cursor := SettingsOf(Cursor)
	for _, in := range []string{"{\n  \"version\": 1\n}\n", `{"version": 1}`} {
		roundTrip(t, cursor, in)
	}
}

// TestSettingsUninstallHandEdited: entries of the user's added next to
// git-hegel's stay, whatever an install created around them.
func TestSettingsUninstallHandEdited(t *testing.T) {
	claude := SettingsOf(Claude)
	ed, err := claude.Install(nil)
	if err != nil {
		t.Fatal(err)
	}
	// The user adds a hook of their own to the Stop group, and one more
	// group to SessionStart.
	edited := strings.Replace(string(ed.Out), `"command": "git hegel hook Stop"`, `"command": "git hegel hook Stop"
          },
          {
            "type": "command",
            "command": "say stopped"`, 1)
	edited = strings.Replace(edited, `"command": "git hegel hook SessionStart"
          }
        ]
      }`, `"command": "git hegel hook SessionStart"
          }
        ]
      },
      {"hooks": [{"type": "command", "command": "say hello"}]}`, 1)
	if !json.Valid([]byte(edited)) {
		t.Fatalf("test file is not JSON:\n%s", edited)
	}
	un, err := claude.Uninstall([]byte(edited))
	if err != nil || un.Remove {
		t.Fatalf("uninstall: %+v %v", un, err)
	}
	out := string(un.Out)
	if !json.Valid(un.Out) || strings.Contains(out, HookCommandPrefix) || !strings.Contains(out, "say stopped") || !strings.Contains(out, "say hello") {
		t.Errorf("after uninstall:\n%s", out)
	}
	if strings.Contains(out, "UserPromptSubmit") || strings.Contains(out, "PostToolUse") {
		t.Errorf("lists of git-hegel's alone were kept:\n%s", out)
	}
}

func TestSettingsRefusals(t *testing.T) {
	claude := SettingsOf(Claude)
	for _, tc := range []struct{ in, want string }{
		{"{\n  \"hooks\": {\n    \"Stop\": [,]\n  }\n}\n", "line 3: invalid character ',' looking for beginning of value"},
		{`[1]`, "the top level is not a JSON object"},
		{`{} {}`, "line 1: text after the end of the JSON value"},
		{`{"hooks": []}`, `"hooks" is not a JSON object`},
		{`{"hooks": {"Stop": {}}}`, "hooks.Stop is not a JSON list"},
	} {
		if _, err := claude.Install([]byte(tc.in)); err == nil || err.Error() != tc.want {
			t.Errorf("install %s: %v, want %s", tc.in, err, tc.want)
		}
	}
	// Nothing of git-hegel's to take out of a "hooks" that is no object.
	if un, err := claude.Uninstall([]byte(`{"hooks": []}`)); err != nil || len(un.Events) > 0 {
		t.Errorf("uninstall: %+v %v", un, err)
	}
}

func TestSettingsCursorVersionNote(t *testing.T) {
	cursor := SettingsOf(Cursor)
	ed, err := cursor.Install([]byte(`{"hooks": {}}`))
	if err != nil || ed.Note == "" || bytes.Contains(ed.Out, []byte("version")) {
		t.Errorf("%+v %v", ed, err)
	}
	if ed, err := cursor.Install([]byte(`{"version": 1}`)); err != nil || ed.Note != "" {
		t.Errorf("%+v %v", ed, err)
	}
}

// holdsOurs reports a document with any string that starts like one of
// git-hegel's commands: install would find it installed already, so
// uninstall would take out what install did not add.
func holdsOurs(v *jval) bool {
	if s, ok := v.str(); ok && IsHookCommand(s) {
		return true
	}
	for _, m := range v.members {
		if IsHookCommand(m.key) || holdsOurs(m.val) {
			return true
		}
	}
	return slices.ContainsFunc(v.items, holdsOurs)
}

// FuzzSettingsRoundTrip: for any JSON object without git-hegel's entries,
// install then uninstall gives back the input byte for byte, for every
// agent, and the installed file is valid JSON with every hook in it.
func FuzzSettingsRoundTrip(f *testing.F) {
	for _, s := range []string{
		`{}`, "{\n}\n", `{"a": 1,  "n": 1.50e+3,}`, `{"a": 1,  "n": 1.50e+3}`,
		`{"hooks": {"Stop": [ ]}}`, `{"hooks": {}}`, "{\n  \"hooks\": {\n  }\n}\n",
		`{"version": 1}`, "{\n  \"version\": 1\n}\n",
		"{\n\t\"hooks\": {\n\t\t\"PostToolUse\": [{\"matcher\": \"Edit\", \"hooks\": [{\"type\": \"command\", \"command\": \"gofmt -w .\"}]}]\n\t}\n}\n",
		`{"hooks": {"stop": [{"command": "say bye"}], "sessionStart": []}, "version": 1}`,
		"{\r\n  \"permissions\": {\"allow\": [\"Bash(make && make test)\"]}\r\n}\r\n",
		`  {"hooks": {"Stop": [], "Stop": [1]}}  `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := document(data)
		if err != nil || doc == nil || holdsOurs(doc) {
			return
		}
		for _, s := range AllSettings() {
			ed, err := s.Install(data)
			if err != nil {
				// Only what install refuses to overwrite.
				if !strings.Contains(err.Error(), "is not a JSON") {
					t.Fatalf("%s: install: %v", s.Agent, err)
				}
				continue
			}
			if !json.Valid(ed.Out) {
				t.Fatalf("%s: invalid JSON:\n%s", s.Agent, ed.Out)
			}
			if _, missing, err := s.Status(ed.Out); err != nil || len(missing) > 0 {
				t.Fatalf("%s: missing %v after install: %v\n%s", s.Agent, missing, err, ed.Out)
			}
			un, err := s.Uninstall(ed.Out)
			if err != nil || un.Remove || !bytes.Equal(un.Out, data) {
				t.Fatalf("%s: install then uninstall of\n%q\ngave (remove %v, %v)\n%q", s.Agent, data, un.Remove, err, un.Out)
			}
		}
	})
}

// An install over an earlier one whose PreToolUse matcher was narrower
// widens it in place, and touches nothing else; a matcher the user wrote
// on an entry of their own stays.
func TestInstallUpgradesOurMatcher(t *testing.T) {
	old := `{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "^(Edit|MultiEdit|Write|NotebookEdit|apply_patch)$",
        "hooks": [{"type": "command", "command": "git hegel hook PreToolUse"}]
      },
      {
        "matcher": "Edit",
        "hooks": [{"type": "command", "command": "my-linter"}]
      }
    ]
  }
}
`
	s := SettingsOf(Claude)
	ed, err := s.Install([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	out := string(ed.Out)
	if !strings.Contains(out, `"matcher": "`+PreToolMatcher+`"`) || strings.Contains(out, EditMatcher) {
		t.Errorf("the matcher was not widened:\n%s", out)
	}
	if !strings.Contains(out, `"matcher": "Edit",`) || !strings.Contains(out, "my-linter") {
		t.Errorf("the user's entry changed:\n%s", out)
	}
	if !slices.Contains(ed.Events, "PreToolUse") {
		t.Errorf("Events = %v, want PreToolUse among them", ed.Events)
	}
	again, err := s.Install(ed.Out)
	if err != nil || string(again.Out) != out || len(again.Events) != 0 {
		t.Errorf("a second install changed something: %v %v", again.Events, err)
	}
}

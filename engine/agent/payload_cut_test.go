package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestCutPayload: long strings are cut at a character boundary (never
// inside an escape), the rest of the document is kept as it was, and the
// result is valid JSON saying how much each string lost.
func TestCutPayload(t *testing.T) {
	long := func(unit string) string { return strings.Repeat(unit, cutStringLen/len(unit)+1000) }
	for _, tc := range []struct {
		name, value string
	}{
		{"ascii", long("a")},
		{"multibyte", "x" + long("é")},         // cut falls inside a 2-byte character
		{"emoji", "xy" + long("😀")},            // and inside a 4-byte one
		{"escapes", "x" + long(`\u00e9`)},      // inside a \u escape
		{"quotes", "xyz" + long(`\"`)},         // an escaped quote never ends the string
		{"backslashes", "x" + long(`\\`)},      // nor an escaped backslash
		{"mixed", "ab" + long(`\n\t"é\u20ac`)}, // (the raw quote is escaped below)
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := strings.ReplaceAll(tc.value, `"é`, `\"é`)
			if tc.name == "quotes" || tc.name == "escapes" || tc.name == "backslashes" {
				raw = tc.value
			}
			doc := `{"hook_event_name": "PostToolUse", "tool_input": {"file_path": "a.go", "content": "` + raw + `"}, "n": [1, 2.5, true, null]}`
			out, cut, err := CutPayload(strings.NewReader(doc))
			if err != nil {
				t.Fatal(err)
			}
			if !utf8.Valid(out) {
				t.Fatal("invalid UTF-8")
			}
			var v struct {
				Hook  string `json:"hook_event_name"`
				Input struct {
					Path    string `json:"file_path"`
					Content string `json:"content"`
				} `json:"tool_input"`
				N []any `json:"n"`
			}
			if err := json.Unmarshal(out, &v); err != nil {
				t.Fatalf("not JSON: %v\n%.200s…", err, out)
			}
			if v.Hook != "PostToolUse" || v.Input.Path != "a.go" || len(v.N) != 4 {
				t.Errorf("small fields changed: %+v", v)
			}
			suffix := fmt.Sprintf("…[%d bytes cut]", cut)
			if cut <= 0 || !strings.HasSuffix(v.Input.Content, suffix) {
				t.Errorf("cut %d, content ends %q", cut, v.Input.Content[max(0, len(v.Input.Content)-40):])
			}
			if int64(len(doc)-len(out)) != cut-int64(len(suffix)) {
				t.Errorf("cut %d bytes, but the document shrank by %d", cut, len(doc)-len(out))
			}
		})
	}

	// Short documents pass unchanged.
	small := `{"a": "b\"c", "d": ["\\"], "e": "\u00e9"}`
	if out, cut, err := CutPayload(strings.NewReader(small)); err != nil || cut != 0 || string(out) != small {
		t.Errorf("small: %q %d %v", out, cut, err)
	}

	// Past the total bound the rest is read and dropped: the reader is
	// drained, and what is cut is counted.
	var b strings.Builder
	b.WriteString("[")
	for b.Len() < 3*cutTotalLen {
		b.WriteString(`"x", `)
	}
	b.WriteString(`"x"]`)
	r := strings.NewReader(b.String())
	out, cut, err := CutPayload(r)
	if err != nil || len(out) > cutTotalLen || int64(len(out))+cut != int64(b.Len()) || r.Len() != 0 {
		t.Errorf("huge structure: kept %d, cut %d of %d, left %d, %v", len(out), cut, b.Len(), r.Len(), err)
	}
}

// TestCutPayloadRandom: whatever JSON with long strings comes in, what
// comes out parses, and every string short enough comes out as it was.
func TestCutPayloadRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "é", "😀", "\"", "\\", "\n", "\u2028", "\x01", "/"}
	for i := range 40 {
		doc := map[string]any{"short": fmt.Sprintf("s%d\"é", i), "num": i}
		var sb strings.Builder
		n := rng.IntN(3 * cutStringLen)
		for sb.Len() < n {
			sb.WriteString(pieces[rng.IntN(len(pieces))])
		}
		doc["long"] = sb.String()
		doc["nested"] = []any{map[string]any{"k": string([]rune(sb.String())[:min(len([]rune(sb.String())), 10)])}}
		in, _ := json.Marshal(doc)
		out, cut, err := CutPayload(bytes.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if got["short"] != doc["short"] || fmt.Sprint(got["nested"]) != fmt.Sprint(doc["nested"]) {
			t.Errorf("case %d: short fields changed", i)
		}
		if cut == 0 && got["long"] != doc["long"] {
			t.Errorf("case %d: nothing cut, but the long string changed", i)
		}
	}
}

// TestParseHookCut: the events of a cut payload say so.
func TestParseHookCut(t *testing.T) {
	h, err := ParseHook(HookInput{Event: "PostToolUse", Agent: Claude, Now: time.Unix(0, 0), Cut: 12345,
		Payload: []byte(`{"hook_event_name":"PostToolUse","session_id":"s","tool_name":"Write","tool_input":{"file_path":"x"}}`)})
	if err != nil || len(h.Events) != 1 || h.Events[0].PayloadCut != 12345 {
		t.Fatalf("%+v %v", h, err)
	}
	b, _ := json.Marshal(h.Events[0])
	if !strings.Contains(string(b), `"payload_cut":12345`) {
		t.Errorf("%s", b)
	}
}

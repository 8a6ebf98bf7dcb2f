package gitstore

import (
	"encoding/json"
	"testing"

	"github.com/git-hegel/git-hegel/engine"
)

// chainStateOf must agree with json.Unmarshal on every valid document, and
// refuse what json refuses in the fields it reads.
func TestChainStateOf(t *testing.T) {
	docs := []string{
		`{"task":"t","current_node":"plan","history":["a","b"],"status":"active"}`,
		"{\n  \"current_node\": \"spec\",\n  \"history\": [\n    \"a\"\n  ],\n  \"status\": \"completed\"\n}\n",
		`{"status":"failed"}`,
		`{}`,
		`{"current_node":"a\"b","status":"x\u0041"}`,
		`{"nested":{"status":"inner","current_node":"inner"},"status":"outer","current_node":"outer"}`,
		`{"list":[{"status":"in"},["]","}"]],"status":"s"}`,
		`{"current_node":null,"status":"paused"}`,
		`{"n":-1.5e3,"t":true,"f":false,"z":null,"current_node":"x"}`,
		`{"curr\u0065nt_node":"escaped key","status":"s"}`,
		`{"status":"first","status":"second"}`,
		`{"step_results":{"a":{"out":"{\"status\":\"no\"}"}},"status":"yes"}`,
		`{"stAtus":"folded","Current_Node":"folded"}`,
	}
	for _, d := range docs {
		var want engine.ChainState
		if err := json.Unmarshal([]byte(d), &want); err != nil {
			t.Fatalf("bad test document %s: %v", d, err)
		}
		got, ok := chainStateOf([]byte(d))
		if !ok || *got != want {
			t.Errorf("chainStateOf(%s) = %+v, %v; want %+v", d, got, ok, want)
		}
	}
	for _, d := range []string{``, `[]`, `{"status":1}`, `{"status":"a"`, `{"status" "a"}`, `{"current_node":"a",}`, `{"a":[}`, `{"a":"b"} x`} {
		if st, ok := chainStateOf([]byte(d)); ok {
			t.Errorf("chainStateOf(%q) = %+v, want a refusal", d, st)
		}
	}
}

func FuzzChainStateOf(f *testing.F) {
	f.Add([]byte(`{"current_node":"a","history":["a"],"status":"active"}`))
	f.Add([]byte(`{"x":{"status":"b"},"status":"c"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var want engine.ChainState
		if json.Unmarshal(b, &want) != nil {
			return // the scan may read what json refuses (task_chain_state.go)
		}
		got, ok := chainStateOf(b)
		if !ok || *got != want {
			t.Errorf("chainStateOf(%q) = %+v, %v; want %+v", b, got, ok, want)
		}
	})
}

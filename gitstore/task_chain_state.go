package gitstore

import (
	"encoding/json"
	"strings"

	"github.com/git-hegel/git-hegel/engine"
)

// chainStateOf reads current_node and status from a state.json without
// decoding the rest. `log <task>` reads the state of every commit of the
// chain, and a state's history grows by an entry per operation, so
// decoding each in full made the log quadratic in json's slow path; a
// byte scan past the other values is several times faster. Anything the
// scan does not understand is decoded by encoding/json instead.
func chainStateOf(b []byte) (*engine.ChainState, bool) {
	if st, ok := scanChainState(b); ok {
		return st, true
	}
	var st engine.ChainState
	if json.Unmarshal(b, &st) != nil {
		return nil, false
	}
	return &st, true
}

// scanChainState is the fast path of chainStateOf: a JSON object whose
// top-level current_node and status, if present, are strings. It gives up
// (ok false) on anything unusual: invalid JSON, a key written with escapes,
// a repeated key, a key json would match to a field only by folding
// case ("Status"), a value of another type.
func scanChainState(b []byte) (*engine.ChainState, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	i++
	st := &engine.ChainState{}
	var seenNode, seenStatus bool
	for first := true; ; first = false {
		i = skipSpace(b, i)
		if i >= len(b) {
			return nil, false
		}
		if b[i] == '}' && first {
			i++
			break
		}
		if b[i] != '"' {
			return nil, false
		}
		end, plain := stringEnd(b, i)
		if end < 0 || !plain {
			return nil, false
		}
		key := string(b[i+1 : end-1])
		if !plainKey(key) {
			return nil, false // encoding/json matches keys case-insensitively
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i = skipSpace(b, i+1)
		vstart := i
		if i = skipValue(b, i); i < 0 {
			return nil, false
		}
		switch key {
		case "current_node", "status":
			var s string
			if json.Unmarshal(b[vstart:i], &s) != nil {
				return nil, false // null, a number…: leave it to encoding/json
			}
			if key == "status" {
				if seenStatus {
					return nil, false
				}
				seenStatus, st.Status = true, s
			} else {
				if seenNode {
					return nil, false
				}
				seenNode, st.CurrentNode = true, s
			}
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return nil, false
		}
		if b[i] == '}' {
			i++
			break
		}
		if b[i] != ',' {
			return nil, false
		}
		i++
	}
	if skipSpace(b, i) != len(b) {
		return nil, false
	}
	return st, true
}

// plainKey reports whether key is ASCII and, if it matches a field read
// here ignoring case, as encoding/json does, matches it exactly.
func plainKey(key string) bool {
	for i := 0; i < len(key); i++ {
		if key[i] >= 0x80 {
			return false
		}
	}
	for _, name := range [...]string{"current_node", "status"} {
		if strings.EqualFold(key, name) && key != name {
			return false
		}
	}
	return true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the string starting at b[i] (a
// quote), -1 if it is unterminated or holds a control character, and
// whether it has no escapes.
func stringEnd(b []byte, i int) (int, bool) {
	plain := true
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1, plain
		case c == '\\':
			plain = false
			j++
		case c < 0x20:
			return -1, false
		}
	}
	return -1, false
}

// skipValue returns the index just past the JSON value at b[i], or -1.
// It follows the structure (brackets and strings); a scalar's own syntax
// is checked only where it is read. So a state.json whose unread values
// are malformed still shows its node and status, where json.Unmarshal
// would refuse the whole file: every state git-hegel writes or merges is
// validated as JSON first (docs/storage.md), so only a hand-made commit
// can tell the difference, and the log is a view.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		end, _ := stringEnd(b, i)
		return end
	case '{', '[':
		var stack []byte
		for j := i; j < len(b); j++ {
			switch c := b[j]; c {
			case '"':
				end, _ := stringEnd(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				stack = append(stack, c)
			case '}', ']':
				if len(stack) == 0 || (c == '}') != (stack[len(stack)-1] == '{') {
					return -1
				}
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && (b[j] == '-' || b[j] == '+' || b[j] == '.' || (b[j] >= '0' && b[j] <= '9') || (b[j] >= 'a' && b[j] <= 'z') || (b[j] >= 'A' && b[j] <= 'Z')) {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A client that writes its requests and closes its end (a script, `git
// hegel mcp < requests.jsonl`) gets every answer before the server ends:
// the SDK ends the session as soon as its input does, so the input's end
// is held back until each request read has had its response written.
// Requests and responses are matched by id, read as the SDK reads it (so
// 12.5 and 12, 1e2 and 100 are one id, as in its answers).
//
// The SDK drops, unanswered, a request whose id is still in use by one it
// has not answered; counted, that request would hold the input's end back
// for ever. The reader answers such a request itself, with the protocol's
// invalid-request error, and does not pass it on: the ids it has passed on
// and not seen answered include every id the SDK holds, so each request
// gets exactly one answer.

type mcpDrain struct {
	mu      sync.Mutex
	cond    *sync.Cond
	pending map[jsonrpc.ID]bool
}

func newMCPDrain() *mcpDrain {
	d := &mcpDrain{pending: map[jsonrpc.ID]bool{}}
	d.cond = sync.NewCond(&d.mu)
	return d
}

// begin records a request passed on; false when one with the same id is
// still unanswered.
func (d *mcpDrain) begin(id jsonrpc.ID) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pending[id] {
		return false
	}
	d.pending[id] = true
	return true
}

// end records a response written.
func (d *mcpDrain) end(id jsonrpc.ID) {
	d.mu.Lock()
	delete(d.pending, id)
	if len(d.pending) == 0 {
		d.cond.Broadcast()
	}
	d.mu.Unlock()
}

func (d *mcpDrain) wait() {
	d.mu.Lock()
	for len(d.pending) > 0 {
		d.cond.Wait()
	}
	d.mu.Unlock()
}

// drainReader hands the SDK the client's input line by line, counting
// requests, and gives it the input's end once they are all answered. A
// line that is no JSON-RPC message is answered here with the error the
// protocol names (the SDK would end the session on it), and dropped.
type drainReader struct {
	d   *mcpDrain
	in  io.Closer
	r   *bufio.Reader
	w   *drainWriter // where a refused line's error goes
	buf []byte
}

// refuse answers a line the SDK cannot read: nil when it can, with the
// message it holds.
func refuse(line []byte) ([]byte, jsonrpc.Message) {
	t := bytes.TrimSpace(line)
	if len(t) == 0 {
		return nil, nil
	}
	code, msg := 0, ""
	var m jsonrpc.Message
	switch {
	case !json.Valid(t):
		code, msg = jsonrpc.CodeParseError, "Parse error: the line is not JSON"
	case t[0] == '[':
		code, msg = jsonrpc.CodeInvalidRequest, "Invalid request: batches are not supported"
	default:
		var err error
		if m, err = jsonrpc.DecodeMessage(t); err != nil {
			code, msg = jsonrpc.CodeInvalidRequest, "Invalid request: "+err.Error()
		}
	}
	if code == 0 {
		return nil, m
	}
	// The id is read from the members before what cannot be read, so a
	// request whose arguments are not JSON (a NaN, a cut line) is
	// answered under its id and its client does not wait for ever.
	return errorLine(idOf(t), code, msg), nil
}

// errorLine is a JSON-RPC error response, newline-terminated.
func errorLine(id json.RawMessage, code int, msg string) []byte {
	out, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: int64(code), Message: msg}})
	return append(out, '\n')
}

// mcpMaxLine bounds one line of the client's input, the SDK's own bound:
// the SDK ends the session on a longer frame, so such a line is answered
// here and dropped, and never held whole in memory.
const mcpMaxLine = mcp.DefaultMaxLineLength

// readLine reads one line of at most max bytes; a longer one is read to
// its end and dropped, and only its start (for the request's id) kept.
func readLine(r *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		part, err := r.ReadSlice('\n')
		switch {
		case tooLong:
		case len(line)+len(part) > limit:
			tooLong = true
			line = append(line, part...)[:min(len(line)+len(part), idPrefix)]
		default:
			line = append(line, part...)
		}
		if err != bufio.ErrBufferFull {
			return line, tooLong, err
		}
	}
}

// idPrefix is how much of a line too long to read is kept to find the
// request's id in: clients write it before the parameters.
const idPrefix = 4096

// idOf finds the id of the request that starts with prefix: null when
// the id is not among the members before the prefix ends or stops being
// JSON.
func idOf(prefix []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return json.RawMessage("null")
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			break
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			break
		}
		if k == "id" && len(v) > 0 && (v[0] == '"' || v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) {
			return v
		}
	}
	return json.RawMessage("null")
}

// exactID says whether raw, a request's id as written, is one the SDK
// answers under the same id: a string, or an integer a 64-bit number holds.
func exactID(raw json.RawMessage) bool {
	if len(raw) > 0 && raw[0] == '"' {
		return true
	}
	_, err := strconv.ParseInt(string(raw), 10, 64)
	return err == nil
}

func (r *drainReader) Read(p []byte) (int, error) {
	if len(r.buf) == 0 {
		line, tooLong, err := readLine(r.r, mcpMaxLine)
		answer, m := []byte(nil), jsonrpc.Message(nil)
		if tooLong {
			answer = errorLine(idOf(line), jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid request: the line is longer than %d MiB", mcpMaxLine>>20))
		} else {
			answer, m = refuse(line)
		}
		if answer == nil && m == nil {
			line = nil // blank: nothing for the SDK, which would buffer it
		}
		if req, ok := m.(*jsonrpc.Request); ok && req.ID.IsValid() {
			if raw := idOf(line); !exactID(raw) {
				// The SDK reads 12.5 as 12 and answers under that: the
				// client, waiting for 12.5, would wait for ever.
				answer = errorLine(raw, jsonrpc.CodeInvalidRequest, "Invalid request: an id must be a string or an integer")
			} else if !r.d.begin(req.ID) {
				id, _ := json.Marshal(req.ID.Raw())
				answer = errorLine(id, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid request: id %s is in use by a request not answered yet", id))
			}
		}
		if answer != nil {
			if _, werr := r.w.writeOwn(answer); werr != nil {
				return 0, werr
			}
			line = nil
		}
		if len(line) > 0 {
			r.buf = line
		}
		if len(r.buf) == 0 && err == nil {
			return r.Read(p)
		}
		if len(r.buf) == 0 {
			if err == io.EOF {
				r.d.wait()
			}
			return 0, err
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

func (r *drainReader) Close() error { return r.in.Close() }

// drainWriter passes the SDK's output on, counting the responses in it.
type drainWriter struct {
	d    *mcpDrain
	mu   sync.Mutex // the SDK's messages and refused lines' errors, whole
	w    io.Writer
	part []byte // a line not yet ended
}

// writeOwn writes a message the server makes itself.
func (w *drainWriter) writeOwn(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

func (w *drainWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.w.Write(p)
	w.part = append(w.part, p[:n]...)
	for {
		i := bytes.IndexByte(w.part, '\n')
		if i < 0 {
			break
		}
		if m, err := jsonrpc.DecodeMessage(bytes.TrimSpace(w.part[:i])); err == nil {
			if resp, ok := m.(*jsonrpc.Response); ok && resp.ID.IsValid() {
				w.d.end(resp.ID)
			}
		}
		w.part = w.part[i+1:]
	}
	return n, err
}

func (w *drainWriter) Close() error { return nil }

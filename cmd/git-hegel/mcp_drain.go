package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A client that writes its requests and closes its end (a script, `git
// hegel mcp < requests.jsonl`) gets every answer before the server ends:
// the SDK ends the session as soon as its input does, so the input's end
// is held back until each request read has had its response written.
// Requests are the lines with an "id" and a "method"; responses the lines
// written with an "id" and no "method".

type mcpDrain struct {
	mu      sync.Mutex
	cond    *sync.Cond
	pending int
}

func newMCPDrain() *mcpDrain {
	d := &mcpDrain{}
	d.cond = sync.NewCond(&d.mu)
	return d
}

type rpcHead struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// lineKind reads a message's id and method; a line that is not one JSON
// object counts as neither.
func lineKind(line []byte) (request, response bool) {
	var h rpcHead
	if json.Unmarshal(bytes.TrimSpace(line), &h) != nil || len(h.ID) == 0 || string(h.ID) == "null" {
		return false, false
	}
	return h.Method != "", h.Method == ""
}

func (d *mcpDrain) add(n int) {
	d.mu.Lock()
	d.pending += n
	if d.pending <= 0 {
		d.pending = 0
		d.cond.Broadcast()
	}
	d.mu.Unlock()
}

func (d *mcpDrain) wait() {
	d.mu.Lock()
	for d.pending > 0 {
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

// refuse answers a line the SDK cannot read: "" when it can.
func refuse(line []byte) []byte {
	t := bytes.TrimSpace(line)
	if len(t) == 0 {
		return nil
	}
	code, msg := 0, ""
	switch {
	case !json.Valid(t):
		code, msg = jsonrpc.CodeParseError, "Parse error: the line is not JSON"
	case t[0] == '[':
		code, msg = jsonrpc.CodeInvalidRequest, "Invalid request: batches are not supported"
	default:
		if _, err := jsonrpc.DecodeMessage(t); err != nil {
			code, msg = jsonrpc.CodeInvalidRequest, "Invalid request: "+err.Error()
		}
	}
	if code == 0 {
		return nil
	}
	var h rpcHead
	id := json.RawMessage("null")
	if json.Unmarshal(t, &h) == nil && len(h.ID) > 0 && (h.ID[0] == '"' || h.ID[0] == '-' || (h.ID[0] >= '0' && h.ID[0] <= '9')) {
		id = h.ID
	}
	out, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: int64(code), Message: msg}})
	return append(out, '\n')
}

func (r *drainReader) Read(p []byte) (int, error) {
	if len(r.buf) == 0 {
		line, err := r.r.ReadBytes('\n')
		if answer := refuse(line); answer != nil {
			if _, werr := r.w.writeOwn(answer); werr != nil {
				return 0, werr
			}
			line = nil
		}
		if len(line) > 0 {
			if req, _ := lineKind(line); req {
				r.d.add(1)
			}
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
		if _, resp := lineKind(w.part[:i]); resp {
			w.d.add(-1)
		}
		w.part = w.part[i+1:]
	}
	return n, err
}

func (w *drainWriter) Close() error { return nil }

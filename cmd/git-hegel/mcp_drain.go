package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"sync"
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
// requests, and gives it the input's end once they are all answered.
type drainReader struct {
	d   *mcpDrain
	in  io.Closer
	r   *bufio.Reader
	buf []byte
}

func (r *drainReader) Read(p []byte) (int, error) {
	if len(r.buf) == 0 {
		line, err := r.r.ReadBytes('\n')
		if len(line) > 0 {
			if req, _ := lineKind(line); req {
				r.d.add(1)
			}
			r.buf = line
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
	w    io.Writer
	part []byte // a line not yet ended
}

func (w *drainWriter) Write(p []byte) (int, error) {
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

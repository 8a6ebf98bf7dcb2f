package engine

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// What a node's checks and run step printed is kept per attempt in the
// task's tree, logs/<node>_<attempt>.log, written in the commit that
// records the attempt's outcome (the move, the gate, the failed attempt),
// so the task's ref and archive hold what each attempt printed and
// `git hegel log <task> --node N` shows it.
const logsDir = "logs/"

// MaxLogSize bounds one attempt's log: beyond it the oldest output is
// dropped, with a first line that says how much.
const MaxLogSize = 256 << 10

// LogPath is the tree path of node's log of attempt.
func LogPath(node string, attempt int) string {
	return logsDir + node + "_" + strconv.Itoa(max1(attempt)) + ".log"
}

// logBuffer keeps the last MaxLogSize bytes written to it.
type logBuffer struct {
	mu      sync.Mutex
	buf     []byte
	dropped int64
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	if over := len(l.buf) - MaxLogSize; over > 0 {
		l.dropped += int64(over)
		l.buf = append(l.buf[:0], l.buf[over:]...)
	}
	return len(p), nil
}

// Bytes returns the log, headed by a note when output was dropped; nil
// when nothing was written.
func (l *logBuffer) Bytes() []byte {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) == 0 && l.dropped == 0 {
		return nil
	}
	if l.dropped > 0 {
		return append([]byte(fmt.Sprintf("[git-hegel: the first %s of this log were dropped; %s kept]\n", Size(l.dropped), Size(MaxLogSize))), l.buf...)
	}
	return bytes.Clone(l.buf)
}

// AttemptLog is one attempt's log of a node.
type AttemptLog struct {
	Node    string
	Attempt int
	Data    []byte
}

// NodeLogs returns the logs task t keeps for node ("": every node), by
// node in workflow order, then attempt.
func (e *Engine) NodeLogs(t *Task, node string) ([]AttemptLog, error) {
	wf, err := definition(t)
	if err != nil {
		return nil, err
	}
	if node != "" && !wf.HasNode(node) {
		return nil, badNamef("Workflow '%s' has no node '%s' (nodes: %s)", wf.Name, node, strings.Join(wf.Order, ", "))
	}
	dr, ok := e.Tasks.(TaskDirReader)
	if !ok {
		return nil, nil
	}
	files, err := dr.ReadTaskDir(t.State.Task, strings.TrimSuffix(logsDir, "/"))
	if err != nil {
		return nil, err
	}
	var out []AttemptLog
	for name, data := range files {
		base, ok := strings.CutSuffix(name, ".log")
		if !ok {
			continue
		}
		i := strings.LastIndexByte(base, '_')
		if i <= 0 {
			continue
		}
		n, a := base[:i], base[i+1:]
		attempt, err := strconv.Atoi(a)
		if err != nil || attempt < 1 || strconv.Itoa(attempt) != a || (node != "" && n != node) || !wf.HasNode(n) {
			continue
		}
		out = append(out, AttemptLog{Node: n, Attempt: attempt, Data: data})
	}
	slices.SortFunc(out, func(a, b AttemptLog) int {
		if c := slices.Index(wf.Order, a.Node) - slices.Index(wf.Order, b.Node); c != 0 {
			return c
		}
		return a.Attempt - b.Attempt
	})
	return out, nil
}

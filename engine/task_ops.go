package engine

import (
	"strings"
	"time"
)

// ChainCommit is one commit of a task's chain, as `git hegel log <task>`
// reads it.
type ChainCommit struct {
	Commit  string
	At      time.Time
	Who     string
	Message string
	// State is what the log shows of the task's state in that commit
	// (nil when it cannot be read).
	State *ChainState
}

// ChainState is the part of a task's state a log line shows: reading only
// these two fields keeps `log <task>` from decoding every commit's whole
// state, whose history grows with each operation.
type ChainState struct {
	CurrentNode string `json:"current_node"`
	Status      string `json:"status"`
}

// TaskOp is one operation on a task: a commit of its chain, read.
type TaskOp struct {
	ChainCommit
	Op       string // the message's verb: start, next, approve, fail, archive, sync…
	From, To string // the current node before and after ("" when unknown)
	Claim    string // the claim of a next or approve
	Status   string // the status after it
}

// TaskOps reads a task's chain, given oldest first, into operations.
func TaskOps(chain []ChainCommit) []TaskOp {
	out := make([]TaskOp, 0, len(chain))
	var prev *ChainState
	for _, c := range chain {
		op := TaskOp{ChainCommit: c}
		subject, _, _ := strings.Cut(c.Message, "\n")
		verb, rest, ok := strings.Cut(subject, ":")
		if !ok {
			verb = subject
		}
		op.Op = strings.TrimSpace(verb)
		if op.Op == "stash merge" || strings.HasPrefix(op.Op, "sync") {
			op.Op = "sync"
		}
		if prev != nil {
			op.From = prev.CurrentNode
		}
		if c.State != nil {
			op.To, op.Status = c.State.CurrentNode, c.State.Status
		}
		switch op.Op {
		case "next", "approve":
			op.Claim = claimOf(rest)
		}
		out = append(out, op)
		if c.State != nil {
			prev = c.State
		}
	}
	return out
}

// claimOf finds the claim in "<from> -> <to> (<claim>)…".
func claimOf(rest string) string {
	i := strings.Index(rest, "(")
	if i < 0 {
		return ""
	}
	j := strings.Index(rest[i:], ")")
	if j < 0 {
		return ""
	}
	return rest[i+1 : i+j]
}

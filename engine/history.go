package engine

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// The execution history: one entry per run
// that ended, written once when it ends and never changed afterwards.
// docs/history.md describes it for users, docs/storage.md on disk.

// History statuses: how a run ended. StatusFailed is a run given up
// (aborted) while its last attempt had failed.
var historyStatuses = []string{StatusCompleted, StatusAborted, StatusFailed, StatusRolledBack}

// HistoryEntry is one finished execution.
type HistoryEntry struct {
	// ID is stable and the same on every clone: the run's start (UTC, to
	// the second) and 8 hex digits of a hash of the task, its run id and
	// its end, so sorting ids sorts runs by start and recording the same
	// end twice stores one entry.
	ID          string    `json:"id"`
	Task        string    `json:"task"`
	Workflow    string    `json:"workflow"`
	Mode        string    `json:"mode,omitempty"`
	Description string    `json:"description,omitempty"`
	TaskType    string    `json:"task_type,omitempty"`
	Status      string    `json:"status"`
	StartedAt   time.Time `json:"started_at"`
	EndedAt     time.Time `json:"ended_at"`
	DurationMS  int64     `json:"duration_ms"`
	// Nodes completed, failed and skipped, as the task's state had them
	// when the run ended.
	Completed []string `json:"nodes_completed"`
	Failed    []string `json:"nodes_failed"`
	Skipped   []string `json:"nodes_skipped"`
	Attempts  int      `json:"attempts"`
	Rollbacks int      `json:"rollbacks"`
	Error     string   `json:"error,omitempty"`
	Worktree  string   `json:"worktree,omitempty"`
	User      string   `json:"user,omitempty"`
	Start     GitPoint `json:"start"`
	End       GitPoint `json:"end"`
	// Nodes is the time spent and the attempts made at each node.
	Nodes map[string]NodeRun `json:"nodes,omitempty"`
	// Metadata is what the run used: git-hegel's version, the agents,
	// MCP servers and tools seen, the number of nodes (absent in entries
	// written before it was kept).
	Metadata *RunMetadata `json:"metadata,omitempty"`
}

// GitPoint is where git was: branch ("" when detached) and HEAD.
type GitPoint struct {
	Branch string `json:"branch,omitempty"`
	Head   string `json:"head,omitempty"`
}

// NodeRun is what one run did at one node.
type NodeRun struct {
	TimeMS   int64 `json:"time_ms"`
	Visits   int   `json:"visits"`
	Attempts int   `json:"attempts"`
	// Retries are the failed attempts.
	Retries int  `json:"retries,omitempty"`
	Failed  bool `json:"failed,omitempty"`
}

// HistoryStore keeps the history. gitstore keeps it under
// refs/hegel/history, sharded by the UTC day runs started on; tests use an
// in-memory one.
type HistoryStore interface {
	// AddHistory stores an entry. An entry with the same ID is stored
	// once.
	AddHistory(e *HistoryEntry) error
	// HistoryDays lists the UTC days ("2006-01-02") holding entries or
	// the digests of removed ones, oldest first.
	HistoryDays() ([]string, error)
	// HistoryDay returns the entries of runs that started on day, in ID
	// order.
	HistoryDay(day string) ([]*HistoryEntry, error)
	// HistoryDigests returns what the statistics need of every run that
	// started on day: its entries' digests, and those kept for entries
	// gc removed.
	HistoryDigests(day string) ([]Digest, error)
}

// HistoryDayLayout is the layout of a history day.
const HistoryDayLayout = "2006-01-02"

// HistoryID is the id of the run st when it ends at end.
func HistoryID(st *State, end time.Time) string {
	h := sha1.Sum([]byte(st.Task + "\x00" + st.WorkflowID + "\x00" + end.UTC().Format(time.RFC3339Nano)))
	return st.StartedAt.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(h[:4])
}

// ValidHistoryID reports whether id has the form HistoryID gives.
func ValidHistoryID(id string) bool {
	if len(id) != 25 || id[16] != '-' {
		return false
	}
	if _, err := time.Parse("20060102T150405Z", id[:16]); err != nil {
		return false
	}
	for _, c := range id[17:] {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

// HistoryIDDay is the UTC day an id's run started on ("" for a bad id).
func HistoryIDDay(id string) string {
	if !ValidHistoryID(id) {
		return ""
	}
	return id[0:4] + "-" + id[4:6] + "-" + id[6:8]
}

// ShortID is the part of an id `git hegel log` shows.
func (h *HistoryEntry) ShortID() string {
	if i := strings.LastIndexByte(h.ID, '-'); i >= 0 {
		return h.ID[i+1:]
	}
	return h.ID
}

// historyStatus is how st's run ended, for the history.
func historyStatus(st *State) string {
	if st.Status == StatusAborted && st.Error != nil {
		return StatusFailed // given up after its last attempt failed
	}
	return st.Status
}

// NewHistoryEntry is the entry of st's run, which ended (st.EndedAt, else
// end). start and finish are where git was; user is git's user.name.
func NewHistoryEntry(st *State, wf *workflow.Definition, end time.Time, finish *GitInfo, user string) *HistoryEntry {
	if st.EndedAt != nil {
		end = *st.EndedAt
	}
	h := &HistoryEntry{
		ID:          HistoryID(st, end),
		Task:        st.Task,
		Workflow:    st.Workflow,
		Mode:        st.Mode,
		Description: st.Description,
		TaskType:    st.TaskType,
		Status:      historyStatus(st),
		StartedAt:   st.StartedAt.UTC(),
		EndedAt:     end.UTC(),
		DurationMS:  max(end.Sub(st.StartedAt).Milliseconds(), 0),
		Completed:   nonNil(st.CompletedNodes),
		Failed:      nonNil(st.FailedNodes),
		Rollbacks:   len(st.RollbackHistory),
		Worktree:    st.Worktree,
		User:        user,
		Start:       GitPoint{Branch: st.StartBranch, Head: st.StartHead},
		Nodes:       nodeRuns(st, wf, end),
	}
	h.Skipped = []string{}
	for _, s := range st.SkippedNodes {
		if !slices.Contains(h.Skipped, s.Node) {
			h.Skipped = append(h.Skipped, s.Node)
		}
	}
	if st.Error != nil {
		h.Error = st.Error.Message
	}
	if finish != nil {
		h.End = GitPoint{Branch: finish.Branch, Head: finish.Head}
	}
	for _, n := range h.Nodes {
		h.Attempts += n.Attempts
	}
	return h
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}

// nodeRuns splits a run's time over the nodes it visited (the phase log)
// and adds each node's attempts and failed attempts.
func nodeRuns(st *State, wf *workflow.Definition, end time.Time) map[string]NodeRun {
	terminal := func(n string) bool {
		return n == workflow.NodeDone || n == workflow.NodeAborted || (wf != nil && wf.IsTerminal(n))
	}
	visits := st.PhaseLog
	if len(visits) == 0 {
		// A run from before the phase log: its history, timed as one span
		// at the node it ended at.
		for _, n := range st.History {
			visits = append(visits, PhaseVisit{Node: n, Start: st.StartedAt})
		}
	}
	out := map[string]NodeRun{}
	for i, v := range visits {
		if terminal(v.Node) {
			continue
		}
		until := end
		if i+1 < len(visits) {
			until = visits[i+1].Start
		}
		n := out[v.Node]
		n.TimeMS += max(until.Sub(v.Start).Milliseconds(), 0)
		n.Visits++
		out[v.Node] = n
	}
	for node, c := range st.Retries {
		n, ok := out[node]
		if !ok && c == 0 {
			continue
		}
		n.Retries = c
		out[node] = n
	}
	for node, n := range out {
		if a, ok := st.NodeAttempts[node]; ok {
			n.Attempts = a
		} else {
			// A state from before attempts were counted: every visit and
			// every retry after a failure started one.
			n.Attempts = n.Visits + n.Retries
			if st.Error != nil && st.Error.Node == node {
				n.Attempts-- // the failure that failed the task started none
			}
		}
		n.Attempts = max(n.Attempts, n.Retries, 1)
		n.Failed = slices.Contains(st.FailedNodes, node)
		out[node] = n
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// recordHistory adds the history entry of t's run, which just ended. A
// failure is reported, never returned: the run ended all the same.
func (e *Engine) recordHistory(t *Task, wf *workflow.Definition) {
	if e.History == nil || e.HistoryOff {
		return
	}
	var gi *GitInfo
	if e.Git != nil {
		gi = e.Git()
	}
	user := ""
	if e.User != nil {
		user = e.User()
	}
	h := NewHistoryEntry(t.State, wf, e.now(), gi, user)
	evs, err := e.runEvents(t.State)
	if err != nil {
		e.warn(fmt.Sprintf("task %s: its agent events could not be read for the history: %v", t.State.Task, err))
	}
	h.Metadata = metadataOf(t.State, wf, evs, e.Version)
	if err := e.History.AddHistory(h); err != nil {
		e.warn(fmt.Sprintf("task %s finished, but its history entry was not written: %v", t.State.Task, err))
	}
}

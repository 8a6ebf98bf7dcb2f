package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/git-hegel/git-hegel/engine/text"
)

// An approval records the blob ids of the gate node's submitted artifacts
// (approvedArtifacts), so it covers exactly that content. A sync can bring
// a teammate's new version of an artifact between the moment a reviewer
// looked and the moment they approve; the approval would then cover
// content nobody on this clone looked at. So each clone keeps a record,
// outside the synced refs, of the artifact contents it has shown (show,
// artifact, the web task page) or written (a node that ended here
// submitted them), by task, and approve refuses content missing from it
// unless told to approve it unseen. The blob ids come from task states,
// which may have been fetched: they are only ever compared.

// SeenRecord is implemented by a TaskStore that keeps this clone's record
// of the artifact contents it has shown or written, by task. gitstore
// does; the in-memory test stores do not, and approve then checks
// nothing.
type SeenRecord interface {
	// SeenArtifacts returns the blob ids recorded for task; a record
	// that is missing or cannot be read is empty.
	SeenArtifacts(task string) map[string]bool
	// RecordSeen adds blob ids (object ids, checked) to task's record.
	RecordSeen(task string, blobs []string) error
}

// ApproveOptions says which approval to record.
type ApproveOptions struct {
	TaskOptions
	// Comment is kept with the approval.
	Comment string
	// Unseen approves artifacts whose content this clone has not shown
	// or written (--unseen).
	Unseen bool
	// Shown, when set, is what the page the approval comes from showed
	// of the gate. The approval is then refused unless the task still
	// waits at that node with exactly those artifacts; the clone's
	// record is not consulted (the page is the evidence).
	Shown *ShownGate
}

// ShownGate is a gate as a page showed it: the node and the blob ids of
// the node's submitted artifacts.
type ShownGate struct {
	Node  string
	Blobs []string
}

// UnseenError refuses an approval of an artifact whose content this
// clone has not shown or written.
type UnseenError struct {
	Task, Node, Path, Blob string
}

func (e *UnseenError) Error() string {
	return fmt.Sprintf("%s (node %s, blob %s) has not been shown on this clone: see it with 'git hegel artifact %s %s' or 'git hegel show %s', then approve; --unseen approves it anyway",
		text.QuotePath(e.Path, false), e.Node, ShortID(e.Blob), e.Task, shellArg(e.Path), e.Task)
}

// StaleGateError refuses an approval from a page that showed other
// artifacts (or another gate) than the task holds now.
type StaleGateError struct {
	Task, Node string
	// Path and Blob name the first artifact the page did not show
	// ("" when one it showed is gone, or the node is another).
	Path, Blob string
	// Moved: the task waits at another node than the page showed.
	Moved bool
	// Again: the task waits at the node the page showed, reached again
	// since (its work sent back and done over).
	Again bool
}

func (e *StaleGateError) Error() string {
	switch {
	case e.Moved:
		return fmt.Sprintf("Task %s waits at '%s' now, not at the gate this page showed; nothing changed: reload the page and look again", e.Task, e.Node)
	case e.Again:
		return fmt.Sprintf("Task %s waits at '%s' again, reached anew since this page showed it; nothing changed: reload the page and look again", e.Task, e.Node)
	case e.Path != "":
		return fmt.Sprintf("%s (node %s) is at blob %s now, which this page did not show; nothing changed: reload the page and look again", text.QuotePath(e.Path, false), e.Node, ShortID(e.Blob))
	}
	return fmt.Sprintf("The artifacts of task %s at '%s' changed since this page showed them; nothing changed: reload the page and look again", e.Task, e.Node)
}

// checkSeen refuses the approval of node's artifacts in st that o does
// not vouch for: with o.Shown, any difference from what the page showed;
// otherwise an artifact whose content this clone's record does not hold
// (unless o.Unseen). A node without artifacts passes.
func (e *Engine) checkSeen(st *State, node string, o ApproveOptions) error {
	arts := approvedArtifacts(st, node)
	if o.Shown != nil {
		if o.Shown.Node != node {
			return &StaleGateError{Task: st.Task, Node: node, Moved: true}
		}
		for _, a := range arts {
			if !slices.Contains(o.Shown.Blobs, a.Blob) {
				return &StaleGateError{Task: st.Task, Node: node, Path: a.Path, Blob: a.Blob}
			}
		}
		for _, b := range o.Shown.Blobs {
			if !slices.ContainsFunc(arts, func(a ApprovedArtifact) bool { return a.Blob == b }) {
				return &StaleGateError{Task: st.Task, Node: node}
			}
		}
		return nil
	}
	if o.Unseen || len(arts) == 0 {
		return nil
	}
	rec, ok := e.Tasks.(SeenRecord)
	if !ok {
		return nil
	}
	seen := rec.SeenArtifacts(st.Task)
	for _, a := range arts {
		if !seen[a.Blob] {
			return &UnseenError{Task: st.Task, Node: node, Path: a.Path, Blob: a.Blob}
		}
	}
	return nil
}

// MarkSeen records that this clone showed (or wrote) the contents blobs
// of task. Ids that are not object ids are left out: they come from task
// states, which may have been fetched, and an approval never matches
// them. A record that cannot be written is a warning: what was shown
// was shown, and approve will ask for it again.
func (e *Engine) MarkSeen(task string, blobs []string) {
	rec, ok := e.Tasks.(SeenRecord)
	if !ok || !ValidTaskName(task) {
		return
	}
	var ids []string
	for _, b := range blobs {
		if objectID(b) && !slices.Contains(ids, b) {
			ids = append(ids, b)
		}
	}
	if len(ids) == 0 {
		return
	}
	if err := rec.RecordSeen(task, ids); err != nil {
		e.warn(fmt.Sprintf("could not note which artifacts of task %s were shown here: %v; approving them may ask to see them again", task, err))
	}
}

// markSubmitted records node's submitted artifacts in st as written on
// this clone: a node that ended here submitted this worktree's files.
func (e *Engine) markSubmitted(st *State, node string) {
	var blobs []string
	for _, s := range st.Submitted[node] {
		blobs = append(blobs, s.Blob)
	}
	e.MarkSeen(st.Task, blobs)
}

// ShownBlobs are the blob ids of the submitted artifacts d lists, as
// `git hegel show` and the task page show them.
func (d *TaskDetail) ShownBlobs() []string {
	var out []string
	for _, a := range d.Artifacts {
		if a.Submitted != nil {
			out = append(out, a.Submitted.Blob)
		}
	}
	return out
}

// GateBlobs are the blob ids of the artifacts d lists for the node its
// gate is at (none when d waits at no gate): what a page that shows d
// vouches for when it approves (ApproveOptions.Shown).
func (d *TaskDetail) GateBlobs() []string {
	if d.Gate == nil {
		return nil
	}
	var out []string
	for _, a := range d.Artifacts {
		if a.Node == d.Gate.Node && a.Submitted != nil {
			out = append(out, a.Submitted.Blob)
		}
	}
	return out
}

// shellArg is p as one word a shell reads back as p: unchanged when it
// holds only common path characters, else in single quotes. A path with
// control characters is shown escaped, as git quotes it, never raw.
func shellArg(p string) string {
	safe := true
	for _, c := range []byte(p) {
		switch {
		case c < 0x20 || c == 0x7f:
			return text.QuotePath(p, false)
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.IndexByte("._-/+@", c) >= 0:
		default:
			safe = false
		}
	}
	if safe {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}

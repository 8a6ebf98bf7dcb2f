package engine

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// Trust. A task carries the workflow definition it runs in its ref, and
// refs travel: a fetch can fast-forward a task to a definition someone
// else wrote, adding a check:, a run: command or an adapter step, or
// rewriting the prompt an agent will read. git draws the same line for
// hooks and config, which never arrive with a fetch. Here a definition may
// run commands and may reach an agent as instructions only when its exact
// content (its git blob id) is trusted on this machine: it is a built-in,
// this clone started a task from it (the file the user chose to start),
// or the user reviewed it with `git hegel trust`. Trust is a local fact
// (the TrustStore, a file in the git directory), never stored in or read
// from refs, so it never travels. An untrusted definition is data: every
// command that only reads or records works; what would run refuses with a
// TrustError, and a prompt is replaced by a notice.
//
// Every caller that runs a definition's commands or hands its prompt to
// an agent goes through MayRun / MayRunNode and PromptTrusted (or the
// methods built on them: view, runChecks, the runner).

// How a definition came to be trusted.
const (
	TrustBuiltin  = "built-in" // byte-identical to a built-in workflow
	TrustStart    = "start"    // a task was started here from it
	TrustReviewed = "trust"    // the user ran git hegel trust
)

// DefinitionID returns the git blob id of a definition: what trust is
// recorded under (`git rev-parse refs/hegel/tasks/<task>:workflow.yaml`).
func DefinitionID(def []byte) string {
	h := sha1.New()
	h.Write([]byte("blob " + strconv.Itoa(len(def)) + "\x00"))
	h.Write(def)
	return hex.EncodeToString(h.Sum(nil))
}

// builtinIDs are the blob ids of the built-in workflows, from their
// bytes: parsing them all would cost a hook that only asks whether a
// definition is one of them several milliseconds. Every earlier version
// of a built-in counts too: a task started from it before an upgrade
// still runs the bytes git-hegel shipped.
var builtinIDs = sync.OnceValue(func() map[string]string {
	out := workflow.FormerBuiltinIDs()
	for name, raw := range workflow.BuiltinSources() {
		out[DefinitionID(raw)] = name
	}
	return out
})

// TrustRecord is one definition trusted on this machine.
type TrustRecord struct {
	ID   string    // the definition's blob id
	Task string    // the task it was trusted for
	How  string    // TrustStart or TrustReviewed
	At   time.Time // when
}

// TrustStore is this machine's record of the definitions it trusts. It
// lives outside everything that syncs (gitstore keeps it in the common
// git directory), so no fetch can add to it.
type TrustStore interface {
	// TrustedDefinition returns the record of id, or nil when id is not
	// trusted here.
	TrustedDefinition(id string) (*TrustRecord, error)
	// TrustDefinition records r.
	TrustDefinition(r TrustRecord) error
	// TrustedDefinitions lists every record, oldest first.
	TrustedDefinitions() ([]TrustRecord, error)
}

// DefinitionHistory is implemented by a TaskStore that can say where a
// task's definitions came from (gitstore reads the chain and this clone's
// reflog of the task's ref).
type DefinitionHistory interface {
	// DefinitionVersions lists the definitions the task's chain (its live
	// ref, else its archive) held, newest first along first parents, one
	// entry per change, at most max (0: all it reads).
	DefinitionVersions(task string, max int) ([]DefinitionVersion, error)
}

// DefinitionVersion is one definition a task ran, and where it came from.
type DefinitionVersion struct {
	ID string // its blob id
	// Commit is the oldest commit of the chain holding it since the last
	// change: the one that brought it in. Author, At and Subject are that
	// commit's.
	Commit  string
	Author  string
	At      time.Time
	Subject string
	// Remote names the remote a fetch brought that commit from, as this
	// clone's reflog of the task's ref records it; "" when a command here
	// wrote it, or the reflog does not say.
	Remote string
	Data   []byte
}

// StartedHere reports whether a start in this clone brought v in: a
// definition that is still untrusted was then started from a file a
// commit brought (checkedOut), or before trust was recorded.
func (v DefinitionVersion) StartedHere() bool {
	return v.Remote == "" && strings.HasPrefix(v.Subject, "start: ")
}

// DefinitionTrust says whether a definition is trusted here, and how.
type DefinitionTrust struct {
	ID      string
	Trusted bool
	How     string    // TrustBuiltin, TrustStart, TrustReviewed ("" when not trusted)
	Task    string    // the task it was trusted for (a record's)
	At      time.Time // when (a record's)
}

// TrustOf says whether the definition def may run commands and instruct
// an agent here. With no TrustStore (the in-memory test stores) every
// definition is trusted; a record that cannot be read is a warning and
// counts as untrusted.
func (e *Engine) TrustOf(def []byte) DefinitionTrust { return e.TrustOfID(DefinitionID(def)) }

// TrustOfID is TrustOf by the definition's blob id.
func (e *Engine) TrustOfID(id string) DefinitionTrust {
	if _, ok := builtinIDs()[id]; ok {
		return DefinitionTrust{ID: id, Trusted: true, How: TrustBuiltin}
	}
	if e.Trust == nil {
		return DefinitionTrust{ID: id, Trusted: true}
	}
	r, err := e.Trust.TrustedDefinition(id)
	if err != nil {
		e.warn(fmt.Sprintf("cannot read which workflow definitions are trusted: %v", err))
		return DefinitionTrust{ID: id}
	}
	if r == nil {
		return DefinitionTrust{ID: id}
	}
	return DefinitionTrust{ID: id, Trusted: true, How: r.How, Task: r.Task, At: r.At}
}

// trustStarted records that this clone started task from def, the file
// the user chose: from now on it is trusted. A failure is a warning: the
// task runs, but its definition must be trusted by hand.
func (e *Engine) trustStarted(task string, def []byte) {
	if e.Trust == nil || e.TrustOf(def).Trusted {
		return
	}
	if err := e.Trust.TrustDefinition(TrustRecord{ID: DefinitionID(def), Task: task, How: TrustStart, At: e.now().UTC()}); err != nil {
		e.warn(fmt.Sprintf("could not record that the definition of task %s is trusted (%v); 'git hegel trust %s' records it", task, err, task))
	}
}

// CheckedOut reports whether wf is a worktree file that HEAD's commit
// holds as it is and this machine does not trust yet: a clone, pull or
// checkout put it there, so whoever wrote that commit chose its commands
// and prompts, not the user starting it.
func (e *Engine) CheckedOut(wf *workflow.Definition) bool {
	if e.Committed == nil || e.Trust == nil || e.TrustOf(wf.Raw).Trusted {
		return false
	}
	return e.Committed(wf.Source, wf.Raw)
}

// BrokenCheckedOut is CheckedOut for a workflow file that could not be
// loaded, whose error may quote the file's words (a YAML value, a guide's
// name).
func (e *Engine) BrokenCheckedOut(b *workflow.BrokenFile) bool {
	if b.Raw == nil || e.Committed == nil || e.Trust == nil || e.TrustOf(b.Raw).Trusted {
		return false
	}
	return e.Committed(b.Source, b.Raw)
}

// DefinitionNotes says, one line per task a fetch gave a definition this
// machine does not trust, how to review it.
func (e *Engine) DefinitionNotes(r *SyncReport) []string {
	var out []string
	for _, t := range r.Tasks {
		if t.Definition != "" && !e.TrustOfID(t.Definition).Trusted {
			out = append(out, fmt.Sprintf("Definition of task %s changed on %s; review it with 'git hegel trust %s'", t.Task, r.Remote, t.Task))
		}
	}
	return out
}

// TrustError refuses to run what an untrusted definition asks for.
// Nothing ran and nothing changed when it is returned.
type TrustError struct {
	Task string
	// Node and Field name the first field that would have run a process.
	Node, Field string
	// Origin is where the definition came from (nil: not known).
	Origin *DefinitionVersion
}

func (e *TrustError) Error() string {
	return fmt.Sprintf("Task '%s' runs a workflow definition this machine does not trust (node '%s' has %s:; %s): nothing ran. Review it with 'git hegel trust %s'",
		e.Task, e.Node, e.Field, originText(e.Origin), e.Task)
}

// originText says where a definition came from, for one line. It stands
// in an agent's prompt and in the refusal an agent reads, so it names the
// remote and the commit and not the commit's author: another clone writes
// that as it likes (`git hegel trust` shows it to the person reviewing).
func originText(v *DefinitionVersion) string {
	if v == nil || v.Commit == "" {
		return "it was not started or trusted here"
	}
	if v.Remote != "" {
		return fmt.Sprintf("it came from %s in commit %s", v.Remote, shortID(v.Commit))
	}
	if v.StartedHere() {
		return "it was started here from a file this machine has not trusted"
	}
	return fmt.Sprintf("it came in commit %s, not from a start here", shortID(v.Commit))
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// origin returns where task's current definition came from (nil when
// the store cannot say).
func (e *Engine) origin(task string) *DefinitionVersion {
	dh, ok := e.Tasks.(DefinitionHistory)
	if !ok {
		return nil
	}
	vs, err := dh.DefinitionVersions(task, 1)
	if err != nil || len(vs) == 0 {
		return nil
	}
	return &vs[0]
}

// MayRunNode returns a *TrustError when node of wf (the definition task
// runs) has a field that runs a process and the definition is not
// trusted here; nil otherwise. Every place that starts a definition's
// process asks it first.
func (e *Engine) MayRunNode(task string, wf *workflow.Definition, node string) error {
	fields := wf.CommandFields(node)
	if len(fields) == 0 || e.TrustOf(wf.Raw).Trusted {
		return nil
	}
	return &TrustError{Task: task, Node: node, Field: fields[0].Field, Origin: e.origin(task)}
}

// MayRun is MayRunNode for the whole definition: the error names a field
// of node (the task's current node) if it has one, else the first field
// of any node that would run a process.
func (e *Engine) MayRun(task string, wf *workflow.Definition, node string) error {
	fields := append(wf.CommandFields(node), wf.AllCommandFields()...)
	if len(fields) == 0 || e.TrustOf(wf.Raw).Trusted {
		return nil
	}
	return &TrustError{Task: task, Node: fields[0].Node, Field: fields[0].Field, Origin: e.origin(task)}
}

// PromptTrusted returns "" when wf's prompts may reach an agent, else the
// one-line notice that stands in for the prompt: why it is not shown and
// what to run.
func (e *Engine) PromptTrusted(task string, wf *workflow.Definition) string {
	if e.TrustOf(wf.Raw).Trusted {
		return ""
	}
	return fmt.Sprintf("The prompt is not shown: task %s runs a workflow definition this machine does not trust (%s). Review it with 'git hegel trust %s'.",
		task, originText(e.origin(task)), task)
}

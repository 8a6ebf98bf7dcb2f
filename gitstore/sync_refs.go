package gitstore

import (
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/engine"
)

// Names of the synced refs, relative to refs/hegel/ ("rel" below).
const (
	hegelPrefix      = "refs/hegel/"
	trackingRoot     = "refs/hegel-remotes/"
	relStashes       = "stashes"
	relHistory       = "history"
	relTasks         = "tasks/"
	relCheckpoints   = "checkpoints/"
	relActions       = "actions/"
	historyRefSuffix = relHistory
)

// HistoryRef is where finished executions are kept.
const HistoryRef = plumbing.ReferenceName(hegelPrefix + historyRefSuffix)

// CheckpointRefPrefix is where each task's checkpoints are kept.
const CheckpointRefPrefix = hegelPrefix + relCheckpoints

// ActionsRefPrefix is where each task's agent-action snapshots are kept
// (one rollback chain per task). Sync never carries them: they are this
// worktree's undo history, and hold its uncommitted files.
const ActionsRefPrefix = hegelPrefix + relActions

// syncKind is what a ref under refs/hegel/ holds. It decides how the
// report counts what a merge did; how the ref is checked and merged is in
// its namespace (syncNamespaces).
type syncKind int

const (
	kindStashes syncKind = iota
	kindHistory
	kindTask
	kindCheckpoint
)

// mergeStrategy is how two versions of one ref are merged.
type mergeStrategy int

const (
	// mergeByEntry: three-way merge of the files in the two trees (one
	// file per entry: stash entries, history records).
	mergeByEntry mergeStrategy = iota
	// mergeKeepLocal: one live state; when both sides moved on, the local
	// state stays and the remote's is saved as a stash entry (tasks).
	mergeKeepLocal
	// mergeCheckpointChains: union of two checkpoint chains, which only
	// rollback can read (SyncOptions.MergeCheckpoints).
	mergeCheckpointChains
)

// contentCheck is what validation reads in a fetched tip's tree besides
// the version blob.
type contentCheck int

const (
	contentNone         contentCheck = iota
	contentTask                      // state.json names the task; workflow.yaml parses
	contentStashEntries              // entries/<id>.json are stash entries
)

// syncNamespace is one kind of ref under refs/hegel/ that sync carries.
// Everything sync does with a ref follows from its namespace's entry, so
// carrying a new namespace is one more entry in syncNamespaces.
type syncNamespace struct {
	// rel names the ref below refs/hegel/ ("stashes"), or, ending in "/",
	// the directory of one ref per task ("tasks/").
	rel  string
	kind syncKind
	// optIn: carried only with --checkpoints (SyncOptions.Checkpoints).
	optIn bool
	// userFiles: its trees hold the user's files, so executables,
	// symbolic links and submodules are allowed, and blobs are bounded by
	// hegel.syncMaxCheckpointBlobSize instead of hegel.syncMaxBlobSize.
	userFiles bool
	content   contentCheck
	merge     mergeStrategy
	// gitRefspec: plain git fetch and push carry it once 'git hegel
	// remote setup' has added its refspecs (never the opt-in ones).
	gitRefspec bool
}

// syncNamespaces lists what sync carries, in the order refs are merged:
// stashes first (a task that diverged adds a stash entry), then history,
// tasks and checkpoints.
var syncNamespaces = []syncNamespace{
	{rel: relStashes, kind: kindStashes, content: contentStashEntries, merge: mergeByEntry, gitRefspec: true},
	{rel: relHistory, kind: kindHistory, merge: mergeByEntry, gitRefspec: true},
	{rel: relTasks, kind: kindTask, content: contentTask, merge: mergeKeepLocal, gitRefspec: true},
	{rel: relArchive, kind: kindTask, content: contentTask, merge: mergeKeepLocal, gitRefspec: true}, // sync_archive.go
	{rel: relCheckpoints, kind: kindCheckpoint, optIn: true, userFiles: true, merge: mergeCheckpointChains},
}

func (ns *syncNamespace) perTask() bool { return strings.HasSuffix(ns.rel, "/") }

// hegelRef is one synced ref, named relative to refs/hegel/.
type hegelRef struct {
	rel  string
	kind syncKind
	ns   *syncNamespace
	// order is the namespace's position in syncNamespaces.
	order int
}

// holdsFiles reports whether the tree or blob at path (in the ref's tree)
// holds a user's files, which may be executables, links and submodules and
// as large as a checkpoint's: a checkpoint, or the files a stash parked.
func (h hegelRef) holdsFiles(path string) bool {
	return h.ns.userFiles || (h.kind == kindStashes && strings.HasPrefix(path, stashFilesDir+"/"))
}

func (h hegelRef) local() plumbing.ReferenceName { return plumbing.ReferenceName(hegelPrefix + h.rel) }

func (h hegelRef) tracking(remote string) plumbing.ReferenceName {
	return plumbing.ReferenceName(trackingRoot + remote + "/" + h.rel)
}

// task returns the task a per-task ref belongs to.
func (h hegelRef) task() string {
	return strings.TrimPrefix(h.rel, h.ns.rel)
}

// classify maps a name relative to refs/hegel/ to the ref it is. Names
// outside every namespace are refs of kinds this build does not carry
// (ok false, no error): a later version may add them. A name inside a
// namespace that git-hegel would never write (refs/hegel/tasks/a/b, a
// task name it refuses) is an error: the caller skips that ref and says
// so.
func classify(rel string) (hegelRef, bool, error) {
	for i := range syncNamespaces {
		ns := &syncNamespaces[i]
		if !ns.perTask() {
			if rel == ns.rel {
				return hegelRef{rel: rel, kind: ns.kind, ns: ns, order: i}, true, nil
			}
			continue
		}
		name, ok := strings.CutPrefix(rel, ns.rel)
		if !ok {
			continue
		}
		if !engine.ValidTaskName(name) {
			return hegelRef{rel: rel, kind: ns.kind, ns: ns, order: i}, false, fmt.Errorf("%q is not a task name git-hegel accepts", truncate([]byte(name), 60))
		}
		return hegelRef{rel: rel, kind: ns.kind, ns: ns, order: i}, true, nil
	}
	return hegelRef{}, false, nil
}

// inScope reports whether this sync carries ref (opt-in namespaces only
// when asked for).
func (o SyncOptions) inScope(ref hegelRef) bool {
	return !ref.ns.optIn || o.Checkpoints
}

package engine

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

// MaxArtifactSize bounds each artifact copy kept in the archive: the same
// bound sync puts on a document's blobs, so an archived task can always be
// pushed and fetched.
const MaxArtifactSize = 4 << 20

// DeletedTaskWindow is how long `git hegel restore-task` can bring a
// deleted task back; older records are dropped by the next delete, so
// `git gc` can reclaim what they held.
const DeletedTaskWindow = 30 * 24 * time.Hour

// finish is where every run ends: reaching done, abort (also of a task
// that failed and was given up), and rollback --all. save calls it once,
// right after the write that finished the run. It adds the run's history
// entry, runs OnFinish, then archives the task.
func (e *Engine) finish(t *Task, wf *workflow.Definition) {
	e.recordHistory(t, wf)
	if e.OnFinish != nil {
		if err := e.OnFinish(t.State); err != nil {
			e.warn(fmt.Sprintf("task %s finished, but recording it failed: %v", t.State.Task, err))
		}
	}
	if e.Archive == nil || t.Archived {
		return
	}
	if _, err := e.archive(t, wf, e.artifactCopies(t.State, wf)); err != nil {
		e.warn(fmt.Sprintf("task %s finished but was not archived: %v; the next command that sees it archives it", t.State.Task, err))
	}
}

// archive moves a finished task to the archive. A completed or aborted
// task's checkpoints are dropped (unless hegel.keepCheckpointsOnDone); a
// rolled-back one keeps them, so the rollback can be undone, and so does
// one a stash drop or clear ended, since stash restore undoes the drop
// whole (gc removes them with the archive once it expires).
func (e *Engine) archive(t *Task, wf *workflow.Definition, files []ArchivedFile) (*Task, error) {
	st := t.State
	drop := !e.KeepCheckpoints && (st.Status == StatusCompleted || st.Status == StatusAborted) &&
		!endedByStashRemoval(st, st.WorkflowID)
	msg := fmt.Sprintf("archive: %s at %s", st.Status, st.CurrentNode)
	if len(files) > 0 {
		// The archive is pushed with the task: its message says what
		// left the worktree.
		names := make([]string, 0, len(files))
		for _, f := range files {
			names = append(names, text.QuotePath(f.Path, true))
		}
		if len(names) > maxNamedArtifacts {
			names = append(names[:maxNamedArtifacts], fmt.Sprintf("and %d more", len(files)-maxNamedArtifacts))
		}
		msg += fmt.Sprintf(" (%s: %s)", text.Plural(len(files), "artifact", "artifacts"), strings.Join(names, ", "))
	}
	rev, err := e.Archive.ArchiveTask(t, files, msg, drop)
	if err != nil {
		return nil, err
	}
	return &Task{State: st, Definition: t.Definition, Rev: rev, Archived: true}, nil
}

// maxNamedArtifacts bounds the artifacts an archive's message names.
const maxNamedArtifacts = 10

// artifactCopies reads every artifact the workflow names from this
// worktree, as the files are at completion (readArtifacts says which
// may leave this machine).
func (e *Engine) artifactCopies(st *State, wf *workflow.Definition) []ArchivedFile {
	if e.Files == nil || wf == nil {
		return nil
	}
	paths, _ := allArtifacts(st, wf)
	return e.readArtifacts(st.Task, wf, paths, "archived")
}

// readArtifacts reads paths, artifacts of task's workflow wf, from this
// worktree. Missing files are left out; one that is not a regular file
// or is too large is left out with a warning (what says what did not
// happen to it: "archived", "submitted"). What it returns goes into the
// task's refs, which are pushed, so nothing that should stay on this
// machine is read: no file git ignores (a .env, a key), nothing through
// a symbolic link or outside the worktree (Files and the path rules of
// the definition see to those), and nothing a definition this machine
// does not trust names (a remote could name .env).
func (e *Engine) readArtifacts(task string, wf *workflow.Definition, paths []string, what string) []ArchivedFile {
	if len(paths) == 0 {
		return nil
	}
	if !e.TrustOf(wf.Raw).Trusted {
		e.warn(fmt.Sprintf("artifacts of task %s not %s: its workflow definition is not trusted here ('git hegel trust %s' keeps them)", task, what, task))
		return nil
	}
	ignored, err := e.Files.Ignored(paths)
	if err != nil {
		e.warn(fmt.Sprintf("artifacts of task %s not %s: cannot tell which files git ignores: %v", task, what, err))
		return nil
	}
	var out []ArchivedFile
	for _, p := range paths {
		if err := workflow.CheckArtifactPath(p); err != nil {
			e.warn(fmt.Sprintf("artifact %s not %s: %v", text.QuotePath(p, true), what, err))
			continue
		}
		if ignored[p] {
			e.warn(fmt.Sprintf("artifact %s not %s: git ignores it, and an ignored file never leaves this machine", text.QuotePath(p, true), what))
			continue
		}
		data, err := e.Files.ReadFile(p, MaxArtifactSize)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			e.warn(fmt.Sprintf("artifact %s not %s: %v", p, what, err))
		default:
			out = append(out, ArchivedFile{Path: p, Size: int64(len(data)), Data: data})
		}
	}
	return out
}

// sighted archives a finished task that is not archived yet (it finished
// before archiving existed, on another clone, or its archiving failed)
// the first time a command sees it, and returns it as it is now. Its
// artifact copies are not made: the files as they were at completion are
// not known any more. A failure only warns; nothing is lost.
func (e *Engine) sighted(t *Task) *Task {
	if e.Archive == nil || t.Archived || !t.State.Finished() {
		return t
	}
	wf, err := definition(t)
	if err != nil {
		return t
	}
	if ValidateState(t.State, wf) != nil {
		return t // left where it is; the command showing it reports why
	}
	at, err := e.archive(t, wf, nil)
	if err != nil {
		if !errors.Is(err, ErrConflict) {
			e.warn(fmt.Sprintf("task %s finished but could not be archived: %v", t.State.Task, err))
		}
		return t
	}
	return at
}

// Delete removes a finished task: its archive (or task) ref and its
// checkpoints. A record keeps them reachable for RestoreTask for
// DeletedTaskWindow. An open task must be aborted first.
func (e *Engine) Delete(name string) (*DeletedTask, error) {
	if e.Archive == nil {
		return nil, errors.New("this repository cannot delete tasks")
	}
	t, err := e.Lookup(name)
	if err != nil {
		return nil, err
	}
	switch st := t.State; {
	case st.Status == StatusStashed:
		return nil, fmt.Errorf("Task '%s' is stashed; dropping its stash ends it ('git hegel stash list' shows it, 'git hegel stash drop' drops it), or 'git hegel stash pop' takes it up", name)
	case !st.Finished():
		return nil, fmt.Errorf("Task '%s' is %s; abort it first with 'git hegel abort --task %s'", name, st.Status, name)
	}
	if !t.Archived {
		return nil, fmt.Errorf("Task '%s' finished but is not archived yet; run the command again", name)
	}
	if _, err := e.Archive.ExpireDeleted(e.now().Add(-DeletedTaskWindow)); err != nil {
		e.warn("could not drop old deleted-task records: " + err.Error())
	}
	d, err := e.Archive.DeleteTask(name, e.now())
	if err != nil {
		return nil, err
	}
	if err := e.touchSession(func(s *Session) {
		if s.ActiveTask == name {
			s.ActiveTask = ""
		}
	}); err != nil {
		return nil, err
	}
	return d, nil
}

// DeletedTasks returns the tasks that can still be restored, newest
// first.
func (e *Engine) DeletedTasks() ([]*DeletedTask, error) {
	if e.Archive == nil {
		return nil, nil
	}
	all, err := e.Archive.DeletedTasks()
	if err != nil {
		return nil, err
	}
	var out []*DeletedTask
	for _, d := range all {
		if e.now().Sub(d.DeletedAt) < DeletedTaskWindow {
			out = append(out, d)
		}
	}
	return out, nil
}

// RestoreTask brings a deleted task back as it was.
func (e *Engine) RestoreTask(name string) (*DeletedTask, error) {
	if err := CheckTaskName(name); err != nil {
		return nil, err
	}
	if e.Archive == nil {
		return nil, errors.New("this repository cannot restore tasks")
	}
	d, err := e.Archive.RestoreTask(name)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, fmt.Errorf("No deleted task named '%s' (see 'git hegel restore-task' for the list)", name)
	case errors.Is(err, ErrExists):
		return nil, fmt.Errorf("A task named '%s' exists again; delete it first, or look at the old one with 'git show refs/hegel/deleted/%s'", name, name)
	}
	return d, err
}

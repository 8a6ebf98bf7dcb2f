package engine

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// Many tasks per repository: listing them, showing one, describing one.

// TaskInfo is one line of `git hegel tasks`.
type TaskInfo struct {
	Name     string
	State    *State // nil when Err is set
	Archived bool
	Mine     bool // owned by this worktree
	Current  bool // this worktree's active task
	Err      error
}

// ListOptions choose what `git hegel tasks` lists besides the open and
// stashed tasks.
type ListOptions struct {
	All      bool // finished tasks not archived yet
	Archived bool // archived tasks
	// Mine keeps only the tasks a worktree of this clone holds, by this
	// clone's own record (what a task's state says is not enough).
	Mine bool
}

// ListTasks lists the tasks of the repository: open ones first (by
// priority, then most recently changed), then stashed, then finished and
// archived ones. Finished tasks not archived yet are archived here, the
// first time a command sees them. It reads states only, never workflow
// definitions, so it stays fast with thousands of tasks.
func (e *Engine) ListTasks(o ListOptions) ([]TaskInfo, error) {
	var listed []ListedTask
	var err error
	if e.Archive != nil {
		listed, err = e.Archive.ListStates(o.Archived)
	} else {
		listed, err = e.listLive()
	}
	if err != nil {
		return nil, err
	}
	active := ""
	if sess, err := e.Session.LoadSession(); err == nil {
		active = sess.ActiveTask
	}
	var out []TaskInfo
	archivedNow := map[string]bool{}
	// Most tasks share a few definitions: each shape is read once.
	shapes := &memoShapes{backing: e.Shapes, m: map[string][]byte{}}
	for _, l := range listed {
		if l.Err == nil && !l.Archived && l.State.Finished() && e.Archive != nil {
			if t, err := e.Tasks.LoadTask(l.Name); err == nil {
				if at := e.sighted(t); at.Archived {
					archivedNow[l.Name] = true
					if o.Archived && (!o.Mine || e.heldHere(at.State)) {
						out = append(out, e.info(ListedTask{Name: l.Name, State: at.State, Archived: true}, active))
					}
					continue
				}
			}
		}
		if l.Archived && archivedNow[l.Name] {
			continue // listed above, in its new place
		}
		if l.Err == nil && l.State.Finished() && !l.Archived && !o.All {
			continue
		}
		ti := e.info(l, active)
		if o.Mine && (ti.Err != nil || !e.heldHere(ti.State)) {
			continue
		}
		if ti.Err == nil && !ti.Archived && ti.State.Active() {
			// An open task's node must be in the definition it stores
			// (tasks reports such a task as damaged). The
			// definition's shape is remembered, so this is a cache read
			// per task, not a parse.
			if t, err := e.Tasks.LoadTask(l.Name); err == nil {
				ti.Err = CheckStored(t.State, t.Definition, shapes)
			}
		}
		out = append(out, ti)
	}
	slices.SortStableFunc(out, compareTasks)
	return out, nil
}

// heldHere reports whether a worktree of this clone holds st's task, by
// this clone's record.
func (e *Engine) heldHere(st *State) bool {
	return e.owns(st) || (st.WorktreeID != "" && sameClone(st.WorktreeID, e.WorktreeID) && e.verified(st))
}

func (e *Engine) info(l ListedTask, active string) TaskInfo {
	ti := TaskInfo{Name: l.Name, State: l.State, Archived: l.Archived, Err: l.Err}
	if l.State != nil {
		ti.Mine = e.owns(l.State)
		ti.Current = !l.Archived && ti.Mine && l.Name == active
	}
	return ti
}

func (e *Engine) listLive() ([]ListedTask, error) {
	names, err := e.Tasks.ListTasks()
	if err != nil {
		return nil, err
	}
	out := make([]ListedTask, 0, len(names))
	for _, n := range names {
		t, err := e.Tasks.LoadTask(n)
		if err != nil {
			out = append(out, ListedTask{Name: n, Err: err})
			continue
		}
		out = append(out, ListedTask{Name: n, State: t.State})
	}
	return out, nil
}

// statusRank orders statuses for listing: running, waiting and paused
// work first, then failed, stashed, then finished.
func statusRank(t TaskInfo) int {
	if t.State == nil {
		return 9
	}
	if t.Archived {
		return 8
	}
	switch t.State.Status {
	case StatusInitializing, StatusActive:
		return 0
	case StatusAwaitingApproval, StatusAwaitingAnswer:
		return 1
	case StatusPaused:
		return 2
	case StatusFailed:
		return 3
	case StatusStashed:
		return 4
	}
	return 5
}

// PriorityRank is a priority's order, most urgent first.
func PriorityRank(p string) int {
	switch p {
	case "urgent":
		return 0
	case "high":
		return 1
	case "low":
		return 3
	}
	return 2
}

func compareTasks(a, b TaskInfo) int {
	if c := cmp.Compare(statusRank(a), statusRank(b)); c != 0 {
		return c
	}
	if a.State != nil && b.State != nil {
		if statusRank(a) <= 3 {
			if c := cmp.Compare(PriorityRank(a.State.Priority), PriorityRank(b.State.Priority)); c != 0 {
				return c
			}
		}
		if c := b.State.UpdatedAt.Compare(a.State.UpdatedAt); c != 0 {
			return c
		}
	}
	return strings.Compare(a.Name, b.Name)
}

// TaskDetail is everything `git hegel show` prints about one task.
type TaskDetail struct {
	*Task
	Workflow  *workflow.Definition
	Artifacts []ArtifactInfo
	// Problems is what ValidateState finds wrong with the stored state.
	Problems error
	Gate     *GateView
}

// ArtifactInfo is one artifact of a task's workflow and where it is.
type ArtifactInfo struct {
	Node, Path string
	// Present: in the archive's copy for an archived task, else in this
	// worktree. Size is its size then.
	Present bool
	Size    int64
}

// Show gathers what `git hegel show` prints for task name ("": the
// current task), live or archived.
func (e *Engine) Show(name string) (*TaskDetail, error) {
	var t *Task
	var err error
	if name == "" {
		t, err = e.Current("")
	} else {
		t, err = e.Lookup(name)
	}
	if err != nil {
		return nil, err
	}
	wf, err := definition(t)
	if err != nil {
		return nil, err
	}
	d := &TaskDetail{Task: t, Workflow: wf, Problems: ValidateState(t.State, wf), Gate: Gate(t)}
	copies := map[string]ArchivedFile{}
	if t.Archived && e.Archive != nil {
		files, err := e.Archive.ArchivedFiles(t.State.Task)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			copies[f.Path] = f
		}
	}
	for _, node := range wf.Order {
		p := wf.Nodes[node].Artifact
		if p == "" {
			continue
		}
		a := ArtifactInfo{Node: node, Path: p}
		if t.Archived {
			f, ok := copies[p]
			a.Present, a.Size = ok, f.Size
		} else if e.Files != nil {
			if size, err := e.Files.Size(p); err == nil {
				a.Present, a.Size = true, size
			}
		}
		d.Artifacts = append(d.Artifacts, a)
	}
	return d, nil
}

// Artifact returns the content of artifact path of task t: the copy in
// the archive for an archived task, else the file in this worktree (a
// regular file, never through a symbolic link). Only the files the task's
// workflow names as artifacts can be read, at most MaxArtifactSize bytes.
func (e *Engine) Artifact(t *Task, path string) ([]byte, error) {
	wf, err := definition(t)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(wf.Artifacts(), path) {
		return nil, fmt.Errorf("%s is not an artifact of workflow %s: %w", path, wf.Name, ErrNotFound)
	}
	if t.Archived {
		if e.Archive == nil {
			return nil, fmt.Errorf("%s: %w", path, ErrNotFound)
		}
		return e.Archive.ReadArchivedFile(t.State.Task, path, MaxArtifactSize)
	}
	if e.Files == nil {
		return nil, fmt.Errorf("%s: %w", path, ErrNotFound)
	}
	return e.Files.ReadFile(path, MaxArtifactSize)
}

// Describe replaces the description of the task call names (Task "":
// the current task); another worktree's open task needs call.Force.
func (e *Engine) Describe(text string, call TaskOptions) (*State, error) {
	text = strings.TrimSpace(text)
	t, err := e.Current(call.Task)
	if err != nil {
		return nil, err
	}
	// Another worktree's open task needs --force, as every other change
	// to it does (recorded in the task).
	st, _, err := e.updateTask(t, updateOpts{call: call}, func(st *State, wf *workflow.Definition) (string, error) {
		if st.Status == StatusStashed {
			return "", fmt.Errorf("Task '%s' is stashed; its description travels with the stash. Restore it with 'git hegel stash pop' first", st.Task)
		}
		if err := allowed(st, "describe"); err != nil {
			return "", err
		}
		st.Description = text
		return "describe: " + firstLine(text), nil
	})
	if errors.Is(err, ErrNoWorkflow) {
		return nil, errors.New("No active workflow; name the task: git hegel describe <task> TEXT")
	}
	return st, err
}

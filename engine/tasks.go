package engine

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/git-hegel/git-hegel/engine/text"
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
	// Warnings are what a reviewer should know: an artifact that changed
	// after it was approved.
	Warnings []string
}

// ArtifactInfo is one artifact of a task's workflow and where it is.
type ArtifactInfo struct {
	Node, Path string
	// Present: in the archive's copy for an archived task, else in this
	// worktree. Size is its size then.
	Present bool
	Size    int64
	// Submitted is what the node left in the task's ref when it last
	// ended (nil: it has not ended, or left nothing).
	Submitted *Submitted
	// Skipped: the task skipped the node, or its type will, so no file
	// is expected. Pending: the node has not ended yet.
	Skipped, Pending bool
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
		paths, _ := ArtifactPaths(t.State, wf, node)
		for _, p := range paths {
			a := ArtifactInfo{Node: node, Path: p}
			for _, s := range t.State.Submitted[node] {
				if s.Path == p {
					a.Submitted = &s
				}
			}
			if t.Archived {
				f, ok := copies[p]
				a.Present, a.Size = ok, f.Size
			} else if e.Files != nil {
				if size, err := e.Files.Size(p); err == nil {
					a.Present, a.Size = true, size
				}
			}
			a.Skipped = a.Submitted == nil && (skippedNode(t.State, node) || wf.SkippedFor(node, t.State.TaskType))
			ended := slices.Contains(t.State.History, node) && (node != t.State.CurrentNode || t.State.Finished())
			a.Pending = !a.Skipped && a.Submitted == nil && !ended
			d.Artifacts = append(d.Artifacts, a)
		}
	}
	d.Warnings = e.approvalWarnings(t)
	return d, nil
}

// approvalWarnings says which artifacts changed after the latest
// approval that saw them: the submitted copy, or (a live task) the file
// in this worktree.
func (e *Engine) approvalWarnings(t *Task) []string {
	type seen struct {
		Approval
		blob string
	}
	latest := map[string]seen{} // by node and path
	var order []string
	approvals := t.State.Approvals
	if e.AgentReads {
		approvals = e.ForAgent(t.State).Approvals // who approved, as the agent may read it
	}
	for _, a := range approvals {
		if a.Rejected {
			continue
		}
		for _, art := range a.Artifacts {
			k := a.Node + "\x00" + art.Path
			if _, ok := latest[k]; !ok {
				order = append(order, k)
			}
			latest[k] = seen{a, art.Blob}
		}
	}
	var out []string
	for _, k := range order {
		a := latest[k]
		node, path, _ := strings.Cut(k, "\x00")
		for _, s := range t.State.Submitted[node] {
			if s.Path == path && s.Blob != a.blob {
				out = append(out, fmt.Sprintf("%s changed after %s approved it at %s: submitted %s, approved %s", path, a.By, node, ShortID(s.Blob), ShortID(a.blob)))
			}
		}
		if t.Archived || e.Files == nil || workflow.CheckArtifactPath(path) != nil {
			continue
		}
		if data, err := e.Files.ReadFile(path, MaxArtifactSize); err == nil && BlobID(data) != a.blob {
			out = append(out, fmt.Sprintf("%s in this worktree differs from what %s approved at %s (blob %s)", path, a.By, node, ShortID(a.blob)))
		}
	}
	return out
}

// ShortID is the abbreviation of an object id people read.
func ShortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// ArtifactContent is one artifact as `git hegel artifact` prints it.
type ArtifactContent struct {
	Node, Path string
	Data       []byte
	// From is where it was read: "submitted" (the task's ref), "archive"
	// or "worktree" (a node that has not ended yet).
	From string
	// Blob is the content's blob id.
	Blob string
}

// Artifact returns artifact name (its file name or path) of task t, as
// its node submitted it into the task's ref; node ("": any) says which
// node's when several submitted that name. An artifact no node has
// submitted yet is read from the archive's copy (an archived task) or
// this worktree (a live one), and only when the task's workflow names
// it. At most MaxArtifactSize bytes; never through a symbolic link.
func (e *Engine) Artifact(t *Task, name, node string) (*ArtifactContent, error) {
	wf, err := definition(t)
	if err != nil {
		return nil, err
	}
	if node != "" {
		if _, ok := wf.Nodes[node]; !ok {
			return nil, badNamef("Workflow '%s' has no node '%s' (nodes: %s)", wf.Name, node, text.JoinQuoted(wf.Order))
		}
	}
	n, s, err := submittedOf(t.State, name, node)
	if err == nil {
		fr, ok := e.Tasks.(TaskFileReader)
		if !ok {
			return nil, fmt.Errorf("%s: %w", name, ErrNotFound)
		}
		data, err := fr.ReadTaskFile(t.State.Task, SubmittedPath(n, s.Name()))
		if err != nil {
			return nil, err
		}
		if int64(len(data)) > MaxArtifactSize {
			return nil, fmt.Errorf("%s is %s, more than the %s an artifact may hold", name, Size(int64(len(data))), Size(MaxArtifactSize))
		}
		// show and approvals go by the index: a copy that is not what it
		// indexes (a ref written by other means) is not printed as it.
		if id := BlobID(data); id != s.Blob {
			return nil, fmt.Errorf("Task %s's copy of %s (blob %s) is not what its state indexes (blob %s): the ref was written by other means, and the copy is not printed",
				t.State.Task, SubmittedPath(n, s.Name()), ShortID(id), ShortID(s.Blob))
		}
		return &ArtifactContent{Node: n, Path: s.Path, Data: data, From: "submitted", Blob: BlobID(data)}, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	// Not submitted: one of the workflow's artifacts as it is now.
	for _, nd := range wf.Order {
		if node != "" && nd != node {
			continue
		}
		paths, _ := ArtifactPaths(t.State, wf, nd)
		for _, p := range paths {
			if p != name && workflow.ArtifactName(p) != name {
				continue
			}
			var data []byte
			from := "worktree"
			switch {
			case t.Archived && e.Archive != nil:
				from = "archive"
				data, err = e.Archive.ReadArchivedFile(t.State.Task, p, MaxArtifactSize)
			case !t.Archived && e.Files != nil:
				data, err = e.Files.ReadFile(p, MaxArtifactSize)
			default:
				err = fmt.Errorf("%s: %w", p, ErrNotFound)
			}
			if err != nil {
				return nil, err
			}
			return &ArtifactContent{Node: nd, Path: p, Data: data, From: from, Blob: BlobID(data)}, nil
		}
	}
	if node != "" {
		return nil, fmt.Errorf("node %s of workflow %s has no artifact %s: %w", node, wf.Name, text.Quote(name), ErrNotFound)
	}
	return nil, fmt.Errorf("%s is not an artifact of task %s: %w", text.Quote(name), t.State.Task, ErrNotFound)
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
		if err := e.allowed(st, "describe"); err != nil {
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

package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// fakeTaskStore is an in-memory TaskStore and ArchiveStore with the same
// compare-and-swap contract as the git-backed one: live tasks, archived
// ones, deleted-task records, and a stand-in for each task's checkpoints.
type fakeTaskStore struct {
	mu       sync.Mutex
	tasks    map[string]*Task
	archive  map[string]*Task
	files    map[string][]ArchivedFile // archived artifact copies
	deleted  map[string]*deletedFake
	cps      map[string]string   // task -> checkpoint chain (a stand-in)
	parents  map[string][]string // rev -> parent revs
	rev      int
	log      []string // commit messages, in order
	archived []string // archive messages, in order
	// beforeSave, if set, runs before each save (to inject races).
	beforeSave func()
	// saveErr, if set, may refuse the save of a task (a full disk).
	saveErr func(task string) error
	// entries are the tree entries (results, inputs, submitted, logs) of
	// each revision, as a commit's tree holds them.
	entries map[string]map[string][]byte
}

type deletedFake struct {
	rec  DeletedTask
	task *Task
	cps  string
}

func newFakeTaskStore() *fakeTaskStore {
	return &fakeTaskStore{tasks: map[string]*Task{}, archive: map[string]*Task{}, files: map[string][]ArchivedFile{},
		deleted: map[string]*deletedFake{}, cps: map[string]string{}, parents: map[string][]string{},
		entries: map[string]map[string][]byte{}}
}

func copyTask(t *Task) *Task {
	return &Task{State: t.State.Clone(), Definition: t.Definition, Rev: t.Rev, Archived: t.Archived}
}

func (f *fakeTaskStore) LoadTask(name string) (*Task, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.tasks[name]
	if !ok {
		return nil, fmt.Errorf("task %s: %w", name, ErrNotFound)
	}
	return copyTask(t), nil
}

func (f *fakeTaskStore) newRev(parents ...string) string {
	f.rev++
	rev := fmt.Sprint(f.rev)
	for _, p := range parents {
		if p != "" {
			f.parents[rev] = append(f.parents[rev], p)
		}
	}
	return rev
}

// contains reports whether rev a is b or an ancestor of b.
func (f *fakeTaskStore) contains(b, a string) bool {
	if a == b {
		return true
	}
	for _, p := range f.parents[b] {
		if f.contains(p, a) {
			return true
		}
	}
	return false
}

func (f *fakeTaskStore) SaveTask(t *Task, msg string) (string, error) {
	if f.beforeSave != nil {
		f.beforeSave()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	name := t.State.Task
	if f.saveErr != nil {
		if err := f.saveErr(name); err != nil {
			return "", err
		}
	}
	entries, err := f.nextEntries(t)
	if err != nil {
		return "", err
	}
	if t.Archived && t.State.Finished() {
		cur, ok := f.archive[name]
		if !ok || cur.Rev != t.Rev {
			return "", fmt.Errorf("archive %s: %w", name, ErrConflict)
		}
		if f.unchanged(cur, t, entries) {
			return t.Rev, nil
		}
		rev := f.newRev(t.Rev)
		f.archive[name] = &Task{State: t.State.Clone(), Definition: t.Definition, Rev: rev, Archived: true}
		f.log = append(f.log, msg)
		f.entries[rev] = entries
		return rev, nil
	}
	cur, ok := f.tasks[name]
	expect := t.Rev
	if t.Archived {
		expect = "" // back from the archive: the task ref must not exist
	}
	if (ok && cur.Rev != expect) || (!ok && expect != "") {
		return "", fmt.Errorf("task %s: %w", name, ErrConflict)
	}
	if ok && f.unchanged(cur, t, entries) {
		return t.Rev, nil
	}
	rev := f.newRev(t.Rev)
	f.tasks[name] = &Task{State: t.State.Clone(), Definition: t.Definition, Rev: rev}
	f.log = append(f.log, msg)
	f.entries[rev] = entries
	return rev, nil
}

// unchanged reports whether saving t over cur would write nothing new:
// the same state, definition and entries (the caller holds f.mu).
func (f *fakeTaskStore) unchanged(cur, t *Task, entries map[string][]byte) bool {
	a, errA := json.Marshal(cur.State)
	b, errB := json.Marshal(t.State)
	return errA == nil && errB == nil && string(a) == string(b) && string(cur.Definition) == string(t.Definition) &&
		maps.EqualFunc(f.entries[cur.Rev], entries, func(x, y []byte) bool { return string(x) == string(y) })
}

// putDirs are the directories a save may put entries in, with the depth
// of a path below each, as in the git store's task trees.
var putDirs = map[string]int{"results": 1, "inputs": 1, "submitted": 2, "logs": 1}

// nextEntries returns the entries t's save leaves in the task's tree:
// those of the revision it continues (none for a new task) with t.Put
// applied; a node's submitted folder is replaced whole. A path outside
// the task tree's folders is refused (the caller holds f.mu).
func (f *fakeTaskStore) nextEntries(t *Task) (map[string][]byte, error) {
	out := maps.Clone(f.entries[t.Rev])
	if out == nil {
		out = map[string][]byte{}
	}
	for p := range t.Put {
		parts := strings.Split(p, "/")
		if depth, ok := putDirs[parts[0]]; !ok || len(parts) != depth+1 || slices.Contains(parts, "") {
			return nil, fmt.Errorf("cannot store %q in a task's tree", p)
		}
		if parts[0] == "submitted" {
			for q := range out {
				if strings.HasPrefix(q, "submitted/"+parts[1]+"/") {
					delete(out, q)
				}
			}
		}
	}
	for p, b := range t.Put {
		out[p] = slices.Clone(b)
	}
	return out, nil
}

func (f *fakeTaskStore) ListTasks() ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return sortedNames(f.tasks), nil
}

func sortedNames(m map[string]*Task) []string {
	var names []string
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (f *fakeTaskStore) LoadArchived(name string) (*Task, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.archive[name]
	if !ok {
		return nil, fmt.Errorf("archive %s: %w", name, ErrNotFound)
	}
	return copyTask(t), nil
}

func (f *fakeTaskStore) ListArchived() ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return sortedNames(f.archive), nil
}

func (f *fakeTaskStore) ArchiveTask(t *Task, files []ArchivedFile, msg string, drop bool) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	name := t.State.Task
	old := f.archive[name]
	var rev string
	if old != nil && f.contains(old.Rev, t.Rev) {
		rev = old.Rev
	} else {
		parents := []string{t.Rev}
		if old != nil && !f.contains(t.Rev, old.Rev) {
			parents = append(parents, old.Rev)
		}
		rev = f.newRev(parents...)
		f.archive[name] = &Task{State: t.State.Clone(), Definition: t.Definition, Rev: rev, Archived: true}
		f.entries[rev] = maps.Clone(f.entries[t.Rev])
		kept := make([]ArchivedFile, len(files))
		for i, x := range files {
			kept[i] = ArchivedFile{Path: x.Path, Size: int64(len(x.Data)), Data: append([]byte(nil), x.Data...)}
		}
		sort.Slice(kept, func(i, j int) bool { return kept[i].Path < kept[j].Path })
		f.files[name] = kept
		f.archived = append(f.archived, msg)
	}
	if cur, ok := f.tasks[name]; ok && cur.Rev == t.Rev {
		delete(f.tasks, name)
	}
	if drop {
		delete(f.cps, name)
	}
	return rev, nil
}

func (f *fakeTaskStore) ReadArchivedFile(name, path string, limit int64) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, x := range f.files[name] {
		if x.Path == path {
			if limit > 0 && int64(len(x.Data)) > limit {
				return nil, fmt.Errorf("%s is too large", path)
			}
			return x.Data, nil
		}
	}
	return nil, fmt.Errorf("%s: %w", path, ErrNotFound)
}

func (f *fakeTaskStore) ArchivedFiles(name string) ([]ArchivedFile, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.archive[name]; !ok {
		return nil, fmt.Errorf("archive %s: %w", name, ErrNotFound)
	}
	var out []ArchivedFile
	for _, x := range f.files[name] {
		out = append(out, ArchivedFile{Path: x.Path, Size: x.Size})
	}
	return out, nil
}

func (f *fakeTaskStore) ListStates(archived bool) ([]ListedTask, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []ListedTask
	for _, n := range sortedNames(f.tasks) {
		out = append(out, ListedTask{Name: n, State: f.tasks[n].State.Clone()})
	}
	if archived {
		for _, n := range sortedNames(f.archive) {
			out = append(out, ListedTask{Name: n, State: f.archive[n].State.Clone(), Archived: true})
		}
	}
	return out, nil
}

func (f *fakeTaskStore) DeleteTask(name string, at time.Time) (*DeletedTask, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, arch := f.archive[name], true
	if t == nil {
		t, arch = f.tasks[name], false
	}
	if t == nil {
		return nil, fmt.Errorf("task %s: %w", name, ErrNotFound)
	}
	d := &deletedFake{rec: DeletedTask{Task: name, Workflow: t.State.Workflow, Status: t.State.Status, Archived: arch,
		DeletedAt: at, Commit: t.Rev, Checkpoints: f.cps[name]}, task: copyTask(t), cps: f.cps[name]}
	f.deleted[name] = d
	if arch {
		delete(f.archive, name)
	} else {
		delete(f.tasks, name)
	}
	delete(f.cps, name)
	rec := d.rec
	return &rec, nil
}

func (f *fakeTaskStore) DeletedTasks() ([]*DeletedTask, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*DeletedTask
	for _, d := range f.deleted {
		rec := d.rec
		out = append(out, &rec)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].DeletedAt.After(out[j].DeletedAt) })
	return out, nil
}

func (f *fakeTaskStore) RestoreTask(name string) (*DeletedTask, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.deleted[name]
	if !ok {
		return nil, fmt.Errorf("deleted %s: %w", name, ErrNotFound)
	}
	if f.tasks[name] != nil || f.archive[name] != nil {
		return nil, fmt.Errorf("%s: %w", name, ErrExists)
	}
	if d.rec.Archived {
		f.archive[name] = d.task
	} else {
		f.tasks[name] = d.task
	}
	if d.cps != "" && f.cps[name] == "" {
		f.cps[name] = d.cps
	}
	delete(f.deleted, name)
	rec := d.rec
	return &rec, nil
}

func (f *fakeTaskStore) ExpireDeleted(before time.Time) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for name, d := range f.deleted {
		if d.rec.DeletedAt.Before(before) {
			delete(f.deleted, name)
			n++
		}
	}
	return n, nil
}

// fakeSessionStore keeps the session in memory; corrupt simulates a file
// that no longer parses; failWrite makes the next write fail after fn
// ran (a full disk). A new session gets the next id and starts at now
// (the zero time's successor when now is nil), as the git-backed store
// gives each session its own id and start time.
type fakeSessionStore struct {
	mu        sync.Mutex
	s         *Session
	corrupt   bool
	locked    bool
	failWrite bool
	now       func() time.Time
	ids       int
}

func (f *fakeSessionStore) LoadSession() (*Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.corrupt {
		return nil, ErrCorruptSession
	}
	if f.s == nil {
		return nil, ErrNotFound
	}
	c := *f.s
	return &c, nil
}

func (f *fakeSessionStore) UpdateSession(fn func(*Session) error) (*Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.locked {
		return nil, errors.New(".hegel/state.json is locked by another git-hegel")
	}
	var s Session
	if f.s != nil && !f.corrupt {
		s = *f.s
	} else {
		f.ids++
		s.SessionID = fmt.Sprintf("fake-%d", f.ids)
		s.StartedAt = time.Unix(1, 0).UTC()
		if f.now != nil {
			s.StartedAt = f.now()
		}
	}
	if err := fn(&s); err != nil {
		return nil, err
	}
	if f.failWrite {
		f.failWrite = false
		return nil, errors.New("cannot write .hegel/state.json: no space left on device")
	}
	f.s, f.corrupt = &s, false
	c := s
	return &c, nil
}

// fakeFiles is a worktree of regular files; a value "ignored:..." is a
// file git ignores.
type fakeFiles map[string]string

// anyTaskFile is the key of fakeFiles' default: while it is set, every
// file in a task's folder (hegel-tasks/...) that no other key names
// exists with its content, so tests that walk built-in workflows need not
// write their artifacts. Tests about missing artifacts delete it.
const anyTaskFile = "hegel-tasks/*"

func (f fakeFiles) get(p string) (string, bool) {
	if d, ok := f[p]; ok {
		return d, true
	}
	if i := strings.LastIndexByte(p, '/'); i > 0 {
		// Nothing exists below a file.
		if _, ok := f[p[:i]]; ok {
			return "", false
		}
	}
	if d, ok := f[anyTaskFile]; ok && strings.HasPrefix(p, "hegel-tasks/") {
		return d, true
	}
	return "", false
}

// isDir reports whether p is a directory: some file lies below it.
func (f fakeFiles) isDir(p string) bool {
	for k := range f {
		if strings.HasPrefix(k, p+"/") {
			return true
		}
	}
	return false
}

// Ignored marks a file whose value starts "ignored:", or that a line of
// the top-level .gitignore names exactly.
func (f fakeFiles) Ignored(paths []string) (map[string]bool, error) {
	listed := map[string]bool{}
	for _, line := range strings.Split(f[".gitignore"], "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			listed[line] = true
		}
	}
	out := map[string]bool{}
	for _, p := range paths {
		if _, exists := f.get(p); exists && (strings.HasPrefix(f[p], "ignored:") || listed[p]) {
			out[p] = true
		}
	}
	return out, nil
}

func (f fakeFiles) Size(p string) (int64, error) {
	if f.isDir(p) {
		return 0, fmt.Errorf("%s is a directory", p)
	}
	d, ok := f.get(p)
	if !ok {
		return 0, fmt.Errorf("%s: %w", p, ErrNotFound)
	}
	return int64(len(d)), nil
}

func (f fakeFiles) ReadFile(p string, limit int64) ([]byte, error) {
	if f.isDir(p) {
		return nil, fmt.Errorf("%s is a directory", p)
	}
	d, ok := f.get(p)
	if !ok {
		return nil, fmt.Errorf("%s: %w", p, ErrNotFound)
	}
	if limit > 0 && int64(len(d)) > limit {
		return nil, fmt.Errorf("%s is too large", p)
	}
	return []byte(d), nil
}

// fakeSnapshots keeps checkpoints in memory and plays the restore
// sequence the way the git-backed Snapshots does, without files: a
// restore's journal, the safety checkpoint, and the chain cut back after
// a rollback.
type fakeSnapshots struct {
	// mu guards cps and n: concurrent transitions take checkpoints at
	// once (TestConcurrentNextLosesNothing).
	mu       sync.Mutex
	now      func() time.Time
	cps      map[string][]*Checkpoint
	n        int
	journal  *RollbackRecord
	restored []string // "<target id>" per Restore, "replay <id> forward|back" per Replay
	failTake error
	// failRestore makes Restore fail (nothing changed); dieInRestore
	// makes it stop as a killed process would, leaving the journal.
	failRestore, dieInRestore error
	running                   bool // the journal's process still runs
}

func newFakeSnapshots(now func() time.Time) *fakeSnapshots {
	return &fakeSnapshots{now: now, cps: map[string][]*Checkpoint{}}
}

func (f *fakeSnapshots) add(cp *Checkpoint) *Checkpoint {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	cp.ID = fmt.Sprintf("%04x%04x", 0x1000*f.n+f.n, 0xbeef)
	cp.CreatedAt = f.now()
	cp.Local = true
	cp.History = append([]string(nil), cp.History...)
	f.cps[cp.Task] = append(f.cps[cp.Task], cp)
	return cp
}

func (f *fakeSnapshots) Checkpoints(task string) ([]*Checkpoint, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*Checkpoint(nil), f.cps[task]...), nil
}

func (f *fakeSnapshots) TakeCheckpoint(st *State, kind, message string) (*Checkpoint, bool, error) {
	if f.failTake != nil {
		return nil, false, f.failTake
	}
	if f.journal != nil {
		return nil, false, f.journal.InterruptedError()
	}
	return f.add(&Checkpoint{Task: st.Task, WorkflowID: st.WorkflowID, Node: st.CurrentNode, Kind: kind, Message: message, History: st.History}), true, nil
}

func (f *fakeSnapshots) DropCheckpoint(task, id string) error {
	for i, c := range f.cps[task] {
		if c.ID == id {
			f.cps[task] = append(f.cps[task][:i:i], f.cps[task][i+1:]...)
			return nil
		}
	}
	return fmt.Errorf("no checkpoint %s: %w", id, ErrNotFound)
}

func (f *fakeSnapshots) PlanRestore(cp *Checkpoint, o RestoreOptions) (*RestorePlan, error) {
	return &RestorePlan{HeadFrom: "a", HeadTo: "a", Files: []FileChange{{Path: "f", Op: "modify"}}, Handle: cp}, nil
}

func (f *fakeSnapshots) Snapshot(p *RestorePlan, st *State, rec *RollbackRecord) (*Checkpoint, error) {
	target := p.Handle.(*Checkpoint)
	safety := f.add(&Checkpoint{Task: st.Task, WorkflowID: st.WorkflowID, Node: st.CurrentNode, Kind: CheckpointSafety,
		History: st.History, RollbackTo: rec.Node})
	rec.TargetID, rec.SafetyID, rec.SafetyHistory = target.ID, safety.ID, append([]string(nil), st.History...)
	f.journal = rec
	return safety, nil
}

func (f *fakeSnapshots) Restore(p *RestorePlan) error {
	if f.failRestore != nil {
		return f.failRestore
	}
	if f.dieInRestore != nil {
		return f.dieInRestore
	}
	f.restored = append(f.restored, p.Handle.(*Checkpoint).ID)
	return nil
}

func (f *fakeSnapshots) Replay(rec *RollbackRecord, forward bool) error {
	dir := "back"
	if forward {
		dir = "forward"
	}
	f.restored = append(f.restored, "replay "+rec.TargetID+" "+dir)
	return nil
}

func (f *fakeSnapshots) Settle(rec *RollbackRecord, restored bool) error {
	if restored {
		// The list as it was when the target was the present (checkpoints
		// by hand stay), then the safety checkpoint.
		var next []*Checkpoint
		var safety *Checkpoint
		cut := false
		for _, c := range f.cps[rec.Task] {
			switch {
			case c.ID == rec.SafetyID:
				safety = c
			case !cut || c.Kind == CheckpointManual:
				next = append(next, c)
			}
			if c.ID == rec.TargetID {
				cut = true
			}
		}
		if safety != nil {
			next = append(next, safety)
		}
		f.cps[rec.Task] = next
	}
	f.journal = nil
	return nil
}

func (f *fakeSnapshots) Interrupted() (*RollbackRecord, error) {
	if f.journal == nil {
		return nil, nil
	}
	if f.running {
		e := f.journal.InterruptedError()
		e.Running, e.PID = true, 4711
		return nil, e
	}
	return f.journal, nil
}

// ReadTaskFile implements TaskFileReader: the entry in the tree of the
// task's current revision, live or archived.
func (f *fakeTaskStore) ReadTaskFile(task, path string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.tasks[task]
	if t == nil {
		t = f.archive[task]
	}
	var b []byte
	ok := false
	if t != nil {
		b, ok = f.entries[t.Rev][path]
	}
	if !ok {
		return nil, fmt.Errorf("%s:%s: %w", task, path, ErrNotFound)
	}
	return append([]byte(nil), b...), nil
}

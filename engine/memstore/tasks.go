package memstore

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/git-hegel/git-hegel/engine"
)

// Tasks is an engine.TaskStore, engine.ArchiveStore and
// engine.TaskFileReader in memory, with the git store's compare-and-swap
// and history: every save is a revision whose parents are the revisions
// it continues, so archiving knows what an archive already holds.
// Checkpoints stands in for each task's checkpoint chain. Safe for
// concurrent use.
type Tasks struct {
	mu      sync.Mutex
	live    map[string]*record
	archive map[string]*record
	deleted map[string]*deletedRecord
	revs    map[string]*snapshot // every revision, by name
	rev     int
	log     []string // save messages, in order
	logArch []string // archive messages, in order

	// Checkpoints stands in for the tasks' checkpoint chains: a name per
	// task. Archiving drops it when asked, deleting keeps it in the
	// record, restoring puts it back. Set it under no save.
	Checkpoints map[string]string
	// BeforeSave, if set, runs before each save, outside the lock (tests
	// race another writer through it).
	BeforeSave func()
}

// snapshot is one revision: what its tree would hold, and its parents.
type snapshot struct {
	state   []byte // the state as the git store encodes it
	def     []byte
	entries map[string][]byte // results/…, inputs/…
	files   []engine.ArchivedFile
	parents []string
}

// record is a task where it is kept (live or archived): its last
// revision and the task as saved.
type record struct {
	task *engine.Task
}

type deletedRecord struct {
	rec         engine.DeletedTask
	archived    bool
	task        *engine.Task
	checkpoints string
}

var (
	_ engine.TaskStore      = (*Tasks)(nil)
	_ engine.ArchiveStore   = (*Tasks)(nil)
	_ engine.TaskFileReader = (*Tasks)(nil)
)

// NewTasks returns an empty task store.
func NewTasks() *Tasks {
	return &Tasks{live: map[string]*record{}, archive: map[string]*record{}, deleted: map[string]*deletedRecord{},
		revs: map[string]*snapshot{}, Checkpoints: map[string]string{}}
}

// putDirs are the directories a save may put entries in, as in the git
// store's task trees.
var putDirs = map[string]int{"results": 1, "inputs": 1, "submitted": 2, "logs": 1}

func copyTask(t *engine.Task) *engine.Task {
	return &engine.Task{State: t.State.Clone(), Definition: slices.Clone(t.Definition), Rev: t.Rev, Archived: t.Archived}
}

// LoadTask implements engine.TaskStore.
func (s *Tasks) LoadTask(name string) (*engine.Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.live[name]
	if !ok {
		return nil, fmt.Errorf("task %s: %w", name, engine.ErrNotFound)
	}
	return copyTask(r.task), nil
}

// newRev records a revision and returns its name.
func (s *Tasks) newRev(snap *snapshot) string {
	s.rev++
	rev := fmt.Sprint(s.rev)
	s.revs[rev] = snap
	return rev
}

// contains reports whether revision a is b or one of its ancestors.
func (s *Tasks) contains(b, a string) bool {
	if a == b {
		return true
	}
	if snap := s.revs[b]; snap != nil {
		for _, p := range snap.parents {
			if s.contains(p, a) {
				return true
			}
		}
	}
	return false
}

// Contains reports whether revision a is b or one of its ancestors: what
// the task's chain holds.
func (s *Tasks) Contains(b, a string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.contains(b, a)
}

func sameSnapshot(a, b *snapshot) bool {
	return string(a.state) == string(b.state) && string(a.def) == string(b.def) &&
		maps.EqualFunc(a.entries, b.entries, func(x, y []byte) bool { return string(x) == string(y) }) &&
		slices.EqualFunc(a.files, b.files, func(x, y engine.ArchivedFile) bool { return x.Path == y.Path && string(x.Data) == string(y.Data) })
}

// SaveTask implements engine.TaskStore. As in the git store, a save
// continues the revision it was loaded at: a finished archived task
// stays in the archive (with its artifact copies), an open one goes live
// (which it must not be already); a save that changes nothing returns
// that revision and writes nothing.
func (s *Tasks) SaveTask(t *engine.Task, msg string) (string, error) {
	if s.BeforeSave != nil {
		s.BeforeSave()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	name := t.State.Task
	state, err := json.Marshal(t.State)
	if err != nil {
		return "", err
	}
	snap := &snapshot{state: state, def: slices.Clone(t.Definition), entries: map[string][]byte{}}
	if t.Rev != "" {
		snap.parents = []string{t.Rev}
		if parent := s.revs[t.Rev]; parent != nil {
			maps.Copy(snap.entries, parent.entries)
			snap.files = parent.files
		}
	}
	toArchive := t.Archived && t.State.Finished()
	expect := t.Rev
	if t.Archived && !toArchive {
		// Back from the archive: the task goes live, and the artifact
		// copies stay behind.
		expect, snap.files = "", nil
	}
	for p := range t.Put {
		parts := strings.Split(p, "/")
		if depth, ok := putDirs[parts[0]]; !ok || len(parts) != depth+1 || slices.Contains(parts, "") {
			return "", fmt.Errorf("cannot store %q in a task's tree", p)
		}
		if parts[0] == "submitted" {
			// A node's submitted folder is written whole.
			for q := range snap.entries {
				if strings.HasPrefix(q, parts[0]+"/"+parts[1]+"/") {
					delete(snap.entries, q)
				}
			}
		}
	}
	for p, b := range t.Put {
		snap.entries[p] = slices.Clone(b)
	}
	where, what := s.live, "task"
	if toArchive {
		where, what = s.archive, "archive"
	}
	if t.Rev != "" && expect == t.Rev {
		if parent := s.revs[t.Rev]; parent != nil && sameSnapshot(parent, snap) {
			return t.Rev, nil
		}
	}
	cur, ok := where[name]
	if (ok && cur.task.Rev != expect) || (!ok && expect != "") {
		return "", fmt.Errorf("%s %s: %w", what, name, engine.ErrConflict)
	}
	rev := s.newRev(snap)
	where[name] = &record{task: &engine.Task{State: t.State.Clone(), Definition: slices.Clone(t.Definition), Rev: rev, Archived: toArchive}}
	s.log = append(s.log, msg)
	return rev, nil
}

// ListTasks implements engine.TaskStore.
func (s *Tasks) ListTasks() ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedNames(s.live), nil
}

func sortedNames(m map[string]*record) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LoadArchived implements engine.ArchiveStore.
func (s *Tasks) LoadArchived(name string) (*engine.Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.archive[name]
	if !ok {
		return nil, fmt.Errorf("archive %s: %w", name, engine.ErrNotFound)
	}
	return copyTask(r.task), nil
}

// ListArchived implements engine.ArchiveStore.
func (s *Tasks) ListArchived() ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedNames(s.archive), nil
}

// ArchiveTask implements engine.ArchiveStore.
func (s *Tasks) ArchiveTask(t *engine.Task, files []engine.ArchivedFile, msg string, dropCheckpoints bool) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := t.State.Task
	old := s.archive[name]
	var rev string
	if old != nil && s.contains(old.task.Rev, t.Rev) {
		rev = old.task.Rev // archived already
	} else {
		state, err := json.Marshal(t.State)
		if err != nil {
			return "", err
		}
		snap := &snapshot{state: state, def: slices.Clone(t.Definition), entries: map[string][]byte{}, parents: []string{t.Rev}}
		if tip := s.revs[t.Rev]; tip != nil {
			maps.Copy(snap.entries, tip.entries)
		}
		if old != nil && !s.contains(t.Rev, old.task.Rev) {
			snap.parents = append(snap.parents, old.task.Rev)
		}
		for _, f := range files {
			snap.files = append(snap.files, engine.ArchivedFile{Path: f.Path, Size: int64(len(f.Data)), Data: slices.Clone(f.Data)})
		}
		// Listed in path order, as a tree lists them.
		sort.Slice(snap.files, func(i, j int) bool { return snap.files[i].Path < snap.files[j].Path })
		rev = s.newRev(snap)
		s.archive[name] = &record{task: &engine.Task{State: t.State.Clone(), Definition: slices.Clone(t.Definition), Rev: rev, Archived: true}}
		s.logArch = append(s.logArch, msg)
	}
	if cur, ok := s.live[name]; ok && cur.task.Rev == t.Rev {
		delete(s.live, name)
	}
	if dropCheckpoints {
		delete(s.Checkpoints, name)
	}
	return rev, nil
}

// archivedFiles returns the artifact copies of an archived task.
func (s *Tasks) archivedFiles(name string) ([]engine.ArchivedFile, error) {
	r, ok := s.archive[name]
	if !ok {
		return nil, fmt.Errorf("archive %s: %w", name, engine.ErrNotFound)
	}
	return s.snapshot(r.task.Rev).files, nil
}

// snapshot is revision rev (an empty one for a revision this store never
// wrote, as Place may leave).
func (s *Tasks) snapshot(rev string) *snapshot {
	if snap := s.revs[rev]; snap != nil {
		return snap
	}
	return &snapshot{}
}

// ReadArchivedFile implements engine.ArchiveStore (a limit of 0 reads
// the whole file).
func (s *Tasks) ReadArchivedFile(name, path string, limit int64) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	files, err := s.archivedFiles(name)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if f.Path == path {
			if limit > 0 && int64(len(f.Data)) > limit {
				return nil, fmt.Errorf("the archived copy of %s is %d bytes, more than the %d shown", path, len(f.Data), limit)
			}
			return slices.Clone(f.Data), nil
		}
	}
	return nil, fmt.Errorf("%s: %w", path, engine.ErrNotFound)
}

// ArchivedFiles implements engine.ArchiveStore.
func (s *Tasks) ArchivedFiles(name string) ([]engine.ArchivedFile, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	files, err := s.archivedFiles(name)
	if err != nil {
		return nil, err
	}
	var out []engine.ArchivedFile
	for _, f := range files {
		out = append(out, engine.ArchivedFile{Path: f.Path, Size: f.Size})
	}
	return out, nil
}

// ListStates implements engine.ArchiveStore.
func (s *Tasks) ListStates(archived bool) ([]engine.ListedTask, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []engine.ListedTask
	for _, n := range sortedNames(s.live) {
		out = append(out, engine.ListedTask{Name: n, State: s.live[n].task.State.Clone()})
	}
	if archived {
		for _, n := range sortedNames(s.archive) {
			out = append(out, engine.ListedTask{Name: n, State: s.archive[n].task.State.Clone(), Archived: true})
		}
	}
	return out, nil
}

// DeleteTask implements engine.ArchiveStore: the archived task if there
// is one, else the live one.
func (s *Tasks) DeleteTask(name string, at time.Time) (*engine.DeletedTask, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, arch := s.archive[name], true
	if r == nil {
		r, arch = s.live[name], false
	}
	if r == nil {
		return nil, fmt.Errorf("task %s: %w", name, engine.ErrNotFound)
	}
	d := &deletedRecord{rec: engine.DeletedTask{Task: name, Workflow: r.task.State.Workflow, Status: r.task.State.Status,
		Archived: arch, DeletedAt: at.UTC(), Commit: r.task.Rev, Checkpoints: s.Checkpoints[name]},
		archived: arch, task: copyTask(r.task), checkpoints: s.Checkpoints[name]}
	s.deleted[name] = d
	if arch {
		delete(s.archive, name)
	} else {
		delete(s.live, name)
	}
	delete(s.Checkpoints, name)
	rec := d.rec
	return &rec, nil
}

// DeletedTasks implements engine.ArchiveStore: newest first, then by name.
func (s *Tasks) DeletedTasks() ([]*engine.DeletedTask, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*engine.DeletedTask
	for _, name := range sortedDeleted(s.deleted) {
		rec := s.deleted[name].rec
		out = append(out, &rec)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].DeletedAt.After(out[j].DeletedAt) })
	return out, nil
}

func sortedDeleted(m map[string]*deletedRecord) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// RestoreTask implements engine.ArchiveStore.
func (s *Tasks) RestoreTask(name string) (*engine.DeletedTask, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.deleted[name]
	if !ok {
		return nil, fmt.Errorf("deleted %s: %w", name, engine.ErrNotFound)
	}
	if s.live[name] != nil || s.archive[name] != nil {
		return nil, fmt.Errorf("%s: %w", name, engine.ErrExists)
	}
	if d.archived {
		s.archive[name] = &record{task: copyTask(d.task)}
	} else {
		s.live[name] = &record{task: copyTask(d.task)}
	}
	if d.checkpoints != "" && s.Checkpoints[name] == "" {
		s.Checkpoints[name] = d.checkpoints
	}
	delete(s.deleted, name)
	rec := d.rec
	return &rec, nil
}

// ExpireDeleted implements engine.ArchiveStore.
func (s *Tasks) ExpireDeleted(before time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for name, d := range s.deleted {
		if d.rec.DeletedAt.Before(before) {
			delete(s.deleted, name)
			n++
		}
	}
	return n, nil
}

// ReadTaskFile implements engine.TaskFileReader: the entry of the live
// task, else of the archived one.
func (s *Tasks) ReadTaskFile(task, path string) ([]byte, error) {
	if err := engine.CheckTaskName(task); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.live[task]
	if r == nil {
		r = s.archive[task]
	}
	if r == nil {
		return nil, fmt.Errorf("task %s: %w", task, engine.ErrNotFound)
	}
	b, ok := s.snapshot(r.task.Rev).entries[path]
	if !ok {
		return nil, fmt.Errorf("%s:%s: %w", task, path, engine.ErrNotFound)
	}
	return slices.Clone(b), nil
}

// Place puts t live as it is, its revision too (a new one when t.Rev is
// ""), as another writer's save or a fetch would: for tests that set up
// or forge what the store holds. It returns the revision.
func (s *Tasks) Place(t *engine.Task) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := copyTask(t)
	c.Archived = false
	if c.Rev == "" {
		state, _ := json.Marshal(t.State)
		c.Rev = s.newRev(&snapshot{state: state, def: slices.Clone(t.Definition)})
	}
	s.live[c.State.Task] = &record{task: c}
	return c.Rev
}

// Log returns the messages of every save, in order.
func (s *Tasks) Log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// ArchiveLog returns the messages of every archive written, in order.
func (s *Tasks) ArchiveLog() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.logArch)
}

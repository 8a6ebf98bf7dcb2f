package rollback

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/gitstore"
)

// Parking files with a stash changes many paths at once: cleaning the
// working tree after stash push --files deletes and rewrites every
// uncommitted file, and writing them back on stash pop does the reverse.
// A process killed halfway would leave hundreds of files deleted, which
// nothing would notice (the next stash pop would even ask to commit the
// deletions first). So both are journaled as a restore is: before the
// first change, parkJournalFile names the two states as stored trees
// (where it started, where it goes), and it is removed after the last
// change. FinishParking goes on to where it was going, UndoParking back to
// where it started; a file changed by someone else since is never
// overwritten (the recovery stops with nothing changed and names it).

// parkJournalFile is in the per-worktree git directory, beside the
// restore's journal.
const parkJournalFile = "hegel-stash.json"

// parkJournalVersion is the version written.
const parkJournalVersion = 1

// The operations a ParkJournal records.
const (
	// ParkClean is the cleaning after stash push --files: the files are
	// in the stash; the working tree and the index go back to HEAD.
	ParkClean = "clean"
	// ParkUnpark is stash pop (or apply) writing the parked files back.
	ParkUnpark = "unpark"
)

// ParkJournal is the state of a stash's file operation in progress.
type ParkJournal struct {
	Version int    `json:"version"`
	Op      string `json:"op"`
	// HeadRef and Head are the branch and commit HEAD is at; neither
	// operation moves them.
	HeadRef string `json:"head_ref,omitempty"`
	Head    string `json:"head,omitempty"`
	// From is the state it started from, To the one it goes to.
	From parkSide `json:"from"`
	To   parkSide `json:"to"`
	// PID, Host and BootID name the process that wrote it.
	PID    int    `json:"pid"`
	Host   string `json:"host,omitempty"`
	BootID string `json:"boot_id,omitempty"`
	// Record is the caller's (which stash), stored in the same object.
	Record Meta `json:"-"`
}

// parkSide is one side of a ParkJournal: the working tree and the index as
// stored trees ("" for empty), with the index flags.
type parkSide struct {
	WorkTree        string   `json:"worktree,omitempty"`
	IndexTree       string   `json:"index,omitempty"`
	AssumeUnchanged []string `json:"assume_unchanged,omitempty"`
	IntentToAdd     []string `json:"intent_to_add,omitempty"`
}

// checkpoint is the side as a checkpoint, for replay.
func (s parkSide) checkpoint() *Checkpoint {
	return &Checkpoint{WorkTree: hashOf(s.WorkTree), IndexTree: hashOf(s.IndexTree), AssumeUnchanged: s.AssumeUnchanged, IntentToAdd: s.IntentToAdd}
}

var parkJournalKeys = map[string]bool{
	"version": true, "op": true, "head_ref": true, "head": true, "from": true, "to": true,
	"pid": true, "host": true, "boot_id": true,
}

func (m *Manager) saveParkJournal(j *ParkJournal) error {
	j.Version, j.PID, j.Host, j.BootID = parkJournalVersion, os.Getpid(), hostName(), bootID()
	b, err := marshalFlat(j, withRaw(j.Record, j.rawNames))
	if err != nil {
		return err
	}
	// The trees it names are held by a ref before it names them.
	if err := m.holdParking(j); err != nil {
		return fmt.Errorf("cannot keep the trees of the stash's journal; nothing was changed: %w", err)
	}
	if err := m.w.parkJournal.save(append(b, '\n')); err != nil {
		m.releaseParking()
		return fmt.Errorf("cannot write the stash's journal; nothing was changed: %w", err)
	}
	return nil
}

// loadParkJournal reads the journal (nil when there is none).
func (m *Manager) loadParkJournal() (*ParkJournal, error) {
	b, err := m.w.parkJournal.load()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the stash's journal: %w", err)
	}
	var j ParkJournal
	rec, err := unmarshalFlat(b, &j, parkJournalKeys)
	if err != nil || j.Version < 1 || j.Version > parkJournalVersion || (j.Op != ParkClean && j.Op != ParkUnpark) {
		return nil, fmt.Errorf("the stash's journal (%s) is damaged or from another version; if no git hegel stash is running, remove it: rm '%s'", parkJournalFile, m.w.parkJournal.where())
	}
	if err := putRaw(j.rawNames, rec); err != nil {
		return nil, fmt.Errorf("the stash's journal (%s) is damaged (%v); if no git hegel stash is running, remove it: rm '%s'", parkJournalFile, err, m.w.parkJournal.where())
	}
	j.Record = rec
	return &j, nil
}

// running reports whether the process that wrote j still runs.
func (j *ParkJournal) running() bool {
	return (&Journal{PID: j.PID, Host: j.Host, BootID: j.BootID}).running()
}

// ParkingError reports a stash's file operation that did not finish: it
// blocks snapshots and restores until it is finished or undone.
type ParkingError struct {
	Journal *ParkJournal
	// Running: the process that wrote it still runs.
	Running bool
}

func (e *ParkingError) Error() string {
	if e.Running {
		return fmt.Sprintf("a stash is parking or restoring files in another process (pid %d); wait for it to end", e.Journal.PID)
	}
	return "a stash's file operation was interrupted (" + parkJournalFile + "); finish it or undo it first"
}

// Is makes errors.Is match ErrInterrupted, and ErrRunning while its
// process runs.
func (e *ParkingError) Is(target error) bool {
	return target == ErrInterrupted || (e.Running && target == ErrRunning)
}

// refuseParking is the error of an operation that must wait for a stash's
// file operation that did not finish (nil when there is none).
func (m *Manager) refuseParking() error {
	j, err := m.loadParkJournal()
	if err != nil || j == nil {
		return err
	}
	return &ParkingError{Journal: j, Running: j.PID != os.Getpid() && j.running()}
}

// InterruptedParking returns the journal of a stash's file operation that
// did not finish, or nil; one whose process still runs is a *ParkingError.
func (m *Manager) InterruptedParking() (*ParkJournal, error) {
	j, err := m.loadParkJournal()
	if err != nil || j == nil {
		return nil, err
	}
	if j.PID != os.Getpid() && j.running() {
		return nil, &ParkingError{Journal: j, Running: true}
	}
	return j, nil
}

// FinishParking carries the interrupted operation j on to where it was
// going, and removes the journal.
func (m *Manager) FinishParking(j *ParkJournal, what string) error {
	return m.replayParking(j, true, what)
}

// UndoParking puts back what the interrupted operation j had changed, and
// removes the journal.
func (m *Manager) UndoParking(j *ParkJournal, what string) error {
	return m.replayParking(j, false, what)
}

func (m *Manager) replayParking(j *ParkJournal, forward bool, what string) error {
	if j.PID != os.Getpid() && j.running() {
		return &ParkingError{Journal: j, Running: true}
	}
	m.w.removeStaleLock()
	if err := m.w.lockIndex(); err != nil {
		return err
	}
	defer m.w.unlockIndex()
	from, to := j.From.checkpoint(), j.To.checkpoint()
	if !forward {
		from, to = to, from
	}
	h := head{Ref: plumbing.ReferenceName(j.HeadRef), Commit: hashOf(j.Head)}
	jj := &Journal{HeadRef: j.HeadRef, HeadFrom: j.Head, HeadTo: j.Head, HeadToRef: j.HeadRef}
	if cur, err := m.w.readHead(); err == nil && (cur.Ref != h.Ref || cur.Commit != h.Commit) {
		return fmt.Errorf("HEAD moved after %s was interrupted (it is at %s, not %s); put it back to go on; nothing was changed", what, cur.describe(), h.describe())
	}
	if err := m.replayAs(from, to, jj, !forward, "", what); err != nil {
		return err
	}
	return m.removeParkJournal()
}

// overlay is tree base with changes applied (each path as its "to" side
// has it), stored: the tree a pass of changes leaves.
func (m *Manager) overlay(base plumbing.Hash, changes []change) (plumbing.Hash, error) {
	if len(changes) == 0 {
		return base, nil
	}
	to := make(map[string]leaf, len(changes))
	for _, c := range changes {
		to[c.path] = c.to
	}
	var leaves []leaf
	if !base.IsZero() {
		r := &treeReader{o: m.w.obj}
		err := r.walkLeaves(base, "", func(l leaf) error {
			if _, ok := to[l.path]; !ok {
				leaves = append(leaves, l)
			}
			return nil
		})
		if err != nil {
			return plumbing.ZeroHash, err
		}
	}
	for p, l := range to {
		if l.mode != 0 {
			l.path = p
			leaves = append(leaves, l)
		}
	}
	if len(leaves) == 0 {
		return plumbing.ZeroHash, nil
	}
	sort.Slice(leaves, func(i, j int) bool { return leaves[i].path < leaves[j].path })
	mem := map[plumbing.Hash][]byte{}
	root, err := buildTree(leaves, mem)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	m.w.obj.mu.Lock()
	for h, b := range mem {
		m.w.obj.mem[h] = b
	}
	m.w.obj.mu.Unlock()
	return root, m.w.obj.flushTrees(root)
}

// MayBeParking reports whether a stash's file operation could have been
// cut short here (its journal exists); when it does not, a caller need not
// build a Manager to learn that.
func MayBeParking(r *gitstore.Repo) bool {
	if r.GitDir == "" {
		return true
	}
	_, err := os.Lstat(filepath.Join(r.GitDir, parkJournalFile))
	return !errors.Is(err, fs.ErrNotExist)
}

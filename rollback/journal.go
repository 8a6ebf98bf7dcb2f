package rollback

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/git-hegel/git-hegel/gitstore"
)

// journalFile lives in the per-worktree git directory, like git's
// sequencer state: a rollback writes it before its first change and
// removes it after its last, so a rollback that was killed midway can be
// finished or undone by running the command again.
const journalFile = "hegel-rollback.json"

// Journal is the state of a rollback in progress. Everything needed to
// finish it or to undo it is here or in the objects it names; it is
// written atomically (temporary file, fsync, rename).
type Journal struct {
	Version int    `json:"version"`
	Task    string `json:"task"`
	// Target and Safety are checkpoint commits: the one being restored,
	// and the snapshot of everything as it was before.
	TargetID     string `json:"target_id"`
	TargetCommit string `json:"target_commit"`
	SafetyID     string `json:"safety_id"`
	SafetyCommit string `json:"safety_commit"`
	// HeadRef is the branch that moves ("" when HEAD is detached);
	// HeadFrom and HeadTo its old and new commits ("" for none).
	HeadRef  string `json:"head_ref,omitempty"`
	HeadFrom string `json:"head_from,omitempty"`
	HeadTo   string `json:"head_to,omitempty"`
	// The engine's request, replayed as is when finishing.
	Node    string    `json:"node"`
	From    string    `json:"from"`
	History []string  `json:"history"`
	Undo    bool      `json:"undo,omitempty"`
	Reason  string    `json:"reason,omitempty"`
	Force   bool      `json:"force,omitempty"`
	At      time.Time `json:"at"`
	// PID is the process that wrote the journal; while it runs, nobody
	// else may finish or undo the rollback.
	PID int `json:"pid"`
	// Step is "preparing" until the safety checkpoint exists (nothing has
	// changed yet; such a journal is simply cleared), then "started".
	Step string `json:"step"`
}

const (
	stepPreparing = "preparing"
	stepStarted   = "started"
)

const journalVersion = 1

type journalStore interface {
	load() ([]byte, error) // fs.ErrNotExist when there is none
	save(data []byte) error
	remove() error
}

// fileJournal is the journal file, created with the repository's shared
// permissions (core.sharedRepository) like everything in the git dir.
type fileJournal struct {
	path string
	perm gitstore.SharedPerm
}

func (j fileJournal) load() ([]byte, error) { return os.ReadFile(j.path) }

func (j fileJournal) save(data []byte) error {
	tmp := j.path + ".tmp"
	f, err := j.perm.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, j.path); err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(j.path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

func (j fileJournal) remove() error {
	err := os.Remove(j.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

type memJournal struct{ data []byte }

func (j *memJournal) load() ([]byte, error) {
	if j.data == nil {
		return nil, fs.ErrNotExist
	}
	return j.data, nil
}
func (j *memJournal) save(data []byte) error { j.data = append([]byte(nil), data...); return nil }
func (j *memJournal) remove() error          { j.data = nil; return nil }

// ErrInterrupted reports a rollback that did not finish; the message says
// how to finish or undo it.
var ErrInterrupted = errors.New("a rollback was interrupted")

func (w *workspace) loadJournal() (*Journal, error) {
	b, err := w.journal.load()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the rollback journal: %w", err)
	}
	var j Journal
	if err := json.Unmarshal(b, &j); err != nil || j.Version != journalVersion {
		return nil, fmt.Errorf("the rollback journal (%s) is damaged or from another version; if no rollback is running, remove it", journalFile)
	}
	return &j, nil
}

func (w *workspace) saveJournal(j *Journal) error {
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	if err := w.journal.save(append(b, '\n')); err != nil {
		return fmt.Errorf("cannot write the rollback journal: %w", err)
	}
	return nil
}

// Advice says what happened and what to do about it, in one line.
func (j *Journal) Advice() string { return interruptedMessage(j) }

// interruptedMessage says what to do about an unfinished rollback.
func interruptedMessage(j *Journal) string {
	what := "A rollback to '" + j.Node + "'"
	if j.Undo {
		what = "An undo of a rollback (back to '" + j.Node + "')"
	}
	return what + " was interrupted. Run 'git hegel rollback' to finish it, or 'git hegel rollback --undo' to undo it"
}

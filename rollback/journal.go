package rollback

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	gitobjects "github.com/git-hegel/git-hegel/gitstore/objects"
)

// journalFile lives in the per-worktree git directory, like git's
// sequencer state: a restore writes it before its first change and
// removes it after its last, so a restore that was killed midway can be
// finished or undone by running the command again.
const journalFile = "hegel-rollback.json"

// Journal is the state of a restore in progress. Everything needed to
// finish it or to undo it is here or in the objects it names; it is
// written atomically (temporary file, fsync, rename).
type Journal struct {
	Version int `json:"version"`
	// Chain is the ref of the chain the checkpoints are in ("" in a
	// journal written before it was recorded: the caller knows it from
	// Record).
	Chain string `json:"chain,omitempty"`
	// Target and Safety are checkpoint commits: the one being restored,
	// and the snapshot of everything as it was before.
	TargetID     string `json:"target_id,omitempty"`
	TargetCommit string `json:"target_commit,omitempty"`
	SafetyID     string `json:"safety_id,omitempty"`
	SafetyCommit string `json:"safety_commit,omitempty"`
	// HeadRef is the branch HEAD is on when the restore starts ("" when
	// detached), HeadFrom the commit HEAD is at then, HeadTo the one it
	// is at after ("" for none). Since version 2, HeadToRef is the branch
	// HEAD is on after ("" when detached) and Moves lists every branch the
	// restore moves; a version 1 journal moved HeadRef only.
	HeadRef   string        `json:"head_ref,omitempty"`
	HeadFrom  string        `json:"head_from,omitempty"`
	HeadTo    string        `json:"head_to,omitempty"`
	HeadToRef string        `json:"head_to_ref,omitempty"`
	Moves     []journalMove `json:"moves,omitempty"`
	// Recurse: submodules' checkouts are restored too.
	Recurse bool `json:"recurse_submodules,omitempty"`
	// Only limits the restore to these paths (PlanOptions.Only); absent:
	// every path.
	Only []string `json:"only,omitempty"`
	// PID is the process that wrote the journal; while it runs, nobody
	// else may finish or undo the restore. Host and BootID tell a
	// process of this machine since its last boot from a recycled pid.
	PID    int    `json:"pid"`
	Host   string `json:"host,omitempty"`
	BootID string `json:"boot_id,omitempty"`
	// Step is "preparing" until the safety checkpoint exists (nothing has
	// changed yet; such a journal is simply cleared), then "started".
	Step string `json:"step"`

	// Record is the caller's part of the journal (what it records once
	// the files are back: a rollback's task, node, history, reason and
	// time), stored in the same JSON object.
	Record Meta `json:"-"`
}

// journalKeys are the JSON names of the Journal's own fields.
var journalKeys = map[string]bool{
	"version": true, "chain": true, "target_id": true, "target_commit": true, "safety_id": true, "safety_commit": true,
	"head_ref": true, "head_from": true, "head_to": true, "head_to_ref": true, "moves": true,
	"recurse_submodules": true, "only": true, "pid": true, "host": true, "boot_id": true, "step": true,
}

const (
	stepPreparing = "preparing"
	stepStarted   = "started"
)

// journalVersion is the version written; version 1 journals (written
// before rollbacks could check out another branch) are still read.
const journalVersion = 2

// journalMove is one branch move in the journal; "" is no commit.
type journalMove struct {
	Ref  string `json:"ref"`
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
}

type journalStore interface {
	load() ([]byte, error) // fs.ErrNotExist when there is none
	save(data []byte) error
	remove() error
	where() string // the file, for a message that says to remove it
}

// fileJournal is the journal file, created with the repository's shared
// permissions (core.sharedRepository) like everything in the git dir.
type fileJournal struct {
	path string
	perm gitobjects.SharedPerm
}

func (j fileJournal) load() ([]byte, error) { return os.ReadFile(j.path) }

func (j fileJournal) where() string { return j.path }

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
func (j *memJournal) where() string          { return journalFile }

// ErrInterrupted matches a *JournalError: a restore that did not finish.
var ErrInterrupted = errors.New("a restore was interrupted")

func (w *workspace) loadJournal() (*Journal, error) {
	b, err := w.journal.load()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the rollback journal: %w", err)
	}
	var j Journal
	rec, err := unmarshalFlat(b, &j, journalKeys)
	if err != nil || j.Version < 1 || j.Version > journalVersion {
		return nil, fmt.Errorf("the rollback journal (%s) is damaged or from another version; if no rollback is running, remove it: rm '%s'", journalFile, w.journal.where())
	}
	if err := putRaw(j.rawNames, rec); err != nil {
		return nil, fmt.Errorf("the rollback journal (%s) is damaged (%v); if no rollback is running, remove it: rm '%s'", journalFile, err, w.journal.where())
	}
	j.Record = rec
	if j.Chain == "" && w.chainOf != nil {
		j.Chain = w.chainOf(rec)
	}
	if j.Version == 1 {
		// Version 1 moved the branch HEAD was on, and nothing else.
		j.HeadToRef = j.HeadRef
		if j.HeadRef != "" && j.HeadFrom != j.HeadTo {
			j.Moves = []journalMove{{Ref: j.HeadRef, From: j.HeadFrom, To: j.HeadTo}}
		}
	}
	return &j, nil
}

func (w *workspace) saveJournal(j *Journal) error {
	b, err := marshalFlat(j, withRaw(j.Record, j.rawNames))
	if err != nil {
		return err
	}
	if err := w.journal.save(append(b, '\n')); err != nil {
		return fmt.Errorf("cannot write the rollback journal: %w", err)
	}
	return nil
}

// running reports whether the process that wrote j is still running: the
// same pid on this host, since the same boot.
func (j *Journal) running() bool {
	if j.PID == os.Getpid() {
		return true
	}
	if j.Host != "" && j.Host != hostName() {
		return false
	}
	if j.BootID != "" && j.BootID != bootID() {
		return false
	}
	return pidAlive(j.PID)
}

func hostName() string {
	h, _ := os.Hostname()
	return h
}

// bootID identifies this boot of the machine ("" where unknown), so a pid
// recorded before a reboot is not taken for a live process.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

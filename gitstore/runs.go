package gitstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore/objects"
	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// Running records (engine.RunRecords): while `git hegel run` drives a task,
// <common git dir>/hegel/running/<task> names the process and the step it
// is at. The file's first line is the owner marker every git-hegel lock
// carries (refs.LockOwner: pid, host and machine id, boot id, pid namespace,
// start time), so the storage layer's own checks tell a live run from one
// that was killed; the rest is the record as JSON:
//
//	git-hegel lock pid=4242 host=build-7/5f1e… boot=8c2d… ns=4026531836 start=912345
//	{"task": "fix-login", "workflow": "multi_file", "step": 2, "total_steps": 3, ...}
//
// It is created like a lock (a temporary file hard-linked to its name, so
// two runs cannot both take it), replaced when its owner is provably dead
// (RemoveDeadLock, serialized per directory), rewritten by its owner with
// a rename at every step, and removed when the run ends. It lives outside
// the synced refs: a process runs on one machine. Its name does not end in
// ".lock", so `git hegel doctor` does not list a run as a stale lock.
const runningDir = "hegel/running"

// Runs is the running-record store of a repository.
type Runs struct{ r *Repo }

var _ engine.RunRecords = Runs{}

// Runs returns the repository's running records. An in-memory repository
// keeps none.
func (r *Repo) Runs() Runs { return Runs{r} }

func (s Runs) path(task string) string {
	return filepath.Join(s.r.CommonDir, filepath.FromSlash(runningDir), task)
}

// encode is the record's file content, with this process as its owner.
func (s Runs) encode(rec *engine.RunRecord) ([]byte, error) {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(append(refs.ThisOwner().Marker(), b...), '\n'), nil
}

// own fills in the record's process fields from this process.
func own(rec *engine.RunRecord) {
	me := refs.ThisOwner()
	rec.PID = me.PID
	rec.Host, _, _ = strings.Cut(me.Host, "/")
}

// writeTemp writes data to a new temporary file beside the record.
func (s Runs) writeTemp(task string, data []byte) (string, error) {
	dir := filepath.Dir(s.path(task))
	if err := s.r.shared.MkdirAll(dir); err != nil {
		return "", err
	}
	tmp := filepath.Join(dir, "."+task+".tmp-"+objects.NewID()[:8])
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = s.r.shared.Adjust(tmp)
	}
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// BeginRun implements engine.RunRecords.
func (s Runs) BeginRun(rec *engine.RunRecord) error {
	if s.r.CommonDir == "" {
		return nil
	}
	own(rec)
	data, err := s.encode(rec)
	if err != nil {
		return err
	}
	for attempt := 0; attempt < 5; attempt++ {
		tmp, err := s.writeTemp(rec.Task, data)
		if err != nil {
			return fmt.Errorf("cannot record the run of task %s: %s", rec.Task, oneLine(err.Error()))
		}
		err = os.Link(tmp, s.path(rec.Task))
		os.Remove(tmp)
		if err == nil {
			return nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("cannot record the run of task %s: %s", rec.Task, oneLine(err.Error()))
		}
		// A run killed before it could remove its record left it: its
		// owner is provably dead, and the record goes.
		if li, removed, _ := refs.RemoveDeadLock(s.path(rec.Task)); removed {
			s.r.warnf(fmt.Sprintf("the last run of task %s (%s) was killed; this run continues from where it stopped", rec.Task, li.Owner))
			continue
		}
		old, err := s.LoadRun(rec.Task)
		if err != nil {
			return err
		}
		if old == nil {
			continue // it ended meanwhile
		}
		return &engine.RunningError{Rec: old}
	}
	return fmt.Errorf("cannot record the run of task %s: its record keeps changing", rec.Task)
}

// UpdateRun implements engine.RunRecords.
func (s Runs) UpdateRun(rec *engine.RunRecord) error {
	if s.r.CommonDir == "" {
		return nil
	}
	own(rec)
	data, err := s.encode(rec)
	if err != nil {
		return err
	}
	tmp, err := s.writeTemp(rec.Task, data)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, s.path(rec.Task)); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// EndRun implements engine.RunRecords: it removes the record if this
// process owns it.
func (s Runs) EndRun(task string) error {
	if s.r.CommonDir == "" {
		return nil
	}
	b, err := os.ReadFile(s.path(task))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if o, ok := refs.ParseMarker(b); !ok || o != refs.ThisOwner() {
		return nil
	}
	if err := os.Remove(s.path(task)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// LoadRun implements engine.RunRecords.
func (s Runs) LoadRun(task string) (*engine.RunRecord, error) {
	if s.r.CommonDir == "" || engine.CheckTaskName(task) != nil {
		return nil, nil
	}
	b, err := os.ReadFile(s.path(task))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	o, ok := refs.ParseMarker(b)
	_, body, _ := bytes.Cut(b, []byte("\n"))
	var rec engine.RunRecord
	if !ok || json.Unmarshal(body, &rec) != nil {
		return nil, fmt.Errorf("%s is not a running record git-hegel wrote; if no git hegel run is running, remove it", s.path(task))
	}
	rec.Owner = o.String()
	switch o.State() {
	case refs.LockAlive:
		rec.Liveness = engine.LiveAlive
	case refs.LockDead:
		rec.Liveness = engine.LiveDead
	default:
		rec.Liveness = engine.LiveUnknown
	}
	return &rec, nil
}

// RemoveRun removes task's record whatever its owner (git hegel cancel
// --force, for a record whose process cannot be checked from here).
func (s Runs) RemoveRun(task string) error {
	if s.r.CommonDir == "" {
		return nil
	}
	if err := os.Remove(s.path(task)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

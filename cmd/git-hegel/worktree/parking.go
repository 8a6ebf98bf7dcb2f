package worktree

import (
	"errors"
	"fmt"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/rollback"
)

// The parking journal's fields that are the engine's.
const (
	parkStash = "stash_id"
	parkLabel = "label"
)

// Park implements engine.Parking.
func (s *Snapshots) Park(st *engine.State) (*engine.StashFiles, error) {
	pk, err := s.Manager().Park(template(st, rollback.KindStash, "", ""))
	if err != nil {
		return nil, s.convert(err)
	}
	s.parked = pk
	if pk.Tree == "" {
		return nil, nil
	}
	return &engine.StashFiles{Tree: pk.Tree, Count: pk.Count, Branch: pk.Branch, Head: pk.Head}, nil
}

// Clean implements engine.Parking.
func (s *Snapshots) Clean(st *engine.Stash) error {
	pk := s.parked
	if pk == nil {
		return errors.New("no files were parked")
	}
	s.parked = nil
	return s.convert(s.Manager().Clean(pk, parkMeta(st.ID, st.Label())))
}

// Release implements engine.Parking.
func (s *Snapshots) Release() {
	if s.parked != nil {
		s.Manager().Release(s.parked)
		s.parked = nil
	}
}

// Unpark implements engine.Parking.
func (s *Snapshots) Unpark(ent *engine.StashEntry) error {
	if ent.Files == nil {
		return nil
	}
	return s.convert(s.Manager().Unpark(ent.Files.Tree, ent.Ref(), parkMeta(ent.ID, ent.Label())))
}

func parkMeta(id, label string) rollback.Meta {
	m := rollback.Meta{}
	m.Set(parkStash, id)
	m.Set(parkLabel, label)
	return m
}

// parkingRecordOf is the engine's view of a parking journal.
func parkingRecordOf(j *rollback.ParkJournal) *engine.ParkingRecord {
	rec := &engine.ParkingRecord{Push: j.Op == rollback.ParkClean, StashID: j.Record.String(parkStash), Handle: j}
	rec.Label = fmt.Sprintf("stash %s, %s", rec.StashID, j.Record.String(parkLabel))
	return rec
}

// InterruptedParking implements engine.Parking. Without its journal,
// nothing was cut short, and no Manager is built (every command asks).
func (s *Snapshots) InterruptedParking() (*engine.ParkingRecord, error) {
	if !rollback.MayBeParking(s.r) {
		return nil, nil
	}
	j, err := s.Manager().InterruptedParking()
	if err != nil || j == nil {
		return nil, s.convert(err)
	}
	return parkingRecordOf(j), nil
}

// FinishParking implements engine.Parking.
func (s *Snapshots) FinishParking(rec *engine.ParkingRecord) error {
	j, ok := rec.Handle.(*rollback.ParkJournal)
	if !ok {
		return errors.New("the stash's journal is not known")
	}
	return s.convert(s.Manager().FinishParking(j, "the stash push"))
}

// UndoParking implements engine.Parking.
func (s *Snapshots) UndoParking(rec *engine.ParkingRecord) error {
	j, ok := rec.Handle.(*rollback.ParkJournal)
	if !ok {
		return errors.New("the stash's journal is not known")
	}
	return s.convert(s.Manager().UndoParking(j, "the stash pop"))
}

package worktree

import (
	"errors"
	"fmt"
	"strings"

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
	keep, err := s.stashKeep()
	if err != nil {
		return nil, err
	}
	pk, err := s.Manager().Park(template(st, rollback.KindStash, "", ""), keep)
	if err != nil {
		return nil, s.convert(err)
	}
	s.parked = pk
	if len(pk.Kept) > 0 {
		s.o.Note(fmt.Sprintf("Left %s in place: a stash never parks git-hegel's or the agents' settings (hegel.stash.keep adds paths)", listPaths(s.quoteAll(pk.Kept), 3)))
	}
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
func (s *Snapshots) Unpark(ent *engine.StashEntry) (*engine.StashUnparked, error) {
	if ent.Files == nil {
		return &engine.StashUnparked{}, nil
	}
	keep, err := s.stashKeep()
	if err != nil {
		return nil, err
	}
	res, err := s.Manager().Unpark(ent.Files.Tree, ent.Ref(), keep, parkMeta(ent.ID, ent.Label()))
	if err != nil {
		return nil, s.convert(err)
	}
	// Kept paths are named to people: quoted, since a hostile stash
	// chooses them.
	out := &engine.StashUnparked{}
	for _, p := range res.Kept {
		out.Kept = append(out.Kept, s.quote(p))
	}
	for _, c := range res.Conflicts {
		out.Conflicts = append(out.Conflicts, engine.StashConflict{Path: c.Path, Kind: c.Kind, What: c.Describe()})
	}
	return out, nil
}

// stashKeep is the paths a stash leaves alone: git-hegel's and the
// agents' settings, and hegel.stash.keep (a bad value is an error naming
// it, before anything changes).
func (s *Snapshots) stashKeep() (*rollback.StashKeep, error) {
	return rollback.NewStashKeep(s.r.Config().All("hegel", "stash", "keep"))
}

// listPaths names up to n paths, and how many more there are.
func listPaths(paths []string, n int) string {
	if len(paths) <= n {
		return strings.Join(paths, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(paths[:n], ", "), len(paths)-n)
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

func (s *Snapshots) quote(p string) string {
	if s.o.QuotePath == nil {
		return p
	}
	return s.o.QuotePath(p)
}

func (s *Snapshots) quoteAll(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = s.quote(p)
	}
	return out
}

package engine

import (
	"errors"
	"fmt"
	"strings"
)

// Parking parks this worktree's uncommitted files with a stash and writes
// them back (git hegel stash push --files, stash pop). Each of the two is
// journaled by the implementation: one cut short (a killed process) is
// finished or undone by RecoverParking, so hundreds of files are never
// left deleted with nothing saying so. cmd/git-hegel/worktree implements
// it with package rollback.
type Parking interface {
	// Park snapshots and stores the uncommitted files (tracked changes,
	// staged or not, and untracked files that are not ignored) of task
	// st's worktree; files is nil when there are none. Nothing changes;
	// the index stays locked until Clean or Release.
	Park(st *State) (files *StashFiles, err error)
	// Clean puts the working tree and the index back to HEAD, once the
	// stash that holds the files is stored.
	Clean(s *Stash) error
	// Release gives up a Park whose stash was not stored.
	Release()
	// Unpark writes the files a stash parked back into the working tree
	// and the index, merging those a later commit changed too, as git
	// stash pop does; conflicts are in the result (written with conflict
	// markers, or left as HEAD has them). A path with uncommitted changes
	// the stash would overwrite refuses the whole of it, with nothing
	// changed.
	Unpark(s *StashEntry) (*StashUnparked, error)
	// InterruptedParking returns the stash file operation that was cut
	// short, or nil; one another process is running is an error.
	InterruptedParking() (*ParkingRecord, error)
	// FinishParking carries an interrupted operation on to its end;
	// UndoParking puts back what it had changed.
	FinishParking(rec *ParkingRecord) error
	UndoParking(rec *ParkingRecord) error
}

// StashUnparked is what writing a stash's files back did besides.
type StashUnparked struct {
	// Conflicts are the paths whose parked change could not be merged.
	Conflicts []StashConflict
	// Kept are the paths the stash holds that a stash never writes
	// (git-hegel's and the agents' settings, hegel.stash.keep).
	Kept []string
}

// StashConflict is one path a stash's files conflicted on: Kind is git's
// name for it (content, add/add, modify/delete, delete/modify, binary,
// type), What says what was left in the working tree.
type StashConflict struct {
	Path, Kind, What string
}

// StashConflictError ends a pop or apply whose files conflicted: the
// workflow was restored and the files written (with conflict markers
// where both sides changed the same lines), but the stash was kept, as
// git stash pop keeps it, until the conflicts are resolved and it is
// dropped.
type StashConflictError struct {
	Entry     *StashEntry
	View      *View
	Conflicts []StashConflict
	// Pop: the stash would have been removed had there been no conflict.
	Pop bool
}

func (e *StashConflictError) Error() string {
	n := len(e.Conflicts)
	s := "s"
	if n == 1 {
		s = ""
	}
	if !e.Pop {
		return fmt.Sprintf("%d conflict%s restoring %s; resolve them", n, s, e.Entry.Ref())
	}
	drop := "'git hegel stash drop'"
	if e.Entry.Index != 0 {
		drop = fmt.Sprintf("'git hegel stash drop %d'", e.Entry.Index)
	}
	return fmt.Sprintf("%d conflict%s restoring %s; the stash was kept: resolve them, then %s", n, s, e.Entry.Ref(), drop)
}

// ParkingRecord is what the journal of a stash's file operation keeps for
// the engine.
type ParkingRecord struct {
	// Push: the cleaning after stash push --files; else the files of a
	// stash pop (or apply) being written back.
	Push bool
	// StashID and Label name the stash.
	StashID, Label string
	// Handle is the implementation's own journal.
	Handle any
}

// ErrParkingInterrupted matches the error of an operation that found a
// stash's file operation cut short and not recovered.
var ErrParkingInterrupted = errors.New("a stash's file operation was interrupted")

// StashPushParking is git hegel stash push --files: the uncommitted files
// are parked first (nothing changes), the stash that holds them and the
// workflow is stored, then the working tree and the index go back to
// HEAD. files is nil when nothing was uncommitted (only the workflow is
// stashed). If the cleaning fails, the files are safe in the stash and
// the error says so.
func (e *Engine) StashPushParking(message string) (ent *StashEntry, files *StashFiles, err error) {
	if e.Parking == nil {
		return nil, nil, ErrNoWorktree
	}
	cur, err := e.Current("")
	if errors.Is(err, ErrNoWorkflow) {
		return nil, nil, errors.New("No active workflow to stash")
	}
	if err != nil {
		return nil, nil, err
	}
	files, err = e.Parking.Park(cur.State)
	if err != nil {
		return nil, nil, err
	}
	ent, err = e.StashPushFiles(message, files)
	if err != nil || files == nil {
		e.Parking.Release()
		return ent, files, err
	}
	if err := e.Parking.Clean(ent.Stash); err != nil {
		return ent, files, fmt.Errorf("the files are parked in %s, but the working tree could not be cleaned: %v", ent.Ref(), err)
	}
	return ent, files, nil
}

// RecoverParking finishes or undoes a stash's file operation that was cut
// short, and says which in one line ("" when there was none). The files a
// push parked are in its stash, so its cleaning goes on; the files of a
// pop are still in its stash too, so what it had written back is undone
// and the stash can be popped again.
func (e *Engine) RecoverParking() (string, error) {
	if e.Parking == nil {
		return "", nil
	}
	rec, err := e.Parking.InterruptedParking()
	if err != nil || rec == nil {
		return "", err
	}
	if rec.Push {
		if err := e.Parking.FinishParking(rec); err != nil {
			return "", fmt.Errorf("%s, and could not be finished: %w", rec.Interrupted(), err)
		}
		return fmt.Sprintf("Finished the interrupted 'git hegel stash push --files' (%s): the working tree and the index are as HEAD has them, the files are in the stash", rec.Label), nil
	}
	if err := e.Parking.UndoParking(rec); err != nil {
		return "", fmt.Errorf("%s, and could not be undone: %w", rec.Interrupted(), err)
	}
	return fmt.Sprintf("Undid the interrupted 'git hegel stash pop' of %s: the files it had written back are as they were; the stash still holds them", rec.Label), nil
}

// Interrupted says what was cut short.
func (rec *ParkingRecord) Interrupted() string {
	if rec.Push {
		return fmt.Sprintf("The 'git hegel stash push --files' of %s was interrupted", rec.Label)
	}
	return fmt.Sprintf("The 'git hegel stash pop' of %s was interrupted", rec.Label)
}

// ParkingInterruptedError is a stash's file operation that was cut short
// and is not recovered yet (or is running in another process).
type ParkingInterruptedError struct {
	Record  *ParkingRecord
	Running bool
	PID     int
}

func (e *ParkingInterruptedError) Error() string {
	if e.Running {
		return fmt.Sprintf("A 'git hegel stash' is parking or restoring files in another process (pid %d); wait for it to end", e.PID)
	}
	return e.Record.Interrupted() + "; run 'git hegel status' to finish or undo it (or 'git hegel doctor' to see why it cannot)"
}

// Is makes errors.Is match ErrParkingInterrupted.
func (e *ParkingInterruptedError) Is(target error) bool { return target == ErrParkingInterrupted }

// someOf names up to n paths, and how many more there are.
func someOf(paths []string, n int) string {
	if len(paths) <= n {
		return strings.Join(paths, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(paths[:n], ", "), len(paths)-n)
}

func itOrThey(n int) string {
	if n == 1 {
		return "it is"
	}
	return "they are"
}

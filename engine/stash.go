package engine

import (
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

// StatusStashed marks a task whose state was parked with `git hegel stash`:
// the stash entry holds the state to restore, and no worktree owns the task
// until it is popped.
const StatusStashed = "stashed"

// DroppedStashWindow is how long a dropped or cleared stash stays listed by
// `stash list --dropped` and restorable with `stash restore`.
const DroppedStashWindow = 30 * 24 * time.Hour

// ErrExists reports that something to be created already exists.
var ErrExists = errors.New("already exists")

// Stash is one parked workflow: everything needed to restore it elsewhere,
// independent of the task's ref, which may have moved on meanwhile.
type Stash struct {
	ID         string // stable, time-ordered; see NextStashID
	Message    string
	Timestamp  time.Time // when it was stashed
	Task       string
	Worktree   string // the worktree it was stashed from
	Definition []byte // the workflow YAML the task runs, as stored with it
	State      *State // the complete workflow state at the time
	// Files describes the uncommitted files parked with the workflow
	// (git hegel stash push --files), or nil.
	Files *StashFiles
	// Damaged says why the entry could not be read. When it is set, only
	// ID and Rev are meaningful; the entry can still be dropped.
	Damaged string
	// Rev is the store's handle on this exact content (a blob hash).
	Rev string
}

// Label is how a stash is named to people: `<mode>/<node> "MSG"`, without
// the quoted part when there is no message.
func (s *Stash) Label() string {
	if s.Damaged != "" {
		return "damaged entry " + s.ID
	}
	l := s.State.Mode + "/" + s.State.CurrentNode
	// The message may come from another clone's stash list: nothing in
	// it reaches a terminal as a control character.
	if m := text.Clean(firstLine(s.Message)); m != "" {
		l += ` "` + m + `"`
	}
	return l
}

// ParkedElsewhere reports whether ent's files were parked by another
// clone (StashPop writes them only with force).
func (e *Engine) ParkedElsewhere(ent *StashEntry) bool {
	return ent.Files != nil && e.madeElsewhere(ent)
}

// madeElsewhere reports whether ent was pushed by another clone, by this
// clone's own record (StashOrigin); a store that keeps none (in memory)
// has only this clone's.
func (e *Engine) madeElsewhere(ent *StashEntry) bool {
	o, ok := e.Stashes.(StashOrigin)
	return ok && !o.MadeHere(ent.Rev)
}

// foreignStash says why the files of ent, which another clone parked,
// are not written without --force.
func foreignStash(ent *StashEntry, op string) error {
	from := ""
	if w := text.Clean(firstLine(ent.Worktree)); w != "" {
		from = " from " + w
	}
	were := "were"
	if ent.Files.Count == 1 {
		were = "was"
	}
	return fmt.Errorf("Cannot restore %s: its %s %s parked in another clone (stashed%s on %s), so whoever made it chose what it writes; run 'git hegel stash %s --force %s' to restore them anyway; nothing was changed",
		ent.Ref(), text.Plural(ent.Files.Count, "file", "files"), were, from, ent.Timestamp.UTC().Format("2006-01-02 15:04 UTC"), op, ent.Ref())
}

// StashOrigin is implemented by a StashStore that keeps this clone's
// record of the stashes it pushed. Stashes sync as a union of every
// clone's entries: a task restored from another clone's entry holds that
// clone's words, so its state is saved with a message that marks it as
// fetched (StashElsewhereMsg), and its texts reach an agent only once
// trusted, as a fetch's do (fetched_text.go).
type StashOrigin interface {
	// MadeHere says whether the stash entry whose content is blob rev
	// (Stash.Rev) was pushed on this clone.
	MadeHere(rev string) bool
}

// StashElsewhereMsg starts the history message of a task restored from a
// stash another clone made: a task store reads the change as a fetch
// from StashElsewhere.
const StashElsewhereMsg = "stash from another clone: "

// StashElsewhere is the origin the fetched-text notice names for such a
// task's texts.
const StashElsewhere = "a stash another clone made"

// StashFiles describes the uncommitted files a stash parked: a snapshot of
// the working tree and the index (stored by package rollback), which the
// stash store keeps reachable for as long as the stash exists.
type StashFiles struct {
	Tree   string `json:"tree"`             // the snapshot's tree (an object id)
	Count  int    `json:"count"`            // files parked
	Head   string `json:"head,omitempty"`   // the commit HEAD was at
	Branch string `json:"branch,omitempty"` // the branch HEAD was on
}

// StashEntry is a live stash and its derived position: 0 is the newest.
type StashEntry struct {
	Index int
	*Stash
}

// Ref is the stash@{N} name of the entry.
func (e *StashEntry) Ref() string { return fmt.Sprintf("stash@{%d}", e.Index) }

// DroppedStash is a stash removed by drop or clear that the stash history
// still holds.
type DroppedStash struct {
	*Stash
	DroppedAt time.Time
	Op        StashOp // StashOpDrop or StashOpClear
}

// StashOp names an operation on the stash list. The store records it in the
// history ("stash <op>: ...") and reads it back to tell drops from pops.
type StashOp string

// The operations recorded in the stash history.
const (
	StashOpPush     StashOp = "push"
	StashOpPop      StashOp = "pop"
	StashOpDrop     StashOp = "drop"
	StashOpClear    StashOp = "clear"
	StashOpRestore  StashOp = "restore"
	StashOpWithdraw StashOp = "withdraw" // a push undone because the task changed meanwhile
)

// StashStore keeps the stash list. gitstore implements it as one commit
// chain with one blob per stash; every method that writes is one
// compare-and-swap commit, retried by the store when another process wrote
// first, so callers never see ErrConflict from it.
type StashStore interface {
	// StashIDs returns the ids of the live stashes, newest first, without
	// reading the entries themselves.
	StashIDs() ([]string, error)
	// LoadStash reads one live stash in full: an unknown id is an error
	// wrapping ErrNotFound; an unreadable entry comes back with Damaged set.
	LoadStash(id string) (*Stash, error)
	// ListStashes returns every live stash, newest first, damaged ones with
	// Damaged set. It may leave Definition nil: listing does not need it.
	ListStashes() ([]*Stash, error)
	// PushStash adds s as the newest stash. It assigns s.ID (after every
	// live id, so the newest stash is always stash@{0}) and s.Rev. detail
	// completes the history message.
	PushStash(s *Stash, detail string) error
	// RemoveStash removes the live stash id, recording op (pop, drop or
	// withdraw); an id that is not live is an error wrapping ErrNotFound.
	RemoveStash(id string, op StashOp, detail string) error
	// ClearStashes removes those of ids that are still live (a stash pushed
	// since the caller listed them survives) and returns how many it
	// removed.
	ClearStashes(ids []string) (int, error)
	// DroppedStashes returns the stashes dropped or cleared since `since`
	// that are not live now, most recently dropped first, each once.
	DroppedStashes(since time.Time) ([]*DroppedStash, error)
	// RestoreStash makes a dropped stash live again under its own id; an
	// id that is live already is an error wrapping ErrExists.
	RestoreStash(d *DroppedStash, detail string) error
}

// Stash ids: "<UTC time to the nanosecond>Z-<8 random hex digits>". The time
// comes first and has a fixed width, so sorting ids sorts them by age.
const stashIDTime = "20060102T150405.000000000"

var stashIDRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]{8}T[0-9]{6}\.[0-9]{9}Z-[0-9a-f]{8}$`) })

// ValidStashID reports whether id has the form NextStashID produces.
func ValidStashID(id string) bool { return stashIDRe().MatchString(id) }

// StashIDTime returns the instant an id was made for.
func StashIDTime(id string) (time.Time, bool) {
	if !ValidStashID(id) {
		return time.Time{}, false
	}
	t, err := time.ParseInLocation(stashIDTime, id[:len(stashIDTime)], time.UTC)
	return t, err == nil
}

// NextStashID returns a new id for a stash made at t that sorts after the
// id after (the newest live one, or ""). A clock that stands still (tests)
// or steps back still yields ids in creation order; the random part keeps
// ids made on different machines apart.
func NextStashID(t time.Time, after string) string {
	t = t.UTC()
	if prev, ok := StashIDTime(after); ok && !t.After(prev) {
		t = prev.Add(time.Nanosecond)
	}
	var b [4]byte
	_, _ = crand.Read(b[:]) // never fails (Go 1.24+)
	return t.Format(stashIDTime) + "Z-" + hex.EncodeToString(b[:])
}

// StashSelector is a parsed stash reference: an index (N or stash@{N}) or
// a stable id.
type StashSelector struct {
	Index int // -1 when ID is set
	ID    string
}

// ParseStashSelector accepts "" (stash@{0}), "N", "stash@{N}" or an id.
func ParseStashSelector(s string) (StashSelector, error) {
	if s == "" {
		return StashSelector{}, nil
	}
	num := s
	if strings.HasPrefix(s, "stash@{") && strings.HasSuffix(s, "}") {
		num = s[len("stash@{") : len(s)-1]
	}
	if num != "" && strings.Trim(num, "0123456789") == "" {
		n, err := strconv.Atoi(num)
		if err == nil {
			return StashSelector{Index: n}, nil
		}
	}
	if ValidStashID(s) {
		return StashSelector{Index: -1, ID: s}, nil
	}
	return StashSelector{}, badNamef("Invalid stash reference '%s': use N, stash@{N} or a stash id (see 'git hegel stash list')", s)
}

// StashPush parks the active workflow: it writes the stash entry, then
// marks the task stashed and detaches this worktree from it. A crash
// between the two steps leaves the workflow both active and stashed (a
// duplicate), never lost.
func (e *Engine) StashPush(message string) (*StashEntry, error) {
	return e.StashPushFiles(message, nil)
}

// StashPushFiles is StashPush with the files parked (nil: none) recorded in
// the stash.
func (e *Engine) StashPushFiles(message string, files *StashFiles) (*StashEntry, error) {
	cur, err := e.Current("")
	if errors.Is(err, ErrNoWorkflow) {
		return nil, errors.New("No active workflow to stash")
	}
	if err != nil {
		return nil, err
	}
	name := cur.State.Task
	const attempts = 20
	for i := 0; i < attempts; i++ {
		t := cur
		if i > 0 {
			if t, err = e.Tasks.LoadTask(name); err != nil {
				return nil, err
			}
		}
		if t.State.Status == StatusStashed {
			// Another process stashed it first; this worktree no longer
			// has it.
			if err := e.detach(name); err != nil {
				return nil, err
			}
			return nil, errors.New("No active workflow to stash")
		}
		now := e.now()
		s := &Stash{
			Message:    message,
			Timestamp:  now,
			Task:       name,
			Worktree:   e.Worktree,
			Definition: t.Definition,
			State:      t.State.Clone(),
			Files:      files,
		}
		if err := e.Stashes.PushStash(s, s.Label()); err != nil {
			return nil, err
		}
		st := t.State.Clone()
		st.Status = StatusStashed
		st.UpdatedAt = now
		_, err := e.save(t, st, nil, "stash push: stashed as "+s.ID)
		if err == nil {
			if err := e.detach(name); err != nil {
				return nil, err
			}
			return &StashEntry{Index: 0, Stash: s}, nil
		}
		if !errors.Is(err, ErrConflict) {
			return nil, err
		}
		// The task moved while the entry was written: that entry holds
		// a stale state. Take it back and stash the state as it is now.
		if err := e.Stashes.RemoveStash(s.ID, StashOpWithdraw, s.Label()+" (the task changed meanwhile)"); err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		time.Sleep(time.Duration(rand.IntN(1+min(i, 10)*2)) * time.Millisecond)
	}
	return nil, fmt.Errorf("Task '%s' kept changing while it was being stashed; try again", name)
}

// detach clears this worktree's active task if it is still name.
func (e *Engine) detach(name string) error {
	return e.touchSession(func(s *Session) {
		if s.ActiveTask == name {
			s.ActiveTask = ""
		}
	})
}

// StashList returns the live stashes, newest first.
func (e *Engine) StashList() ([]*StashEntry, error) {
	list, err := e.Stashes.ListStashes()
	if err != nil {
		return nil, err
	}
	out := make([]*StashEntry, len(list))
	for i, s := range list {
		out[i] = &StashEntry{Index: i, Stash: s}
	}
	return out, nil
}

// StashFind resolves sel to one live stash and reads it in full. verb
// completes the message for an empty list ("No stashes to <verb>").
// The index is resolved to the stable id before anything is read, so a
// concurrent push cannot make the caller act on another entry.
func (e *Engine) StashFind(sel, verb string) (*StashEntry, error) {
	ss, err := ParseStashSelector(sel)
	if err != nil {
		return nil, err
	}
	ids, err := e.Stashes.StashIDs()
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("No stashes to %s", verb)
	}
	idx := ss.Index
	if ss.ID != "" {
		idx = -1
		for i, id := range ids {
			if id == ss.ID {
				idx = i
				break
			}
		}
		if idx < 0 {
			return nil, fmt.Errorf("No stash with id '%s' (see 'git hegel stash list', or 'git hegel stash list --dropped' for dropped ones)", ss.ID)
		}
	} else if idx >= len(ids) {
		if len(ids) == 1 {
			return nil, fmt.Errorf("Stash index %d not found. Available stashes: 0", idx)
		}
		return nil, fmt.Errorf("Stash index %d not found. Available stashes: 0-%d", idx, len(ids)-1)
	}
	s, err := e.Stashes.LoadStash(ids[idx])
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("stash@{%d} (%s) was removed by another process meanwhile", idx, ids[idx])
	}
	if err != nil {
		return nil, err
	}
	return &StashEntry{Index: idx, Stash: s}, nil
}

// StashPop restores a stash into this worktree: the files it parked are
// written back first (Parking.Unpark, which changes nothing when it
// refuses), then the stashed state goes back on the task's ref
// (compare-and-swap on its current revision), a task active here is
// parked (View.Parked), the session points at the restored
// task, and only then, unless keep (apply), is the entry removed. A crash
// in between leaves a duplicate, never a loss. Files that conflicted
// (written with markers, or left as HEAD has them) keep the entry, as
// git stash pop keeps it: the error is a *StashConflictError, with the
// entry and the view of the restored workflow.
//
// Files another clone parked (a stash fetched from it, or forged) are
// written only with force: whoever made the stash chose them, as with a
// checkpoint this clone did not take.
func (e *Engine) StashPop(sel string, keep, force bool) (*StashEntry, *View, error) {
	cur, _, err := e.currentOrDamaged("")
	if err != nil && !errors.Is(err, ErrNoWorkflow) {
		return nil, nil, err
	}
	ent, err := e.StashFind(sel, "restore")
	if err != nil {
		return nil, nil, err
	}
	if ent.Damaged != "" {
		return nil, nil, fmt.Errorf("Cannot restore %s: damaged entry %s: %s", ent.Ref(), ent.ID, ent.Damaged)
	}
	wf, err := workflow.Parse(ent.State.Workflow, "stash "+ent.ID+":workflow", ent.Definition)
	if err != nil {
		return nil, nil, fmt.Errorf("Cannot restore %s: its workflow definition is invalid: %v", ent.Ref(), err)
	}
	op := StashOpPop
	if keep {
		op = "apply"
	}
	if old, err := e.Tasks.LoadTask(ent.Task); err == nil && old.State.Active() {
		return nil, nil, fmt.Errorf("Cannot restore %s: its task '%s' is active again in %s; finish or abort it there first",
			ent.Ref(), ent.Task, old.State.Worktree)
	}
	var unparked *StashUnparked
	if ent.Files != nil {
		if e.Parking == nil {
			return nil, nil, fmt.Errorf("Cannot restore %s here: it parked files, and the working tree is not available", ent.Ref())
		}
		if !force && e.madeElsewhere(ent) {
			return nil, nil, foreignStash(ent, string(op))
		}
		if unparked, err = e.Parking.Unpark(ent); err != nil {
			return nil, nil, err
		}
	}
	// Conflicts keep the stash, as git stash pop keeps it: it still holds
	// the parked versions until the conflicts are resolved and it is
	// dropped. The workflow is restored all the same.
	conflicted := unparked != nil && len(unparked.Conflicts) > 0
	if unparked != nil && len(unparked.Kept) > 0 {
		e.warn(fmt.Sprintf("%s holds %s, which a stash never writes (git-hegel's and the agents' settings, hegel.stash.keep): left as %s", ent.Ref(), someOf(unparked.Kept, 3), itOrThey(len(unparked.Kept))))
	}
	const attempts = 20
	for i := 0; ; i++ {
		base := &Task{Definition: ent.Definition}
		old, err := e.load(ent.Task)
		switch {
		case err == nil:
			if old.State.Active() {
				return nil, nil, fmt.Errorf("Cannot restore %s: its task '%s' is active again in %s; finish or abort it there first",
					ent.Ref(), ent.Task, old.State.Worktree)
			}
			base.State, base.Rev, base.Archived = old.State, old.Rev, old.Archived
		case !errors.Is(err, ErrNotFound):
			return nil, nil, err
		}
		st := ent.State.Clone()
		st.Task = ent.Task
		if err := e.Claim(st); err != nil {
			return nil, nil, err
		}
		// Away from its push until now (away.go).
		st.leave(ent.Timestamp, AwayStashed)
		st.comeBack(e.now())
		st.UpdatedAt = e.now()
		msg := fmt.Sprintf("stash %s: restored from %s", op, ent.ID)
		if e.madeElsewhere(ent) {
			msg = StashElsewhereMsg + msg
		}
		_, err = e.save(base, st, wf, msg)
		if err == nil {
			ent.State = st
			break
		}
		if !errors.Is(err, ErrConflict) || i == attempts-1 {
			return nil, nil, err
		}
		time.Sleep(time.Duration(rand.IntN(1+min(i, 10)*2)) * time.Millisecond)
	}
	// A task active here stays open, parked, as start and switch leave
	// it: nothing of it is lost, and 'git hegel switch' comes back to it.
	var parked *State
	if cur != nil && cur.State.Active() && cur.State.Task != ent.Task {
		if err := e.park(cur, ent.Task); err != nil {
			e.warn(fmt.Sprintf("task %s could not be parked: %v; it stays this worktree's", cur.State.Task, err))
		} else {
			parked = cur.State
		}
	}
	if err := e.touchSession(func(s *Session) { s.ActiveTask = ent.Task }); err != nil {
		return nil, nil, err
	}
	if !keep && !conflicted {
		err := e.Stashes.RemoveStash(ent.ID, StashOpPop, ent.Label())
		if err != nil && !errors.Is(err, ErrNotFound) { // gone already: nothing left to remove
			return nil, nil, err
		}
	}
	v := e.view(ent.State, wf)
	v.Parked = parked
	if conflicted {
		return ent, v, &StashConflictError{Entry: ent, View: v, Conflicts: unparked.Conflicts, Pop: !keep}
	}
	return ent, v, nil
}

// StashDrop removes the stash ent names (from StashFind). The id, not the
// index, is removed: entries pushed meanwhile are safe. When no live
// entry holds its task any more and the task is still stashed with the
// run ent parked, the task ends (stash_end.go): it returns the tasks
// ended.
func (e *Engine) StashDrop(ent *StashEntry) ([]EndedTask, error) {
	err := e.Stashes.RemoveStash(ent.ID, StashOpDrop, ent.Label())
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("%s (%s) was removed by another process meanwhile; nothing dropped", ent.Ref(), ent.ID)
	}
	if err != nil {
		return nil, err
	}
	return e.endRemoved([]*Stash{ent.Stash}, StashOpDrop), nil
}

// StashClear removes every live stash once confirm, told how many there
// are and which tasks clearing them ends, agrees. Only the stashes
// counted are removed: one pushed while the question was open survives.
// It returns how many there were, how many were removed (none when
// confirm declines or there were none) and the tasks ended, as StashDrop.
func (e *Engine) StashClear(confirm func(n int, ends []string) (bool, error)) (listed, removed int, ended []EndedTask, err error) {
	list, err := e.Stashes.ListStashes()
	if err != nil || len(list) == 0 {
		return 0, 0, nil, err
	}
	ids := make([]string, len(list))
	for i, s := range list {
		ids[i] = s.ID
	}
	// The entries whose task is stashed are read in full: ending a task
	// checks it still runs the run the entry parked.
	stashed, err := e.stashedTasks()
	if err != nil {
		return 0, 0, nil, err
	}
	var full []*Stash
	var ends []string
	for _, s := range list {
		if s.Damaged != "" || s.Task == "" || stashed[s.Task] == nil {
			continue
		}
		f, err := e.Stashes.LoadStash(s.ID)
		if err != nil || f.Damaged != "" {
			continue
		}
		full = append(full, f)
		if e.endsTask(f, nil) && !contains(ends, f.Task) {
			ends = append(ends, f.Task)
		}
	}
	ok, err := confirm(len(ids), ends)
	if err != nil || !ok {
		return len(ids), 0, nil, err
	}
	removed, err = e.Stashes.ClearStashes(ids)
	if err != nil {
		return len(ids), removed, nil, err
	}
	return len(ids), removed, e.endRemoved(full, StashOpClear), nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// StashDropped returns the stashes dropped or cleared within
// DroppedStashWindow that are not live now, most recently dropped first.
func (e *Engine) StashDropped() ([]*DroppedStash, error) {
	return e.Stashes.DroppedStashes(e.now().Add(-DroppedStashWindow))
}

// StashRestore brings a dropped stash back as a live entry with its own id.
// When the drop (or clear) ended the stash's task and the task is still
// that ended run, the task is stashed again (unarchived), so restore
// undoes the drop whole; a task started again since, or ended some other
// way, is left as it is, and popping the stash takes the run up.
func (e *Engine) StashRestore(id string) (ent *StashEntry, unarchived bool, err error) {
	if err := CheckStashID(id); err != nil {
		return nil, false, err
	}
	ids, err := e.Stashes.StashIDs()
	if err != nil {
		return nil, false, err
	}
	if i := indexOf(ids, id); i >= 0 {
		return nil, false, fmt.Errorf("Stash %s is not dropped: it is stash@{%d}", id, i)
	}
	dropped, err := e.StashDropped()
	if err != nil {
		return nil, false, err
	}
	var d *DroppedStash
	for _, x := range dropped {
		if x.ID == id {
			d = x
			break
		}
	}
	if d == nil {
		return nil, false, fmt.Errorf("No dropped stash '%s' in the last %d days (see 'git hegel stash list --dropped')", id, int(DroppedStashWindow/(24*time.Hour)))
	}
	if err := e.Stashes.RestoreStash(d, d.Label()); err != nil {
		if errors.Is(err, ErrExists) {
			return nil, false, fmt.Errorf("Stash %s was restored by another process meanwhile", id)
		}
		return nil, false, err
	}
	if ids, err = e.Stashes.StashIDs(); err != nil {
		return nil, false, err
	}
	ent = &StashEntry{Index: max(indexOf(ids, id), 0), Stash: d.Stash}
	return ent, e.unarchiveDropped(id), nil
}

// unarchiveDropped stashes again the task of the restored stash id when
// its drop ended it (endedByStashRemoval) and nothing has changed it
// since. It reports whether it did; a failure is a warning, since the
// stash is back and popping it takes the run up anyway.
func (e *Engine) unarchiveDropped(id string) bool {
	ent, err := e.Stashes.LoadStash(id)
	if err != nil || ent.Damaged != "" || ent.State == nil {
		return false
	}
	wf, err := workflow.Parse(ent.State.Workflow, "stash "+id+":workflow", ent.Definition)
	if err != nil {
		return false
	}
	const attempts = 20
	for i := 0; i < attempts; i++ {
		old, err := e.load(ent.Task)
		if err != nil || !endedByStashRemoval(old.State, ent.State.WorkflowID) {
			return false
		}
		st := ent.State.Clone()
		st.Task = ent.Task
		st.Status = StatusStashed
		st.UpdatedAt = e.now()
		_, err = e.save(old, st, wf, fmt.Sprintf("stash restore: stashed again as %s", id))
		if err == nil {
			return true
		}
		if !errors.Is(err, ErrConflict) {
			e.warn(fmt.Sprintf("task %s stays archived (%v); 'git hegel stash pop' of the restored stash takes it up", ent.Task, err))
			return false
		}
		time.Sleep(time.Duration(rand.IntN(1+min(i, 10)*2)) * time.Millisecond)
	}
	e.warn(fmt.Sprintf("task %s kept changing and stays as it is; 'git hegel stash pop' of the restored stash takes it up", ent.Task))
	return false
}

func indexOf(ids []string, id string) int {
	for i, x := range ids {
		if x == id {
			return i
		}
	}
	return -1
}

// RelativeTime says how long ago then was, as people say it: "just now",
// "5 minutes ago", "2 hours ago", "yesterday", "3 days ago", "2 weeks ago",
// "4 months ago", "1 year ago". A time in the future (clock skew) is "just
// now".
func RelativeTime(then, now time.Time) string {
	const day = 24 * time.Hour
	d := now.Sub(then)
	plural := func(n int64, unit string) string {
		return text.Plural(int(n), unit, unit+"s") + " ago"
	}
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return plural(int64(d/time.Minute), "minute")
	case d < day:
		return plural(int64(d/time.Hour), "hour")
	case d < 2*day:
		return "yesterday"
	case d < 14*day:
		return plural(int64(d/day), "day")
	case d < 60*day:
		return plural(int64(d/(7*day)), "week")
	case d < 365*day:
		return plural(int64(d/(30*day)), "month")
	}
	return plural(int64(d/(365*day)), "year")
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.TrimSpace(s)
}

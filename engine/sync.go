package engine

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/git-hegel/git-hegel/engine/text"
)

// MergeCounts says what a three-way merge of keyed entries did, seen from
// our side: Added entries came from theirs, Dropped ones were removed
// because theirs dropped them, Conflicts were changed differently on both
// sides (ours was kept).
type MergeCounts struct {
	Added, Dropped, Conflicts int
}

// Merge3 merges two versions of a keyed set (stash entries, history
// records, checkpoints) against their common base, so that nothing one side
// added or changed is lost:
//
//   - an entry added on either side is kept (union of additions);
//   - an entry one side dropped is dropped, unless the other side changed
//     it (then the changed version is kept);
//   - an entry both sides changed differently keeps our version.
//
// Values are opaque and compared for equality only (blob hashes). base may
// be nil (no common history: everything is an addition).
func Merge3[V comparable](base, ours, theirs map[string]V) (map[string]V, MergeCounts) {
	out := make(map[string]V, max(len(ours), len(theirs)))
	var n MergeCounts
	for k, o := range ours {
		t, inTheirs := theirs[k]
		b, inBase := base[k]
		switch {
		case inTheirs && t == o:
			out[k] = o
		case inTheirs && inBase && o == b:
			out[k] = t // only theirs changed it
		case inTheirs:
			out[k] = o // both changed it differently, or both added it differently
			n.Conflicts++
		case inBase && o == b:
			n.Dropped++ // they dropped it and we did not touch it
		default:
			out[k] = o // we added it, or changed what they dropped
		}
	}
	for k, t := range theirs {
		if _, inOurs := ours[k]; inOurs {
			continue
		}
		if b, inBase := base[k]; inBase && t == b {
			continue // we dropped it and they did not touch it
		}
		out[k] = t // they added it, or changed what we dropped
		n.Added++
	}
	return out, n
}

// TaskChange is what a sync did to one task.
type TaskChange string

// The changes a sync makes to a task.
const (
	TaskAdded         TaskChange = "added"
	TaskFastForwarded TaskChange = "fast-forwarded"
	// TaskMerged: both sides moved on and their states were merged field
	// by field (MergeStates) into a commit with both as parents.
	TaskMerged TaskChange = "merged"
	// TaskConflicted: both sides changed a field differently; nothing
	// was written, and the task is not pushed until it is resolved.
	TaskConflicted TaskChange = "conflicted"
)

// TaskSync reports one task a sync changed.
type TaskSync struct {
	Task   string
	Change TaskChange
	// FromOurs and FromTheirs name the fields of a merged task each side
	// brought; Conflicts the fields both changed differently (with
	// Resolved, the side they were taken from; without, nothing changed).
	FromOurs, FromTheirs []string
	Conflicts            []FieldConflict
	Resolved             Side
	// Unrelated: the two versions share no history (each clone started
	// its own task of that name), so every field that differs conflicts.
	Unrelated bool
	// Archived: the change was to the task's archive ref.
	Archived bool
	// Held is set when a worktree of this clone held the task (it was
	// active there) and the remote's version replaced it.
	Held *TaskHeld
	// Definition is the blob id of the workflow definition the remote's
	// version brought to a task this clone created or took over, when it
	// differs from the one the task had here ("" otherwise). Whether it
	// is trusted is the engine's to say (DefinitionNotes).
	Definition string
	// LocksLost are the files_locked paths a task a worktree of this
	// clone holds had here and the remote's version removed (another
	// task took them over, or they were unlocked there).
	LocksLost []string
	// StashEnded is set when the remote's archive ended a task that was
	// stashed here: the remote dropped (or cleared) the stash entry
	// holding it, and that drop ended the task there.
	StashEnded *StashEnded
}

// StashEnded names the stash entry whose drop at the remote ended a task
// stashed here, and who archived it ("" when unknown).
type StashEnded struct {
	Stash string
	Op    StashOp // StashOpDrop or StashOpClear
	By    string
	// Status is the task's status in the archive (aborted, or completed
	// for a run stashed once it had finished).
	Status string
}

// TaskHeld says what became of a task a worktree of this clone held when
// a fetch fast-forwarded it.
type TaskHeld struct {
	// Worktree is the path of the worktree that held it; WorktreeID its id.
	Worktree, WorktreeID string
	// Node and Status are the task's state now.
	Node   string
	Status string
	// Owner and OwnerPath name the worktree that holds it now, when that
	// is another one (taken over with switch or stash pop, or the remote
	// kept its own state where both sides had moved on); "" when the
	// state only moved forward and it is still held here.
	Owner, OwnerPath string
	// OwnerEmail is the git user.email the remote's version names as its
	// holder's, for people to read ("" when it names none).
	OwnerEmail string
	// Parked: the remote's version is held by no worktree (another clone
	// took it over and went on to another task), so it is no longer
	// active here either; Owner is "".
	Parked bool
	// YoursStash is the stash entry that holds the version this worktree
	// had, when the remote saved it there (both sides had moved on), or
	// when this fetch did (the remote archived the task).
	YoursStash string
	// For a task the remote archived while it was open here (the
	// TaskSync is Archived): WasNode is the node it was at here, and
	// ArchivedBy the author of the commit that archived it (as the
	// remote says).
	WasNode, ArchivedBy string
}

// SyncReport is what fetch, push and sync tell the user.
type SyncReport struct {
	Remote string
	// Self is the id of the worktree the sync ran in.
	Self        string
	Stashes     MergeCounts
	Tasks       []TaskSync
	History     MergeCounts
	Checkpoints MergeCounts
	// CheckpointsUpdated names the tasks whose checkpoints a fetch added,
	// fast-forwarded or merged.
	CheckpointsUpdated []string
	// CheckpointsKept names the tasks whose checkpoints diverged and were
	// left as they were (no checkpoint merger): the remote's stay in the
	// tracking refs and the local ones are not pushed.
	CheckpointsKept []string
	// Pushed names the refs a push updated on the remote.
	Pushed []string
	// Retries counts the pushes that found the remote moved and fetched,
	// merged and tried again.
	Retries int
	// MergedFetched: a push found a local ref that did not contain the
	// remote's version fetched before and merged that version first
	// (the remote had not moved: no retry).
	MergedFetched bool
	// Received and Sent count the objects that crossed the network.
	Received, Sent int
	// Refused lists the remote's refs whose data failed a check: they
	// were neither merged nor pushed over; everything else was.
	Refused []RefIssue
	// Skipped lists the remote's refs whose names git-hegel never writes
	// (refs/hegel/tasks/a/b): left alone, with a warning.
	Skipped []RefIssue
	// Warnings are problems that did not stop anything (a setting git
	// does not know).
	Warnings []string
}

// RefIssue is one remote ref a sync did not take, and why.
type RefIssue struct {
	// Ref is the ref as the remote names it (refs/hegel/...).
	Ref    string
	Reason string
	// Check is git's fsck message id when git's own object checks refused
	// the ref ("gitmodulesUrl", "badDateOverflow"), else "".
	Check string
	// RemovedTracking is the tracking ref (refs/hegel-remotes/…) that a
	// plain git fetch had written with the refused data, removed after
	// the refusal ("" when there was none).
	RemovedTracking string
}

// FetchSummary is one line about what fetching changed locally, "" when
// nothing changed: "2 stashes added, 1 dropped, task auth-fix
// fast-forwarded".
func (r *SyncReport) FetchSummary() string {
	var parts []string
	parts = appendCounts(parts, r.Stashes, "stash", "stashes")
	parts = appendCounts(parts, r.History, "history record", "history records")
	parts = appendCounts(parts, r.Checkpoints, "checkpoint", "checkpoints")
	cps := append([]string(nil), r.CheckpointsUpdated...)
	sort.Strings(cps)
	if len(cps) > 3 {
		parts = append(parts, fmt.Sprintf("checkpoints of %d tasks updated", len(cps)))
	} else {
		for _, t := range cps {
			parts = append(parts, fmt.Sprintf("checkpoints of task %s updated", t))
		}
	}
	// Tasks by name; more than three with the same change are counted.
	for _, kind := range []struct {
		archived  bool
		one, many string
	}{{false, "task", "tasks"}, {true, "archived task", "archived tasks"}} {
		byChange := map[TaskChange][]string{}
		for _, t := range r.Tasks {
			if t.Archived == kind.archived {
				byChange[t.Change] = append(byChange[t.Change], t.Task)
			}
		}
		for _, c := range []TaskChange{TaskAdded, TaskFastForwarded, TaskMerged, TaskConflicted} {
			names := byChange[c]
			sort.Strings(names)
			if len(names) > 3 {
				parts = append(parts, fmt.Sprintf("%d %s %s", len(names), kind.many, c))
				continue
			}
			for _, n := range names {
				parts = append(parts, fmt.Sprintf("%s %s %s", kind.one, n, c))
			}
		}
	}
	return strings.Join(parts, ", ")
}

// MergeNotes says, one line per task merged from both sides, which
// fields came from where (and which conflicts were taken from which side).
func (r *SyncReport) MergeNotes() []string {
	var out []string
	for _, t := range r.Tasks {
		if t.Change != TaskMerged {
			continue
		}
		what := "task"
		if t.Archived {
			what = "archived task"
		}
		var parts []string
		if len(t.FromTheirs) > 0 {
			parts = append(parts, fmt.Sprintf("%s from %s", strings.Join(t.FromTheirs, ", "), r.Remote))
		}
		if len(t.FromOurs) > 0 {
			parts = append(parts, strings.Join(t.FromOurs, ", ")+" from here")
		}
		line := fmt.Sprintf("Merged %s %s: %s", what, t.Task, strings.Join(parts, "; "))
		if t.Unrelated {
			side := "this clone"
			if t.Resolved == SideTheirs {
				side = r.Remote
			}
			out = append(out, fmt.Sprintf("Kept %s's %s %s whole: the two shared no history; the other one stays in the task's history (git log refs/hegel/tasks/%s)", side, what, t.Task, t.Task))
			continue
		}
		if len(parts) == 0 {
			line = fmt.Sprintf("Merged %s %s: both sides made the same changes", what, t.Task)
		}
		if len(t.Conflicts) > 0 {
			side := "here"
			if t.Resolved == SideTheirs {
				side = r.Remote
			}
			names := make([]string, len(t.Conflicts))
			for i, c := range t.Conflicts {
				names[i] = c.Field
			}
			line += fmt.Sprintf("; conflicts taken from %s: %s", side, strings.Join(names, ", "))
		}
		out = append(out, line)
	}
	return out
}

// ConflictNotes says, one line per task whose two versions conflict,
// both sides of each conflicting field and the commands that take either.
func (r *SyncReport) ConflictNotes() []string {
	var out []string
	for _, t := range r.Tasks {
		if t.Change != TaskConflicted {
			continue
		}
		if t.Unrelated {
			out = append(out, unrelatedNote(t, r.Remote))
			continue
		}
		out = append(out, fmt.Sprintf("Task %s changed on both sides and was not merged: %s; nothing changed here. Keep this clone's values with 'git hegel sync --ours %s', or take %s's with 'git hegel sync --theirs %s' (every other field merges either way)",
			t.Task, conflictList(t.Conflicts, r.Remote), t.Task, r.Remote, t.Task))
	}
	return out
}

// unrelatedNote says that a task here and the remote's task of the same
// name are two tasks, who started each and when (as far as their
// states say it differently), and how to keep one.
func unrelatedNote(t TaskSync, remote string) string {
	who := map[string][2]string{}
	for _, c := range t.Conflicts {
		who[c.Field] = [2]string{unquote(c.Ours), unquote(c.Theirs)}
	}
	side := func(i int) string {
		var parts []string
		if v := who["owner_email"][i]; v != "" {
			parts = append(parts, "by "+v)
		}
		if at, err := time.Parse(time.RFC3339Nano, who["started_at"][i]); err == nil {
			parts = append(parts, "on "+at.UTC().Format("2006-01-02 15:04 UTC"))
		}
		return strings.Join(parts, " ")
	}
	started := ""
	if here, there := side(0), side(1); here != "" && there != "" {
		started = fmt.Sprintf(" (here %s, at %s %s)", here, remote, there)
	}
	return fmt.Sprintf("Task %s here and task %s at %s share no history: each clone started its own task of that name%s; nothing changed here. Keep this clone's with 'git hegel sync --ours %s', or take %s's with 'git hegel sync --theirs %s': the other one's state is replaced",
		t.Task, t.Task, remote, started, t.Task, remote, t.Task)
}

// unquote reads a conflict's value that is a JSON string; any other is
// returned as it is.
func unquote(v string) string {
	var s string
	if json.Unmarshal([]byte(v), &s) == nil {
		return s
	}
	return v
}

// conflictList is "current_node is review here, plan at origin, ...".
func conflictList(cs []FieldConflict, remote string) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%s is %s here, %s at %s", c.Field, c.Ours, c.Theirs, remote)
	}
	return strings.Join(parts, ", ")
}

// HeldNotes says, one line per task a worktree of this clone held, what
// the fetch did to it and where the other version is ("here" is the
// worktree the sync ran in).
func (r *SyncReport) HeldNotes() []string {
	var out []string
	for _, t := range r.Tasks {
		h := t.Held
		if h == nil {
			continue
		}
		where := "here"
		if h.WorktreeID != r.Self {
			where = "in " + h.Worktree
		}
		now := fmt.Sprintf("now at %s", h.Node)
		if h.Status != StatusActive {
			now += fmt.Sprintf(" (%s)", h.Status)
		}
		switch {
		case t.Archived:
			out = append(out, archivedHereNote(t.Task, r.Remote, where, h))
		case h.Parked:
			out = append(out, fmt.Sprintf("Task %s was parked at %s (taken over there, then left for another task), %s: it is no longer active %s; 'git hegel claim %s' takes it back",
				t.Task, r.Remote, now, where, t.Task))
		case h.Owner == "":
			out = append(out, fmt.Sprintf("Task %s moved on at %s, %s; it is still active %s", t.Task, r.Remote, now, where))
		case h.YoursStash != "":
			out = append(out, fmt.Sprintf("Task %s changed on both sides and %s kept its version (%s, held by %s); the version you had %s is stash %s (restore it with 'git hegel stash pop')",
				t.Task, r.Remote, now, ownerName(h), where, h.YoursStash))
		default:
			out = append(out, fmt.Sprintf("Task %s was taken over at %s by %s, %s: it is no longer active %s (your last state stays in its history: git log refs/hegel/tasks/%s)",
				t.Task, r.Remote, ownerName(h), now, where, t.Task))
		}
	}
	for _, t := range r.Tasks {
		if t.StashEnded != nil {
			out = append(out, stashEndedNote(t.Task, r.Remote, t.StashEnded))
		}
	}
	for _, t := range r.Tasks {
		if len(t.LocksLost) > 0 {
			out = append(out, locksLostNote(t.Task, r.Remote, t.LocksLost))
		}
	}
	return out
}

// stashEndedNote says that a task stashed here ended because the remote
// dropped the stash entry holding it, and how to bring both back.
func stashEndedNote(task, remote string, se *StashEnded) string {
	how := "its stash entry " + se.Stash + " was dropped"
	if se.Op == StashOpClear {
		how = "the stash list holding its entry " + se.Stash + " was cleared"
	}
	by := "fetched from " + remote
	if se.By != "" {
		by = "by " + se.By + ", " + by
	}
	return fmt.Sprintf("Task %s, stashed here, was ended (archived as %s) because %s in another clone (%s); 'git hegel stash restore %s' brings the stash and the task back (docs/stash.md)",
		task, strings.ReplaceAll(se.Status, "_", " "), how, by, se.Stash)
}

// locksLostNote says which locks a task held here lost to the remote's
// version: its agent may now be stopped before editing those files, and
// the user should learn it from the fetch, not from a refused edit.
func locksLostNote(task, remote string, paths []string) string {
	quoted := make([]string, len(paths))
	for i, p := range paths {
		quoted[i] = text.Quote(p)
	}
	noun := "lock"
	if len(paths) > 1 {
		noun = "locks"
	}
	return fmt.Sprintf("Task %s no longer holds its %s on %s: %s's version removed it (another task took it over, or it was unlocked there); 'git hegel lock --force <path>' in its worktree takes it back",
		task, noun, strings.Join(quoted, ", "), remote)
}

// archivedHereNote says that the remote ended (archived) a task that was
// open here, who did, and how to take it up again.
func archivedHereNote(task, remote, where string, h *TaskHeld) string {
	by := ""
	if h.ArchivedBy != "" {
		by = " by " + h.ArchivedBy
	}
	status := strings.ReplaceAll(h.Status, "_", " ")
	msg := fmt.Sprintf("Task %s, active %s at %s, was %s and archived at %s%s", task, where, h.WasNode, status, remote, by)
	if h.YoursStash != "" {
		return msg + fmt.Sprintf("; your state is kept as stash %s: 'git hegel stash pop %s' takes it up again where you were", h.YoursStash, h.YoursStash)
	}
	return msg + fmt.Sprintf("; your last state stays in its history (git log refs/hegel/archive/%s)", task)
}

// ownerName names the worktree that holds the task now, as the remote's
// state says it: one short line, without what a terminal would act on.
//
// The person's email comes first when the state names one: a worktree id
// means nothing to whoever reads the line ("taken over by 3f2a…:main").
func ownerName(h *TaskHeld) string {
	owner := text.Printable(h.Owner, 100)
	path := text.Printable(h.OwnerPath, 200)
	switch {
	case h.OwnerEmail != "" && path != "":
		return fmt.Sprintf("%s (%s, %s)", text.Printable(h.OwnerEmail, 100), owner, path)
	case h.OwnerEmail != "":
		return fmt.Sprintf("%s (%s)", text.Printable(h.OwnerEmail, 100), owner)
	case path != "":
		return fmt.Sprintf("%s (%s)", owner, path)
	}
	return owner
}

// CheckpointNotes says, one line per task, which checkpoints diverged and
// were neither merged nor pushed.
func (r *SyncReport) CheckpointNotes() []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range r.CheckpointsKept {
		if seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, fmt.Sprintf("Checkpoints of task %s changed on both sides: kept the local ones, not pushed; %s's are in refs/hegel-remotes/%s/checkpoints/%s",
			t, r.Remote, r.Remote, t))
	}
	return out
}

func appendCounts(parts []string, c MergeCounts, one, many string) []string {
	name := func(n int) string {
		if n == 1 {
			return one
		}
		return many
	}
	switch {
	case c.Added > 0 && c.Dropped > 0:
		parts = append(parts, fmt.Sprintf("%d %s added, %d dropped", c.Added, name(c.Added), c.Dropped))
	case c.Added > 0:
		parts = append(parts, fmt.Sprintf("%d %s added", c.Added, name(c.Added)))
	case c.Dropped > 0:
		parts = append(parts, fmt.Sprintf("%d %s dropped", c.Dropped, name(c.Dropped)))
	}
	if c.Conflicts > 0 {
		parts = append(parts, fmt.Sprintf("%d %s changed on both sides (kept the local version)", c.Conflicts, name(c.Conflicts)))
	}
	return parts
}

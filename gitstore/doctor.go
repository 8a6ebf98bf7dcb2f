package gitstore

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/engine/workflow"
	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// What `git hegel doctor` checks in refs/hegel/ (docs/history.md,
// "Repair"): every ref is read as the commands read it, its whole first-
// parent chain is walked for missing commits, and its tip's objects for
// missing trees and blobs. --fix restores a damaged ref from the newest
// version that passes the same checks, found along its chain or in its
// reflog, and moves what it replaces, or what cannot be repaired, to
// refs/hegel/damaged/<ref below refs/hegel/>/<time> (never deleted; a
// value whose object is missing cannot be kept in a ref and stays named in
// the reflog).

// RefProblem is one problem doctor found below refs/hegel/.
type RefProblem struct {
	Ref     string
	Kind    string // "task", "archive", "stashes", "history", "checkpoints", "actions", "deleted", "unknown", "entry"
	Problem string
	// Entry names a damaged entry inside the ref's tree (history, stash).
	Entry string
	// Note is informational: nothing is wrong (a ref git-hegel does not
	// write, what an earlier --fix moved aside).
	Note bool
	// Newer: what fails may be a newer git-hegel's writing (a version
	// blob of a value this one does not know, a workflow definition it
	// cannot load), so --fix leaves it alone: going back to an older version,
	// or moving it aside, would undo that version's work.
	Newer bool
}

// errDefinition marks a task whose workflow definition does not load.
var errDefinition = errors.New("its workflow definition does not load")

// mayBeNewer reports whether err may come from data a newer git-hegel
// wrote rather than from damage.
func mayBeNewer(err error) bool {
	return errors.As(err, new(newerVersionError)) || errors.Is(err, errDefinition)
}

// CheckRefs checks every ref below refs/hegel/ (see above).
func (r *Repo) CheckRefs() ([]RefProblem, int, error) {
	all, err := r.refs.List(refs.HegelRefPrefix)
	if err != nil {
		return nil, 0, err
	}
	out, err := r.brokenRefProblems()
	if err != nil {
		return nil, 0, err
	}
	checked := len(all) + len(out)
	for _, ref := range all {
		name := ref.Name
		rel := strings.TrimPrefix(string(name), refs.HegelRefPrefix)
		kind := refKind(rel)
		add := func(err error) {
			if err != nil {
				out = append(out, RefProblem{Ref: string(name), Kind: kind, Problem: problemText(name, err), Newer: mayBeNewer(err)})
			}
		}
		switch kind {
		case "task", "archive":
			add(r.checkTaskAt(name, taskName(name), ref.Hash))
		case "stashes":
			add(r.checkStashesAt(ref.Hash))
			if !r.hasProblem(out, name) {
				out = append(out, r.stashEntryProblems()...)
			}
		case "history":
			add(r.checkHistoryAt(ref.Hash))
			if !r.hasProblem(out, name) {
				ps, err := r.historyEntryProblems()
				add(err)
				out = append(out, ps...)
			}
		case "checkpoints", "actions":
			add(r.checkCheckpointChain(ref.Hash))
		case "deleted":
			_, err := r.readDeleted(name, ref.Hash)
			add(err)
		case "parking":
			// Holds the trees of a stash's journal while it exists; the
			// journal itself is checked with the worktree.
		case "damaged":
			out = append(out, RefProblem{Ref: string(name), Kind: kind, Problem: "moved aside by an earlier 'git hegel doctor --fix'; look at it with 'git show " + string(name) + "', remove it with 'git update-ref -d " + string(name) + "'", Note: true})
		default:
			out = append(out, RefProblem{Ref: string(name), Kind: kind, Problem: "not a ref git-hegel writes; left alone", Note: true})
		}
	}
	return out, checked, nil
}

func (r *Repo) hasProblem(ps []RefProblem, name plumbing.ReferenceName) bool {
	for _, p := range ps {
		if p.Ref == string(name) && !p.Note {
			return true
		}
	}
	return false
}

// refKind names what a ref below refs/hegel/ holds.
func refKind(rel string) string {
	switch {
	case rel == relStashes:
		return "stashes"
	case rel == relHistory:
		return "history"
	case strings.HasPrefix(rel, relTasks) && engine.ValidTaskName(strings.TrimPrefix(rel, relTasks)):
		return "task"
	case strings.HasPrefix(rel, relArchive) && engine.ValidTaskName(strings.TrimPrefix(rel, relArchive)):
		return "archive"
	case strings.HasPrefix(rel, relCheckpoints):
		return "checkpoints"
	case strings.HasPrefix(rel, relActions):
		return "actions"
	case strings.HasPrefix(rel, "deleted/"):
		return "deleted"
	case strings.HasPrefix(rel, "damaged/"):
		return "damaged"
	case strings.HasPrefix(rel, "parking/"):
		return "parking"
	}
	return "unknown"
}

func taskName(ref plumbing.ReferenceName) string {
	return strings.TrimPrefix(strings.TrimPrefix(string(ref), TaskRefPrefix), ArchiveRefPrefix)
}

// problemText says what is wrong, without repeating the ref's name.
func problemText(ref plumbing.ReferenceName, err error) string {
	var d *engine.DamagedError
	msg := err.Error()
	if errors.As(err, &d) {
		msg = d.Msg
	}
	msg = strings.TrimPrefix(msg, string(ref)+": ")
	return strings.TrimPrefix(msg, string(ref)+" ")
}

// checkTaskAt checks a task (or archived task) commit as the commands read
// it, its definition and state by the engine's rules, its objects, and
// the commits of its chain.
func (r *Repo) checkTaskAt(ref plumbing.ReferenceName, name string, h plumbing.Hash) error {
	if err := r.validTask(ref, name, h); err != nil {
		return err
	}
	return r.chainComplete(h)
}

// validTask is the check of one version of a task (no chain walk).
func (r *Repo) validTask(ref plumbing.ReferenceName, name string, h plumbing.Hash) error {
	d, err := r.readTaskDoc(ref, h)
	if err != nil {
		return err
	}
	t, err := decodeTask(ref, d)
	if err != nil {
		return err
	}
	if t.State.Task != name {
		return fmt.Errorf("its state names the task '%s'", t.State.Task)
	}
	wf, err := workflow.Parse(t.State.Workflow, string(ref)+":workflow.yaml", t.Definition)
	if err != nil {
		return fmt.Errorf("%w: %s", errDefinition, oneLine(err.Error()))
	}
	if err := engine.ValidateState(t.State, wf); err != nil {
		return err
	}
	return r.treeComplete(d.Tree, map[plumbing.Hash]bool{})
}

// chainComplete walks h's first parents and reports a missing commit.
func (r *Repo) chainComplete(h plumbing.Hash) error {
	g := newGraph(r.storage)
	for n := 0; !h.IsZero() && n < maxChain; n++ {
		c, err := g.node(h)
		if err != nil {
			return fmt.Errorf("commit %s of its history cannot be read: %s", h, oneLine(err.Error()))
		}
		h = plumbing.ZeroHash
		if len(c.parents) > 0 {
			h = c.parents[0]
		}
	}
	return nil
}

// treeComplete reports a missing object below tree t (seen: trees known
// complete).
func (r *Repo) treeComplete(t plumbing.Hash, seen map[plumbing.Hash]bool) error {
	if seen[t] {
		return nil
	}
	ents, err := readTree(r.storage, t)
	if err != nil {
		return err
	}
	for _, e := range ents {
		switch {
		case e.isDir():
			if err := r.treeComplete(e.hash, seen); err != nil {
				return err
			}
		case e.fm == filemode.Submodule:
		default:
			if !r.objects.Has(e.hash) {
				return fmt.Errorf("blob %s (%s) is missing", e.hash, e.name)
			}
		}
	}
	seen[t] = true
	return nil
}

// checkStashesAt checks the stash list's tip.
func (r *Repo) checkStashesAt(h plumbing.Hash) error {
	t, err := r.Stashes().loadAt(h)
	if err != nil {
		return err
	}
	if err := r.treeComplete(t.tree, map[plumbing.Hash]bool{}); err != nil {
		return err
	}
	return r.chainComplete(h)
}

// stashEntryProblems lists the stash entries that cannot be read.
func (r *Repo) stashEntryProblems() []RefProblem {
	list, err := r.Stashes().ListStashes()
	if err != nil {
		return []RefProblem{{Ref: string(StashRef), Kind: "stashes", Problem: oneLine(err.Error())}}
	}
	var out []RefProblem
	for _, s := range list {
		if s.Damaged != "" {
			out = append(out, RefProblem{Ref: string(StashRef), Kind: "entry", Entry: stashEntriesDir + "/" + s.ID + ".json",
				Problem: "stash " + s.ID + ": " + s.Damaged, Newer: strings.HasPrefix(s.Damaged, unknownStashVersionPrefix)})
		}
	}
	return out
}

// checkHistoryAt checks the history's tip commit and root.
func (r *Repo) checkHistoryAt(h plumbing.Hash) error {
	hs := r.History()
	hs.tipRead = false
	n, err := newGraph(r.storage).node(h)
	if err != nil {
		return fmt.Errorf("points at %s, which is not a readable commit: %s", h, oneLine(err.Error()))
	}
	ents, err := hs.tree(n.tree)
	if err != nil {
		return err
	}
	if err := checkVersion(r, ents); err != nil {
		return err
	}
	return r.chainComplete(h)
}

// historyEntryProblems reads every entry and summary of the history.
func (r *Repo) historyEntryProblems() ([]RefProblem, error) {
	h := r.History()
	h.Verify = true
	days, err := h.HistoryDays()
	if err != nil {
		return nil, err
	}
	var out []RefProblem
	for _, day := range days {
		if _, err := h.HistoryDay(day); err != nil {
			return nil, err
		}
		if _, _, err := h.readSummary(day); err != nil {
			p, _ := dayParts(day)
			out = append(out, RefProblem{Ref: string(HistoryRef), Kind: "entry", Entry: historySummariesDir + "/" + strings.Join(p, "/") + historyEntryExt, Problem: problemText(HistoryRef, err)})
		}
	}
	for _, d := range h.Damaged {
		entry, why, _ := strings.Cut(strings.TrimPrefix(d, string(HistoryRef)+":"), ": ")
		out = append(out, RefProblem{Ref: string(HistoryRef), Kind: "entry", Entry: entry, Problem: entry + ": " + why})
	}
	return out, nil
}

// checkCheckpointChain walks a checkpoint chain by first parents and
// checks that each checkpoint's commit and tree are complete (the other
// parents are the project's commits, which are git's business).
func (r *Repo) checkCheckpointChain(h plumbing.Hash) error {
	seen := map[plumbing.Hash]bool{}
	for n := 0; !h.IsZero() && n < maxChain; n++ {
		c, err := object.GetCommit(r.storage, h)
		if err != nil {
			if t, ok := r.objectType(h); n == 0 && ok && t != plumbing.CommitObject {
				return fmt.Errorf("points at %s, which is not a commit (a %s)", h, t)
			}
			return fmt.Errorf("checkpoint commit %s cannot be read: %s", h, oneLine(err.Error()))
		}
		if n == 0 && !r.isCheckpoint(h) {
			// Every command reading the chain stops here, and every
			// snapshot with it.
			return fmt.Errorf("commit %s is not a checkpoint (its tree holds no checkpoint.json)", h.String()[:12])
		}
		if err := r.treeComplete(c.TreeHash, seen); err != nil {
			return fmt.Errorf("checkpoint %s: %s", h.String()[:12], oneLine(err.Error()))
		}
		h = plumbing.ZeroHash
		if len(c.ParentHashes) > 0 && r.isCheckpoint(c.ParentHashes[0]) {
			h = c.ParentHashes[0]
		}
	}
	return nil
}

// isCheckpoint reports whether h is a commit whose tree holds
// checkpoint.json (not the project commit a checkpoint records).
func (r *Repo) isCheckpoint(h plumbing.Hash) bool {
	n, err := newGraph(r.storage).node(h)
	if err != nil {
		return true // a missing commit in the chain: reported by the walk
	}
	ents, err := readTree(r.storage, n.tree)
	if err != nil {
		return true
	}
	for _, e := range ents {
		if e.name == "checkpoint.json" {
			return true
		}
	}
	return false
}

// Repair says what --fix did to one ref.
type Repair struct {
	Ref string
	// Restored is the version the ref went back to ("" when none was
	// found, and the ref was moved aside).
	Restored, RestoredAt, RestoredMsg string
	// Lost lists the changes after that version that are gone from the ref
	// (subjects, newest first), LostCount counts them.
	Lost      []string
	LostCount int
	// Aside is where the damaged value is kept ("" when its object is
	// missing and no ref can hold it).
	Aside string
	Moved bool // the ref was moved aside, not restored
	// Broken: the ref's file held no value (doctor_broken.go); Restored
	// came from its reflog, or, Moved, the file was removed.
	Broken bool
}

// readReflog reads ref's reflog, oldest first (none on memory storage).
func (r *Repo) readReflog(ref plumbing.ReferenceName) []refs.ReflogEntry {
	fr, ok := r.fileRefs()
	if !ok {
		return nil
	}
	return fr.ReadReflog(ref)
}

// RepairRef restores the damaged ref name (a task, archived task, the
// stash list or the history) from its newest valid version, or moves it
// aside when there is none. now names the aside ref.
func (r *Repo) RepairRef(name string, now time.Time) (*Repair, error) {
	ref := plumbing.ReferenceName(name)
	rel := strings.TrimPrefix(name, refs.HegelRefPrefix)
	if r.isBroken(ref) {
		return r.repairBroken(ref)
	}
	// A version is valid when it reads; a gap further down its chain is
	// repaired after (reroot).
	var valid func(h plumbing.Hash) error
	switch refKind(rel) {
	case "task", "archive":
		valid = func(h plumbing.Hash) error { return r.validTask(ref, taskName(ref), h) }
	case "stashes":
		valid = func(h plumbing.Hash) error {
			t, err := r.Stashes().loadAt(h)
			if err != nil {
				return err
			}
			return r.treeComplete(t.tree, map[plumbing.Hash]bool{})
		}
	case "history":
		valid = func(h plumbing.Hash) error {
			n, err := newGraph(r.storage).node(h)
			if err != nil {
				return err
			}
			ents, err := readTree(r.storage, n.tree)
			if err != nil {
				return err
			}
			return checkVersion(r, ents)
		}
	case "deleted":
		valid = func(h plumbing.Hash) error { _, err := r.readDeleted(ref, h); return err }
	case "checkpoints", "actions":
		return r.repairCheckpoints(ref, now)
	default:
		return nil, fmt.Errorf("%s is not a ref doctor repairs", name)
	}
	tip, err := r.refs.Read(ref)
	if err != nil {
		return nil, err
	}
	rep := &Repair{Ref: name}
	if valid(tip) == nil {
		// The tip is fine; a commit further down is missing.
		return r.rerootAtGap(ref, tip, rep)
	}
	good, lost := r.findValid(ref, tip, valid)
	if rep.Aside, err = r.moveAside(rel, tip, now); err != nil {
		return nil, err
	}
	if good.IsZero() {
		rep.Moved = true
		if err := r.refs.UpdateMsg(ref, tip, plumbing.ZeroHash, refs.Reflog{Msg: "doctor: moved aside to " + orMissing(rep.Aside), Restart: !r.wholeCommit(tip)}); err != nil {
			return nil, describeRefError(ref, err)
		}
		if strings.HasPrefix(name, TaskRefPrefix) {
			r.removeTaskCache(taskName(ref))
		}
		return rep, nil
	}
	c, err := object.GetCommit(r.storage, good)
	if err != nil {
		return nil, err
	}
	rep.Restored, rep.RestoredAt = good.String(), c.Committer.When.UTC().Format(time.RFC3339)
	rep.RestoredMsg, _, _ = strings.Cut(c.Message, "\n")
	rep.Lost, rep.LostCount = lost, len(lost)
	if len(rep.Lost) > 3 {
		rep.Lost = rep.Lost[:3]
	}
	msg := fmt.Sprintf("doctor: restored %s (%s)", good.String()[:12], rep.RestoredMsg)
	nc, err := r.writeCommit(c.TreeHash, []plumbing.Hash{good}, msg)
	if err != nil {
		return nil, err
	}
	// The reflog starts afresh when the replaced value is not a whole
	// commit: an entry naming it makes git gc fail (the restored chain
	// keeps the history; the report names what was lost).
	if err := r.refs.UpdateMsg(ref, tip, nc, refs.Reflog{Msg: msg, Restart: !r.wholeCommit(tip)}); err != nil {
		return nil, describeRefError(ref, err)
	}
	r.dropRefCache(ref)
	if r.chainComplete(nc) != nil {
		return r.rerootAtGap(ref, nc, rep)
	}
	return rep, nil
}

// rerootAtGap rewrites the chain at tip from its oldest commit that can
// still be read: what lies below a missing commit is lost anyway. Other
// parents (merges) are kept when they exist.
func (r *Repo) rerootAtGap(ref plumbing.ReferenceName, tip plumbing.Hash, rep *Repair) (*Repair, error) {
	var chain []*object.Commit
	for h, n := tip, 0; !h.IsZero() && n < maxChain; n++ {
		c, err := object.GetCommit(r.storage, h)
		if err != nil {
			rep.Lost = append(rep.Lost, "everything before "+chain[len(chain)-1].Hash.String()[:12]+" (commit "+h.String()[:12]+" is missing)")
			rep.LostCount++
			break
		}
		if err := r.treeComplete(c.TreeHash, map[plumbing.Hash]bool{}); err != nil && len(chain) > 0 {
			rep.Lost = append(rep.Lost, "everything before "+chain[len(chain)-1].Hash.String()[:12]+" ("+oneLine(err.Error())+")")
			rep.LostCount++
			break
		}
		chain = append(chain, c)
		h = plumbing.ZeroHash
		if len(c.ParentHashes) > 0 {
			h = c.ParentHashes[0]
		}
	}
	if rep.LostCount == 0 {
		return rep, nil
	}
	prev := plumbing.ZeroHash
	for i := len(chain) - 1; i >= 0; i-- {
		c := chain[i]
		var parents []plumbing.Hash
		if !prev.IsZero() {
			parents = append(parents, prev)
		}
		for _, p := range c.ParentHashes[min(1, len(c.ParentHashes)):] {
			if r.chainComplete(p) == nil {
				parents = append(parents, p)
			}
		}
		nc := &object.Commit{Author: c.Author, Committer: c.Committer, Message: c.Message, TreeHash: c.TreeHash, ParentHashes: parents}
		data, err := encodeObject(nc)
		if err != nil {
			return nil, err
		}
		if prev, err = r.objects.Write(plumbing.CommitObject, data); err != nil {
			return nil, err
		}
	}
	msg := "doctor: re-rooted where a commit of its history is missing"
	if err := r.refs.UpdateMsg(ref, tip, prev, refs.Reflog{Msg: msg, Restart: true}); err != nil {
		return nil, describeRefError(ref, err)
	}
	if rep.Restored == "" {
		rep.Restored = prev.String()
		rep.RestoredMsg = "the same state, on a shorter history"
	}
	return rep, nil
}

func orMissing(s string) string {
	if s == "" {
		return "nowhere (its object is missing)"
	}
	return s
}

// findValid looks for the newest valid version of a ref: along the chain
// of its tip (first parents), then among the values its reflog recorded,
// newest first. lost lists what the chosen version lacks (the subjects of
// the skipped commits, or the reflog's newer messages).
func (r *Repo) findValid(ref plumbing.ReferenceName, tip plumbing.Hash, valid func(plumbing.Hash) error) (plumbing.Hash, []string) {
	var lost []string
	tried := map[plumbing.Hash]bool{}
	for h, n := tip, 0; !h.IsZero() && n < 1000; n++ {
		tried[h] = true
		if valid(h) == nil {
			return h, lost
		}
		c, err := object.GetCommit(r.storage, h)
		if err != nil {
			lost = append(lost, "the value "+h.String()[:12]+" (not a commit)")
			break
		}
		subject, _, _ := strings.Cut(c.Message, "\n")
		lost = append(lost, subject)
		if len(c.ParentHashes) == 0 {
			break
		}
		h = c.ParentHashes[0]
	}
	log := r.readReflog(ref)
	lost = nil
	for i := len(log) - 1; i >= 0; i-- {
		h := log[i].New
		what := log[i].Msg
		if what == "" {
			// git update-ref without -m: say what it set.
			what = "the update to " + h.String()[:12] + " (no message)"
		}
		if h.IsZero() || tried[h] {
			if !h.IsZero() {
				lost = append(lost, what)
			}
			continue
		}
		tried[h] = true
		if valid(h) == nil {
			return h, lost
		}
		lost = append(lost, what)
	}
	return plumbing.ZeroHash, nil
}

// moveAside keeps the value h of the ref rel (below refs/hegel/) under
// refs/hegel/damaged/<rel>/<time>, and returns that name ("" when h's
// object is missing: a ref cannot hold it). An error says it could not be
// kept (a ref in the way of the name): the caller then changes nothing.
func (r *Repo) moveAside(rel string, h plumbing.Hash, now time.Time) (string, error) {
	if !r.whole(h) {
		return "", nil
	}
	// A blob or a tree is kept wrapped in a commit: git gc and git fsck
	// stumble on a reflog entry naming anything but a commit (or a tag,
	// which they peel).
	if _, err := newGraph(r.storage).node(h); err != nil {
		w, err := r.wrapValue(h, rel)
		if err != nil {
			return "", fmt.Errorf("cannot keep the damaged value: %s; nothing was changed", oneLine(err.Error()))
		}
		h = w
	}
	base := DamagedRefPrefix + rel + "/" + now.UTC().Format("20060102T150405Z")
	name := base
	for i := 2; i < 100; i++ {
		err := r.refs.UpdateMsg(plumbing.ReferenceName(name), plumbing.ZeroHash, h, refs.Reflog{Msg: "doctor: moved aside from refs/hegel/" + rel})
		if err == nil {
			return name, nil
		}
		if !errors.Is(err, ErrConflict) {
			return "", fmt.Errorf("cannot keep the damaged value under %s: %s; nothing was changed", base, oneLine(err.Error()))
		}
		name = fmt.Sprintf("%s-%d", base, i)
	}
	return "", fmt.Errorf("cannot keep the damaged value under %s: 99 names taken; nothing was changed", base)
}

// whole reports whether value h and the objects of its tree are all
// there: a ref (or reflog entry) to a commit or tree that lacks objects
// makes git gc and git fsck fail, so such a value is only named in the
// report.
func (r *Repo) whole(h plumbing.Hash) bool {
	for depth := 0; depth < 10; depth++ {
		t, ok := r.objectType(h)
		if !ok {
			return false
		}
		switch t {
		case plumbing.CommitObject:
			n, err := newGraph(r.storage).node(h)
			return err == nil && r.treeComplete(n.tree, map[plumbing.Hash]bool{}) == nil
		case plumbing.TreeObject:
			return r.treeComplete(h, map[plumbing.Hash]bool{}) == nil
		case plumbing.TagObject:
			tag, err := object.GetTag(r.storage, h)
			if err != nil {
				return false
			}
			h = tag.Target // whole when what it tags is
		default:
			return true // a blob
		}
	}
	return false
}

// wrapValue makes a commit holding value h (a tree as its tree, a blob
// as the file "value"), saying where it came from; an annotated tag is
// kept as it is.
func (r *Repo) wrapValue(h plumbing.Hash, rel string) (plumbing.Hash, error) {
	if t, _ := r.objectType(h); t == plumbing.TagObject {
		// A ref may name a tag, a tree may not: a tag kept as a blob
		// entry makes git fsck and git gc fail on it (and on the tag).
		return h, nil
	}
	tree, what := h, "tree"
	if _, err := readTree(r.storage, h); err != nil {
		what = "blob, kept as the file 'value'"
		t, err := r.writeTreeOf(map[string]leaf{"value": {mode: filemode.Regular, hash: h}})
		if err != nil {
			return plumbing.ZeroHash, err
		}
		tree = t
	}
	return r.writeCommit(tree, nil, fmt.Sprintf("doctor: the value of refs/hegel/%s, a %s", rel, what))
}

// wholeCommit reports whether h is a commit whose tree is whole: a reflog
// entry naming anything else (a blob, a tree, a commit missing objects)
// makes git gc fail.
func (r *Repo) wholeCommit(h plumbing.Hash) bool {
	n, err := newGraph(r.storage).node(h)
	return err == nil && r.treeComplete(n.tree, map[plumbing.Hash]bool{}) == nil
}

// MoveEntryAside removes a damaged entry (a history entry or summary, a
// stash entry) from its ref's tree, keeping its blob under
// refs/hegel/damaged/. It returns where the blob is kept.
func (r *Repo) MoveEntryAside(refName, entry string, now time.Time) (string, error) {
	ref := plumbing.ReferenceName(refName)
	rel := strings.TrimPrefix(refName, refs.HegelRefPrefix)
	for i := 0; i < historyAttempts; i++ {
		tip, err := r.refs.Read(ref)
		if err != nil {
			return "", err
		}
		h := r.History()
		n, err := newGraph(r.storage).node(tip)
		if err != nil {
			return "", err
		}
		parts := strings.Split(entry, "/")
		e, ok, err := h.walk(n.tree, parts...)
		if err != nil {
			return "", err
		}
		if !ok {
			return "", nil // gone meanwhile
		}
		aside, err := r.moveAside(rel+"/"+strings.ReplaceAll(strings.TrimSuffix(entry, historyEntryExt), "/", "-"), e.hash, now)
		if err != nil {
			return "", err
		}
		root, err := h.setPath(n.tree, true, parts[:len(parts)-1], parts[len(parts)-1], leaf{})
		if err != nil {
			return "", err
		}
		msg := fmt.Sprintf("doctor: moved the damaged %s aside to %s", entry, orMissing(aside))
		if ref == StashRef {
			msg = "stash drop: " + msg // the stash history reads it as a drop
		}
		c, err := r.writeCommit(root, []plumbing.Hash{tip}, msg)
		if err != nil {
			return "", err
		}
		err = r.refs.UpdateMsg(ref, tip, c, refs.Reflog{Msg: msg})
		if err == nil {
			return aside, nil
		}
		if !errors.Is(err, ErrConflict) {
			return "", describeRefError(ref, err)
		}
	}
	return "", fmt.Errorf("%s kept changing", refName)
}

// repairCheckpoints rewrites a checkpoint chain without the checkpoints
// whose objects are missing; the old chain is kept aside when it can be.
// When the tip's own commit is missing, the chain is read from the newest
// value its reflog recorded whose commit is there (the tip before), as a
// task ref's is: only the checkpoints the lost tip added are lost.
func (r *Repo) repairCheckpoints(ref plumbing.ReferenceName, now time.Time) (*Repair, error) {
	tip, err := r.refs.Read(ref)
	if err != nil {
		return nil, err
	}
	rep := &Repair{Ref: string(ref)}
	start := tip
	if _, err := object.GetCommit(r.storage, tip); err != nil {
		start = r.checkpointTipInReflog(ref, tip)
		rep.LostCount++
		rep.Lost = append(rep.Lost, "the newest checkpoints, at "+tip.String()[:12]+" (its commit is missing)")
	} else if !r.isCheckpoint(tip) {
		start = r.checkpointTipInReflog(ref, tip)
		rep.LostCount++
		rep.Lost = append(rep.Lost, "the ref's value "+tip.String()[:12]+" (a commit that is not a checkpoint)")
	}
	// The chain by first parents, newest first, and which are whole.
	type cp struct {
		c  *object.Commit
		ok bool
	}
	var chain []cp
	seen := map[plumbing.Hash]bool{}
	for h, n := start, 0; !h.IsZero() && n < maxChain; n++ {
		c, err := object.GetCommit(r.storage, h)
		if err != nil {
			rep.LostCount++
			break // what is below a missing commit cannot be reached
		}
		ok := r.treeComplete(c.TreeHash, seen) == nil
		chain = append(chain, cp{c: c, ok: ok})
		if !ok {
			rep.LostCount++
			subject, _, _ := strings.Cut(c.Message, "\n")
			rep.Lost = append(rep.Lost, subject)
		}
		h = plumbing.ZeroHash
		if len(c.ParentHashes) > 0 && r.isCheckpoint(c.ParentHashes[0]) {
			h = c.ParentHashes[0]
		}
	}
	prev := plumbing.ZeroHash
	for i := len(chain) - 1; i >= 0; i-- {
		if !chain[i].ok {
			continue
		}
		c := chain[i].c
		var parents []plumbing.Hash
		if !prev.IsZero() {
			parents = append(parents, prev)
		}
		for j, p := range c.ParentHashes {
			if j == 0 && r.isCheckpoint(p) {
				continue
			}
			if r.objects.Has(p) {
				parents = append(parents, p)
			}
		}
		nc := &object.Commit{Author: c.Author, Committer: c.Committer, Message: c.Message, TreeHash: c.TreeHash, ParentHashes: parents}
		data, err := encodeObject(nc)
		if err != nil {
			return nil, err
		}
		if prev, err = r.objects.Write(plumbing.CommitObject, data); err != nil {
			return nil, err
		}
	}
	if rep.Aside, err = r.moveAsideIfWhole(strings.TrimPrefix(string(ref), refs.HegelRefPrefix), tip, now); err != nil {
		return nil, err
	}
	msg := "doctor: rewrote the chain without " + text.Plural(rep.LostCount, "damaged checkpoint", "damaged checkpoints")
	if prev.IsZero() {
		rep.Moved = true
		msg = "doctor: no checkpoint of the chain is whole"
	} else {
		rep.Restored = prev.String()
	}
	if err := r.refs.UpdateMsg(ref, tip, prev, refs.Reflog{Msg: msg, Restart: !prev.IsZero()}); err != nil {
		return nil, describeRefError(ref, err)
	}
	return rep, nil
}

// checkpointTipInReflog is the newest value ref's reflog recorded, before
// or after an update, other than tip, whose commit can be read and holds
// a checkpoint (zero when there is none). A chain cut to its bound
// restarts its reflog, whose one entry still names the tip before.
func (r *Repo) checkpointTipInReflog(ref plumbing.ReferenceName, tip plumbing.Hash) plumbing.Hash {
	log := r.readReflog(ref)
	for i := len(log) - 1; i >= 0; i-- {
		for _, h := range []plumbing.Hash{log[i].New, log[i].Old} {
			if h.IsZero() || h == tip {
				continue
			}
			if _, err := object.GetCommit(r.storage, h); err == nil && r.isCheckpoint(h) {
				return h
			}
		}
	}
	return plumbing.ZeroHash
}

// moveAsideIfWhole is moveAside for a chain that may lack objects: one
// that does is not kept (a ref to it would break git gc); its value stays
// named in the report. A value that is no checkpoint at all (a commit put
// there by hand or by a teammate, a blob) is kept as any other ref's
// value is, when its own objects are there.
func (r *Repo) moveAsideIfWhole(rel string, h plumbing.Hash, now time.Time) (string, error) {
	if r.checkCheckpointChain(h) != nil && !(r.notCheckpoint(h) && r.whole(h)) {
		return "", nil
	}
	return r.moveAside(rel, h, now)
}

// notCheckpoint reports whether h is an object that is not a checkpoint:
// not a commit, or a commit whose tree holds no checkpoint.json.
func (r *Repo) notCheckpoint(h plumbing.Hash) bool {
	t, ok := r.objectType(h)
	if !ok {
		return false
	}
	return t != plumbing.CommitObject || !r.isCheckpoint(h)
}

// objectType is the type of object h (false when it cannot be read).
func (r *Repo) objectType(h plumbing.Hash) (plumbing.ObjectType, bool) {
	o, err := r.storage.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return plumbing.InvalidObject, false
	}
	return o.Type(), true
}

package gitstore

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// git hegel gc (docs/history.md, "Retention"): history entries of runs
// that ended before a cutoff, archived tasks that finished before it and
// stashes dropped before it are removed, and made unreachable so git gc
// can reclaim them: a chain whose commits still hold them is re-rooted
// (rewrite.go) and its reflog restarted, and the reflogs kept for refs
// that no longer exist are removed once they are older than the cutoff.
// The statistics of the history entries removed are kept (summaries/).
//
// What a remote's tracking refs (refs/hegel-remotes/…) hold stays
// reachable through them, so a chain that a remote tracks is not
// re-rooted: its removed data is left for git gc once every clone has run
// gc, and meanwhile re-rooting would only cost the merge base the next
// sync needs.

// DamagedRefPrefix is where doctor --fix moves what it cannot repair;
// git-hegel never deletes anything there.
const DamagedRefPrefix = "refs/hegel/damaged/"

// GCOptions choose what gc removes.
type GCOptions struct {
	// Before is the cutoff: what ended, finished or was dropped before it
	// goes.
	Before time.Time
	DryRun bool
}

// GCReport says what gc removed (or, dry, would remove).
type GCReport struct {
	Before         time.Time
	DryRun         bool
	HistoryEntries int
	SummaryDays    int // days whose statistics now live in summaries/
	Archived       []string
	Checkpoints    []string // checkpoint refs removed with their archived task
	// Actions names the tasks whose agent-action chains went: no action
	// recorded since the cutoff, or no task of that name left.
	Actions        []string
	DroppedStashes int
	DeletedRecords []string // `git hegel delete` records past their window
	Rerooted       []string // refs whose chains were rewritten
	Reflogs        int      // reflogs removed or restarted
	// Kept names the tracking refs that still reach removed data.
	Kept []string
}

// Empty reports whether gc found nothing to remove.
func (rep *GCReport) Empty() bool {
	return rep.HistoryEntries == 0 && len(rep.Archived) == 0 && rep.DroppedStashes == 0 && len(rep.DeletedRecords) == 0 &&
		len(rep.Actions) == 0
}

// GC removes what ended before o.Before (see above).
func (r *Repo) GC(o GCOptions) (*GCReport, error) {
	rep := &GCReport{Before: o.Before, DryRun: o.DryRun}
	steps := []func(GCOptions, *GCReport) error{r.gcHistory, r.gcArchive, r.gcDeleted, r.gcStashes, r.gcActions}
	if !o.DryRun {
		steps = append(steps, r.gcReflogs)
	}
	var errs []string
	for _, step := range steps {
		// One part that fails never stops the others.
		if err := step(o, rep); err != nil {
			errs = append(errs, oneLine(err.Error()))
		}
	}
	sort.Strings(rep.Kept)
	if len(errs) > 0 {
		return rep, errors.New(strings.Join(errs, "; "))
	}
	return rep, nil
}

// trackers returns the tracking refs that hold a copy of rel (below
// refs/hegel/).
func (r *Repo) trackers(rel string) ([]string, error) {
	refs, err := r.refs.List(trackingRoot)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ref := range refs {
		rest := strings.TrimPrefix(string(ref.Name), trackingRoot)
		if _, name, ok := strings.Cut(rest, "/"); ok && name == rel {
			out = append(out, string(ref.Name))
		}
	}
	return out, nil
}

// gcHistory moves the entries of runs that ended before the cutoff into
// their days' summaries.
func (r *Repo) gcHistory(o GCOptions, rep *GCReport) error {
	h := r.History()
	days, err := h.HistoryDays()
	if err != nil {
		return err
	}
	last := o.Before.UTC().Format(engine.HistoryDayLayout)
	// An entry fetched here counts as ended no earlier than this clone
	// held it: it goes only if it was in the history this clone held at
	// the cutoff (its ended_at came from another clone, which can write
	// any date).
	heldTip, known := heldAt(r.readReflog(HistoryRef), o.Before)
	heldTree := plumbing.ZeroHash // no tree: nothing held, or its commit is gone
	if c, err := object.GetCommit(r.storage, heldTip); known && !heldTip.IsZero() && err == nil {
		heldTree = c.TreeHash
	}
	held := func(day, id string) bool {
		if !known {
			return true // nothing local to go by: the dates stand
		}
		parts, _ := dayParts(day)
		_, ok, err := h.walk(heldTree, append(append([]string{historyEntriesDir}, parts...), id+historyEntryExt)...)
		return ok && err == nil // an old tree that cannot be read keeps it
	}
	gone := map[string][]*engine.HistoryEntry{}
	for _, day := range days {
		if day > last {
			break
		}
		entries, err := h.HistoryDay(day)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if e.EndedAt.Before(o.Before) {
				if !held(day, e.ID) {
					continue // this clone has held it for less than the retention
				}
				gone[day] = append(gone[day], e)
				rep.HistoryEntries++
			}
		}
	}
	rep.SummaryDays = len(gone)
	if len(gone) == 0 || o.DryRun {
		return nil
	}
	tracked, err := r.trackers(relHistory)
	if err != nil {
		return err
	}
	for i := 0; i < historyAttempts; i++ {
		h := r.History()
		tip, root, err := h.readTip()
		if err != nil {
			return err
		}
		for day, es := range gone {
			if root, err = h.pruneDay(root, day, es); err != nil {
				return err
			}
		}
		msg := fmt.Sprintf("gc: %s that ended before %s moved to the summaries of %s",
			text.Plural(rep.HistoryEntries, "history entry", "history entries"), o.Before.UTC().Format(time.RFC3339), text.Plural(len(gone), "day", "days"))
		var parents []plumbing.Hash
		if len(tracked) > 0 {
			parents = []plumbing.Hash{tip}
		}
		c, err := r.writeCommit(root, parents, msg)
		if err != nil {
			return err
		}
		err = r.refs.UpdateMsg(HistoryRef, tip, c, refs.Reflog{Msg: msg, Restart: len(tracked) == 0})
		if err == nil {
			if len(tracked) == 0 {
				rep.Rerooted = append(rep.Rerooted, string(HistoryRef))
				rep.Reflogs++
			} else {
				rep.Kept = append(rep.Kept, tracked...)
			}
			return nil
		}
		if !errors.Is(err, ErrConflict) {
			return describeRefError(HistoryRef, err)
		}
		time.Sleep(time.Duration(rand.IntN(1+min(i, 10)*2)) * time.Millisecond)
	}
	return fmt.Errorf("%s kept changing; nothing was removed from it", HistoryRef)
}

// pruneDay removes es from day's entries below root and adds their
// digests to the day's summary; it returns the new root.
func (h *History) pruneDay(root plumbing.Hash, day string, es []*engine.HistoryEntry) (plumbing.Hash, error) {
	parts, _ := dayParts(day)
	drop := map[string]bool{}
	for _, e := range es {
		drop[e.ID+historyEntryExt] = true
	}
	dayDir := append([]string{historyEntriesDir}, parts...)
	d, ok, err := h.walk(root, dayDir...)
	if err != nil {
		return root, err
	}
	if ok && d.isDir() {
		ents, err := h.tree(d.hash)
		if err != nil {
			return root, err
		}
		m := map[string]leaf{}
		for _, e := range ents {
			if !drop[e.name] {
				m[e.name] = leaf{mode: e.fm, hash: e.hash}
			}
		}
		nd, err := h.writeLevel(m)
		if err != nil {
			return root, err
		}
		l := leaf{}
		if !nd.IsZero() {
			l = leaf{mode: filemode.Dir, hash: nd}
		}
		if root, err = h.setPath(root, true, dayDir[:3], parts[2], l); err != nil {
			return root, err
		}
	}
	h.tipRead, h.root = true, root // later reads see the new tree
	s := &summaryFile{Version: 1, Day: day}
	if b, err := h.summaryBlob(day); err != nil {
		return root, err
	} else if !b.IsZero() {
		old, _, err := h.readSummary(day)
		if err != nil {
			return root, err
		}
		s.Runs = old.Runs
	}
	have := map[string]bool{}
	for _, d := range s.Runs {
		have[d.ID] = true
	}
	for _, e := range es {
		if !have[e.ID] {
			s.Runs = append(s.Runs, e.Digest())
		}
	}
	sort.Slice(s.Runs, func(i, j int) bool { return s.Runs[i].ID < s.Runs[j].ID })
	data, err := encodeJSON(s)
	if err != nil {
		return root, err
	}
	blob, err := h.r.writeBlob(data)
	if err != nil {
		return root, err
	}
	root, err = h.setPath(root, true, []string{historySummariesDir, parts[0], parts[1]}, parts[2]+historyEntryExt, leaf{mode: filemode.Regular, hash: blob})
	h.root = root
	return root, err
}

// gcArchive removes the archived tasks that finished before the cutoff
// (by this clone's record as well as their state: archiveEnd), with their
// checkpoints and the reflogs that reach them. A task whose
// name was used again keeps its live chain, re-rooted past the archive.
func (r *Repo) gcArchive(o GCOptions, rep *GCReport) error {
	listed, err := r.Tasks().ListStates(true)
	if err != nil {
		return err
	}
	var errs []string
	for _, l := range listed {
		st := l.State
		if !l.Archived || l.Err != nil || !st.Finished() || st.EndedAt == nil || !st.EndedAt.Before(o.Before) {
			continue
		}
		if !r.archiveEnd(l.Name, *st.EndedAt).Before(o.Before) {
			continue // this clone has held it for less than the retention
		}
		live, err := r.Tasks().LoadTask(l.Name)
		if err != nil && !errors.Is(err, ErrNotFound) {
			// A live run that cannot be read is not "nothing live": its
			// checkpoints, adoption and reflog (what doctor restores it
			// from) would go with the archive.
			errs = append(errs, fmt.Sprintf("%s kept: the task of the same name cannot be read (%s); repair it with 'git hegel doctor --fix' first",
				ArchiveRef(l.Name), problemText(TaskRef(l.Name), err)))
			continue
		}
		if err == nil && live.State.WorkflowID == st.WorkflowID {
			continue // the same run, reopened: the archive is its past
		}
		if o.DryRun {
			rep.Archived = append(rep.Archived, l.Name)
			continue
		}
		if err := r.gcArchivedTask(l.Name, live, rep); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

func (r *Repo) gcArchivedTask(name string, live *engine.Task, rep *GCReport) error {
	aref := ArchiveRef(name)
	a, err := readRefOrZero(r.refs, aref)
	if err != nil || a.IsZero() {
		return err
	}
	if err := r.refs.UpdateMsg(aref, a, plumbing.ZeroHash, refs.Reflog{Msg: "gc: expired"}); err != nil {
		if errors.Is(err, ErrConflict) {
			return nil // it changed meanwhile: the next gc decides again
		}
		return describeRefError(aref, err)
	}
	rep.Archived = append(rep.Archived, name)
	r.removeTaskCache(archiveKey(name))
	rep.Reflogs += r.dropReflog(aref)
	t, _ := r.trackers(relArchive + name)
	rep.Kept = append(rep.Kept, t...)
	if live == nil {
		// Nothing of the name is live: its task log (kept when it was
		// archived), checkpoints and adoption go too.
		rep.Reflogs += r.dropReflog(TaskRef(name))
		cref := plumbing.ReferenceName(CheckpointRefPrefix + name)
		if cp, err := readRefOrZero(r.refs, cref); err == nil && !cp.IsZero() {
			if r.refs.UpdateMsg(cref, cp, plumbing.ZeroHash, refs.Reflog{Msg: "gc: expired with its task"}) == nil {
				rep.Checkpoints = append(rep.Checkpoints, name)
			}
		}
		rep.Reflogs += r.dropReflog(cref)
		aref := plumbing.ReferenceName(ActionsRefPrefix + name)
		if ac, err := readRefOrZero(r.refs, aref); err == nil && !ac.IsZero() {
			_ = r.refs.UpdateMsg(aref, ac, plumbing.ZeroHash, refs.Reflog{Msg: "gc: expired with its task"})
		}
		rep.Reflogs += r.dropReflog(aref)
		r.dropChainCache(string(aref))
		_ = r.common.Remove(adoptedPath(name))
		return nil
	}
	// The name was used again: the live chain continues the archive's.
	return r.rerootTask(name, a, rep)
}

// rerootTask rewrites the live chain of task name without the commits of
// the archive at old, and without the agent events of the runs those held.
func (r *Repo) rerootTask(name string, old plumbing.Hash, rep *GCReport) error {
	ref := TaskRef(name)
	if t, _ := r.trackers(relTasks + name); len(t) > 0 {
		rep.Kept = append(rep.Kept, t...)
		return nil
	}
	g := newGraph(r.storage)
	past, err := reachable(g, old)
	if err != nil {
		return fmt.Errorf("%s: %s", ref, oneLine(err.Error()))
	}
	for i := 0; i < historyAttempts; i++ {
		tip, err := readRefOrZero(r.refs, ref)
		if err != nil || tip.IsZero() {
			return err
		}
		if !past[tip] {
			if ok, err := g.isAncestor(old, tip); err != nil || !ok {
				return err // the chain no longer reaches it
			}
		}
		// The live run's events are those of its own run id and later:
		// run directories sort by start.
		st := r.stateIn(mustTree(g, tip))
		liveRun := ""
		if st != nil {
			liveRun = engine.RunKey(st)
		}
		newTip, err := r.rewriteChain(tip, func(n *gnode) bool { return !past[n.hash] }, func(t plumbing.Hash) (plumbing.Hash, error) {
			return r.withoutOldEvents(t, liveRun)
		})
		if err != nil {
			return fmt.Errorf("%s: %s", ref, oneLine(err.Error()))
		}
		if newTip.IsZero() || newTip == tip {
			return nil
		}
		err = r.refs.UpdateMsg(ref, tip, newTip, refs.Reflog{Msg: "gc: re-rooted past the expired archive", Restart: true})
		if err == nil {
			rep.Rerooted = append(rep.Rerooted, string(ref))
			rep.Reflogs++
			r.removeTaskCache(name)
			return nil
		}
		if !errors.Is(err, ErrConflict) {
			return describeRefError(ref, err)
		}
	}
	return fmt.Errorf("%s kept changing; it still reaches its expired archive", ref)
}

func mustTree(g *graph, h plumbing.Hash) plumbing.Hash {
	if n, err := g.node(h); err == nil {
		return n.tree
	}
	return plumbing.ZeroHash
}

// withoutOldEvents returns task tree t without the events of runs before
// liveRun.
func (r *Repo) withoutOldEvents(t plumbing.Hash, liveRun string) (plumbing.Hash, error) {
	ents, err := readTree(r.storage, t)
	if err != nil {
		return t, err
	}
	m := map[string]leaf{}
	changed := false
	for _, e := range ents {
		if e.name != eventsDir || !e.isDir() || liveRun == "" {
			m[e.name] = leaf{mode: e.fm, hash: e.hash}
			continue
		}
		runs, err := readTree(r.storage, e.hash)
		if err != nil {
			return t, err
		}
		keep := map[string]leaf{}
		for _, run := range runs {
			if run.name >= liveRun {
				keep[run.name] = leaf{mode: run.fm, hash: run.hash}
			} else {
				changed = true
			}
		}
		if len(keep) > 0 {
			sub, err := r.writeTreeOf(keep)
			if err != nil {
				return t, err
			}
			m[e.name] = leaf{mode: filemode.Dir, hash: sub}
		}
	}
	if !changed {
		return t, nil
	}
	return r.writeTreeOf(m)
}

// gcDeleted removes the records of `git hegel delete` past the window in
// which restore-task can bring them back, and their reflogs.
func (r *Repo) gcDeleted(o GCOptions, rep *GCReport) error {
	records, err := r.refs.List(DeletedRefPrefix)
	if err != nil {
		return err
	}
	before := r.Now().Add(-engine.DeletedTaskWindow)
	for _, ref := range records {
		d, err := r.readDeleted(ref.Name, ref.Hash)
		if err != nil || !d.DeletedAt.Before(before) {
			continue // a damaged record is kept for a person to look at
		}
		name := strings.TrimPrefix(string(ref.Name), DeletedRefPrefix)
		if o.DryRun {
			rep.DeletedRecords = append(rep.DeletedRecords, name)
			continue
		}
		if r.refs.UpdateMsg(ref.Name, ref.Hash, plumbing.ZeroHash, refs.Reflog{Msg: "gc: expired"}) == nil {
			rep.DeletedRecords = append(rep.DeletedRecords, name)
			rep.Reflogs += r.dropReflog(ref.Name)
		}
	}
	return nil
}

// gcStashes re-roots the stash list so that the stashes dropped before the
// cutoff are in no commit any more. It keeps every commit made since, and
// the parents of those (what their drops are diffed against: `stash list
// --dropped` still lists them).
func (r *Repo) gcStashes(o GCOptions, rep *GCReport) error {
	tip, err := readRefOrZero(r.refs, StashRef)
	if err != nil || tip.IsZero() {
		return err
	}
	g := newGraph(r.storage)
	order, err := chainCommits(g, tip)
	if err != nil {
		return fmt.Errorf("%s: %s", StashRef, oneLine(err.Error()))
	}
	// A commit's date is what the clone that made it wrote: one dated
	// before the cutoff is old only if this clone held it then (heldAt).
	cut := o.Before.Unix()
	held, all := r.heldCommits(StashRef, o.Before)
	keep := map[plumbing.Hash]bool{tip: true}
	for _, n := range order {
		if n.when >= cut || !(all || held[n.hash]) {
			keep[n.hash] = true
			for _, p := range n.parents {
				keep[p] = true
			}
		}
	}
	if len(keep) >= len(order) {
		return nil
	}
	// Count the stashes that go: those that drops and clears removed from
	// a commit that goes (a kept parent keeps them), and that are not live
	// or in a commit that stays.
	s := r.Stashes()
	stays := map[string]bool{}
	for h := range keep {
		t, err := s.loadAt(h)
		if err != nil {
			return err
		}
		for _, e := range t.entries {
			stays[e.Name] = true
		}
	}
	gone := map[string]bool{}
	for _, n := range order {
		if len(n.parents) != 1 || keep[n.parents[0]] {
			continue
		}
		c, err := object.GetCommit(r.storage, n.hash)
		if err != nil {
			return fmt.Errorf("%s: cannot read commit %s: %s", StashRef, n.hash, oneLine(err.Error()))
		}
		if op := stashOpOf(c.Message); op != engine.StashOpDrop && op != engine.StashOpClear {
			continue
		}
		cur, err := s.loadAt(n.hash)
		if err != nil {
			return err
		}
		parent, err := s.loadAt(n.parents[0])
		if err != nil {
			return err
		}
		now := map[string]bool{}
		for _, e := range cur.entries {
			now[e.Name] = true
		}
		for _, e := range parent.entries {
			if !now[e.Name] && !stays[e.Name] {
				gone[e.Name] = true
			}
		}
	}
	rep.DroppedStashes = len(gone)
	if o.DryRun {
		return nil
	}
	if t, _ := r.trackers(relStashes); len(t) > 0 {
		rep.Kept = append(rep.Kept, t...)
		return nil
	}
	newTip, err := r.rewriteChain(tip, func(n *gnode) bool { return keep[n.hash] }, nil)
	if err != nil {
		return fmt.Errorf("%s: %s", StashRef, oneLine(err.Error()))
	}
	if newTip == tip || newTip.IsZero() {
		return nil
	}
	msg := fmt.Sprintf("gc: history before %s removed", o.Before.UTC().Format(time.RFC3339))
	if err := r.refs.UpdateMsg(StashRef, tip, newTip, refs.Reflog{Msg: msg, Restart: true}); err != nil {
		if errors.Is(err, ErrConflict) {
			return nil // a stash command ran meanwhile: the next gc does it
		}
		return describeRefError(StashRef, err)
	}
	rep.Rerooted = append(rep.Rerooted, string(StashRef))
	rep.Reflogs++
	return nil
}

// gcReflogs removes the reflogs kept for refs under refs/hegel/ that no
// longer exist (refs.Files keeps them when a ref is deleted) once their
// last entry is older than the cutoff.
func (r *Repo) gcReflogs(o GCOptions, rep *GCReport) error {
	fr, ok := r.fileRefs()
	if !ok || !fr.Logged() {
		return nil
	}
	for _, name := range fr.ReflogNames("refs/hegel") {
		ref := plumbing.ReferenceName(name)
		if strings.HasPrefix(name, DamagedRefPrefix) {
			continue // never removed by git-hegel
		}
		if _, err := r.refs.Read(ref); !errors.Is(err, ErrNotFound) {
			continue
		}
		if last, ok := fr.LastReflogTime(name); ok && last.Before(o.Before) {
			rep.Reflogs += r.dropReflog(ref)
		}
	}
	return nil
}

// dropReflog removes ref's reflog (1 when there was one).
func (r *Repo) dropReflog(ref plumbing.ReferenceName) int {
	fr, ok := r.fileRefs()
	if !ok || !fr.Logged() || !fr.DropReflog(ref) {
		return 0
	}
	return 1
}

// gcActions removes the agent-action chains that ended before the cutoff
// (their newest snapshot is older: the undo history of work long done)
// and those of names with no task, live or archived (the task was
// deleted or its archive went). The bound hegel.agent.keepActions applies as they grow;
// this is the bound by age.
func (r *Repo) gcActions(o GCOptions, rep *GCReport) error {
	if o.Before.IsZero() {
		return nil // a retention of 0 keeps everything
	}
	list, err := r.refs.List(ActionsRefPrefix)
	if err != nil {
		return err
	}
	var errs []string
	for _, ref := range list {
		name := strings.TrimPrefix(string(ref.Name), ActionsRefPrefix)
		live, err := readRefOrZero(r.refs, TaskRef(name))
		if err == nil && live.IsZero() {
			// An archived task counts: one a stash drop ended keeps its
			// chain for stash restore; it goes with the archive.
			live, err = readRefOrZero(r.refs, ArchiveRef(name))
		}
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if !live.IsZero() {
			c, err := object.GetCommit(r.storage, ref.Hash)
			if err != nil {
				// No age to go by: the chain and its reflog (what doctor
				// repairs it from) stay.
				errs = append(errs, fmt.Sprintf("%s kept: its newest snapshot cannot be read (%s); repair it with 'git hegel doctor --fix'",
					ref.Name, oneLine(err.Error())))
				continue
			}
			if !c.Committer.When.Before(o.Before) {
				continue
			}
		}
		rep.Actions = append(rep.Actions, name)
		if o.DryRun {
			continue
		}
		if err := r.refs.UpdateMsg(ref.Name, ref.Hash, plumbing.ZeroHash, refs.Reflog{Msg: "gc: expired"}); err != nil && !errors.Is(err, ErrConflict) {
			errs = append(errs, describeRefError(ref.Name, err).Error())
			continue
		}
		rep.Reflogs += r.dropReflog(ref.Name)
		r.dropChainCache(string(ref.Name))
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

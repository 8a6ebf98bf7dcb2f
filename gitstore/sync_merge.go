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

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// merge is the merge step: each tracking ref of the remote is validated
// (unless the network step just did) and merged into its local ref. A ref
// whose data fails a check is refused and the others are merged.
func (s *syncer) merge(validated map[plumbing.ReferenceName]plumbing.Hash) error {
	// Only refs whose two sides differ have anything to merge (or to be
	// refused here): those with a tracking ref.
	kinds, local, tracking, err := s.differingRefs()
	if err != nil {
		return err
	}
	refs := sortedRefsWhere(kinds, hasKey(tracking))
	objects, release := s.r.objectReader()
	defer release()
	s.g.s = objects
	defer func() { s.g.s = s.r.storage }()
	v := newValidator(objects, s.g, s.r.cfg)
	refusedBefore := make(map[string]bool, len(s.refused))
	for rel := range s.refused {
		refusedBefore[rel] = true
	}
	var cands []candidate
	for _, ref := range refs {
		tip := tracking[ref.rel]
		if s.refused[ref.rel] || s.damaged[ref.rel] || validated[ref.tracking(s.rem.Name)] == tip || local[ref.rel] == tip {
			continue
		}
		objs, err := v.validate(ref, tip, s.known(ref, local[ref.rel]))
		if err != nil {
			s.refuse(ref, err.Error(), "")
			continue
		}
		cands = append(cands, candidate{ref: ref, tip: tip, objects: objs})
	}
	s.gitCheck(cands, objects, nil)
	for _, ref := range refs {
		if s.refused[ref.rel] && !refusedBefore[ref.rel] {
			// Refused here: its tracking ref holds what a plain git
			// fetch brought.
			s.dropRefusedTracking(ref, tracking[ref.rel])
		}
		if s.refused[ref.rel] || s.damaged[ref.rel] || local[ref.rel] == tracking[ref.rel] {
			// (Equal: both sides hold the same; a local command since
			// the listing builds on it.)
			continue
		}
		if err := s.mergeRef(ref, tracking[ref.rel]); err != nil {
			return err
		}
	}
	return nil
}

// mergeResult is what merging one ref decided.
type mergeResult struct {
	next   plumbing.Hash
	counts engine.MergeCounts
	change engine.TaskChange
	kept   bool // diverged and left as it was (checkpoints without a merger)
	held   *engine.TaskHeld
	// stashEnded: the archive ended a task stashed here, because the
	// remote dropped its stash entry.
	stashEnded *engine.StashEnded
	// merge is what merging two task states decided (fields from each
	// side, conflicts); state the merged state written.
	merge *engine.StateMerge
	state *engine.State
	// unrelated: the two task histories have no commit in common.
	unrelated bool
}

// mergeRef brings theirs into the local ref: create it, fast-forward it,
// or merge the two histories, then compare-and-swap. When a local command
// moved the ref meanwhile, it starts over from the new local value: the
// local change is never overwritten.
func (s *syncer) mergeRef(ref hegelRef, theirs plumbing.Hash) error {
	name := ref.local()
	for i := 0; i < mergeAttempts; i++ {
		ours, err := readRefOrZero(s.r.refs, name)
		if err != nil {
			return err
		}
		var res mergeResult
		switch {
		case ours == theirs:
			return nil
		case ours.IsZero() && ref.kind == kindTask:
			// The task may be archived or deleted here (sync_archive.go).
			handled, change, err := s.mergeFinished(ref, theirs)
			if err != nil || handled {
				return err
			}
			res.next, res.change = theirs, change
		case ours.IsZero():
			res.next, res.change = theirs, engine.TaskAdded
			if res.counts, err = s.diffCounts(ref, plumbing.ZeroHash, theirs); err != nil {
				return err
			}
		default:
			have, err := s.g.isAncestor(theirs, ours)
			if err != nil {
				return fmt.Errorf("%s: %s", name, oneLine(err.Error()))
			}
			if have {
				return nil // we have it all already
			}
			ff, err := s.g.isAncestor(ours, theirs)
			if err != nil {
				return fmt.Errorf("%s: %s", name, oneLine(err.Error()))
			}
			if ff {
				res.next, res.change = theirs, engine.TaskFastForwarded
				if res.counts, err = s.diffCounts(ref, ours, theirs); err != nil {
					return err
				}
				if ref.ns.merge == mergeKeepLocal {
					res.held = s.held(ref, ours, theirs)
				}
			} else if res, err = s.mergeDiverged(ref, ours, theirs); err != nil {
				return err
			} else if res.change == engine.TaskMerged && ref.ns.merge == mergeKeepLocal {
				// The merge can take who holds the task from the remote
				// (claimed there): the worktree that held it here must
				// hear it, as after a fast-forward.
				if h := s.held(ref, ours, res.next); h != nil && (h.Owner != "" || h.Parked) {
					res.held = h
				}
			}
		}
		if res.kept {
			s.rep.CheckpointsKept = append(s.rep.CheckpointsKept, ref.task())
			return nil
		}
		if res.change == engine.TaskConflicted {
			// Nothing is written: the local ref stays, the remote's
			// version stays in the tracking ref, and neither is pushed
			// over the other until the conflict is resolved.
			s.conflicted[ref.rel] = true
			s.record(ref, ours, res)
			return nil
		}
		err = s.r.refs.UpdateMsg(name, ours, res.next, refs.Reflog{Msg: s.reflogMessage(ours, res)})
		if errors.Is(err, ErrConflict) {
			time.Sleep(time.Duration(rand.Int64N(int64(time.Millisecond) << min(i, 5))))
			continue
		}
		if err != nil {
			return describeRefError(name, err)
		}
		if ref.kind == kindTask && ref.archived() {
			res.held, res.stashEnded = s.dropArchivedTask(ref, res.next)
		}
		s.record(ref, ours, res)
		return nil
	}
	return fmt.Errorf("%s kept changing while merging %s's version; try again", name, s.rem.Name)
}

// reflogMessage is what the local ref's reflog says about a merge, as
// git fetch writes it ("fetch origin: fast-forward"): the remote a
// definition came from is read back from here (definitions.go), since
// the commits themselves can claim anything.
func (s *syncer) reflogMessage(ours plumbing.Hash, res mergeResult) string {
	what := "merged (" + s.r.commitSubject(res.next) + ")"
	switch {
	case ours.IsZero():
		what = "added"
	case res.change == engine.TaskFastForwarded:
		what = "fast-forward"
	}
	return "fetch " + s.rem.Name + ": " + what
}

func (s *syncer) record(ref hegelRef, ours plumbing.Hash, res mergeResult) {
	add := func(into *engine.MergeCounts) {
		into.Added += res.counts.Added
		into.Dropped += res.counts.Dropped
		into.Conflicts += res.counts.Conflicts
	}
	switch ref.kind {
	case kindStashes:
		add(&s.rep.Stashes)
	case kindHistory:
		add(&s.rep.History)
	case kindCheckpoint:
		add(&s.rep.Checkpoints)
		s.rep.CheckpointsUpdated = append(s.rep.CheckpointsUpdated, ref.task())
	case kindTask:
		ts := engine.TaskSync{Task: ref.task(), Change: res.change, Held: res.held, StashEnded: res.stashEnded, Archived: ref.archived(), Unrelated: res.unrelated}
		if m := res.merge; m != nil {
			ts.FromOurs, ts.FromTheirs, ts.Conflicts = m.FromOurs, m.FromTheirs, m.Conflicts
			ts.Resolved = s.o.Resolve[ref.task()]
		}
		if (res.change == engine.TaskFastForwarded || res.change == engine.TaskMerged) && !ref.archived() {
			ts.Definition = s.definitionChange(ref.task(), ours, res.next)
			ts.LocksLost = s.locksLost(ref, ours, res.next)
			s.noteFetchedMove(ref, ours, res.next)
		}
		s.rep.Tasks = append(s.rep.Tasks, ts)
	}
}

// definitionChange returns the blob id of the definition theirs holds
// when it differs from ours' and this clone created the task or took it
// over (its adoption record names a worktree here); "" otherwise.
func (s *syncer) definitionChange(task string, ours, theirs plumbing.Hash) string {
	if s.r.adoptedBy(task) == "" {
		return ""
	}
	def := func(h plumbing.Hash) plumbing.Hash {
		ci, err := s.r.readChainCommit(h)
		if err != nil {
			return plumbing.ZeroHash
		}
		id, _ := s.r.definitionIn(ci.tree)
		return id
	}
	if to := def(theirs); !to.IsZero() && to != def(ours) {
		return to.String()
	}
	return ""
}

// mergeDiverged merges two histories that both moved on.
func (s *syncer) mergeDiverged(ref hegelRef, ours, theirs plumbing.Hash) (mergeResult, error) {
	bases, err := s.g.mergeBases(ours, theirs)
	if err != nil {
		return mergeResult{}, fmt.Errorf("%s: %s", ref.local(), oneLine(err.Error()))
	}
	switch ref.ns.merge {
	case mergeKeepLocal:
		return s.mergeTask(ref, bases, ours, theirs)
	case mergeCheckpointChains:
		// Only rollback knows the chain's format (one commit per
		// checkpoint, rewritten by eviction): without its merger, keep
		// ours and leave theirs in the tracking ref.
		if s.o.MergeCheckpoints == nil {
			return mergeResult{next: ours, kept: true}, nil
		}
		next, n, err := s.o.MergeCheckpoints(ref.task(), bases, ours, theirs)
		if err != nil {
			return mergeResult{}, err
		}
		if ok, err := s.g.isAncestor(theirs, next); err != nil || !ok {
			return mergeResult{}, fmt.Errorf("%s: the checkpoint merge does not contain %s's version", ref.local(), s.rem.Name)
		}
		return mergeResult{next: next, counts: n}, nil
	}
	return s.mergeEntries(ref, bases, ours, theirs)
}

// mergeTask merges two task states that both moved on, field by field
// against their merge base (engine.MergeStates), and the other files of
// the task's tree path by path. The result is a merge commit with both
// chains as parents. When a field or file changed differently on both
// sides and no resolution was asked for this task (SyncOptions.Resolve),
// nothing is written: the result is conflicted and the local ref stays.
func (s *syncer) mergeTask(ref hegelRef, bases []plumbing.Hash, ours, theirs plumbing.Hash) (mergeResult, error) {
	res := mergeResult{change: engine.TaskMerged, unrelated: len(bases) == 0}
	prefer := s.o.Resolve[ref.task()]
	load := func(h plumbing.Hash) (*engine.State, map[string]leaf, error) {
		d, err := s.r.readDocAt(ref.local(), h)
		if err != nil {
			return nil, nil, err
		}
		t, err := decodeTask(ref.local(), d)
		if err != nil {
			return nil, nil, err
		}
		n, err := s.g.node(h)
		if err != nil {
			return nil, nil, err
		}
		files := map[string]leaf{}
		return t.State, files, s.flatten(n.tree, "", files)
	}
	os, of, err := load(ours)
	if err != nil {
		return res, err
	}
	ts, tf, err := load(theirs)
	if err != nil {
		return res, err
	}
	// The first merge base is the common version; without one readable
	// (no common history, a shallow clone) every difference is a conflict.
	var bs *engine.State
	bf := map[string]leaf{}
	if len(bases) > 0 {
		if st, files, err := load(bases[0]); err == nil {
			bs, bf = st, files
		}
	}
	m, err := engine.MergeStates(bs, os, ts, prefer)
	if err != nil {
		return res, fmt.Errorf("%s: %s", ref.local(), oneLine(err.Error()))
	}
	res.merge = &m
	// The other files (the definition, what later versions add): one
	// side's change stands, both changed differently is a conflict.
	files := map[string]leaf{}
	for _, p := range unionPaths(bf, of, tf) {
		if p == stateFile {
			continue
		}
		b, inB := bf[p]
		o, inO := of[p]
		t, inT := tf[p]
		v, keep := o, inO
		switch {
		case inO == inT && o == t:
		case inB == inO && b == o:
			v, keep = t, inT
		case inB == inT && b == t:
		default:
			m.Conflicts = append(m.Conflicts, engine.FieldConflict{Field: p, Ours: blobName(o, inO), Theirs: blobName(t, inT)})
			if prefer == engine.SideTheirs {
				v, keep = t, inT
			}
		}
		if keep {
			files[p] = v
		}
	}
	res.merge = &m
	if len(m.Conflicts) > 0 && prefer == engine.SideNone {
		res.change, res.next = engine.TaskConflicted, ours
		return res, nil
	}
	if res.unrelated && prefer != engine.SideNone {
		// Two tasks with one name: merging their counters and logs
		// would make a third. The side asked for is kept whole, its
		// state and its files; the other stays in the merge's history.
		keep, keepFiles := os, of
		if prefer == engine.SideTheirs {
			keep, keepFiles = ts, tf
		}
		m.State, m.FromOurs, m.FromTheirs = keep, nil, nil
		files = map[string]leaf{}
		for p, l := range keepFiles {
			if p != stateFile {
				files[p] = l
			}
		}
	}
	if m.State == nil {
		return res, fmt.Errorf("%s: the merge gave no state", ref.local())
	}
	state, err := encodeJSON(m.State)
	if err != nil {
		return res, err
	}
	blob, err := s.r.writeBlob(state)
	if err != nil {
		return res, err
	}
	files[stateFile] = leaf{mode: filemode.Regular, hash: blob}
	tree, err := s.r.writeTreeOf(files)
	if err != nil {
		return res, err
	}
	res.state = m.State
	msg := mergeMessage(s.rem.Name, &m, prefer)
	if res.unrelated {
		side := "this clone's"
		if prefer == engine.SideTheirs {
			side = s.rem.Name + "'s"
		}
		msg = "sync: kept " + side + " task whole (the two versions shared no history)"
	}
	res.next, err = s.r.writeCommit(tree, []plumbing.Hash{ours, theirs}, msg)
	return res, err
}

// mergeMessage is the subject of a task's merge commit: which fields
// came from where, and how conflicts were resolved.
func mergeMessage(remote string, m *engine.StateMerge, prefer engine.Side) string {
	msg := "sync: merged " + remote + "'s version"
	var parts []string
	if len(m.FromTheirs) > 0 {
		parts = append(parts, "from "+remote+": "+strings.Join(m.FromTheirs, ", "))
	}
	if len(m.FromOurs) > 0 {
		parts = append(parts, "from here: "+strings.Join(m.FromOurs, ", "))
	}
	if len(m.Conflicts) > 0 {
		names := make([]string, len(m.Conflicts))
		for i, c := range m.Conflicts {
			names[i] = c.Field
		}
		side := "here"
		if prefer == engine.SideTheirs {
			side = remote
		}
		parts = append(parts, "conflicts taken from "+side+": "+strings.Join(names, ", "))
	}
	if len(parts) > 0 {
		msg += " (" + strings.Join(parts, "; ") + ")"
	}
	return msg
}

func blobName(l leaf, present bool) string {
	if !present {
		return "(removed)"
	}
	return "blob " + l.hash.String()[:12]
}

func unionPaths(ms ...map[string]leaf) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range ms {
		for p := range m {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return out
}

// leaf is one file of a merged tree.
// mergeEntries merges two trees file by file (engine.Merge3) against the
// common part of the merge bases' trees: the stash list (one file per
// stash) and the history (one file per record).
func (s *syncer) mergeEntries(ref hegelRef, bases []plumbing.Hash, ours, theirs plumbing.Hash) (mergeResult, error) {
	var res mergeResult
	flat := func(c plumbing.Hash) (map[string]leaf, error) {
		n, err := s.g.node(c)
		if err != nil {
			return nil, err
		}
		m := map[string]leaf{}
		return m, s.flatten(n.tree, "", m)
	}
	o, err := flat(ours)
	if err != nil {
		return res, err
	}
	t, err := flat(theirs)
	if err != nil {
		return res, err
	}
	var base map[string]leaf
	for i, b := range bases {
		m, err := flat(b)
		if err != nil {
			return res, err
		}
		if i == 0 {
			base = m
			continue
		}
		// Several best bases (criss-cross): keep what they agree on, so an
		// entry is taken as dropped only if every base had it.
		for k, v := range base {
			if m[k] != v {
				delete(base, k)
			}
		}
	}
	merged, n := engine.Merge3(base, o, t)
	if ref.kind == kindStashes {
		// Count stashes, not the files some of them parked.
		_, n = engine.Merge3(entriesOnly(base), entriesOnly(o), entriesOnly(t))
	}
	tree, err := s.r.writeTreeOf(merged)
	if err != nil {
		return res, err
	}
	msg := fmt.Sprintf("sync: merge %s from %s", ref.local(), s.rem.Name)
	if ref.kind == kindStashes {
		// "stash merge: ..." so the stash history reads it as a merge.
		msg = fmt.Sprintf("stash merge: %s from %s", mergeDetail(n), s.rem.Name)
	}
	res.next, err = s.r.writeCommit(tree, []plumbing.Hash{ours, theirs}, msg)
	res.counts = n
	return res, err
}

func mergeDetail(n engine.MergeCounts) string {
	return fmt.Sprintf("%d added, %d dropped", n.Added, n.Dropped)
}

// diffCounts counts what moving the local ref from ours to theirs adds and
// drops (a fast-forward or a new ref): stash entries and history records.
func (s *syncer) diffCounts(ref hegelRef, ours, theirs plumbing.Hash) (engine.MergeCounts, error) {
	var n engine.MergeCounts
	if ref.ns.merge != mergeByEntry {
		return n, nil
	}
	read := func(c plumbing.Hash) (map[string]leaf, error) {
		m := map[string]leaf{}
		if c.IsZero() {
			return m, nil
		}
		node, err := s.g.node(c)
		if err != nil {
			return nil, err
		}
		return m, s.flatten(node.tree, "", m)
	}
	o, err := read(ours)
	if err != nil {
		return n, err
	}
	t, err := read(theirs)
	if err != nil {
		return n, err
	}
	if ref.kind == kindStashes {
		o, t = entriesOnly(o), entriesOnly(t)
	}
	for k := range t {
		if _, ok := o[k]; !ok && k != versionFile {
			n.Added++
		}
	}
	for k := range o {
		if _, ok := t[k]; !ok && k != versionFile {
			n.Dropped++
		}
	}
	return n, nil
}

// entriesOnly keeps the stash entries of a flattened stash list (not the
// files/ some stashes parked).
func entriesOnly(m map[string]leaf) map[string]leaf {
	out := make(map[string]leaf, len(m))
	for k, v := range m {
		if strings.HasPrefix(k, stashEntriesDir+"/") {
			out[k] = v
		}
	}
	return out
}

// flatten maps the paths of the files below tree h to their blobs.
func (s *syncer) flatten(h plumbing.Hash, prefix string, out map[string]leaf) error {
	ents, err := readTree(s.g.s, h)
	if err != nil {
		return err
	}
	for i := range ents {
		e := &ents[i]
		p := prefix + e.name
		if e.isDir() {
			if err := s.flatten(e.hash, p+"/", out); err != nil {
				return err
			}
			continue
		}
		out[p] = leaf{mode: e.fm, hash: e.hash}
	}
	return nil
}

// held says what a fast-forward from ours to theirs does to a task a
// worktree of this clone held (nil when none did): whether it stays
// there, was taken over, or lost to a version the remote kept over it, and
// then which stash entry holds the version this clone had.
func (s *syncer) held(ref hegelRef, ours, theirs plumbing.Hash) *engine.TaskHeld {
	self, err := s.r.WorktreeID()
	if err != nil {
		return nil
	}
	load := func(h plumbing.Hash) *engine.State {
		d, err := s.r.readDocAt(ref.local(), h)
		if err != nil {
			return nil
		}
		t, err := decodeTask(ref.local(), d)
		if err != nil {
			return nil
		}
		return t.State
	}
	o := load(ours)
	// Held here by this clone's own record, not by what the state says.
	if o == nil || !o.Active() || !sameInstance(o.WorktreeID, self) || s.r.adoptedBy(ref.task()) != o.WorktreeID {
		return nil
	}
	t := load(theirs)
	if t == nil {
		return nil
	}
	h := &engine.TaskHeld{Worktree: o.Worktree, WorktreeID: o.WorktreeID, Node: t.CurrentNode, Status: t.Status}
	if t.WorktreeID == o.WorktreeID {
		return h
	}
	if t.WorktreeID == "" {
		// Taken over there and parked: held by nobody, here neither.
		h.Parked = true
		return h
	}
	h.Owner, h.OwnerPath, h.OwnerEmail = t.WorktreeID, t.Worktree, t.OwnerEmail
	// Where both sides had moved on and the other clone synced first, it
	// kept its state and saved ours as a stash entry, now merged here.
	h.YoursStash = s.stashHolding(ref.task(), o)
	return h
}

// stashHolding returns the stash entry that holds state o of task, or "".
func (s *syncer) stashHolding(task string, o *engine.State) string {
	list, err := s.r.Stashes().ListStashes()
	if err != nil {
		return ""
	}
	for _, e := range list {
		if e.Task != task || e.Damaged != "" {
			continue
		}
		full, err := s.r.Stashes().LoadStash(e.ID)
		if err != nil || full.State == nil {
			continue
		}
		if full.State.CurrentNode == o.CurrentNode && full.State.UpdatedAt.Equal(o.UpdatedAt) && full.State.WorkflowID == o.WorkflowID {
			return e.ID
		}
	}
	return ""
}

// sameInstance reports whether two worktree ids name worktrees of the
// same clone.
func sameInstance(a, b string) bool {
	ia, _, okA := strings.Cut(a, ":")
	ib, _, okB := strings.Cut(b, ":")
	return okA && okB && ia == ib
}

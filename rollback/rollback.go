package rollback

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/git-hegel/git-hegel/gitstore"
)

// A restore puts the working tree, the index, HEAD and the branches back
// as a checkpoint recorded them, in steps the caller drives:
//
//	Plan     works out what changes, and refuses what cannot be done;
//	         nothing is written (but the snapshot's objects, with Store)
//	Begin    stores a safety checkpoint of everything now and writes the
//	         journal: from here the restore can be finished or undone
//	Restore  moves HEAD and the branches, writes the files and the index
//	Settle   cuts the chain back and removes the journal
//
// The caller records what the restore means to it (a task's node) between
// Restore and Settle, and keeps what it needs for that in the journal
// (Journal.Record). Replay finishes or undoes a restore from its journal.

// PlanOptions tune Plan.
type PlanOptions struct {
	// Store writes the snapshot's objects now, so Begin can go straight
	// on (one scan of the working tree instead of two). Without it the
	// snapshot is only hashed, and Begin takes it again: the files may
	// change while a question is on screen.
	Store bool
	// Recurse also checks out, in each submodule, the commit the
	// checkpoint recorded (git's --recurse-submodules).
	Recurse bool
	// Only, when not nil, limits the restore to these paths (files and
	// index entries); every other path is left as it is, and HEAD and the
	// branches stay where they are. The chain is cut back as after any
	// restore (Settle), so restoring the safety checkpoint brings it back.
	// An undo of agent actions restores only what the actions touched.
	Only []string
}

// Plan is what a restore will change. Nothing has changed when it is
// shown.
type Plan struct {
	Target *Checkpoint
	// HeadRef is the branch HEAD is on after the restore ("" when it ends
	// detached); HeadFrom and HeadTo are the commits HEAD is at before and
	// after (zero: none, an unborn branch).
	HeadRef          string
	HeadFrom, HeadTo plumbing.Hash
	// CheckedOut is the branch HEAD is on now ("" when detached). When it
	// differs from HeadRef, the restore checks HeadRef out and leaves
	// CheckedOut where it is.
	CheckedOut string
	// Branches are the branches that move (the checkpoint's own branch,
	// and for a safety checkpoint those its restore had moved); no other
	// branch does.
	Branches []BranchMove
	Files    []FileChange
	// Kept are files absent from the checkpoint that the restore leaves
	// in place because the ignore rules ignore them (before or after).
	Kept []string
	// Settings are git-hegel's and the agents' settings files (the paths
	// a stash leaves alone) that git tracks neither now nor in the
	// checkpoint, or, for a checkpoint another clone took, all of them:
	// the restore leaves them as they are.
	Settings []string
	// Submodules whose checked-out commit differs from the checkpoint's,
	// or whose files have local changes.
	Submodules []SubmoduleChange
	// Recurse: the submodules' checkouts are restored too.
	Recurse bool
	// IndexPaths counts the index entries that change.
	IndexPaths int
	// Refused says why this restore would be refused now (Preview only;
	// Plan returns it as its error).
	Refused string

	chain  *Chain
	snap   *snapshot
	head   head // HEAD now
	to     head // HEAD after
	moves  []refMove
	wt, ix []change
	sparse map[string]bool   // new index entries outside the sparse checkout
	subs   []SubmoduleChange // the checkouts Recurse makes
	only   []string          // PlanOptions.Only
	j      *Journal          // from Begin
}

// Unchanged reports whether the restore changes nothing at all.
func (p *Plan) Unchanged() bool {
	return len(p.Files) == 0 && p.IndexPaths == 0 && len(p.Branches) == 0 && p.HeadFrom == p.HeadTo && p.HeadRef == p.CheckedOut &&
		len(p.Submodules) == 0
}

// Journal returns the journal Begin wrote (nil before).
func (p *Plan) Journal() *Journal { return p.j }

// ErrRunning matches a *JournalError whose restore another process is
// carrying out.
var ErrRunning = errors.New("a restore is running")

// JournalError reports a restore that did not finish: it blocks other
// restores and snapshots until it is finished or undone (Replay).
type JournalError struct {
	Journal *Journal
	// Running: the process that wrote it still runs.
	Running bool
}

func (e *JournalError) Error() string {
	if e.Running {
		return fmt.Sprintf("a restore is running in another process (pid %d); wait for it to end", e.Journal.PID)
	}
	return "a restore was interrupted (" + journalFile + "); finish it or undo it first"
}

// Is makes errors.Is match ErrInterrupted, and ErrRunning while its
// process runs.
func (e *JournalError) Is(target error) bool {
	return target == ErrInterrupted || (e.Running && target == ErrRunning)
}

// Interrupted returns the journal of a restore that did not finish, or
// nil. A journal whose process still runs is a restore in progress
// elsewhere (a *JournalError, ErrRunning). One that never got past
// "preparing" (killed before its safety checkpoint existed, so before any
// change) is cleared away, with the locks its process left; so is an
// index.lock a killed git-hegel left.
func (m *Manager) Interrupted() (*Journal, error) {
	m.w.removeStaleLock()
	return m.journal()
}

func (m *Manager) journal() (*Journal, error) {
	j, err := m.w.loadJournal()
	if err != nil || j == nil {
		return j, err
	}
	if j.PID != os.Getpid() && j.running() {
		return nil, &JournalError{Journal: j, Running: true}
	}
	if j.Step != stepPreparing {
		return j, nil
	}
	m.breakStaleLocks(j)
	m.w.removeStaleLock()
	return nil, m.w.journal.remove()
}

// refuseJournal is the error of an operation that must wait for an
// unfinished restore (nil when there is none).
func (m *Manager) refuseJournal() error {
	j, err := m.journal()
	if err != nil {
		return err
	}
	if j != nil {
		return &JournalError{Journal: j}
	}
	return m.refuseParking()
}

// MayBeInterrupted reports whether a restore could have been interrupted
// here, or left an index lock behind: a journal or an index lock exists.
// When neither does, Interrupted has nothing to say or clean, and a
// caller need not build a Manager to learn that (two stats instead of the
// ignore rules, a directory read and a lock).
func MayBeInterrupted(r *gitstore.Repo) bool {
	if r.GitDir == "" {
		return true
	}
	for _, p := range []string{filepath.Join(r.GitDir, journalFile), filepath.Join(r.GitDir, parkJournalFile), r.IndexFile + ".lock"} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	return false
}

// Plan checks a restore of target, a checkpoint of the chain, and works
// out what it would change, without changing anything. With o.Store it
// stores the snapshot's objects, so Begin can go straight on.
func (c *Chain) Plan(target *Checkpoint, o PlanOptions) (*Plan, error) {
	m := c.m
	if err := m.refuseJournal(); err != nil {
		return nil, err
	}
	if h := target.HeadCommit(); !h.IsZero() {
		if _, err := m.commit(h); err != nil {
			return nil, fmt.Errorf("the checkpoint is incomplete: its HEAD commit %s is missing", h)
		}
	}
	if op := m.w.operationInProgress(); op != "" {
		doing := "rolling back"
		if o.Only != nil {
			doing = "undoing"
		}
		return nil, fmt.Errorf("%s is in progress; finish or abort it before %s", op, doing)
	}
	if o.Only != nil && len(o.Only) == 0 {
		return nil, ErrNothingToRestore
	}
	return c.plan(target, o.Store, o.Recurse, o.Only)
}

// plan snapshots the working tree and diffs it with the checkpoint.
func (c *Chain) plan(cp *Checkpoint, store, recurse bool, only []string) (*Plan, error) {
	m := c.m
	p, err := m.planFilesOnly(cp, store, true, only)
	if err != nil {
		return nil, err
	}
	if recurse {
		if p.subs, err = m.w.submoduleCheckouts(p.Submodules); err != nil {
			return nil, err
		}
		p.Recurse = true
	}
	words := rollbackWay
	if only != nil {
		words = undoWay
	}
	if err := m.w.conflicts(p.wt, words); err != nil {
		return nil, err
	}
	if err := m.w.checkWritable(p.wt, words); err != nil {
		return nil, err
	}
	p.chain = c
	return p, nil
}

// planFiles works out what restoring cp changes: HEAD and branches, files,
// index. With strict, a branch problem (a branch the restore would have
// to delete, or that another worktree has checked out) is an error;
// without, it is reported in Plan.Refused.
func (m *Manager) planFiles(cp *Checkpoint, store, strict bool) (*Plan, error) {
	return m.planFilesOnly(cp, store, strict, nil)
}

// planFilesOnly is planFiles limited to the paths only names (nil: all);
// with a limit, HEAD and the branches stay.
func (m *Manager) planFilesOnly(cp *Checkpoint, store, strict bool, only []string) (*Plan, error) {
	m.w.trace("prepare")
	idx, err := m.w.readIndex()
	if err != nil {
		return nil, err
	}
	h, err := m.w.readHead()
	if err != nil {
		return nil, err
	}
	refused := ""
	to, moves, err := m.w.planRefs(h, cp)
	if only != nil {
		to, moves, err = h, nil, nil
	}
	if err != nil {
		if strict || !errors.Is(err, ErrBranch) {
			return nil, err
		}
		refused, to, moves = err.Error(), h, nil
	}
	m.w.trace("read index")
	snap, err := m.snapshotter().take(idx, store)
	if err != nil {
		return nil, err
	}
	m.w.attrSeen = snap.attributes
	wt, ix, err := m.w.diffs(snap.worktree, snap.indexTree, orEmpty(cp.WorkTree), orEmpty(cp.IndexTree))
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s cannot be restored: %w", cp.ID, err)
	}
	if only != nil {
		wt, ix = onlyPaths(wt, only), onlyPaths(ix, only)
	}
	wt = skipWorktree(wt, idx)
	var settings []string
	switch {
	case only != nil:
	case m.Local(cp):
		wt, settings = keepSettings(wt, ix, idx)
	default:
		// Another clone's checkpoint (rolled back to with --force) writes
		// no settings at all, tracked or not, as a stash from elsewhere
		// writes none: its maker would choose which hooks run here.
		wt, ix, settings = keepAllSettings(wt, ix)
	}
	wt, subs := m.w.splitSubmodules(wt, idx)
	wt, kept, err := m.w.keepIgnored(wt, orEmpty(cp.WorkTree))
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s cannot be restored: %w", cp.ID, err)
	}
	sparse := m.w.sparseSkips(ix)
	wt = dropPaths(wt, sparse)
	m.w.trace(fmt.Sprintf("diff (%d files, %d index entries)", len(wt), len(ix)))
	p := &Plan{
		Target:  cp,
		HeadRef: to.Ref.Short(), HeadFrom: h.Commit, HeadTo: to.Commit,
		CheckedOut: h.Ref.Short(),
		Branches:   branchMoves(h, moves, cp),
		Files:      summarize(wt), Kept: kept, Settings: settings, IndexPaths: len(ix), Submodules: subs,
		Refused: refused,
		snap:    snap, head: h, to: to, moves: moves, wt: wt, ix: ix, sparse: sparse, only: only,
	}
	if to.Ref == "" {
		p.HeadRef = ""
	}
	for i := range p.Branches {
		b := &p.Branches[i]
		if !b.To.IsZero() {
			b.Leaving, b.LeavingCount, b.LeavingMore = m.leaving(b.From, b.To)
		}
	}
	return p, nil
}

// Preview works out what restoring cp would change in the files, the
// index, HEAD and the branches right now. It changes nothing and writes
// no object.
func (m *Manager) Preview(cp *Checkpoint) (*Plan, error) {
	return m.planFiles(cp, false, false)
}

func orEmpty(h plumbing.Hash) plumbing.Hash {
	if h == emptyTree {
		return plumbing.ZeroHash
	}
	return h
}

// Begin takes the snapshot again if it is not stored or the index changed
// since it was taken, stores the safety checkpoint (safety describes it;
// its kind is KindSafety) and writes the journal, which keeps record for
// the caller. From its return, the restore can be finished or undone
// whatever happens; nothing in the working tree, the index or the refs
// has changed yet. git's index.lock is held from here to the index write,
// so no git command changes the index under the restore.
func (p *Plan) Begin(safety Template, record Meta) (*Checkpoint, error) {
	c, m := p.chain, p.chain.m
	if err := m.w.lockIndex(); err != nil {
		return nil, err
	}
	started := false
	defer func() {
		if !started {
			m.w.stopPrefetch()
			m.w.unlockIndex()
		}
	}()
	// A first journal before the safety checkpoint: if the process dies
	// now, the next command knows the locks it held were a restore's.
	prep := &Journal{Version: journalVersion, Chain: c.ref, Record: record,
		PID: os.Getpid(), Host: hostName(), BootID: bootID(), Step: stepPreparing}
	if err := m.w.saveJournal(prep); err != nil {
		return nil, fmt.Errorf("%w; nothing was changed", err)
	}
	defer func() {
		if !started {
			m.w.journal.remove()
		}
	}()
	if !p.snap.stored || m.w.indexChanged(p.snap.idx) {
		// Asked first, or the index changed since: take the snapshot
		// again, so the safety checkpoint holds things as they are now.
		np, err := c.plan(p.Target, true, p.Recurse, p.only)
		if err != nil {
			return nil, err
		}
		*p = *np
	}
	h := p.head
	m.w.prefetchBlobs(p.wt)
	safety.Kind = KindSafety
	scp := m.newCheckpoint(safety, h, p.snap)
	scp.Moved = movedAway(h, p.moves)
	// Once the restore is done the safety checkpoint follows its target
	// in the chain, and what changed between them is the plan itself.
	scp.changed = make([]string, 0, len(p.wt))
	for _, ch := range p.wt {
		scp.changed = append(scp.changed, ch.path)
	}
	if _, _, err := c.append(scp, false, nil, nil); err != nil {
		return nil, fmt.Errorf("cannot save the safety checkpoint; nothing was changed: %w", err)
	}
	j := &Journal{
		Version: journalVersion, Chain: c.ref, Record: record,
		TargetID: p.Target.ID, TargetCommit: p.Target.Commit.String(),
		SafetyID: scp.ID, SafetyCommit: scp.Commit.String(),
		HeadRef: string(h.Ref), HeadFrom: hexOf(h.Commit), HeadTo: hexOf(p.to.Commit), HeadToRef: string(p.to.Ref),
		Moves: journalMoves(p.moves),
		PID:   os.Getpid(), Host: hostName(), BootID: bootID(), Step: stepStarted,
		Recurse: p.Recurse, Only: p.only,
	}
	if err := m.w.saveJournal(j); err != nil {
		return nil, fmt.Errorf("%w; nothing was changed", err)
	}
	started = true
	p.j = j
	m.w.trace("safety checkpoint and journal")
	return scp, nil
}

// Restore moves HEAD and the branches and writes the files and the index,
// as Begin journaled. On an error the journal stays: Replay backwards
// puts things back.
func (p *Plan) Restore(reflogMsg string) error {
	m := p.chain.m
	if p.j == nil {
		return errors.New("the restore has not begun")
	}
	defer m.w.stopPrefetch()
	r := restore{cur: p.head, to: p.to, moves: p.moves, wt: p.wt, idx: p.snap.idx, ix: p.ix, target: p.Target, sparse: p.sparse,
		subs: p.subs, msg: reflogMsg, only: p.only}
	return m.restoreFiles(r)
}

// restore is one pass of a restore over the repository: HEAD from cur to
// to, the branch moves, the working-tree changes wt, and the index: idx
// (the one on disk) changed by ix, with target's index flags.
type restore struct {
	cur, to head
	moves   []refMove
	wt      []change
	idx     *gitIndex
	ix      []change
	target  *Checkpoint
	sparse  map[string]bool
	subs    []SubmoduleChange // submodule checkouts (Recurse)
	msg     string
	either  bool // replaying: refs may be on either side already
	// only limits the restore to these paths (PlanOptions.Only; nil:
	// all): the index flags of other entries stay as they are.
	only []string
}

// restoreFiles moves the branches and HEAD, writes the files and the index.
func (m *Manager) restoreFiles(r restore) error {
	if err := m.w.applyRefs(r.cur, r.to, r.moves, r.msg, r.either); err != nil {
		return err
	}
	m.w.trace("move HEAD")
	m.w.beginPass(r)
	defer func() { m.w.pass = nil }()
	// The untracked cache is carried over (untracked_carry.go), except
	// by a replay: the process that died wrote some of the files. It is
	// parsed and checked while the files are written.
	var carried chan *untrackedCarry
	if !r.either && r.idx.untracked != nil {
		carried = make(chan *untrackedCarry, 1)
		fold := m.w.folds()
		go func() { carried <- m.w.untrackedCarryFor(r.idx, fold) }()
	}
	wrote, err := m.w.applyWorktree(r.wt)
	if err != nil {
		return err
	}
	m.w.trace(fmt.Sprintf("write %d files", len(wrote)))
	var carry *untrackedCarry
	if carried != nil {
		carry = <-carried
	}
	idx := m.w.newIndex(r.idx, r.ix, wrote, r.target, r.sparse, r.only)
	if carry != nil {
		idx.untracked = carry.apply(idx, r.wt, r.subs)
	}
	err = m.w.writeIndex(idx)
	m.w.trace("write index")
	if err != nil {
		return err
	}
	return m.w.checkoutSubmodules(r.subs)
}

// Settle ends the restore j journaled: when restored, the chain becomes
// what it was when the target was the present, followed by the safety
// checkpoint (cutChain; a failure there is only warned about); then the
// journal is removed. A restore that was undone leaves the chain as it is
// (its safety checkpoint stays, and restoring it changes nothing).
func (c *Chain) Settle(j *Journal, restored bool) error {
	m := c.m
	defer m.w.unlockIndex()
	if restored {
		if err := c.cutChain(j.TargetID, j.SafetyID); err != nil {
			m.warn("could not drop the checkpoints after " + j.TargetID + ": " + err.Error())
		}
		m.w.trace("checkpoints")
	}
	if err := m.w.journal.remove(); err != nil {
		return fmt.Errorf("cannot remove the restore's journal: %w", err)
	}
	return nil
}

// cutChain makes the checkpoint list what it was when the target was the
// present, followed by the restore's safety checkpoint: the checkpoints
// after the target are dropped (but those made by hand, which stay until
// dropped), or, when the target is the safety checkpoint of an earlier
// restore (an undo), the list as it was before that restore comes back.
// What is dropped stays reachable from the new safety checkpoint (its
// ChainBefore), so restoring that brings it back in turn. The bounds apply
// to the result. Running it again changes nothing.
func (c *Chain) cutChain(targetID, safetyID string) error {
	m := c.m
	for attempt := 0; attempt < 20; attempt++ {
		chain, tip, err := c.read()
		if err != nil {
			return err
		}
		var target, safety *Checkpoint
		pos := -1
		for i, cp := range chain {
			switch cp.ID {
			case targetID:
				target = cp
			case safetyID:
				safety, pos = cp, i
			}
		}
		if safety == nil {
			return fmt.Errorf("safety checkpoint %s is not in the list", safetyID)
		}
		var next []*Checkpoint
		switch {
		case target == nil:
			// Evicted meanwhile: keep what there is.
			next = without(chain, safetyID)
		case target.Kind == KindSafety && target.ChainBefore != "":
			before, err := c.at(plumbing.NewHash(target.ChainBefore))
			if err != nil {
				return fmt.Errorf("cannot read the checkpoints before the restore being undone: %w", err)
			}
			next = without(before, safetyID)
		default:
			for _, cp := range chain {
				if cp.ID == safetyID {
					continue
				}
				if target.Kind == KindSafety && cp.ID == targetID {
					break // undoing: the list as it was before that restore
				}
				next = append(next, cp)
				if cp.ID == targetID {
					break
				}
			}
		}
		kept := map[string]bool{}
		for _, cp := range next {
			kept[cp.ID] = true
		}
		// Checkpoints made by hand stay until dropped: a restore does not
		// take them out of the list.
		var manual []*Checkpoint
		for _, cp := range chain {
			if cp.Kind == KindManual && !kept[cp.ID] {
				manual = append(manual, cp)
				kept[cp.ID] = true
			}
		}
		if len(manual) > 0 {
			next = append(next, manual...)
			sort.SliceStable(next, func(i, j int) bool { return next[i].CreatedAt.Before(next[j].CreatedAt) })
		}
		dropped := false
		for _, cp := range chain {
			if !kept[cp.ID] && cp.ID != safetyID {
				dropped = true
			}
		}
		if dropped && safety.ChainBefore == "" && pos > 0 {
			// The chain as it was before this restore: what preceded the
			// safety checkpoint when it was appended.
			safety.ChainBefore = chain[pos-1].Commit.String()
			if err := m.writeRoot(safety); err != nil {
				return err
			}
			safety.Commit = plumbing.ZeroHash
		}
		next = m.bound(append(next, safety))
		err = c.write(tip, next)
		if !errors.Is(err, gitstore.ErrConflict) {
			return err
		}
	}
	return errors.New("the checkpoints kept changing")
}

// ErrEditedSince reports a file changed after a restore was interrupted,
// which finishing or undoing it would overwrite.
var ErrEditedSince = errors.New("changed since the restore was interrupted")

// Replay finishes (forward) or undoes the restore j journaled, over
// whatever part of it was done: the index lock a killed process left is
// taken over, and the working tree, index, HEAD and branches are made
// what the target (forward) or the safety checkpoint holds. A path that
// holds neither side by now (edited after the crash) stops it before
// anything changes. The journal stays until Settle.
func (m *Manager) Replay(j *Journal, forward bool, reflogMsg string) error {
	if err := m.recoverLock(j); err != nil {
		return err
	}
	defer m.w.unlockIndex()
	defer m.w.stopPrefetch()
	target, err := m.checkpointAt(j.TargetCommit)
	if err != nil {
		return err
	}
	safety, err := m.checkpointAt(j.SafetyCommit)
	if err != nil {
		return err
	}
	if forward {
		return m.replayAs(safety, target, j, false, reflogMsg, "the rollback")
	}
	return m.replayAs(target, safety, j, true, reflogMsg, "the rollback")
}

// replayAs makes the working tree, index, HEAD and branches match to,
// given that they hold some mix of from and to (what an interrupted
// restore leaves); back says the journal is replayed backwards (an undo).
// Every path that differs between the two is rewritten, unless it holds
// something else by now (edited after the crash): then nothing is changed
// and the error names it (what names the operation that was cut short),
// as a fresh restore refuses to overwrite what no checkpoint holds.
func (m *Manager) replayAs(from, to *Checkpoint, j *Journal, back bool, msg, what string) error {
	wt, _, err := m.w.diffs(orEmpty(from.WorkTree), orEmpty(from.IndexTree), orEmpty(to.WorkTree), orEmpty(to.IndexTree))
	if err != nil {
		return err
	}
	if j.Only != nil {
		wt = onlyPaths(wt, j.Only)
	}
	idx, err := m.w.readIndex()
	if err != nil {
		return err
	}
	cur, err := m.w.indexTree(idx)
	if err != nil {
		return err
	}
	_, ix, err := m.w.diffs(plumbing.ZeroHash, cur, plumbing.ZeroHash, orEmpty(to.IndexTree))
	if err != nil {
		return err
	}
	if j.Only != nil {
		ix = onlyPaths(ix, j.Only)
	}
	wt = skipWorktree(wt, idx)
	wt, subs := m.w.splitSubmodules(wt, idx)
	var checkouts []SubmoduleChange
	if j.Recurse {
		for _, s := range subs {
			if !s.To.IsZero() && s.From != s.To && submoduleGitDir(filepath.Join(m.r.WorkTree, filepath.FromSlash(s.Path))) != "" {
				checkouts = append(checkouts, s)
			}
		}
	}
	if wt, err = m.stillToDo(wt, idx, orEmpty(to.WorkTree), what); err != nil {
		return err
	}
	if wt, _, err = m.w.keepIgnored(wt, orEmpty(to.WorkTree)); err != nil {
		return err
	}
	sparse := m.w.sparseSkips(ix)
	wt = dropPaths(wt, sparse)
	words := rollbackWay
	if j.Only != nil {
		words = undoWay
	}
	if err := m.w.conflicts(wt, words); err != nil {
		return err
	}
	if err := m.w.checkWritable(wt, words); err != nil {
		return err
	}
	before := head{Ref: plumbing.ReferenceName(j.HeadRef), Commit: hashOf(j.HeadFrom)}
	after := head{Ref: plumbing.ReferenceName(j.HeadToRef), Commit: hashOf(j.HeadTo)}
	moves := movesOf(j.Moves)
	if back {
		before, after, moves = after, before, reverseMoves(moves)
	}
	return m.restoreFiles(restore{cur: before, to: after, moves: moves, wt: wt, idx: idx, ix: ix, target: to, sparse: sparse,
		subs: checkouts, msg: msg, either: true, only: j.Only})
}

// stillToDo narrows the changes of a replay to what the working tree
// still needs: a path already as the target has it is left alone, one as
// the other side has it is rewritten, and one that holds anything else was
// edited after the restore stopped: an error, before anything changes.
func (m *Manager) stillToDo(wt []change, idx *gitIndex, target plumbing.Hash, what string) ([]change, error) {
	if len(wt) == 0 {
		return wt, nil
	}
	snap, err := m.snapshotter().take(idx, false)
	if err != nil {
		return nil, err
	}
	m.w.attrSeen = snap.attributes
	r := &treeReader{o: m.w.obj}
	diff, err := diffTrees(r, r, snap.worktree, target)
	if err != nil {
		return nil, err
	}
	now := make(map[string]leaf, len(diff))
	for _, c := range diff {
		now[c.path] = c.from
	}
	var out []change
	var edited []string
	for _, c := range wt {
		got, differs := now[c.path]
		switch {
		case !differs:
			// as the target has it (or an ignored file the snapshot does
			// not see, which the restore leaves alone either way)
		case got.mode == c.from.mode && got.hash == c.from.hash:
			out = append(out, c)
		case got.mode == 0:
			// gone (moved away): writing it loses nothing
			out = append(out, change{path: c.path, to: c.to})
		case m.w.partOf(c.path, got, c.from, c.to):
			// a file the killed process was writing: a checkpoint holds
			// all of it
			out = append(out, change{path: c.path, from: got, to: c.to})
		default:
			edited = append(edited, c.path)
		}
	}
	if len(edited) > 0 {
		var fromSide map[string]bool
		fromSide, edited = m.w.sameAfterConversion(edited, wt)
		for _, c := range wt {
			if fromSide[c.path] {
				out = append(out, c)
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	}
	if len(edited) > 0 {
		return nil, userErr(ErrEditedSince, "%s changed after %s was interrupted, and going on would overwrite it. Move it away (or copy it) and run the command again; nothing was changed",
			listSome(edited, 3, m.quote), what)
	}
	return out, nil
}

// partOf reports whether the regular file at p (now the leaf got) holds the
// beginning of one side's content, as a file that a killed restore was
// writing does: overwriting it loses nothing, the checkpoint of that side
// holds it all.
func (w *workspace) partOf(p string, got leaf, sides ...leaf) bool {
	if got.mode != filemode.Regular && got.mode != filemode.Executable {
		return false
	}
	data, err := w.fs.readFile(p)
	if err != nil {
		return false
	}
	for _, l := range sides {
		if l.mode != filemode.Regular && l.mode != filemode.Executable {
			continue
		}
		if b, err := w.obj.read(plumbing.BlobObject, l.hash); err == nil && len(data) < len(b) && bytes.HasPrefix(b, data) {
			return true
		}
	}
	return false
}

// Checkpoints returns the two checkpoints a journal names: the target and
// the safety checkpoint.
func (m *Manager) Checkpoints(j *Journal) (target, safety *Checkpoint, err error) {
	if target, err = m.checkpointAt(j.TargetCommit); err != nil {
		return nil, nil, err
	}
	safety, err = m.checkpointAt(j.SafetyCommit)
	return target, safety, err
}

// checkpointAt reads the checkpoint stored in commit hex.
func (m *Manager) checkpointAt(hex string) (*Checkpoint, error) {
	if !plumbing.IsHash(hex) {
		return nil, fmt.Errorf("the restore's journal names no checkpoint commit")
	}
	cp, _, err := m.readCheckpoint(plumbing.NewHash(hex))
	return cp, err
}

// recoverLock takes the index lock for a recovery. A lock the interrupted
// process left is taken over; see breakStaleLocks for the others.
func (m *Manager) recoverLock(j *Journal) error {
	if j.PID != os.Getpid() && j.running() {
		return &JournalError{Journal: j, Running: true}
	}
	m.breakStaleLocks(j)
	return m.w.lockIndex()
}

// breakStaleLocks removes the lock files a killed restore may have left
// on what it updates: its chain's ref, the branch, HEAD, packed-refs and
// the index. Only locks whose owner marker (gitstore/refs, lockfile.go) shows
// that git-hegel created them and that their owner no longer runs are
// removed, each with a warning; a lock of unknown origin (git's, held
// right now by a commit or a gc) is never touched, and the command that
// needs it reports it. The caller breaks the locks of what it records
// (BreakDeadLock).
func (m *Manager) breakStaleLocks(j *Journal) {
	if m.w.memory {
		return
	}
	paths := []string{
		filepath.Join(m.r.CommonDir, "packed-refs.lock"),
		filepath.Join(m.r.GitDir, "HEAD.lock"),
		m.w.lockPath(),
	}
	if j.Chain != "" {
		paths = append(paths, filepath.Join(m.r.CommonDir, filepath.FromSlash(j.Chain))+".lock")
	}
	for _, ref := range []string{j.HeadRef, j.HeadToRef} {
		if ref != "" {
			paths = append(paths, filepath.Join(m.r.CommonDir, filepath.FromSlash(ref))+".lock")
		}
	}
	for _, mv := range j.Moves {
		paths = append(paths, filepath.Join(m.r.CommonDir, filepath.FromSlash(mv.Ref))+".lock")
	}
	for _, p := range paths {
		m.r.BreakDeadLock(p)
	}
}

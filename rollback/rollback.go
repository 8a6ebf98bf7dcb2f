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

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore"
)

// Request is what `git hegel rollback` asks for.
type Request struct {
	// Node to go back to (the start of the current node when Node, To and
	// Undo are all empty).
	Node string
	// To selects a checkpoint by id instead.
	To string
	// Undo restores the safety checkpoint of the last rollback.
	Undo   bool
	Reason string
	Force  bool // past the loop guard
	// Yes: no question will be asked, so the snapshot can be stored at
	// once and reused (one scan of the working tree instead of two).
	Yes    bool
	DryRun bool
	// RecurseSubmodules also checks out, in each submodule, the commit
	// the checkpoint recorded (git's --recurse-submodules).
	RecurseSubmodules bool
}

// Plan is what a rollback will change. Nothing has changed when it is
// shown.
type Plan struct {
	Task   string
	From   string // the node the task is at
	Target *Checkpoint
	Undo   bool
	// HeadRef is the branch HEAD is on after the rollback ("" when it ends
	// detached); HeadFrom and HeadTo are the commits HEAD is at before and
	// after (zero: none, an unborn branch).
	HeadRef          string
	HeadFrom, HeadTo plumbing.Hash
	// CheckedOut is the branch HEAD is on now ("" when detached). When it
	// differs from HeadRef, the rollback checks HeadRef out and leaves
	// CheckedOut where it is.
	CheckedOut string
	// Branches are the branches that move (the checkpoint's own branch,
	// and for an undo those the rollback had moved); no other branch does.
	Branches []BranchMove
	Files    []FileChange
	// Kept are files absent from the checkpoint that the rollback leaves
	// in place because the ignore rules ignore them (before or after).
	Kept []string
	// Submodules whose checked-out commit differs from the checkpoint's,
	// or whose files have local changes.
	Submodules []SubmoduleChange
	// Recurse: the submodules' checkouts are restored too.
	Recurse bool
	// IndexPaths counts the index entries that change.
	IndexPaths int
	// Refused says why this rollback would be refused now (Preview only;
	// Prepare returns it as its error).
	Refused string

	snap   *snapshot
	head   head // HEAD now
	to     head // HEAD after
	moves  []refMove
	wt, ix []change
	sparse map[string]bool   // new index entries outside the sparse checkout
	subs   []SubmoduleChange // the checkouts --recurse-submodules makes
	req    *engine.RollbackRequest
	call   engine.TaskOptions // the command's --task and --force
}

// Unchanged reports whether the rollback changes nothing at all.
func (p *Plan) Unchanged() bool {
	return len(p.Files) == 0 && p.IndexPaths == 0 && len(p.Branches) == 0 && p.HeadFrom == p.HeadTo && p.HeadRef == p.CheckedOut &&
		len(p.Submodules) == 0
}

// Result is what a rollback did.
type Result struct {
	Plan      *Plan
	Safety    *Checkpoint
	View      *engine.View
	Cancelled bool
	// Finished is set when an interrupted rollback was completed, Undone
	// when it was undone.
	Finished, Undone bool
}

// Interrupted returns the journal of a rollback that did not finish, or
// nil.
func (m *Manager) Interrupted() (*Journal, error) { return m.journal() }

// ErrRunning reports a rollback that another process is carrying out.
var ErrRunning = errors.New("a rollback is running")

// journal loads the journal of an unfinished rollback. A journal whose
// process still runs is a rollback in progress elsewhere (ErrRunning).
// One that never got past "preparing" (killed before its safety
// checkpoint existed, so before any change) is cleared away, with the
// locks its process left.
func (m *Manager) journal() (*Journal, error) {
	j, err := m.w.loadJournal()
	if err != nil || j == nil {
		return j, err
	}
	if j.PID != os.Getpid() && j.running() {
		return nil, userErr(ErrRunning, "%s", runningMessage(j))
	}
	if j.Step != stepPreparing {
		return j, nil
	}
	m.breakStaleLocks(j)
	m.w.removeStaleLock()
	return nil, m.w.journal.remove()
}

// MayBeInterrupted reports whether a rollback could have been
// interrupted here, or left an index lock behind: a journal or an index
// lock exists. When neither does, InterruptedNotice has nothing to say or
// clean, and status need not build a Manager to learn that (two stats
// instead of the ignore rules, a directory read and a lock).
func MayBeInterrupted(r *gitstore.Repo) bool {
	if r.GitDir == "" {
		return true
	}
	for _, p := range []string{filepath.Join(r.GitDir, journalFile), r.IndexFile + ".lock"} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	return false
}

// InterruptedNotice is one line for `git hegel status`, or "".
func (m *Manager) InterruptedNotice() string {
	m.w.removeStaleLock()
	j, err := m.journal()
	if err != nil {
		return "warning: " + err.Error()
	}
	if j == nil {
		return ""
	}
	return "warning: " + interruptedMessage(j)
}

// target finds the checkpoint a request names.
func (m *Manager) target(t *engine.Task, req Request) (*Checkpoint, error) {
	task := t.State.Task
	chain, _, err := m.chain(task)
	if err != nil {
		return nil, err
	}
	switch {
	case req.Undo:
		for i := len(chain) - 1; i >= 0; i-- {
			if chain[i].Kind == KindSafety {
				return chain[i], nil
			}
		}
		return nil, userErr(ErrNoCheckpoint, "Task %s has no rollback to undo", task)
	case req.To != "":
		cp, err := findID(chain, req.To)
		if err != nil {
			return nil, err
		}
		if cp == nil {
			return nil, userErr(ErrNoCheckpoint, "Task %s has no checkpoint '%s'. Run 'git hegel checkpoint list' to see them", task, req.To)
		}
		return cp, nil
	}
	node := req.Node
	if node == "" {
		node = t.State.CurrentNode
	}
	if cp := newestAt(chain, node, true); cp != nil {
		return cp, nil
	}
	hint := "Run 'git hegel checkpoint list' to see the checkpoints"
	if cp := newestAt(chain, node, false); cp != nil {
		hint = fmt.Sprintf("To use the one taken later at that node, run 'git hegel rollback --to %s'", cp.ID)
	} else if !m.Auto {
		hint += " (hegel.checkpoints is off, so none are taken as nodes are entered)"
	}
	return nil, userErr(ErrNoCheckpoint, "Task %s has no checkpoint from the start of '%s'. %s", task, node, hint)
}

// Prepare checks a rollback and works out what it would change, without
// changing anything. With req.Yes (and not DryRun) it stores the snapshot's
// objects, so Execute can go straight on; otherwise the snapshot is only
// hashed, and Execute takes it again (the files may change while the
// question is on screen). o is the command's --task and --force.
func (m *Manager) Prepare(e *engine.Engine, o engine.TaskOptions, req Request) (*Plan, error) {
	if j, err := m.journal(); err != nil {
		return nil, err
	} else if j != nil {
		return nil, userErr(ErrInterrupted, "%s", interruptedMessage(j))
	}
	t, err := e.Current(o.Task)
	if err != nil {
		return nil, err
	}
	cp, err := m.target(t, req)
	if err != nil {
		if req.Node != "" && errors.Is(err, ErrNoCheckpoint) {
			// A node the workflow does not have is named as such.
			if _, nerr := e.CheckRollback(o, &engine.RollbackRequest{Task: t.State.Task, Node: req.Node, History: []string{req.Node}, Force: true}); nerr != nil {
				return nil, nerr // a bad name (engine.ErrBadName) when the workflow has no such node
			}
		}
		return nil, err
	}
	m.w.trace("find the checkpoint")
	undo := req.Undo || cp.Kind == KindSafety
	reason := req.Reason
	if reason == "" && undo {
		reason = "undo"
	}
	er := &engine.RollbackRequest{Task: t.State.Task, Node: cp.Node, History: cp.History, Undo: undo,
		Reason: reason, Force: req.Force, At: m.now().UTC()}
	if _, err := e.CheckRollback(o, er); err != nil {
		if req.Node == "" && errors.Is(err, engine.ErrBadName) {
			// The node came from the checkpoint, not the command line.
			return nil, errors.New(err.Error())
		}
		return nil, err
	}
	m.w.trace("check the workflow")
	if h := cp.HeadCommit(); !h.IsZero() {
		if _, err := m.commit(h); err != nil {
			return nil, fmt.Errorf("the checkpoint is incomplete: its HEAD commit %s is missing", h)
		}
	}
	if op := m.w.operationInProgress(); op != "" {
		return nil, fmt.Errorf("%s is in progress; finish or abort it before rolling back", op)
	}
	p, err := m.plan(t.State, cp, er, undo, req.Yes && !req.DryRun, req.RecurseSubmodules)
	if err != nil {
		return nil, err
	}
	p.call = o
	return p, nil
}

// plan snapshots the working tree and diffs it with the checkpoint.
func (m *Manager) plan(st *engine.State, cp *Checkpoint, er *engine.RollbackRequest, undo, store, recurse bool) (*Plan, error) {
	p, err := m.planFiles(cp, store, true)
	if err != nil {
		return nil, err
	}
	if recurse {
		if p.subs, err = m.w.submoduleCheckouts(p.Submodules); err != nil {
			return nil, err
		}
		p.Recurse = true
	}
	if err := m.w.conflicts(p.wt); err != nil {
		return nil, err
	}
	if err := m.w.checkWritable(p.wt); err != nil {
		return nil, err
	}
	p.Task, p.From, p.Undo, p.req = st.Task, st.CurrentNode, undo, er
	return p, nil
}

// planFiles works out what restoring cp changes: HEAD and branches, files,
// index. With strict, a branch problem (a branch the rollback would have
// to delete, or that another worktree has checked out) is an error;
// without, it is reported in Plan.Refused.
func (m *Manager) planFiles(cp *Checkpoint, store, strict bool) (*Plan, error) {
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
	wt = skipWorktree(wt, idx)
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
		Files:      summarize(wt), Kept: kept, IndexPaths: len(ix), Submodules: subs,
		Refused: refused,
		snap:    snap, head: h, to: to, moves: moves, wt: wt, ix: ix, sparse: sparse,
	}
	if to.Ref == "" {
		p.HeadRef = ""
	}
	return p, nil
}

// Preview works out what rolling back to cp would change in the files,
// the index, HEAD and the branches right now. It changes nothing and
// writes no object.
func (m *Manager) Preview(cp *Checkpoint) (*Plan, error) {
	return m.planFiles(cp, false, false)
}

func orEmpty(h plumbing.Hash) plumbing.Hash {
	if h == emptyTree {
		return plumbing.ZeroHash
	}
	return h
}

// Execute carries out a prepared rollback: safety checkpoint, journal,
// HEAD, files, index, workflow state, checkpoint chain. If a step fails
// before the state changes, everything is put back as it was.
func (m *Manager) Execute(e *engine.Engine, p *Plan) (*Result, error) {
	// From here to the index write, git's index.lock is held: no git
	// command changes the index under the rollback.
	if err := m.w.lockIndex(); err != nil {
		return nil, err
	}
	defer m.w.unlockIndex()
	defer m.w.stopPrefetch()
	j, safety, err := m.begin(e, p)
	if err != nil {
		return nil, err
	}
	res := &Result{Plan: p, Safety: safety}
	r := restore{cur: p.head, to: p.to, moves: p.moves, wt: p.wt, idx: p.snap.idx, ix: p.ix, target: p.Target, sparse: p.sparse,
		subs: p.subs, msg: m.reflogMessage(p.Target, p.req)}
	if err := m.restoreFiles(r); err != nil {
		if uerr := m.undoFromJournal(e, p.call, j); uerr != nil {
			return nil, fmt.Errorf("rollback failed: %v; putting things back failed too: %v. %s", err, uerr, interruptedMessage(j))
		}
		return nil, fmt.Errorf("rollback failed, nothing was changed: %w", err)
	}
	view, err := m.finishState(e, p.call, j)
	m.w.trace("workflow state and checkpoints")
	if err != nil {
		return nil, fmt.Errorf("the files were rolled back but the workflow state was not: %v. %s", err, interruptedMessage(j))
	}
	res.View = view
	return res, nil
}

// begin takes the snapshot again if it is not stored or the index changed
// since it was taken, stores the safety checkpoint and writes the journal:
// from its return, the rollback can be finished or undone whatever
// happens. Nothing in the working tree, the index or the refs has changed
// yet.
func (m *Manager) begin(e *engine.Engine, p *Plan) (*Journal, *Checkpoint, error) {
	// A first journal before the safety checkpoint: if the process dies
	// now, the next command knows the locks it held were a rollback's.
	prep := &Journal{Version: journalVersion, Task: p.Task, Node: p.req.Node, From: p.From, At: p.req.At,
		PID: os.Getpid(), Host: hostName(), BootID: bootID(), Step: stepPreparing}
	if err := m.w.saveJournal(prep); err != nil {
		return nil, nil, fmt.Errorf("%w; nothing was changed", err)
	}
	started := false
	defer func() {
		if !started {
			m.w.journal.remove()
		}
	}()
	if !p.snap.stored || m.w.indexChanged(p.snap.idx) {
		// Asked first, or the index changed since: take the snapshot
		// again, so the safety checkpoint holds things as they are now.
		t, err := e.CheckRollback(p.call, p.req)
		if err != nil {
			return nil, nil, err
		}
		np, err := m.plan(t.State, p.Target, p.req, p.Undo, true, p.Recurse)
		if err != nil {
			return nil, nil, err
		}
		np.call = p.call
		*p = *np
	}
	h := p.head
	m.w.prefetchBlobs(p.wt)
	cur, err := e.Current(p.call.Task)
	if err != nil {
		return nil, nil, err
	}
	safety := m.newCheckpoint(cur.State, KindSafety, "", h, p.snap)
	safety.RollbackTo = p.Target.Node
	safety.Moved = movedAway(h, p.moves)
	// Once the rollback is done the safety checkpoint follows its target
	// in the chain, and what changed between them is the plan itself.
	safety.changed = make([]string, 0, len(p.wt))
	for _, c := range p.wt {
		safety.changed = append(safety.changed, c.path)
	}
	if _, _, err := m.appendCheckpoint(safety, false); err != nil {
		return nil, nil, fmt.Errorf("cannot save the safety checkpoint; nothing was changed: %w", err)
	}
	j := &Journal{
		Version: journalVersion, Task: p.Task,
		TargetID: p.Target.ID, TargetCommit: p.Target.Commit.String(),
		SafetyID: safety.ID, SafetyCommit: safety.Commit.String(),
		HeadRef: string(h.Ref), HeadFrom: hexOf(h.Commit), HeadTo: hexOf(p.to.Commit), HeadToRef: string(p.to.Ref),
		Moves: journalMoves(p.moves),
		Node:  p.req.Node, From: p.From, History: p.req.History,
		Undo: p.req.Undo, Reason: p.req.Reason, Force: p.req.Force, At: p.req.At,
		PID: os.Getpid(), Host: hostName(), BootID: bootID(), Step: stepStarted,
		Recurse: p.Recurse,
	}
	if err := m.w.saveJournal(j); err != nil {
		return nil, nil, fmt.Errorf("%w; nothing was changed", err)
	}
	started = true
	m.w.trace("safety checkpoint and journal")
	return j, safety, nil
}

func (m *Manager) reflogMessage(cp *Checkpoint, er *engine.RollbackRequest) string {
	if er.Undo {
		return fmt.Sprintf("hegel rollback: undo, back to %s (checkpoint %s)", cp.Node, cp.ID)
	}
	return fmt.Sprintf("hegel rollback: back to %s (checkpoint %s)", cp.Node, cp.ID)
}

// restore is one pass of a rollback over the repository: HEAD from cur to
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
	subs    []SubmoduleChange // submodule checkouts (--recurse-submodules)
	msg     string
	either  bool // replaying: refs may be on either side already
}

// restoreFiles moves the branches and HEAD, writes the files and the index.
func (m *Manager) restoreFiles(r restore) error {
	if err := m.w.applyRefs(r.cur, r.to, r.moves, r.msg, r.either); err != nil {
		return err
	}
	m.w.trace("move HEAD")
	m.w.beginPass(r)
	defer func() { m.w.pass = nil }()
	wrote, err := m.w.applyWorktree(r.wt)
	if err != nil {
		return err
	}
	m.w.trace(fmt.Sprintf("write %d files", len(wrote)))
	err = m.w.writeIndex(m.w.newIndex(r.idx, r.ix, wrote, r.target, r.sparse))
	m.w.trace("write index")
	if err != nil {
		return err
	}
	return m.w.checkoutSubmodules(r.subs)
}

// finishState records the rollback in the task, cuts the checkpoint chain
// back (the target and everything before it, then the safety checkpoint)
// and removes the journal.
func (m *Manager) finishState(e *engine.Engine, o engine.TaskOptions, j *Journal) (*engine.View, error) {
	er := j.request()
	view, err := e.ApplyRollback(o, er)
	if err != nil {
		return nil, err
	}
	if err := m.cutChain(j.Task, j.TargetID, j.SafetyID); err != nil {
		m.warn("could not drop the checkpoints after " + j.TargetID + ": " + err.Error())
	}
	if err := m.w.journal.remove(); err != nil {
		return nil, fmt.Errorf("cannot remove the rollback journal: %w", err)
	}
	return view, nil
}

func (j *Journal) request() *engine.RollbackRequest {
	return &engine.RollbackRequest{Task: j.Task, Node: j.Node, History: j.History, Undo: j.Undo,
		Reason: j.Reason, Force: true, At: j.At}
}

// cutChain makes the checkpoint list what it was when the target was the
// present, followed by the rollback's safety checkpoint: the checkpoints
// after the target are dropped (but those made by hand, which stay until
// dropped), or, when the target is the safety checkpoint of an earlier
// rollback (an undo), the list as it was before that rollback comes back. What is dropped stays reachable from the new
// safety checkpoint (its ChainBefore), so an undo brings it back in turn.
// The bounds apply to the result. Running it again changes nothing.
func (m *Manager) cutChain(task, targetID, safetyID string) error {
	for attempt := 0; attempt < 20; attempt++ {
		chain, tip, err := m.chain(task)
		if err != nil {
			return err
		}
		var target, safety *Checkpoint
		pos := -1
		for i, c := range chain {
			switch c.ID {
			case targetID:
				target = c
			case safetyID:
				safety, pos = c, i
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
			before, err := m.chainAt(task, plumbing.NewHash(target.ChainBefore))
			if err != nil {
				return fmt.Errorf("cannot read the checkpoints before the rollback being undone: %w", err)
			}
			next = without(before, safetyID)
		default:
			for _, c := range chain {
				if c.ID == safetyID {
					continue
				}
				if target.Kind == KindSafety && c.ID == targetID {
					break // undoing: the list as it was before that rollback
				}
				next = append(next, c)
				if c.ID == targetID {
					break
				}
			}
		}
		kept := map[string]bool{}
		for _, c := range next {
			kept[c.ID] = true
		}
		// Checkpoints made by hand stay until dropped: a rollback does not
		// take them out of the list.
		var manual []*Checkpoint
		for _, c := range chain {
			if c.Kind == KindManual && !kept[c.ID] {
				manual = append(manual, c)
				kept[c.ID] = true
			}
		}
		if len(manual) > 0 {
			next = append(next, manual...)
			sort.SliceStable(next, func(i, j int) bool { return next[i].CreatedAt.Before(next[j].CreatedAt) })
		}
		dropped := false
		for _, c := range chain {
			if !kept[c.ID] && c.ID != safetyID {
				dropped = true
			}
		}
		if dropped && safety.ChainBefore == "" && pos > 0 {
			// The chain as it was before this rollback: what preceded the
			// safety checkpoint when it was appended.
			safety.ChainBefore = chain[pos-1].Commit.String()
			if err := m.writeRoot(safety); err != nil {
				return err
			}
			safety.Commit = plumbing.ZeroHash
		}
		next = m.bound(append(next, safety))
		err = m.writeChain(task, tip, next)
		if !errors.Is(err, gitstore.ErrConflict) {
			return err
		}
	}
	return errors.New("the checkpoints kept changing")
}

func without(chain []*Checkpoint, id string) []*Checkpoint {
	out := make([]*Checkpoint, 0, len(chain))
	for _, c := range chain {
		if c.ID != id {
			out = append(out, c)
		}
	}
	return out
}

// Finish completes an interrupted rollback; o is the command's --task and
// --force.
func (m *Manager) Finish(e *engine.Engine, o engine.TaskOptions) (*Result, error) {
	j, err := m.journal()
	if err != nil || j == nil {
		return nil, err
	}
	if err := m.recoverLock(j); err != nil {
		return nil, err
	}
	defer m.w.unlockIndex()
	target, err := m.checkpointAt(j.TargetCommit)
	if err != nil {
		return nil, err
	}
	safety, err := m.checkpointAt(j.SafetyCommit)
	if err != nil {
		return nil, err
	}
	if err := m.replay(safety, target, j, false, m.reflogMessage(target, j.request())); err != nil {
		return nil, err
	}
	view, err := m.finishState(e, o, j)
	if err != nil {
		return nil, err
	}
	return &Result{View: view, Finished: true, Safety: safety, Plan: &Plan{Task: j.Task, From: j.From, Target: target}}, nil
}

// UndoInterrupted puts back everything an interrupted rollback changed;
// o is the command's --task and --force.
func (m *Manager) UndoInterrupted(e *engine.Engine, o engine.TaskOptions) (*Result, error) {
	j, err := m.journal()
	if err != nil || j == nil {
		return nil, err
	}
	if err := m.recoverLock(j); err != nil {
		return nil, err
	}
	defer m.w.unlockIndex()
	if err := m.undoFromJournal(e, o, j); err != nil {
		return nil, err
	}
	safety, _ := m.checkpointAt(j.SafetyCommit)
	view, _ := e.Repeat(o.Task)
	return &Result{Undone: true, Safety: safety, View: view, Plan: &Plan{Task: j.Task, From: j.From}}, nil
}

// undoFromJournal restores the safety checkpoint over whatever part of the
// rollback was done, and the task's state if it had already changed.
func (m *Manager) undoFromJournal(e *engine.Engine, o engine.TaskOptions, j *Journal) error {
	target, err := m.checkpointAt(j.TargetCommit)
	if err != nil {
		return err
	}
	safety, err := m.checkpointAt(j.SafetyCommit)
	if err != nil {
		return err
	}
	if err := m.replay(target, safety, j, true, "hegel rollback: interrupted rollback undone"); err != nil {
		return err
	}
	if t, err := e.Current(o.Task); err == nil && t.State.Task == j.Task && len(t.State.RollbackHistory) > 0 {
		last := t.State.RollbackHistory[len(t.State.RollbackHistory)-1]
		if last.Timestamp.Equal(j.At) && last.To == j.Node {
			// The state had moved already: move it back, as an undo.
			if _, err := e.ApplyRollback(o, &engine.RollbackRequest{Task: j.Task, Node: j.From, History: safety.History,
				Undo: true, Reason: "undo interrupted rollback", At: m.now().UTC()}); err != nil {
				return err
			}
		}
	}
	return m.w.journal.remove()
}

// ErrEditedSince reports a file changed after a rollback was interrupted,
// which finishing or undoing it would overwrite.
var ErrEditedSince = errors.New("changed since the rollback was interrupted")

// replay makes the working tree, index, HEAD and branches match to, given
// that they hold some mix of from and to (what an interrupted rollback
// leaves); back says the journal is replayed backwards (an undo). Every
// path that differs between the two is rewritten, unless it holds
// something else by now (edited after the crash): then nothing is changed
// and the error names it, as a fresh rollback refuses to overwrite what no
// checkpoint holds.
func (m *Manager) replay(from, to *Checkpoint, j *Journal, back bool, msg string) error {
	wt, _, err := m.w.diffs(orEmpty(from.WorkTree), orEmpty(from.IndexTree), orEmpty(to.WorkTree), orEmpty(to.IndexTree))
	if err != nil {
		return err
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
	if wt, err = m.stillToDo(wt, idx, orEmpty(to.WorkTree)); err != nil {
		return err
	}
	if wt, _, err = m.w.keepIgnored(wt, orEmpty(to.WorkTree)); err != nil {
		return err
	}
	sparse := m.w.sparseSkips(ix)
	wt = dropPaths(wt, sparse)
	if err := m.w.conflicts(wt); err != nil {
		return err
	}
	if err := m.w.checkWritable(wt); err != nil {
		return err
	}
	before := head{Ref: plumbing.ReferenceName(j.HeadRef), Commit: hashOf(j.HeadFrom)}
	after := head{Ref: plumbing.ReferenceName(j.HeadToRef), Commit: hashOf(j.HeadTo)}
	moves := movesOf(j.Moves)
	if back {
		before, after, moves = after, before, reverseMoves(moves)
	}
	return m.restoreFiles(restore{cur: before, to: after, moves: moves, wt: wt, idx: idx, ix: ix, target: to, sparse: sparse,
		subs: checkouts, msg: msg, either: true})
}

// stillToDo narrows the changes of a replay to what the working tree
// still needs: a path already as the target has it is left alone, one as
// the other side has it is rewritten, and one that holds anything else was
// edited after the rollback stopped: an error, before anything changes.
func (m *Manager) stillToDo(wt []change, idx *gitIndex, target plumbing.Hash) ([]change, error) {
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
			// not see, which the rollback leaves alone either way)
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
		return nil, userErr(ErrEditedSince, "%s changed after the rollback was interrupted, and going on would overwrite it. Move it away (or copy it) and run the command again; nothing was changed",
			listSome(edited, 3, m.quote))
	}
	return out, nil
}

// partOf reports whether the regular file at p (now the leaf got) holds the
// beginning of one side's content, as a file that a killed rollback was
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

// checkpointAt reads the checkpoint stored in commit hex.
func (m *Manager) checkpointAt(hex string) (*Checkpoint, error) {
	if !plumbing.IsHash(hex) {
		return nil, fmt.Errorf("the rollback journal names no checkpoint commit")
	}
	cp, _, err := m.readCheckpoint(plumbing.NewHash(hex))
	return cp, err
}

// recoverLock takes the index lock for a recovery. A lock the interrupted
// process left is taken over; see breakStaleLocks for the others.
func (m *Manager) recoverLock(j *Journal) error {
	if j.PID != os.Getpid() && j.running() {
		return userErr(ErrRunning, "%s", runningMessage(j))
	}
	m.breakStaleLocks(j)
	return m.w.lockIndex()
}

// breakStaleLocks removes the lock files a killed rollback may have left
// on what it updates: the task's and its checkpoints' refs, the branch,
// HEAD, packed-refs, the index and the session file. Only locks whose
// owner marker (gitstore/refs, lockfile.go) shows that git-hegel created them
// and that their owner no longer runs are removed, each with a warning; a
// lock of unknown origin (git's, held right now by a commit or a gc) is
// never touched, and the command that needs it reports it.
func (m *Manager) breakStaleLocks(j *Journal) {
	if m.w.memory {
		return
	}
	paths := []string{
		filepath.Join(m.r.CommonDir, filepath.FromSlash(gitstore.TaskRefPrefix+j.Task)) + ".lock",
		filepath.Join(m.r.CommonDir, filepath.FromSlash(RefPrefix+j.Task)) + ".lock",
		filepath.Join(m.r.CommonDir, "packed-refs.lock"),
		filepath.Join(m.r.GitDir, "HEAD.lock"),
		m.w.lockPath(),
	}
	if p := m.r.SessionLockPath(); p != "" {
		paths = append(paths, p)
	}
	if j.HeadRef != "" {
		paths = append(paths, filepath.Join(m.r.CommonDir, filepath.FromSlash(j.HeadRef))+".lock")
	}
	for _, p := range paths {
		m.r.BreakDeadLock(p)
	}
}

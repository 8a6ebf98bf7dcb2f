package rollback

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"

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
}

// Plan is what a rollback will change. Nothing has changed when it is
// shown.
type Plan struct {
	Task   string
	From   string // the node the task is at
	Target *Checkpoint
	Undo   bool
	// HeadRef is the branch that moves ("" when HEAD is detached);
	// HeadFrom and HeadTo are commits (zero: none).
	HeadRef          string
	HeadFrom, HeadTo plumbing.Hash
	Files            []FileChange
	// IndexPaths counts the index entries that change.
	IndexPaths int

	snap   *snapshot
	head   head
	wt, ix []change
	req    *engine.RollbackRequest
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

// journal loads the journal of an unfinished rollback. One that never got
// past "preparing" (killed before its safety checkpoint existed, so before
// any change) is cleared away, with the locks its process left.
func (m *Manager) journal() (*Journal, error) {
	j, err := m.w.loadJournal()
	if err != nil || j == nil || j.Step != stepPreparing {
		return j, err
	}
	if j.PID != os.Getpid() && pidAlive(j.PID) {
		return nil, fmt.Errorf("a rollback is starting in another process (%d); wait for it to end", j.PID)
	}
	m.breakStaleLocks(j)
	m.w.removeStaleLock()
	return nil, m.w.journal.remove()
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
// question is on screen).
func (m *Manager) Prepare(e *engine.Engine, req Request) (*Plan, error) {
	if j, err := m.journal(); err != nil {
		return nil, err
	} else if j != nil {
		return nil, userErr(ErrInterrupted, "%s", interruptedMessage(j))
	}
	t, err := e.Current()
	if err != nil {
		return nil, err
	}
	cp, err := m.target(t, req)
	if err != nil {
		if req.Node != "" && errors.Is(err, ErrNoCheckpoint) {
			// A node the workflow does not have is named as such.
			if _, nerr := e.CheckRollback(&engine.RollbackRequest{Task: t.State.Task, Node: req.Node, History: []string{req.Node}, Force: true}); nerr != nil {
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
	if _, err := e.CheckRollback(er); err != nil {
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
	return m.plan(t.State, cp, er, undo, req.Yes && !req.DryRun)
}

// plan snapshots the working tree and diffs it with the checkpoint.
func (m *Manager) plan(st *engine.State, cp *Checkpoint, er *engine.RollbackRequest, undo, store bool) (*Plan, error) {
	p, err := m.planFiles(cp, store)
	if err != nil {
		return nil, err
	}
	if err := m.w.conflicts(p.wt); err != nil {
		return nil, err
	}
	p.Task, p.From, p.Undo, p.req = st.Task, st.CurrentNode, undo, er
	return p, nil
}

func (m *Manager) planFiles(cp *Checkpoint, store bool) (*Plan, error) {
	m.w.trace("prepare")
	idx, err := m.w.readIndex()
	if err != nil {
		return nil, err
	}
	h, err := m.w.readHead()
	if err != nil {
		return nil, err
	}
	m.w.trace("read index")
	snap, err := m.snapshotter().take(idx, store)
	if err != nil {
		return nil, err
	}
	wt, ix, err := m.w.diffs(snap.worktree, snap.indexTree, orEmpty(cp.WorkTree), orEmpty(cp.IndexTree))
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s cannot be restored: %w", cp.ID, err)
	}
	wt = skipWorktree(wt, idx)
	m.w.trace(fmt.Sprintf("diff (%d files, %d index entries)", len(wt), len(ix)))
	return &Plan{
		Target:  cp,
		HeadRef: h.Ref.Short(), HeadFrom: h.Commit, HeadTo: cp.HeadCommit(),
		Files: summarize(wt), IndexPaths: len(ix),
		snap: snap, head: h, wt: wt, ix: ix,
	}, nil
}

// Preview works out what rolling back to cp would change in the files,
// the index and HEAD right now. It changes nothing and writes no object.
func (m *Manager) Preview(cp *Checkpoint) (*Plan, error) {
	return m.planFiles(cp, false)
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
	// A first journal before the safety checkpoint: if the process dies
	// now, the next command knows the locks it held were a rollback's.
	prep := &Journal{Version: journalVersion, Task: p.Task, Node: p.req.Node, From: p.From, At: p.req.At, PID: os.Getpid(), Step: stepPreparing}
	if err := m.w.saveJournal(prep); err != nil {
		return nil, fmt.Errorf("%w; nothing was changed", err)
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
		t, err := e.CheckRollback(p.req)
		if err != nil {
			return nil, err
		}
		np, err := m.plan(t.State, p.Target, p.req, p.Undo, true)
		if err != nil {
			return nil, err
		}
		*p = *np
	}
	h := p.head
	m.w.prefetchBlobs(p.wt)
	defer m.w.stopPrefetch()
	cur, err := e.Current()
	if err != nil {
		return nil, err
	}
	safety := m.newCheckpoint(cur.State, KindSafety, "", h, p.snap)
	safety.RollbackTo = p.Target.Node
	// Once the rollback is done the safety checkpoint follows its target
	// in the chain, and what changed between them is the plan itself.
	safety.changed = make([]string, 0, len(p.wt))
	for _, c := range p.wt {
		safety.changed = append(safety.changed, c.path)
	}
	if _, _, err := m.appendCheckpoint(safety, false); err != nil {
		return nil, fmt.Errorf("cannot save the safety checkpoint; nothing was changed: %w", err)
	}
	j := &Journal{
		Version: journalVersion, Task: p.Task,
		TargetID: p.Target.ID, TargetCommit: p.Target.Commit.String(),
		SafetyID: safety.ID, SafetyCommit: safety.Commit.String(),
		HeadRef: string(h.Ref), Node: p.req.Node, From: p.From, History: p.req.History,
		Undo: p.req.Undo, Reason: p.req.Reason, Force: p.req.Force, At: p.req.At,
		PID: os.Getpid(), Step: stepStarted,
	}
	if !h.Commit.IsZero() {
		j.HeadFrom = h.Commit.String()
	}
	if !p.HeadTo.IsZero() {
		j.HeadTo = p.HeadTo.String()
	}
	if err := m.w.saveJournal(j); err != nil {
		return nil, fmt.Errorf("%w; nothing was changed", err)
	}
	started = true
	m.w.trace("safety checkpoint and journal")
	res := &Result{Plan: p, Safety: safety}
	if err := m.restoreFiles(h, p.HeadFrom, p.HeadTo, p.wt, p.snap.idx, p.ix, m.reflogMessage(p.Target, p.req)); err != nil {
		if uerr := m.undoFromJournal(e, j); uerr != nil {
			return nil, fmt.Errorf("rollback failed: %v; putting things back failed too: %v. %s", err, uerr, interruptedMessage(j))
		}
		return nil, fmt.Errorf("rollback failed, nothing was changed: %w", err)
	}
	view, err := m.finishState(e, j)
	m.w.trace("workflow state and checkpoints")
	if err != nil {
		return nil, fmt.Errorf("the files were rolled back but the workflow state was not: %v. %s", err, interruptedMessage(j))
	}
	res.View = view
	return res, nil
}

func (m *Manager) reflogMessage(cp *Checkpoint, er *engine.RollbackRequest) string {
	if er.Undo {
		return fmt.Sprintf("hegel rollback: undo, back to %s (checkpoint %s)", cp.Node, cp.ID)
	}
	return fmt.Sprintf("hegel rollback: back to %s (checkpoint %s)", cp.Node, cp.ID)
}

// restoreFiles moves HEAD, writes the files in wt and the index. oldIdx is
// the index on disk, ix the changes to it.
func (m *Manager) restoreFiles(h head, from, to plumbing.Hash, wt []change, oldIdx *gitIndex, ix []change, msg string) error {
	if err := m.w.moveHead(h, from, to, msg); err != nil {
		return err
	}
	m.w.trace("move HEAD")
	wrote, err := m.w.applyWorktree(wt)
	if err != nil {
		return err
	}
	m.w.trace(fmt.Sprintf("write %d files", len(wrote)))
	err = m.w.writeIndex(newIndex(oldIdx, ix, wrote))
	m.w.trace("write index")
	return err
}

// finishState records the rollback in the task, cuts the checkpoint chain
// back (the target and everything before it, then the safety checkpoint)
// and removes the journal.
func (m *Manager) finishState(e *engine.Engine, j *Journal) (*engine.View, error) {
	er := j.request()
	view, err := e.ApplyRollback(er)
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

// cutChain drops the checkpoints taken after target, keeping safety, and
// applies the bound.
func (m *Manager) cutChain(task, targetID, safetyID string) error {
	for attempt := 0; attempt < 20; attempt++ {
		chain, tip, err := m.chain(task)
		if err != nil {
			return err
		}
		var next []*Checkpoint
		cut := false
		for _, c := range chain {
			switch {
			case c.ID == safetyID:
				continue
			case !cut:
				next = append(next, c)
				cut = c.ID == targetID
			}
		}
		for _, c := range chain {
			if c.ID == safetyID {
				next = append(next, c)
			}
		}
		next = evictOldest(next, m.maxCheckpoints())
		err = m.writeChain(task, tip, next)
		if !errors.Is(err, gitstore.ErrConflict) {
			return err
		}
	}
	return errors.New("the checkpoints kept changing")
}

// Finish completes an interrupted rollback.
func (m *Manager) Finish(e *engine.Engine) (*Result, error) {
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
	if err := m.replay(safety, target, j, m.reflogMessage(target, j.request())); err != nil {
		return nil, err
	}
	view, err := m.finishState(e, j)
	if err != nil {
		return nil, err
	}
	return &Result{View: view, Finished: true, Safety: safety, Plan: &Plan{Task: j.Task, From: j.From, Target: target}}, nil
}

// UndoInterrupted puts back everything an interrupted rollback changed.
func (m *Manager) UndoInterrupted(e *engine.Engine) (*Result, error) {
	j, err := m.journal()
	if err != nil || j == nil {
		return nil, err
	}
	if err := m.recoverLock(j); err != nil {
		return nil, err
	}
	defer m.w.unlockIndex()
	if err := m.undoFromJournal(e, j); err != nil {
		return nil, err
	}
	safety, _ := m.checkpointAt(j.SafetyCommit)
	view, _ := e.Repeat()
	return &Result{Undone: true, Safety: safety, View: view, Plan: &Plan{Task: j.Task, From: j.From}}, nil
}

// undoFromJournal restores the safety checkpoint over whatever part of the
// rollback was done, and the task's state if it had already changed.
func (m *Manager) undoFromJournal(e *engine.Engine, j *Journal) error {
	target, err := m.checkpointAt(j.TargetCommit)
	if err != nil {
		return err
	}
	safety, err := m.checkpointAt(j.SafetyCommit)
	if err != nil {
		return err
	}
	back := *j
	back.HeadFrom, back.HeadTo = j.HeadTo, j.HeadFrom
	if err := m.replay(target, safety, &back, "hegel rollback: interrupted rollback undone"); err != nil {
		return err
	}
	if t, err := e.Current(); err == nil && t.State.Task == j.Task && len(t.State.RollbackHistory) > 0 {
		last := t.State.RollbackHistory[len(t.State.RollbackHistory)-1]
		if last.Timestamp.Equal(j.At) && last.To == j.Node {
			// The state had moved already: move it back, as an undo.
			if _, err := e.ApplyRollback(&engine.RollbackRequest{Task: j.Task, Node: j.From, History: safety.History,
				Undo: true, Reason: "undo interrupted rollback", At: m.now().UTC()}); err != nil {
				return err
			}
		}
	}
	return m.w.journal.remove()
}

// replay makes the working tree, index and HEAD match to, given that they
// hold some mix of from and to (what an interrupted rollback leaves).
// Every path that differs between the two is rewritten.
func (m *Manager) replay(from, to *Checkpoint, j *Journal, msg string) error {
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
	h, err := m.w.readHead()
	if err != nil {
		return err
	}
	want := plumbing.ZeroHash
	if j.HeadTo != "" {
		want = plumbing.NewHash(j.HeadTo)
	}
	if string(h.Ref) != j.HeadRef {
		return fmt.Errorf("HEAD is now on %s, not on %s as when the rollback started; check out %s and run the command again",
			h.name(), plumbing.ReferenceName(j.HeadRef).Short(), plumbing.ReferenceName(j.HeadRef).Short())
	}
	return m.restoreFiles(h, h.Commit, want, wt, idx, ix, msg)
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
	if j.PID != os.Getpid() && pidAlive(j.PID) {
		return fmt.Errorf("the rollback is still running (process %d); wait for it to end", j.PID)
	}
	m.breakStaleLocks(j)
	return m.w.lockIndex()
}

// breakStaleLocks removes the lock files a killed rollback may have left
// on what it updates: the task's and its checkpoints' refs, the branch,
// HEAD, packed-refs, the index and the session file. Only locks whose
// owner marker (gitstore's lockfile.go) shows that git-hegel created them
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
		filepath.Join(m.r.WorkTree, filepath.FromSlash(m.r.Sessions().Dir()), "state.json.lock"),
	}
	if j.HeadRef != "" {
		paths = append(paths, filepath.Join(m.r.CommonDir, filepath.FromSlash(j.HeadRef))+".lock")
	}
	for _, p := range paths {
		m.r.BreakDeadLock(p)
	}
}

// Package worktree implements the engine's Snapshots with package
// rollback: a task's checkpoints are the rollback chain
// refs/hegel/checkpoints/<task>, and what the engine knows of each (task,
// workflow run, node, message, history) is stored in the chain's metadata
// as the caller's fields. It translates, and decides nothing: which
// checkpoint to restore, and what a rollback means to the task, are the
// engine's; how to snapshot and restore files is rollback's.
package worktree

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore"
	"github.com/git-hegel/git-hegel/rollback"
)

// Options configure Snapshots.
type Options struct {
	// Getenv reads the environment (HOME, XDG_CONFIG_HOME, GIT_COMMITTER_*).
	Getenv func(string) string
	// Now is the clock.
	Now func() time.Time
	// Warn reports problems that do not fail the command (files left out
	// of a checkpoint, a damaged checkpoint skipped).
	Warn func(msg string)
	// Note reports what happened besides the operation asked for (a
	// checkpoint the bound evicted), one line each.
	Note func(msg string)
	// QuotePath renders a path in warnings.
	QuotePath func(string) string
	// Progress is told how far snapshots and restores have got.
	Progress gitstore.Progress
	// GCPercent, when not 0, is the garbage collector's target set when
	// the Manager is built (a snapshot holds the whole index).
	GCPercent int
}

// Snapshots is engine.Snapshots over one repository. The rollback Manager
// behind it is built on first use (it reads the ignore rules and opens the
// object store), so a command that never needs it pays nothing.
type Snapshots struct {
	r *gitstore.Repo
	o Options
	m *rollback.Manager
	// am is the Manager of the agent-action chains (actions.go), whose
	// bound is hegel.agent.keepActions.
	am *rollback.Manager

	parked *rollback.Parked // between Park and Clean or Release
}

var (
	_ engine.Snapshots = (*Snapshots)(nil)
	_ engine.Parking   = (*Snapshots)(nil)
)

// New returns the Snapshots of r.
func New(r *gitstore.Repo, o Options) *Snapshots {
	if o.Warn == nil {
		o.Warn = func(string) {}
	}
	if o.Note == nil {
		o.Note = func(string) {}
	}
	return &Snapshots{r: r, o: o}
}

// Manager returns the rollback Manager behind s.
func (s *Snapshots) Manager() *rollback.Manager {
	if s.m == nil {
		if s.o.GCPercent != 0 {
			debug.SetGCPercent(s.o.GCPercent)
		}
		s.m = rollback.New(s.r, rollback.Options{
			Getenv: s.o.Getenv, Now: s.o.Now, Warn: s.o.Warn, QuotePath: s.o.QuotePath, Progress: s.o.Progress,
			Evicted: func(cp *rollback.Checkpoint) { s.o.Note(engine.EvictionNotice(s.checkpoint(cp))) },
			Check:   checkMeta,
			ChainOf: func(rec rollback.Meta) string { return rollback.RefPrefix + rec.String(recTask) },
		})
	}
	return s.m
}

// Close releases the files the Manager keeps open.
func (s *Snapshots) Close() {
	if s.m != nil {
		s.m.Close()
		s.m = nil
	}
	if s.am != nil {
		s.am.Close()
		s.am = nil
	}
}

// The checkpoint fields that are the engine's, as checkpoint.json has
// always named them.
const (
	keyTask       = "task"
	keyWorkflowID = "workflow_id"
	keyNode       = "node"
	keyMessage    = "message"
	keyHistory    = "history"
	keyRollbackTo = "rollback_to"
)

// checkMeta refuses a checkpoint that names no node: it cannot be rolled
// back to, and is skipped as damaged.
func checkMeta(cp *rollback.Checkpoint) error {
	if cp.Meta.String(keyNode) == "" {
		return errors.New("damaged checkpoint.json")
	}
	return nil
}

func (s *Snapshots) chain(task string) *rollback.Chain {
	return s.Manager().Chain(rollback.RefPrefix+task, "task "+task)
}

// checkpoint is the engine's view of cp.
func (s *Snapshots) checkpoint(cp *rollback.Checkpoint) *engine.Checkpoint {
	c := &engine.Checkpoint{
		ID: cp.ID, Kind: cp.Kind, CreatedAt: cp.CreatedAt,
		Task: cp.Meta.String(keyTask), WorkflowID: cp.Meta.String(keyWorkflowID), Node: cp.Meta.String(keyNode),
		Message: cp.Meta.String(keyMessage), RollbackTo: cp.Meta.String(keyRollbackTo),
		Branch: cp.BranchName(), Head: cp.Head,
		FilesChanged: cp.FilesChanged, FilesChangedCount: cp.FilesChangedCount,
		Author: cp.Author, Handle: cp,
	}
	cp.Meta.Get(keyHistory, &c.History)
	if !cp.Commit.IsZero() {
		c.Commit = cp.Commit.String()
	}
	for _, f := range cp.Skipped {
		c.Skipped = append(c.Skipped, engine.SkippedFile{Path: f.Path, Size: f.Size, Reason: f.Reason})
	}
	if s.m != nil {
		c.Local = s.m.Local(cp)
	}
	return c
}

// template describes a checkpoint of st for rollback.
func template(st *engine.State, kind, message, rollbackTo string) rollback.Template {
	meta := rollback.Meta{}
	meta.Set(keyTask, st.Task)
	meta.Set(keyWorkflowID, st.WorkflowID)
	meta.Set(keyNode, st.CurrentNode)
	if message != "" {
		meta.Set(keyMessage, message)
	}
	history := st.History
	if history == nil {
		history = []string{}
	}
	meta.Set(keyHistory, history)
	if rollbackTo != "" {
		meta.Set(keyRollbackTo, rollbackTo)
	}
	desc := &engine.Checkpoint{Node: st.CurrentNode, Kind: kind, Message: message, RollbackTo: rollbackTo}
	// The task's start is what rollback --all goes back to: no bound
	// evicts it while the task lives.
	return rollback.Template{Kind: kind, Label: desc.Describe(), Meta: meta, Pinned: engine.PinStart(st, kind)}
}

// Checkpoints implements engine.Snapshots.
func (s *Snapshots) Checkpoints(task string) ([]*engine.Checkpoint, error) {
	cps, err := s.chain(task).List()
	if err != nil {
		return nil, s.convert(err)
	}
	out := make([]*engine.Checkpoint, len(cps))
	for i, cp := range cps {
		out[i] = s.checkpoint(cp)
	}
	return out, nil
}

// TakeCheckpoint implements engine.Snapshots: the newest checkpoint
// stands for a new one when nothing changed and it is at the same node
// of the same run (a checkpoint taken by hand with a message is always
// stored: the label is the point); an automatic checkpoint at the start
// of a new run of the task's name starts a fresh chain.
func (s *Snapshots) TakeCheckpoint(st *engine.State, kind, message string) (*engine.Checkpoint, bool, error) {
	message = strings.TrimSpace(message)
	t := template(st, kind, message, "")
	if kind != engine.CheckpointManual || message == "" {
		t.Same = func(prev *rollback.Checkpoint) bool {
			return prev.Meta.String(keyNode) == st.CurrentNode && prev.Meta.String(keyWorkflowID) == st.WorkflowID
		}
	}
	if kind == engine.CheckpointEnter && len(st.History) == 1 {
		// A finished task's name was reused: the old run's checkpoints
		// mean nothing to the new one.
		t.Fresh = func(prev *rollback.Checkpoint) bool { return prev.Meta.String(keyWorkflowID) != st.WorkflowID }
	}
	cp, created, err := s.chain(st.Task).Take(t)
	if err != nil {
		return nil, false, s.convert(err)
	}
	return s.checkpoint(cp), created, nil
}

// DropCheckpoint implements engine.Snapshots.
func (s *Snapshots) DropCheckpoint(task, id string) error {
	return s.convert(s.chain(task).Drop(id))
}

// PlanRestore implements engine.Snapshots.
func (s *Snapshots) PlanRestore(cp *engine.Checkpoint, o engine.RestoreOptions) (*engine.RestorePlan, error) {
	rcp, ok := cp.Handle.(*rollback.Checkpoint)
	if !ok {
		return nil, fmt.Errorf("checkpoint %s was not read by this repository's snapshots", cp.ID)
	}
	var p *rollback.Plan
	var err error
	if o.Preview {
		p, err = s.Manager().Preview(rcp)
	} else {
		p, err = s.chain(cp.Task).Plan(rcp, rollback.PlanOptions{Store: o.Store, Recurse: o.Recurse})
	}
	if err != nil {
		return nil, s.convert(err)
	}
	return planOf(p), nil
}

// planOf is the engine's view of p.
func planOf(p *rollback.Plan) *engine.RestorePlan {
	out := &engine.RestorePlan{
		HeadRef: p.HeadRef, HeadFrom: hexOf(p.HeadFrom), HeadTo: hexOf(p.HeadTo), CheckedOut: p.CheckedOut,
		Kept: p.Kept, Settings: p.Settings, Recurse: p.Recurse, IndexPaths: p.IndexPaths, Refused: p.Refused, Handle: p,
	}
	for _, b := range p.Branches {
		bm := engine.BranchMove{Name: b.Name, From: hexOf(b.From), To: hexOf(b.To), MovedOn: b.MovedOn,
			LeavingCount: b.LeavingCount, LeavingMore: b.LeavingMore}
		for _, c := range b.Leaving {
			bm.Leaving = append(bm.Leaving, engine.LeavingCommit{ID: c.Hash.String(), Subject: c.Subject, When: c.When})
		}
		out.Branches = append(out.Branches, bm)
	}
	out.Files = make([]engine.FileChange, len(p.Files))
	for i, f := range p.Files {
		out.Files[i] = engine.FileChange(f)
	}
	for _, sm := range p.Submodules {
		out.Submodules = append(out.Submodules, engine.SubmoduleChange{Path: sm.Path, From: hexOf(sm.From), To: hexOf(sm.To), LocalChanges: sm.LocalChanges})
	}
	return out
}

func hexOf(h plumbing.Hash) string {
	if h.IsZero() {
		return ""
	}
	return h.String()
}

// Snapshot implements engine.Snapshots.
func (s *Snapshots) Snapshot(p *engine.RestorePlan, st *engine.State, rec *engine.RollbackRecord) (*engine.Checkpoint, error) {
	rp, ok := p.Handle.(*rollback.Plan)
	if !ok {
		return nil, errors.New("the restore was not planned by this repository's snapshots")
	}
	safety, err := rp.Begin(template(st, engine.CheckpointSafety, "", rec.Node), recordMeta(rec))
	if err != nil {
		return nil, s.convert(err)
	}
	rec.TargetID, rec.SafetyID = rp.Target.ID, safety.ID
	rec.SafetyHistory = append([]string(nil), st.History...)
	rec.Handle = rp.Journal()
	return s.checkpoint(safety), nil
}

// Restore implements engine.Snapshots.
func (s *Snapshots) Restore(p *engine.RestorePlan) error {
	rp, ok := p.Handle.(*rollback.Plan)
	if !ok {
		return errors.New("the restore was not planned by this repository's snapshots")
	}
	return s.convert(rp.Restore(reflogMessage(rp.Target)))
}

// reflogMessage is the reflog entry of the branch a rollback to cp moves.
func reflogMessage(cp *rollback.Checkpoint) string {
	if cp.Kind == rollback.KindSafety {
		return fmt.Sprintf("hegel rollback: undo, back to %s (checkpoint %s)", cp.Meta.String(keyNode), cp.ID)
	}
	return fmt.Sprintf("hegel rollback: back to %s (checkpoint %s)", cp.Meta.String(keyNode), cp.ID)
}

// Replay implements engine.Snapshots.
func (s *Snapshots) Replay(rec *engine.RollbackRecord, forward bool) error {
	j, err := s.journalOf(rec)
	if err != nil {
		return err
	}
	m := s.Manager()
	// The locks of what the engine records (the task's ref, the session
	// file) a killed process may have left; rollback breaks its own.
	if s.r.GitDir != "" {
		s.r.BreakDeadLock(filepath.Join(s.r.CommonDir, filepath.FromSlash(gitstore.TaskRefPrefix+rec.Task)) + ".lock")
		if p := s.r.SessionLockPath(); p != "" {
			s.r.BreakDeadLock(p)
		}
	}
	msg := "hegel rollback: interrupted rollback undone"
	if forward {
		target, _, err := m.Checkpoints(j)
		if err != nil {
			return err
		}
		msg = reflogMessage(target)
	}
	return s.convert(m.Replay(j, forward, msg))
}

// Settle implements engine.Snapshots.
func (s *Snapshots) Settle(rec *engine.RollbackRecord, restored bool) error {
	j, err := s.journalOf(rec)
	if err != nil {
		return err
	}
	return s.chain(rec.Task).Settle(j, restored)
}

func (s *Snapshots) journalOf(rec *engine.RollbackRecord) (*rollback.Journal, error) {
	j, ok := rec.Handle.(*rollback.Journal)
	if !ok || j == nil {
		return nil, errors.New("the rollback's journal is not known")
	}
	return j, nil
}

// Interrupted implements engine.Snapshots. Without a journal or an index
// lock nothing can have been interrupted, and no Manager is built (status
// asks on every run).
func (s *Snapshots) Interrupted() (*engine.RollbackRecord, error) {
	if !rollback.MayBeInterrupted(s.r) {
		return nil, nil
	}
	m := s.Manager()
	j, err := m.Interrupted()
	if err != nil || j == nil {
		return nil, s.convert(err)
	}
	if strings.HasPrefix(j.Chain, ActionsRefPrefix) {
		// An undo of agent actions, not a rollback: it has no task
		// state to record; git hegel undo takes it back (actions.go).
		return nil, engine.ErrUndoInterrupted
	}
	rec := recordOf(j)
	if _, safety, err := m.Checkpoints(j); err == nil {
		safety.Meta.Get(keyHistory, &rec.SafetyHistory)
	}
	return rec, nil
}

// The journal's fields that are the engine's, as the journal has always
// named them.
const (
	recTask    = "task"
	recNode    = "node"
	recFrom    = "from"
	recHistory = "history"
	recUndo    = "undo"
	recReason  = "reason"
	recForce   = "force"
	recAt      = "at"
)

// recordMeta is the engine's part of a rollback's journal.
func recordMeta(rec *engine.RollbackRecord) rollback.Meta {
	m := rollback.Meta{}
	m.Set(recTask, rec.Task)
	m.Set(recNode, rec.Node)
	m.Set(recFrom, rec.From)
	history := rec.History
	if history == nil {
		history = []string{}
	}
	m.Set(recHistory, history)
	if rec.Undo {
		m.Set(recUndo, true)
	}
	if rec.Reason != "" {
		m.Set(recReason, rec.Reason)
	}
	if rec.Force {
		m.Set(recForce, true)
	}
	m.Set(recAt, rec.At)
	return m
}

// recordOf reads the engine's part of a journal back.
func recordOf(j *rollback.Journal) *engine.RollbackRecord {
	rec := &engine.RollbackRecord{TargetID: j.TargetID, SafetyID: j.SafetyID, Handle: j}
	m := j.Record
	rec.Task, rec.Node, rec.From, rec.Reason = m.String(recTask), m.String(recNode), m.String(recFrom), m.String(recReason)
	m.Get(recHistory, &rec.History)
	m.Get(recUndo, &rec.Undo)
	m.Get(recForce, &rec.Force)
	m.Get(recAt, &rec.At)
	return rec
}

// convert turns rollback's journal errors into the engine's, which say
// what the rollback was and what to run.
func (s *Snapshots) convert(err error) error {
	var pe *rollback.ParkingError
	if errors.As(err, &pe) {
		return &engine.ParkingInterruptedError{Record: parkingRecordOf(pe.Journal), Running: pe.Running, PID: pe.Journal.PID}
	}
	var je *rollback.JournalError
	if !errors.As(err, &je) {
		return err
	}
	e := recordOf(je.Journal).InterruptedError()
	e.Running, e.PID = je.Running, je.Journal.PID
	return e
}

// MergeChains merges a task's checkpoint chain when both clones moved it
// on (sync's merger for refs/hegel/checkpoints/): see rollback.Chain.Merge.
func (s *Snapshots) MergeChains(task string, local, remote plumbing.Hash) (plumbing.Hash, engine.MergeCounts, error) {
	tip, added, dropped, err := s.chain(task).Merge(local, remote)
	return tip, engine.MergeCounts{Added: added, Dropped: dropped}, err
}

package worktree

import (
	"errors"
	"fmt"
	"strings"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore"
	"github.com/git-hegel/git-hegel/gitstore/gitdir"
	"github.com/git-hegel/git-hegel/rollback"
)

// Agent-action snapshots are rollback chains too, one per task under
// ActionsRefPrefix, taken and restored by the same snapshot engine as
// checkpoints; only their metadata differs (docs/storage.md).

// ActionsRefPrefix is where the action chains live.
const ActionsRefPrefix = gitstore.ActionsRefPrefix

// DefaultKeepActions is hegel.agent.keepActions' default: how many
// actions a task's chain keeps.
const DefaultKeepActions = 200

// MaxKeepActions caps hegel.agent.keepActions (some million actions).
const MaxKeepActions = 1 << 20

// The fields of an action snapshot's checkpoint.json that are ours.
const (
	keyPhase   = "phase"
	keySession = "session"
	keyAgent   = "agent"
	keyTool    = "tool"
	keyInput   = "input"
	keyAction  = "action"
	keyPaths   = "paths"
)

var _ engine.ActionStore = (*Snapshots)(nil)

// actionManager is a Manager whose bound is the actions': each action
// is two snapshots (before and after).
func (s *Snapshots) actionManager() *rollback.Manager {
	if s.am == nil {
		keep := DefaultKeepActions
		if v, ok := s.r.Config().Get("hegel", "agent", "keepactions"); ok {
			// A bad value never gets here: every command refuses it
			// first. A very large one keeps as many as it may: it asks
			// for more actions, never for the default's fewer.
			if n, ok := gitdir.ParseInt(v); ok && n > 0 {
				keep = int(min(n, MaxKeepActions))
			}
		}
		s.am = rollback.New(s.r, rollback.Options{
			Getenv: s.o.Getenv, Now: s.o.Now, Warn: s.o.Warn, QuotePath: s.o.QuotePath,
			Check: checkActionMeta,
		})
		s.am.MaxCheckpoints = 2 * keep
		// At the bound, a tenth of the actions go at once, so the chain
		// is rewritten once per keep/10 tool calls, not on every one.
		s.am.EvictBatch = 2 * (keep / 10)
		// Appended to on every file-changing tool call, and long: its
		// objects are cached beside it.
		s.am.ChainCache = true
		// Taken before every file-changing tool call, of a working tree
		// mostly unchanged since the last: only the directories changed
		// since are read.
		s.am.DirCache = true
	}
	return s.am
}

// checkActionMeta refuses an action snapshot whose phase is unknown: it
// is skipped as damaged.
func checkActionMeta(cp *rollback.Checkpoint) error {
	switch cp.Meta.String(keyPhase) {
	case engine.ActionBefore, engine.ActionAfter, engine.ActionUndo, engine.ActionRedo:
		return nil
	}
	return errors.New("damaged checkpoint.json (no action phase)")
}

func (s *Snapshots) actionChain(task string) *rollback.Chain {
	return s.actionManager().Chain(ActionsRefPrefix+task, "the agent actions of task "+task)
}

// ActionSnapshots implements engine.ActionStore.
func (s *Snapshots) ActionSnapshots(task string) ([]*engine.ActionSnapshot, error) {
	cps, err := s.actionChain(task).List()
	if err != nil {
		return nil, err
	}
	out := make([]*engine.ActionSnapshot, 0, len(cps))
	for _, cp := range cps {
		out = append(out, s.actionSnapshot(cp))
	}
	return out, nil
}

// NewestActionSnapshot implements engine.ActionStore.
func (s *Snapshots) NewestActionSnapshot(task string) (*engine.ActionSnapshot, error) {
	cp, err := s.actionChain(task).Newest()
	if err != nil || cp == nil || checkActionMeta(cp) != nil {
		return nil, err
	}
	return s.actionSnapshot(cp), nil
}

func (s *Snapshots) actionSnapshot(cp *rollback.Checkpoint) *engine.ActionSnapshot {
	a := &engine.ActionSnapshot{
		ID: cp.ID, Phase: cp.Meta.String(keyPhase), CreatedAt: cp.CreatedAt,
		Session: cp.Meta.String(keySession), Agent: cp.Meta.String(keyAgent), Tool: cp.Meta.String(keyTool),
		Input: cp.Meta.String(keyInput), Action: cp.Meta.String(keyAction),
		Local: s.actionManager().Local(cp), Handle: cp,
	}
	cp.Meta.GetNames(keyPaths, &a.Paths)
	return a
}

func actionMeta(task string, a engine.ActionSnapshot) rollback.Meta {
	meta := rollback.Meta{}
	meta.Set(keyTask, task)
	meta.Set(keyPhase, a.Phase)
	for k, v := range map[string]string{keySession: a.Session, keyAgent: a.Agent, keyTool: a.Tool, keyInput: a.Input, keyAction: a.Action} {
		if v != "" {
			meta.Set(k, v)
		}
	}
	if a.Paths != nil {
		meta.SetNames(keyPaths, a.Paths)
	}
	return meta
}

func actionLabel(a engine.ActionSnapshot) string {
	switch a.Phase {
	case engine.ActionBefore:
		return "before " + a.Tool
	case engine.ActionAfter:
		return "after " + a.Tool
	}
	return a.Phase
}

// TakeActionSnapshot implements engine.ActionStore.
func (s *Snapshots) TakeActionSnapshot(task string, a engine.ActionSnapshot) error {
	_, _, err := s.actionChain(task).Take(rollback.Template{Kind: rollback.KindEnter, Label: actionLabel(a), Meta: actionMeta(task, a)})
	return s.convert(err)
}

// CurrentSnapshot implements engine.ActionStore.
func (s *Snapshots) CurrentSnapshot() (*engine.ActionSnapshot, error) {
	cp, err := s.actionManager().Current()
	if err != nil {
		return nil, s.convert(err)
	}
	return &engine.ActionSnapshot{ID: "now", Local: true, Handle: cp}, nil
}

// ChangedPaths implements engine.ActionStore.
func (s *Snapshots) ChangedPaths(a, b *engine.ActionSnapshot) ([]string, error) {
	ca, ok1 := a.Handle.(*rollback.Checkpoint)
	cb, ok2 := b.Handle.(*rollback.Checkpoint)
	if !ok1 || !ok2 {
		return nil, errors.New("the snapshot was not read from this repository")
	}
	return s.actionManager().ChangedPaths(ca, cb)
}

// RestorePaths implements engine.ActionStore: plan limited to paths,
// safety snapshot and journal, files and index, journal removed. A failed
// write is undone from the safety snapshot before the error returns.
func (s *Snapshots) RestorePaths(task string, target *engine.ActionSnapshot, paths []string, safety engine.ActionSnapshot) error {
	cp, ok := target.Handle.(*rollback.Checkpoint)
	if !ok {
		return errors.New("the snapshot was not read from this repository")
	}
	c := s.actionChain(task)
	p, err := c.Plan(cp, rollback.PlanOptions{Store: true, Only: paths})
	if err != nil {
		return s.convert(err)
	}
	// A submodule's checkout is never moved by an undo (its index entry
	// is restored): say so rather than let the gitlink count as put back.
	for _, sm := range p.Submodules {
		if !sm.To.IsZero() && !sm.From.IsZero() && sm.From != sm.To {
			s.o.Note(fmt.Sprintf("submodule %s: left at %s (the snapshot has %s; an undo does not check submodules out)",
				s.quote(sm.Path), sm.From.String()[:7], sm.To.String()[:7]))
		}
	}
	rec := rollback.Meta{}
	rec.Set(keyTask, task)
	rec.Set(keyPhase, safety.Phase)
	if _, err := p.Begin(rollback.Template{Label: actionLabel(safety), Meta: actionMeta(task, safety)}, rec); err != nil {
		return s.convert(err)
	}
	msg := fmt.Sprintf("hegel %s: back to snapshot %s", safety.Phase, cp.ID)
	if err := p.Restore(msg); err != nil {
		if rerr := s.actionManager().Replay(p.Journal(), false, msg); rerr != nil {
			return fmt.Errorf("%v; putting the files back failed too (%v): 'git hegel rollback --abort' finishes it", err, rerr)
		}
		_ = c.Settle(p.Journal(), false)
		return fmt.Errorf("%v; nothing was changed", err)
	}
	return c.Settle(p.Journal(), true)
}

// CheckRestore implements engine.ActionStore: the plan RestorePaths
// makes (its checks against the working tree), without storing or
// writing anything.
func (s *Snapshots) CheckRestore(task string, target *engine.ActionSnapshot, paths []string) error {
	cp, ok := target.Handle.(*rollback.Checkpoint)
	if !ok {
		return errors.New("the snapshot was not read from this repository")
	}
	_, err := s.actionChain(task).Plan(cp, rollback.PlanOptions{Only: paths})
	return s.convert(err)
}

// TakeBackUndo implements engine.ActionStore: an undo (or redo) of agent
// actions that was killed midway is ended backwards: the paths it
// restores are put back as its safety snapshot holds them, so the files
// are as they were before it, and its journal goes. A path edited since
// stops it, changing nothing (rollback's replay).
func (s *Snapshots) TakeBackUndo() (bool, error) {
	if !rollback.MayBeInterrupted(s.r) {
		return false, nil
	}
	am := s.actionManager()
	j, err := am.Interrupted()
	if err != nil || j == nil || !strings.HasPrefix(j.Chain, ActionsRefPrefix) {
		return false, nil // nothing, or a rollback's: not ours to end
	}
	return true, s.takeBackUndo(j)
}

func (s *Snapshots) takeBackUndo(j *rollback.Journal) error {
	am := s.actionManager()
	task := strings.TrimPrefix(j.Chain, ActionsRefPrefix)
	if err := am.Replay(j, false, "hegel undo: taken back after an interruption"); err != nil {
		return fmt.Errorf("an interrupted undo of agent actions could not be taken back: %w", err)
	}
	if err := s.actionChain(task).Settle(j, false); err != nil {
		return err
	}
	s.o.Note("An interrupted undo of agent actions was taken back: the files it was restoring are as they were before it")
	return nil
}

package gitstore

// Sync: git hegel fetch, push and sync carry refs/hegel/* through the
// user's git remotes (docs/sync.md for users; the design is below).
//
// Fetch has two separable steps. The network step has git fetch the
// remote's refs/hegel/* (checkpoints only when asked) into a quarantine
// (sync_git.go, sync_quarantine.go), validates every new commit, tree and
// blob (sync_validate.go, sync_fsck.go), moves the objects into the
// repository and only then writes the tracking refs
// refs/hegel-remotes/<remote>/… with our own lock protocol. The merge step reads the tracking refs
// (wherever they came from: `git fetch origin
// 'refs/hegel/*:refs/hegel-remotes/origin/*'` works too), validates what
// the network step did not, and merges each into its local ref with
// compare-and-swap, retrying when a local command wrote first
// (sync_merge.go).
//
// Push sends the local refs fast-forward only, each with a lease: the
// remote's current value must be the one the last fetch saw (the tracking
// ref), and the local ref must contain it; the server checks the old value
// again under its ref lock. When the remote moved, push fetches, merges
// and tries again, a bounded number of times. It never forces and never
// deletes a remote ref. git push builds the pack from what the remote
// advertises, so an incremental push costs what it sends.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore/refs"
)

// SyncOptions adjusts fetch, push and sync.
type SyncOptions struct {
	// Checkpoints also fetches, merges and pushes refs/hegel/checkpoints/*.
	Checkpoints bool
	// MergeCheckpoints, if set, merges two checkpoint chains of a task
	// that diverged: only rollback knows their format. It returns the
	// commit to move the local ref to, which must contain both local and
	// remote (so that pushing it is a fast-forward); counts say how many
	// checkpoints came from remote and how many the bound evicted.
	// Without it, a diverged chain keeps the local checkpoints, leaves
	// the remote's in the tracking ref, and is not pushed.
	MergeCheckpoints func(task string, bases []plumbing.Hash, local, remote plumbing.Hash) (plumbing.Hash, engine.MergeCounts, error)
	// Resolve names, per task, the side whose values a conflicting merge
	// takes (engine.SideOurs, engine.SideTheirs); the task's other
	// fields merge as always. A task not named stops at a conflict.
	Resolve map[string]engine.Side
	// GitProgress, if set, gets git fetch's and git push's own progress
	// lines (the remote's "Counting objects", "Receiving objects") as git
	// writes them; without it git shows none, as with git fetch -q.
	GitProgress io.Writer
}

// Attempt bounds.
const (
	pushAttempts  = 5  // pushes that found the remote moved
	mergeAttempts = 50 // merges that lost a compare-and-swap to a local command
)

// syncer is one fetch, push or sync against one remote.
type syncer struct {
	r   *Repo
	rem *Remote
	o   SyncOptions
	rep *engine.SyncReport
	g   *graph

	codeTips []plumbing.Hash // see known
	// refused holds the refs (relative to refs/hegel/) whose remote data
	// failed a check in this sync: they are not merged, and not pushed
	// over.
	refused map[string]bool
	// damaged holds the local refs (relative to refs/hegel/) that cannot
	// be read (not a commit, objects missing): they are neither merged
	// into nor pushed, with one warning each; doctor repairs them.
	damaged map[string]bool
	// conflicted holds the task refs whose two versions changed the same
	// field differently: neither is written over the other, nor pushed.
	conflicted map[string]bool
	// sound holds the local commits found readable in this sync: a sync
	// lists the local refs up to three times (fetch, merge, push), and a
	// task's check parses its state and definition.
	sound   map[plumbing.Hash]bool
	chk     *gitChecker
	chkDone bool
	// beforePush, if set, runs before each push attempt (tests use it to
	// move the remote in between).
	beforePush func()
}

func (r *Repo) newSyncer(rem *Remote, o SyncOptions) *syncer {
	self, _ := r.WorktreeID()
	return &syncer{r: r, rem: rem, o: o, rep: &engine.SyncReport{Remote: rem.Name, Self: self}, g: newGraph(r.storage), refused: map[string]bool{}, damaged: map[string]bool{},
		conflicted: map[string]bool{}, sound: map[plumbing.Hash]bool{}}
}

// checker returns git's object checker (nil in memory), made on first use.
func (s *syncer) checker() *gitChecker {
	if !s.chkDone {
		s.chk, s.chkDone = s.r.checker(s.warn), true
	}
	return s.chk
}

func (s *syncer) warn(msg string) { s.rep.Warnings = append(s.rep.Warnings, msg) }

// refuse leaves ref out of this sync: its data failed a check.
func (s *syncer) refuse(ref hegelRef, reason, check string) {
	if s.refused[ref.rel] {
		return
	}
	s.refused[ref.rel] = true
	s.rep.Refused = append(s.rep.Refused, engine.RefIssue{Ref: string(ref.local()), Reason: oneLine(reason), Check: check})
}

// dropRefusedTracking removes the tracking ref of a refused ref that
// still holds the refused data, tip: a plain git fetch wrote it (the
// network step never writes a refused ref). Left there, it keeps the
// objects reachable and git fsck --strict failing. It is a
// compare-and-swap: a value written meanwhile stays for the next check.
func (s *syncer) dropRefusedTracking(ref hegelRef, tip plumbing.Hash) {
	name := ref.tracking(s.rem.Name)
	if tip.IsZero() || s.r.refs.Update(name, tip, plumbing.ZeroHash) != nil {
		return
	}
	for i := range s.rep.Refused {
		if s.rep.Refused[i].Ref == string(ref.local()) {
			s.rep.Refused[i].RemovedTracking = string(name)
		}
	}
}

// skip notes a remote ref whose name git-hegel never writes.
func (s *syncer) skip(name, reason string) {
	for _, x := range s.rep.Skipped {
		if x.Ref == name {
			return
		}
	}
	s.rep.Skipped = append(s.rep.Skipped, engine.RefIssue{Ref: name, Reason: oneLine(reason)})
}

// refusedErr is the error a sync ends with when it refused refs (after
// doing everything else), or nil.
func (s *syncer) refusedErr() error {
	if len(s.rep.Refused) == 0 {
		return nil
	}
	return &RefusedError{Remote: s.rem.Name, Refs: s.rep.Refused}
}

// Fetch fetches the remote's refs/hegel/* into refs/hegel-remotes/<remote>/
// and merges them into the local refs.
//
// Refs whose data fails a check are left out and the rest goes on; the
// error is then a *RefusedError, and the report lists them.
func (r *Repo) Fetch(ctx context.Context, rem *Remote, o SyncOptions) (*engine.SyncReport, error) {
	defer r.listOnce(rem)()
	s := r.newSyncer(rem, o)
	validated, err := s.fetch(ctx)
	if err != nil {
		return s.rep, err
	}
	if err := s.merge(validated); err != nil {
		return s.rep, err
	}
	s.recordMerged()
	return s.rep, s.refusedErr()
}

// MergeTracking merges refs/hegel-remotes/<remote>/* into the local refs
// without touching the network: the second half of Fetch.
func (r *Repo) MergeTracking(rem *Remote, o SyncOptions) (*engine.SyncReport, error) {
	defer r.listOnce(rem)()
	s := r.newSyncer(rem, o)
	if err := s.merge(nil); err != nil {
		return s.rep, err
	}
	s.recordMerged()
	return s.rep, s.refusedErr()
}

// Push pushes the local refs to the remote (see the package comment).
func (r *Repo) Push(ctx context.Context, rem *Remote, o SyncOptions) (*engine.SyncReport, error) {
	defer r.listOnce(rem)()
	s := r.newSyncer(rem, o)
	if err := s.push(ctx); err != nil {
		return s.rep, err
	}
	// No recordMerged: a push merges only when the remote moved, so a
	// tracking ref a plain git fetch brought may still be unmerged.
	return s.rep, s.refusedErr()
}

// Sync fetches, merges and pushes.
func (r *Repo) Sync(ctx context.Context, rem *Remote, o SyncOptions) (*engine.SyncReport, error) {
	defer r.listOnce(rem)()
	s := r.newSyncer(rem, o)
	validated, err := s.fetch(ctx)
	if err != nil {
		return s.rep, err
	}
	if err := s.merge(validated); err != nil {
		return s.rep, err
	}
	if err := s.push(ctx); err != nil {
		return s.rep, err
	}
	s.recordMerged()
	return s.rep, s.refusedErr()
}

func (s *syncer) trackingPrefix() string { return trackingRoot + s.rem.Name + "/" }

// sortedRefs orders refs as they are merged: stashes first (a diverged
// task adds a stash entry), then history, tasks and checkpoints, by name
// within each kind.
func sortedRefs(m map[string]hegelRef) []hegelRef { return sortedRefsWhere(m, nil) }

// sortedRefsWhere is sortedRefs of the refs keep returns true for (all,
// if keep is nil). With 10,000 tasks stored and one changed, a step that
// acts only on the refs that differ sorts those, not all 10,000.
func sortedRefsWhere(m map[string]hegelRef, keep func(rel string) bool) []hegelRef {
	out := make([]hegelRef, 0, min(len(m), 64))
	for rel, h := range m {
		if keep == nil || keep(rel) {
			out = append(out, h)
		}
	}
	slices.SortFunc(out, func(a, b hegelRef) int {
		if a.order != b.order {
			return cmp.Compare(a.order, b.order)
		}
		return strings.Compare(a.rel, b.rel)
	})
	return out
}

func readRefOrZero(b refs.Backend, name plumbing.ReferenceName) (plumbing.Hash, error) {
	h, err := b.Read(name)
	if errors.Is(err, ErrNotFound) {
		return plumbing.ZeroHash, nil
	}
	return h, err
}

// localDamaged reports (and warns once about) a local ref that cannot be
// synced: its value is not a readable commit, or, for a task, its tree
// lacks objects or its state does not read. Checking a task costs its
// three objects.
func (s *syncer) localDamaged(h hegelRef, v plumbing.Hash) bool {
	if s.damaged[h.rel] {
		return true
	}
	if s.sound[v] {
		return false
	}
	n, err := s.g.node(v)
	if err == nil && h.ns.content == contentTask {
		// A task must also read (known version, state that parses): the
		// remote would refuse it, and other clones with it.
		if err = s.r.treeComplete(n.tree, map[plumbing.Hash]bool{}); err == nil {
			err = s.r.taskReadable(n.tree)
		}
	}
	if err == nil {
		s.sound[v] = true
		return false
	}
	s.damaged[h.rel] = true
	s.warn(fmt.Sprintf("%s is damaged (%s) and was left out; see 'git hegel doctor'", h.local(), oneLine(err.Error())))
	return true
}

// taskReadable checks, without the size limits (they bound what is
// fetched, not what this clone holds), that a task tree has a version
// this git-hegel knows, a state.json that parses and obeys the rules
// against the workflow.yaml beside it.
func (r *Repo) taskReadable(tree plumbing.Hash) error {
	ents, err := readTree(r.storage, tree)
	if err != nil {
		return err
	}
	if err := checkVersion(r, ents); err != nil {
		return err
	}
	var st engine.State
	var def []byte
	found := 0
	for _, e := range ents {
		if e.name != stateFile && e.name != workflowFile {
			continue
		}
		b, err := r.objects.Read(plumbing.BlobObject, e.hash)
		if err != nil {
			return err
		}
		if e.name == workflowFile {
			def, found = b, found+1
			continue
		}
		if err := json.Unmarshal(b, &st); err != nil {
			return fmt.Errorf("damaged state.json: %s", oneLine(err.Error()))
		}
		found++
	}
	if found < 2 {
		return errors.New("no state.json or workflow.yaml")
	}
	// The state must also obey the rules against the workflow it runs
	// (its current node one of the definition's): the remote's fetch
	// checks would refuse it otherwise.
	if err := engine.CheckStored(&st, def, r); err != nil {
		return errors.New(oneLine(err.Error()))
	}
	return nil
}

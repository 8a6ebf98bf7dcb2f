package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore"
)

// git hegel fetch / push / sync (docs/sync.md).

func syncFlags(fs *pflag.FlagSet) {
	fs.Bool("checkpoints", false, "also carry checkpoints (refs/hegel/checkpoints/*), which hold uncommitted files and can be large")
	fs.Bool("strict", false, "exit with status 1 when a remote ref was skipped (a name git-hegel never writes)")
	fs.StringArray("ours", nil, "merge `TASK` taking this clone's value of every field both sides changed differently (repeatable)")
	fs.StringArray("theirs", nil, "merge `TASK` taking the remote's value of every field both sides changed differently (repeatable)")
	completeValues(fs, "ours", kindAnyTask)
	completeValues(fs, "theirs", kindAnyTask)
	jsonFlagSaying("print what moved, merged, and was refused as JSON")(fs)
	progressFlags(fs)
}

// syncSetup opens the repository and resolves the remote argument.
func (c *cmdCtx) syncSetup(args []string) (*gitstore.Repo, *gitstore.Remote, gitstore.SyncOptions, error) {
	var o gitstore.SyncOptions
	if err := c.wantArgs(args, 0, 1); err != nil {
		return nil, nil, o, err
	}
	r, err := c.openRepo()
	if err != nil {
		return nil, nil, o, err
	}
	rem, err := r.ResolveRemote(optArg(args))
	if err != nil {
		return nil, nil, o, err
	}
	o.GitProgress = c.gitProgress()
	o.Checkpoints = c.boolFlag("checkpoints")
	if o.Resolve, err = c.resolutions(); err != nil {
		return nil, nil, o, err
	}
	if o.Checkpoints {
		// Only rollback knows the checkpoint chain's format.
		o.MergeCheckpoints = func(task string, _ []plumbing.Hash, local, remote plumbing.Hash) (plumbing.Hash, engine.MergeCounts, error) {
			return c.snapshots(r).MergeChains(task, local, remote)
		}
	}
	return r, rem, o, nil
}

// resolutions reads --ours and --theirs: the side each named task's
// conflicting fields are taken from.
func (c *cmdCtx) resolutions() (map[string]engine.Side, error) {
	out := map[string]engine.Side{}
	for _, f := range []struct {
		flag string
		side engine.Side
	}{{"ours", engine.SideOurs}, {"theirs", engine.SideTheirs}} {
		names, _ := c.flags.GetStringArray(f.flag)
		for _, n := range names {
			if !engine.ValidTaskName(n) {
				return nil, usagef(c.name, "--%s: '%s' is not a task name", f.flag, n)
			}
			if prev, ok := out[n]; ok && prev != f.side {
				return nil, usagef(c.name, "task %s is named by both --ours and --theirs", n)
			}
			out[n] = f.side
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

func runFetch(c *cmdCtx, args []string) error {
	r, rem, o, err := c.syncSetup(args)
	if err != nil {
		return err
	}
	rep, err := r.Fetch(context.Background(), rem, o)
	return c.finishSync(rep, err, syncFetch)
}

func runPush(c *cmdCtx, args []string) error {
	r, rem, o, err := c.syncSetup(args)
	if err != nil {
		return err
	}
	rep, err := r.Push(context.Background(), rem, o)
	if err := c.finishSync(rep, err, syncPush); err != nil {
		return err
	}
	if !c.boolFlag("json") {
		c.offerSetup(r, rem.Name)
	}
	return nil
}

func runSync(c *cmdCtx, args []string) error {
	r, rem, o, err := c.syncSetup(args)
	if err != nil {
		return err
	}
	rep, err := r.Sync(context.Background(), rem, o)
	if err := c.finishSync(rep, err, syncBoth); err != nil {
		return err
	}
	if !c.boolFlag("json") {
		c.offerSetup(r, rem.Name)
	}
	return nil
}

// syncOp is which of fetch, push and sync ran.
type syncOp int

const (
	syncFetch syncOp = iota
	syncPush
	syncBoth
)

// finishSync reports what a fetch, push or sync did and decides the exit
// status: refs refused for their data make it 1 after everything else was
// done and said; skipped refs only with --strict.
func (c *cmdCtx) finishSync(rep *engine.SyncReport, err error, op syncOp) error {
	var refused *gitstore.RefusedError
	isRefused := errors.As(err, &refused)
	done := err == nil || isRefused // everything but the refused refs went through
	var e *engine.Engine
	if c.repo != nil {
		e = c.newEngine(c.repo)
	}
	if c.boolFlag("json") {
		j := syncToJSON(rep, err, op, e)
		j.Schema = c.jsonSchema()
		// ok agrees with the exit status: a task left conflicted (not
		// merged, not pushed), or a skipped ref under --strict, fails it.
		if rep != nil && (len(rep.ConflictNotes()) > 0 || len(rep.Skipped) > 0 && c.boolFlag("strict")) {
			j.OK = false
		}
		if jerr := writeJSON(c.Stdout, j); jerr != nil {
			return jerr
		}
		switch {
		case isRefused:
			return &silentError{code: exitFailed}
		case err != nil:
			return err
		case rep != nil && len(rep.ConflictNotes()) > 0:
			return &silentError{code: exitFailed}
		case rep != nil && len(rep.Skipped) > 0 && c.boolFlag("strict"):
			return &silentError{code: exitFailed}
		}
		return nil
	}
	if rep != nil {
		switch {
		case op == syncFetch && err == nil:
			c.printFetched(rep, "Already up to date with "+rep.Remote, e)
		case op == syncFetch, op == syncBoth, rep.Retries > 0, rep.MergedFetched:
			c.printFetched(rep, "", e) // what was merged, if anything
		default:
			for _, n := range rep.CheckpointNotes() {
				fmt.Fprintln(c.Stdout, n)
			}
		}
		if op != syncFetch && done {
			c.printPushed(rep)
		}
		for _, w := range rep.Warnings {
			c.warn(w)
		}
		if done {
			c.warnUnusedResolutions(rep)
		}
		for _, sk := range rep.Skipped {
			c.warn(fmt.Sprintf("skipped %s from %s: %s", sk.Ref, rep.Remote, sk.Reason))
		}
		conflicts := rep.ConflictNotes()
		for _, n := range conflicts {
			fmt.Fprintln(c.Stderr, "error: "+n)
		}
		if isRefused {
			removed := false
			for _, x := range rep.Refused {
				fmt.Fprintln(c.Stderr, "error: "+gitstore.RefusedLine(rep.Remote, x))
				removed = removed || x.RemovedTracking != ""
			}
			if removed && c.repo != nil {
				c.hintFetchFsck(c.repo)
			}
			return &silentError{code: exitFailed}
		}
	}
	if err != nil {
		return err
	}
	if rep != nil && len(rep.ConflictNotes()) > 0 {
		return &silentError{code: exitFailed}
	}
	if rep != nil && len(rep.Skipped) > 0 && c.boolFlag("strict") {
		return &silentError{code: exitFailed}
	}
	return nil
}

// warnUnusedResolutions says which tasks --ours or --theirs named had no
// conflict to resolve: a misspelt name, or a task that merged anyway,
// would otherwise pass in silence, as if the choice had been applied.
func (c *cmdCtx) warnUnusedResolutions(rep *engine.SyncReport) {
	res, err := c.resolutions()
	if err != nil || len(res) == 0 {
		return
	}
	used := map[string]bool{}
	for _, t := range rep.Tasks {
		if len(t.Conflicts) > 0 {
			used[t.Task] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(res)) {
		if used[name] {
			continue
		}
		flag := "--ours"
		if res[name] == engine.SideTheirs {
			flag = "--theirs"
		}
		c.warn(fmt.Sprintf("%s %s: task %s had no conflict with %s to resolve; nothing was taken from either side", flag, name, name, rep.Remote))
	}
}

// printFetched says what merging the remote's refs changed locally, or
// none when nothing did; e says which definitions to review.
func (c *cmdCtx) printFetched(rep *engine.SyncReport, none string, e *engine.Engine) {
	if rep == nil {
		return
	}
	if s := rep.FetchSummary(); s != "" {
		fmt.Fprintf(c.Stdout, "From %s: %s\n", rep.Remote, s)
	} else if none != "" {
		fmt.Fprintln(c.Stdout, none)
	}
	for _, n := range rep.MergeNotes() {
		fmt.Fprintln(c.Stdout, n)
	}
	for _, n := range rep.HeldNotes() {
		fmt.Fprintln(c.Stdout, n)
	}
	for _, n := range rep.CheckpointNotes() {
		fmt.Fprintln(c.Stdout, n)
	}
	if e != nil {
		for _, n := range e.DefinitionNotes(rep) {
			fmt.Fprintln(c.Stdout, n)
		}
		for _, n := range e.LockConflictNotes(rep) {
			fmt.Fprintln(c.Stdout, n)
		}
	}
	for _, n := range stashOrphanNotes(rep, e) {
		fmt.Fprintln(c.Stdout, n)
	}
}

// stashOrphanNotes names the stashed tasks no stash entry holds after a
// fetch that dropped stash entries. The fetch never ends them (only a
// local drop, clear or doctor --fix does): it says so, once per sync.
func stashOrphanNotes(rep *engine.SyncReport, e *engine.Engine) []string {
	if rep == nil || e == nil || rep.Stashes.Dropped == 0 {
		return nil
	}
	orphans, err := e.StashOrphans()
	if err != nil {
		return nil
	}
	var out []string
	for _, o := range orphans {
		out = append(out, fmt.Sprintf("Task %s is stashed here, but the stash list from %s no longer holds it; it stays stashed: 'git hegel doctor' says how to bring its stash back or end it", o.Task, rep.Remote))
	}
	return out
}

// printPushed says what the push sent, and which conflicted tasks it
// did not: "Everything up to date" would tell the person their version
// reached the remote when it did not.
func (c *cmdCtx) printPushed(rep *engine.SyncReport) {
	var held []string
	for _, t := range rep.Tasks {
		if t.Change != engine.TaskConflicted {
			continue
		}
		if t.Archived {
			held = append(held, "archived task "+t.Task)
		} else {
			held = append(held, "task "+t.Task)
		}
	}
	if len(rep.Pushed) == 0 {
		if len(held) > 0 {
			fmt.Fprintf(c.Stdout, "Not pushed to %s: %s (conflicted); nothing else needed pushing\n", rep.Remote, strings.Join(held, ", "))
			return
		}
		fmt.Fprintf(c.Stdout, "Everything up to date on %s\n", rep.Remote)
		return
	}
	names := make([]string, len(rep.Pushed))
	for i, n := range rep.Pushed {
		names[i] = pushedName(n)
	}
	msg := fmt.Sprintf("Pushed to %s: %s", rep.Remote, strings.Join(names, ", "))
	if rep.Retries == 1 {
		msg += " (it had moved meanwhile: fetched and merged once more)"
	} else if rep.Retries > 1 {
		msg += fmt.Sprintf(" (it had moved meanwhile: fetched and merged %d more times)", rep.Retries)
	}
	fmt.Fprintln(c.Stdout, msg)
	if len(held) > 0 {
		fmt.Fprintf(c.Stdout, "Not pushed to %s: %s (conflicted)\n", rep.Remote, strings.Join(held, ", "))
	}
}

// pushedName is how a pushed ref is named to people.
func pushedName(ref string) string {
	rel := strings.TrimPrefix(ref, "refs/hegel/")
	switch {
	case strings.HasPrefix(rel, "tasks/"):
		return "task " + strings.TrimPrefix(rel, "tasks/")
	case strings.HasPrefix(rel, "archive/"):
		return "archived task " + strings.TrimPrefix(rel, "archive/")
	case strings.HasPrefix(rel, "checkpoints/"):
		return "checkpoints of " + strings.TrimPrefix(rel, "checkpoints/")
	}
	return rel
}

// syncToJSON builds the --json document of a fetch, push or sync; e (may
// be nil) says which fetched definitions are trusted.
func syncToJSON(rep *engine.SyncReport, err error, op syncOp, e *engine.Engine) *syncJSON {
	j := &syncJSON{Schema: jsonSchemaVersion, Operation: [...]string{"fetch", "push", "sync"}[op],
		Pushed: []string{}, Refused: []syncIssueJSON{}, Skipped: []syncIssueJSON{}, Warnings: []string{}, Notes: []string{},
		Merged: syncMergedJSON{Tasks: []syncTaskJSON{}, CheckpointsUpdated: []string{}, CheckpointsKept: []string{}}}
	if err != nil {
		j.Error = err.Error()
	}
	if rep == nil {
		return j
	}
	counts := func(m engine.MergeCounts) syncCountsJSON {
		return syncCountsJSON{Added: m.Added, Dropped: m.Dropped, Conflicts: m.Conflicts}
	}
	j.Remote, j.ReceivedObjects, j.SentObjects, j.PushRetries = rep.Remote, rep.Received, rep.Sent, rep.Retries
	j.OK = err == nil
	j.Merged.Stashes, j.Merged.History, j.Merged.Checkpoints = counts(rep.Stashes), counts(rep.History), counts(rep.Checkpoints)
	for _, t := range rep.Tasks {
		tj := syncTaskJSON{Task: t.Task, Change: string(t.Change), Archived: t.Archived,
			FromOurs: t.FromOurs, FromTheirs: t.FromTheirs, Resolved: string(t.Resolved), Unrelated: t.Unrelated}
		for _, f := range t.Conflicts {
			tj.Conflicts = append(tj.Conflicts, syncConflictJSON{Field: f.Field, Ours: f.Ours, Theirs: f.Theirs})
		}
		if h := t.Held; h != nil {
			tj.Held = &syncHeldJSON{Worktree: h.Worktree, WorktreeID: h.WorktreeID, Node: h.Node, Status: h.Status,
				Owner: h.Owner, OwnerPath: h.OwnerPath, YoursStash: h.YoursStash, StillActive: h.Owner == "" && !h.Parked && !t.Archived,
				WasNode: h.WasNode, ArchivedBy: h.ArchivedBy}
		}
		if t.Definition != "" {
			tj.Definition = &syncDefinitionJSON{ID: t.Definition, Trusted: e != nil && e.TrustOfID(t.Definition).Trusted}
		}
		j.Merged.Tasks = append(j.Merged.Tasks, tj)
	}
	j.Merged.CheckpointsUpdated = append(j.Merged.CheckpointsUpdated, rep.CheckpointsUpdated...)
	j.Merged.CheckpointsKept = append(j.Merged.CheckpointsKept, rep.CheckpointsKept...)
	j.Pushed = append(j.Pushed, rep.Pushed...)
	for _, x := range rep.Refused {
		j.Refused = append(j.Refused, syncIssueJSON{Ref: x.Ref, Reason: x.Reason, Check: x.Check, RemovedTrackingRef: x.RemovedTracking})
	}
	for _, x := range rep.Skipped {
		j.Skipped = append(j.Skipped, syncIssueJSON{Ref: x.Ref, Reason: x.Reason})
	}
	j.Warnings = append(j.Warnings, rep.Warnings...)
	j.Notes = append(j.Notes, rep.MergeNotes()...)
	j.Notes = append(j.Notes, rep.ConflictNotes()...)
	j.Notes = append(j.Notes, rep.HeldNotes()...)
	j.Notes = append(j.Notes, rep.CheckpointNotes()...)
	if e != nil {
		j.Notes = append(j.Notes, e.DefinitionNotes(rep)...)
		j.Notes = append(j.Notes, e.LockConflictNotes(rep)...)
	}
	j.Notes = append(j.Notes, stashOrphanNotes(rep, e)...)
	return j
}

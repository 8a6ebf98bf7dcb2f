package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/cmd/git-hegel/worktree"
	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/gitstore"
)

func checkpointFlags(fs *pflag.FlagSet) {
	fs.StringP("message", "m", "", "describe the checkpoint")
	valueName(fs, "message", "MESSAGE")
	jsonFlagSaying("list, show: print JSON")(fs)
	fs.BoolP("null", "z", false, "show: list the files as NUL-terminated records, paths unquoted (see the manual)")
	fs.BoolP("yes", "y", false, "drop: do not ask for confirmation")
	progressFlags(fs)
}

// snapshots returns the repository's checkpoints (engine.Snapshots over
// package rollback), one per command, closed when it ends.
//
// Snapshots and rollbacks hold the whole index (about 40 MB at the peak for
// 100,000 files); with Go's default GOGC=100 the heap may grow to twice
// that before a collection. A collection at 1.5 times keeps the peak within
// twice what git itself uses for the same work, for a few more milliseconds
// of (concurrent) GC; a rollback sets its own (rollback.go). A GOGC set in
// the environment wins.
func (c *cmdCtx) snapshots(r *gitstore.Repo) *worktree.Snapshots {
	if c.snaps == nil {
		gc := c.gcPercent
		switch {
		case c.Getenv("GOGC") != "":
			gc = 0
		case gc == 0:
			gc = 50
		}
		c.snaps = worktree.New(r, worktree.Options{Getenv: c.Getenv, Now: c.Now, Warn: c.warn, Note: c.note,
			QuotePath: c.quotePath, Progress: c.progress(), GCPercent: gc})
	}
	return c.snaps
}

func (c *cmdCtx) closeSnapshots() {
	if c.snaps != nil {
		c.snaps.Close()
	}
}

// note prints a line about something that happened besides what was asked
// (a checkpoint evicted by the bound), on stderr so that stdout stays the
// command's own output.
func (c *cmdCtx) note(msg string) { fmt.Fprintln(c.Stderr, msg) }

// warn prints one warning on stderr, without what a terminal would act
// on: warnings name what a fetch brought too.
func (c *cmdCtx) warn(msg string) { fmt.Fprintln(c.Stderr, "warning: "+text.Clean(msg)) }

// checkpointSubs: `checkpoint [-m MSG]`, `checkpoint list`, `checkpoint
// show <id|node>`, `checkpoint drop <id>`.
var checkpointSubs = []*subcommand{
	{name: "", flags: []string{"message", "task", "quiet", "progress", "no-progress"}, run: runCheckpointTake},
	{name: "list", readOnly: true, flags: []string{"json", "task"}, run: runCheckpointList},
	{name: "show", readOnly: true, args: "<id|node>", flags: []string{"json", "null", "task"}, min: 1,
		operands: []valueKind{kindCheckpointOrNode}, run: runCheckpointShow},
	{name: "drop", args: "<id>", flags: []string{"yes", "task"}, min: 1,
		operands: []valueKind{kindCheckpoint}, run: runCheckpointDrop},
}

// runCheckpointDrop removes one checkpoint (by id) from the task's list,
// after asking.
func runCheckpointDrop(c *cmdCtx, args []string) error {
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	st, cp, err := e.CheckpointToDrop(c.selected(), args[0])
	if err != nil {
		return err
	}
	label := fmt.Sprintf("checkpoint %s at %s", cp.ID, cp.Node)
	if cp.Message != "" {
		label += fmt.Sprintf(" %q", firstLineOf(cp.Message))
	}
	if !c.boolFlag("yes") {
		ok, err := c.confirm(fmt.Sprintf("Drop %s? (y/n): ", label), "drop")
		if err != nil || !ok {
			return err
		}
	}
	if err := e.DropCheckpoint(st, cp); err != nil {
		return err
	}
	fmt.Fprintf(c.Stdout, "Dropped %s\n", label)
	return nil
}

func runCheckpointTake(c *cmdCtx, _ []string) error {
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	cp, created, err := e.TakeCheckpoint(c.selected(), c.stringFlag("message"))
	if err != nil {
		return err
	}
	if !created {
		fmt.Fprintf(c.Stdout, "Nothing changed since checkpoint %s at %s; no new checkpoint\n", cp.ID, cp.Node)
		return nil
	}
	fmt.Fprintf(c.Stdout, "Saved checkpoint %s at %s (%s since the previous one)\n", cp.ID, cp.Node, text.Plural(cp.FilesChangedCount, "file changed", "files changed"))
	return nil
}

func runCheckpointList(c *cmdCtx, _ []string) error {
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	st, cps, err := e.Checkpoints(c.selected())
	if err != nil {
		return err
	}
	return c.listCheckpoints(st, cps)
}

func runCheckpointShow(c *cmdCtx, args []string) error {
	if c.boolFlag("json") && c.boolFlag("null") {
		return usagef(c.name, "--json and -z cannot be used together")
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	st, cps, err := e.Checkpoints(c.selected())
	if err != nil {
		return err
	}
	cp, err := engine.FindCheckpoint(cps, st.Task, args[0])
	if err != nil {
		return err
	}
	p, err := e.PreviewRestore(cp)
	if err != nil {
		return err
	}
	return c.showCheckpoint(st, cp, p)
}

func shortHash(h string) string {
	if len(h) > 7 {
		return h[:7]
	}
	if h == "" {
		return "-"
	}
	return h
}

func (c *cmdCtx) age(t time.Time) string {
	d := c.Now().Sub(t)
	if d < 0 {
		d = 0
	}
	return text.HumanDuration(d) + " ago"
}

// The `checkpoint --json` output (docs/rollback.md).

type checkpointListJSON struct {
	Schema      int              `json:"schema"`
	Task        string           `json:"task"`
	Checkpoints []checkpointJSON `json:"checkpoints"` // newest first
}

type checkpointJSON struct {
	ID                string        `json:"id"`
	Node              string        `json:"node"`
	Kind              string        `json:"kind"` // enter, manual, safety
	Message           string        `json:"message,omitempty"`
	CreatedAt         time.Time     `json:"created_at"`
	AgeSeconds        int64         `json:"age_seconds"`
	Branch            string        `json:"branch"` // "" when HEAD was detached
	Head              string        `json:"head"`   // "" on an unborn branch
	FilesChangedCount int           `json:"files_changed_count"`
	FilesChanged      []string      `json:"files_changed"`
	Skipped           []skippedJSON `json:"skipped"`
	RollbackTo        string        `json:"rollback_to,omitempty"`
	Commit            string        `json:"commit"`
	// Local: this clone took it (its record lists its content).
	Local bool `json:"local"`
}

// checkpointShowJSON is `checkpoint show --json`: the checkpoint and what
// rolling back to it would change now.
type checkpointShowJSON struct {
	Schema     int              `json:"schema"`
	Task       string           `json:"task"`
	Checkpoint checkpointJSON   `json:"checkpoint"`
	Rollback   rollbackPlanJSON `json:"rollback"`
}

type skippedJSON struct {
	Path   string `json:"path"`
	Size   int64  `json:"size,omitempty"`
	Reason string `json:"reason"`
}

type rollbackPlanJSON struct {
	HeadRef    string              `json:"head_ref"` // the branch HEAD is on after; "" when detached
	HeadFrom   string              `json:"head_from"`
	HeadTo     string              `json:"head_to"`
	CheckedOut string              `json:"checked_out"` // the branch HEAD is on now; "" when detached
	Branches   []branchMoveJSON    `json:"branches"`
	Files      []engine.FileChange `json:"files"`
	Kept       []string            `json:"kept"`
	// SettingsKept: git-hegel's and the agents' settings files that git
	// does not track, left as they are.
	SettingsKept []string        `json:"settings_kept"`
	IndexPaths   int             `json:"index_paths"`
	Submodules   []submoduleJSON `json:"submodules"`
	Refused      string          `json:"refused,omitempty"`
}

type branchMoveJSON struct {
	Name    string `json:"name"`
	From    string `json:"from"` // "" when the rollback creates it
	To      string `json:"to"`   // "" when it deletes it
	MovedOn bool   `json:"moved_on,omitempty"`
	// Leaving are the commits the move takes off the branch, newest
	// first (at most ten of leaving_count).
	Leaving      []leavingJSON `json:"leaving"`
	LeavingCount int           `json:"leaving_count"`
	LeavingMore  bool          `json:"leaving_more,omitempty"`
}

type leavingJSON struct {
	Commit  string `json:"commit"`
	Subject string `json:"subject"`
	Task    string `json:"task,omitempty"`
}

type submoduleJSON struct {
	Path         string `json:"path"`
	From         string `json:"from"` // checked out now; "" when not checked out
	To           string `json:"to"`   // in the checkpoint; "" when not in it
	LocalChanges bool   `json:"local_changes,omitempty"`
}

func planJSON(p *engine.RestorePlan) rollbackPlanJSON {
	out := rollbackPlanJSON{HeadRef: p.HeadRef, HeadFrom: p.HeadFrom, HeadTo: p.HeadTo,
		CheckedOut: p.CheckedOut, Branches: []branchMoveJSON{}, Files: p.Files, Kept: p.Kept, SettingsKept: nonNil(p.Settings), IndexPaths: p.IndexPaths, Refused: p.Refused}
	for _, b := range p.Branches {
		bm := branchMoveJSON{Name: b.Name, From: b.From, To: b.To, MovedOn: b.MovedOn,
			Leaving: []leavingJSON{}, LeavingCount: b.LeavingCount, LeavingMore: b.LeavingMore}
		for _, l := range b.Leaving {
			bm.Leaving = append(bm.Leaving, leavingJSON{Commit: l.ID, Subject: l.Subject, Task: l.Task})
		}
		out.Branches = append(out.Branches, bm)
	}
	if out.Files == nil {
		out.Files = []engine.FileChange{}
	}
	if out.Kept == nil {
		out.Kept = []string{}
	}
	out.Submodules = []submoduleJSON{}
	for _, sm := range p.Submodules {
		out.Submodules = append(out.Submodules, submoduleJSON{Path: sm.Path, From: sm.From, To: sm.To, LocalChanges: sm.LocalChanges})
	}
	return out
}

func (c *cmdCtx) checkpointJSON(cp *engine.Checkpoint) checkpointJSON {
	out := checkpointJSON{
		ID: cp.ID, Node: cp.Node, Kind: cp.Kind, Message: cp.Message, CreatedAt: cp.CreatedAt,
		AgeSeconds: int64(c.Now().Sub(cp.CreatedAt).Seconds()), Branch: cp.Branch, Head: cp.Head,
		FilesChangedCount: cp.FilesChangedCount, FilesChanged: cp.FilesChanged, RollbackTo: cp.RollbackTo,
		Commit: cp.Commit, Skipped: []skippedJSON{}, Local: cp.Local,
	}
	if out.FilesChanged == nil {
		out.FilesChanged = []string{}
	}
	for _, s := range cp.Skipped {
		out.Skipped = append(out.Skipped, skippedJSON{Path: s.Path, Size: s.Size, Reason: s.Reason})
	}
	if c.forAgent && !cp.Local {
		// Another clone's checkpoint says what its maker wrote: an agent
		// reads its words as it reads a prompt (agent_view.go).
		notice := "(A checkpoint another clone took: its text is not shown to the agent; a person reads it with 'git hegel checkpoint show'.)"
		if out.Message != "" {
			out.Message = notice
		}
		for i := range out.Skipped {
			out.Skipped[i].Reason = notice
		}
	}
	return out
}

// listCheckpoints prints a task's checkpoints (oldest first in cps),
// newest first.
func (c *cmdCtx) listCheckpoints(st *engine.State, cps []*engine.Checkpoint) error {
	cps = slices.Clone(cps)
	slices.Reverse(cps)
	if c.boolFlag("json") {
		out := checkpointListJSON{Schema: c.jsonSchema(), Task: st.Task, Checkpoints: []checkpointJSON{}}
		for _, cp := range cps {
			out.Checkpoints = append(out.Checkpoints, c.checkpointJSON(cp))
		}
		return writeJSON(c.Stdout, out)
	}
	if len(cps) == 0 {
		fmt.Fprintf(c.Stdout, "No checkpoints for task %s\n", st.Task)
		return nil
	}
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNODE\tKIND\tAGE\tCOMMIT\tFILES\tMESSAGE")
	for _, cp := range cps {
		msg := firstLineOf(cp.Message)
		if cp.Kind == engine.CheckpointSafety && cp.RollbackTo != "" {
			msg = "before rolling back to " + cp.RollbackTo
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", cp.ID, cp.Node, cp.Kind, c.age(cp.CreatedAt), shortHash(cp.Head), cp.FilesChangedCount, msg)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// Every row keeps its files cell (a row without it would end the
	// column, and the messages below it would move left); the padding it
	// leaves before an empty message is cut.
	for line := range strings.Lines(buf.String()) {
		if _, err := io.WriteString(c.Stdout, strings.TrimRight(line, " \n")+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// firstLineOf is the first line of s, without the control characters a
// terminal would act on: much of what it cuts (reasons, questions,
// messages) may come from a fetched task.
func firstLineOf(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return text.Clean(s)
}

func (c *cmdCtx) showCheckpoint(st *engine.State, cp *engine.Checkpoint, p *engine.RestorePlan) error {
	if c.boolFlag("json") {
		out := checkpointShowJSON{Schema: c.jsonSchema(), Task: st.Task, Checkpoint: c.checkpointJSON(cp), Rollback: planJSON(p)}
		return writeJSON(c.Stdout, out)
	}
	if c.boolFlag("null") {
		bw := bufio.NewWriter(c.Stdout)
		for _, f := range cp.FilesChanged {
			fmt.Fprintf(bw, "changed %s\x00", f)
		}
		for _, s := range cp.Skipped {
			fmt.Fprintf(bw, "skipped %s\x00", s.Path)
		}
		writePlanZ(bw, p)
		return bw.Flush()
	}
	w := c.Stdout
	fmt.Fprintf(w, "Checkpoint %s (task %s)\n", c.paint(w, "id", cp.ID), st.Task)
	fmt.Fprintf(w, "Node:    %s (%s)\n", cp.Node, kindLabel(cp))
	fmt.Fprintf(w, "Taken:   %s (%s)\n", cp.CreatedAt.UTC().Format("2006-01-02 15:04:05 UTC"), c.age(cp.CreatedAt))
	fmt.Fprintf(w, "HEAD:    %s\n", headLabel(cp.Branch, cp.Head))
	if !cp.Local {
		fmt.Fprintf(w, "Made:    elsewhere (%s)\n", engine.MadeBy(cp))
	}
	if cp.Message != "" {
		// Checkpoints travel with fetch --checkpoints: the message may be
		// another clone's.
		fmt.Fprintf(w, "Message: %s\n", text.Clean(cp.Message))
	}
	fmt.Fprintf(w, "Changed since the previous checkpoint: %s\n", text.Plural(cp.FilesChangedCount, "file", "files"))
	for _, f := range cp.FilesChanged {
		fmt.Fprintf(w, "  %s\n", c.quotePath(f))
	}
	if n := cp.FilesChangedCount - len(cp.FilesChanged); n > 0 {
		fmt.Fprintf(w, "  ... and %d more\n", n)
	}
	for _, s := range cp.Skipped {
		fmt.Fprintf(w, "Left out: %s (%s)\n", c.quotePath(s.Path), s.Reason)
	}
	fmt.Fprintln(w)
	if p.Refused != "" {
		fmt.Fprintf(w, "Rolling back to it would be refused now: %s\n", p.Refused)
	}
	if p.Unchanged() {
		fmt.Fprintln(w, "Rolling back to it would change nothing: the files, the index and HEAD match it")
		return nil
	}
	fmt.Fprintln(w, "Rolling back to it would:")
	c.printPlan(p, -1)
	return nil
}

func hexOrEmpty(h string) string {
	if strings.Trim(h, "0") == "" {
		return ""
	}
	return h
}

func kindLabel(cp *engine.Checkpoint) string {
	switch cp.Kind {
	case engine.CheckpointEnter:
		return "taken when the node was entered"
	case engine.CheckpointSafety:
		if cp.RollbackTo != "" {
			return "safety checkpoint, before rolling back to " + cp.RollbackTo
		}
		return "safety checkpoint"
	}
	return "taken by hand"
}

// headLabel names where HEAD was. The branch comes from a checkpoint or a
// stash, which may have come from another clone: it is printed without
// control characters.
func headLabel(branch, commit string) string {
	branch = strings.ReplaceAll(text.Clean(branch), "\n", " ")
	switch {
	case branch != "" && commit == "":
		return branch + " (no commits yet)"
	case branch != "":
		return branch + " at " + shortHash(commit)
	}
	return "detached at " + shortHash(commit)
}

// printPlan lists what a rollback changes; limit < 0 lists every file.
// It says exactly which branches move and which one ends checked out.
func (c *cmdCtx) printPlan(p *engine.RestorePlan, limit int) {
	w := c.Stdout
	for _, b := range p.Branches {
		switch {
		case b.From == "":
			fmt.Fprintf(w, "  create branch %s at %s\n", b.Name, commitLabel(b.To))
		case b.To == "":
			fmt.Fprintf(w, "  delete branch %s at %s (the rollback being undone created it)\n", b.Name, commitLabel(b.From))
		case b.MovedOn:
			fmt.Fprintf(w, "  move %s from %s to %s (it has moved on since the checkpoint; the safety checkpoint keeps %s reachable)\n",
				b.Name, commitLabel(b.From), commitLabel(b.To), commitLabel(b.From))
		default:
			fmt.Fprintf(w, "  move %s from %s to %s\n", b.Name, commitLabel(b.From), commitLabel(b.To))
		}
		c.printLeaving(b)
	}
	stays := ""
	if p.CheckedOut != "" {
		stays = fmt.Sprintf("%s stays at %s", p.CheckedOut, commitLabel(p.HeadFrom))
	} else if p.HeadFrom != "" {
		stays = "HEAD is detached at " + commitLabel(p.HeadFrom) + " now"
	}
	switch {
	case p.HeadRef != "" && p.HeadRef != p.CheckedOut:
		fmt.Fprintf(w, "  check out %s (%s)\n", p.HeadRef, stays)
	case p.HeadRef == "" && p.CheckedOut != "":
		fmt.Fprintf(w, "  detach HEAD at %s (%s)\n", commitLabel(p.HeadTo), stays)
	case p.HeadRef == "" && p.HeadFrom != p.HeadTo:
		fmt.Fprintf(w, "  move HEAD (detached) from %s to %s\n", commitLabel(p.HeadFrom), commitLabel(p.HeadTo))
	}
	for i, f := range p.Files {
		if limit >= 0 && i == limit {
			fmt.Fprintf(w, "  ... and %d more (see --dry-run)\n", len(p.Files)-limit)
			break
		}
		op := f.Op + strings.Repeat(" ", max(7-len(f.Op), 0))
		switch f.Op {
		case "create":
			op = c.paint(w, "added", f.Op) + op[len(f.Op):]
		case "delete":
			op = c.paint(w, "deleted", f.Op) + op[len(f.Op):]
		}
		switch f.Op {
		case "mode", "type":
			fmt.Fprintf(w, "  %s %s (%s -> %s)\n", op, c.quotePath(f.Path), f.From, f.To)
		default:
			fmt.Fprintf(w, "  %s %s\n", op, c.quotePath(f.Path))
		}
	}
	for i, k := range p.Kept {
		if limit >= 0 && i == limit {
			fmt.Fprintf(w, "  ... and %d more kept (see --dry-run)\n", len(p.Kept)-limit)
			break
		}
		fmt.Fprintf(w, "  keep    %s (ignored: the checkpoint does not hold it)\n", c.quotePath(k))
	}
	for _, k := range p.Settings {
		fmt.Fprintf(w, "  keep    %s (settings: a rollback leaves them as they are)\n", c.quotePath(k))
	}
	if p.IndexPaths > 0 {
		fmt.Fprintf(w, "  restore the index (%s)\n", text.Plural(p.IndexPaths, "path", "paths"))
	}
	for _, s := range p.Submodules {
		fmt.Fprintf(w, "  %s\n", c.submoduleLine(s, p.Recurse))
	}
}

// printLeaving lists the commits a branch move takes off the branch
// (the safety checkpoint keeps them reachable), with the task that made
// each when it is known.
func (c *cmdCtx) printLeaving(b engine.BranchMove) {
	if b.LeavingCount == 0 {
		return
	}
	more := ""
	if b.LeavingMore {
		more = " or more"
	}
	verb := "leave"
	if b.LeavingCount == 1 && !b.LeavingMore {
		verb = "leaves"
	}
	fmt.Fprintf(c.Stdout, "    %s%s %s %s (the safety checkpoint keeps them):\n",
		text.Plural(b.LeavingCount, "commit", "commits"), more, verb, b.Name)
	for _, l := range b.Leaving {
		by := ""
		if l.Task != "" {
			by = " (task " + l.Task + ")"
		}
		fmt.Fprintf(c.Stdout, "      %s %s%s\n", commitLabel(l.ID), l.Subject, by)
	}
	if rest := b.LeavingCount - len(b.Leaving); rest > 0 {
		fmt.Fprintf(c.Stdout, "      ... and %d more\n", rest)
	}
}

// submoduleLine says what happens to one submodule's checkout.
func (c *cmdCtx) submoduleLine(s engine.SubmoduleChange, recurse bool) string {
	local := ""
	if s.LocalChanges {
		local = ", with its local changes"
	}
	path := c.quotePath(s.Path)
	switch {
	case s.To == "":
		return fmt.Sprintf("submodule %s: not in the checkpoint; left as it is%s", path, local)
	case s.From == s.To:
		return fmt.Sprintf("submodule %s: has local changes; left as it is", path)
	case s.From == "":
		return fmt.Sprintf("submodule %s: not checked out; the checkpoint has %s", path, commitLabel(s.To))
	case recurse:
		return fmt.Sprintf("submodule %s: check out %s (now at %s)", path, commitLabel(s.To), commitLabel(s.From))
	}
	return fmt.Sprintf("submodule %s: left at %s%s (the checkpoint has %s; --recurse-submodules checks it out)",
		path, commitLabel(s.From), local, commitLabel(s.To))
}

// writePlanZ is -z output: one "<op> <path>" record per file a rollback
// changes, each ended by NUL, paths as they are (docs/git-hegel.1).
func writePlanZ(w io.Writer, p *engine.RestorePlan) {
	for _, f := range p.Files {
		fmt.Fprintf(w, "%s %s\x00", f.Op, f.Path)
	}
}

func commitLabel(h string) string {
	if hexOrEmpty(h) == "" {
		return "(no commit)"
	}
	return h[:7]
}

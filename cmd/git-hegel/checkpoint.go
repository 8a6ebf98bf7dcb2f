package main

import (
	"bufio"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/gitstore"
	"github.com/git-hegel/git-hegel/rollback"
)

func checkpointFlags(fs *pflag.FlagSet) {
	fs.StringP("message", "m", "", "describe the checkpoint")
	fs.Bool("json", false, "print JSON (list, show; schema: docs/rollback.md)")
	fs.BoolP("null", "z", false, "show: list the files as NUL-terminated records, paths unquoted (see the manual)")
}

// checkpoints returns the checkpoint manager for r.
//
// Snapshots and rollbacks hold the whole index (about 40 MB at the peak for
// 100,000 files); with Go's default GOGC=100 the heap may grow to twice
// that before a collection. A collection at 1.5 times keeps the peak within
// twice what git itself uses for the same work, for a few more milliseconds
// of (concurrent) GC. A GOGC set in the environment wins.
func (c *cmdCtx) checkpoints(r *gitstore.Repo) *rollback.Manager {
	if c.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
	return rollback.New(r, rollback.Options{Getenv: c.Getenv, Now: c.Now, Warn: c.warn, QuotePath: c.quotePath})
}

func (c *cmdCtx) warn(msg string) { fmt.Fprintln(c.Stderr, "warning: "+msg) }

// checkpointHook is the engine's Checkpoint hook: a checkpoint each time
// start, next, prev or restart enters a node (hegel.checkpoints=off turns
// it off). The manager is built on first use and lives as long as the
// command (its open pack files close when the process ends).
func (c *cmdCtx) checkpointHook(r *gitstore.Repo) func(*engine.State) error {
	var m *rollback.Manager
	return func(st *engine.State) error {
		if m == nil {
			m = c.checkpoints(r)
		}
		return m.AutoCheckpoint(st)
	}
}

// checkpointSubs: `checkpoint [-m MSG]`, `checkpoint list`, `checkpoint show <id|node>`.
var checkpointSubs = []*subcommand{
	{name: "", args: "[-m <message>]", flags: []string{"message"}, run: runCheckpointTake},
	{name: "list", args: "[--json]", flags: []string{"json"}, run: runCheckpointList},
	{name: "show", args: "<id|node> [--json | -z]", flags: []string{"json", "null"}, min: 1,
		operands: []valueKind{kindCheckpointOrNode}, run: runCheckpointShow},
}

// currentCheckpoints opens the active task and its checkpoint manager.
func (c *cmdCtx) currentCheckpoints() (*engine.State, *rollback.Manager, error) {
	e, r, err := c.engine()
	if err != nil {
		return nil, nil, err
	}
	t, err := e.Current()
	if err != nil {
		return nil, nil, err
	}
	return t.State, c.checkpoints(r), nil
}

func runCheckpointTake(c *cmdCtx, _ []string) error {
	st, m, err := c.currentCheckpoints()
	if err != nil {
		return err
	}
	defer m.Close()
	cp, created, err := m.Take(st, rollback.KindManual, c.stringFlag("message"))
	if err != nil {
		return err
	}
	if !created {
		fmt.Fprintf(c.Stdout, "Nothing changed since checkpoint %s at %s; no new checkpoint\n", cp.ID, cp.Node)
		return nil
	}
	fmt.Fprintf(c.Stdout, "Saved checkpoint %s at %s (%s since the previous one)\n", cp.ID, cp.Node, engine.Plural(cp.FilesChangedCount, "file changed", "files changed"))
	return nil
}

func runCheckpointList(c *cmdCtx, _ []string) error {
	st, m, err := c.currentCheckpoints()
	if err != nil {
		return err
	}
	defer m.Close()
	return c.listCheckpoints(m, st)
}

func runCheckpointShow(c *cmdCtx, args []string) error {
	if c.boolFlag("json") && c.boolFlag("null") {
		return usagef(c.name, "--json and -z cannot be used together")
	}
	st, m, err := c.currentCheckpoints()
	if err != nil {
		return err
	}
	defer m.Close()
	return c.showCheckpoint(m, st, args[0])
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
	return humanDuration(d) + " ago"
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
	HeadRef    string                `json:"head_ref"` // "" when detached
	HeadFrom   string                `json:"head_from"`
	HeadTo     string                `json:"head_to"`
	Files      []rollback.FileChange `json:"files"`
	IndexPaths int                   `json:"index_paths"`
}

func (c *cmdCtx) checkpointJSON(cp *rollback.Checkpoint) checkpointJSON {
	out := checkpointJSON{
		ID: cp.ID, Node: cp.Node, Kind: cp.Kind, Message: cp.Message, CreatedAt: cp.CreatedAt,
		AgeSeconds: int64(c.Now().Sub(cp.CreatedAt).Seconds()), Branch: cp.BranchName(), Head: cp.Head,
		FilesChangedCount: cp.FilesChangedCount, FilesChanged: cp.FilesChanged, RollbackTo: cp.RollbackTo,
		Commit: cp.Commit.String(), Skipped: []skippedJSON{},
	}
	if out.FilesChanged == nil {
		out.FilesChanged = []string{}
	}
	for _, s := range cp.Skipped {
		out.Skipped = append(out.Skipped, skippedJSON{Path: s.Path, Size: s.Size, Reason: s.Reason})
	}
	return out
}

func (c *cmdCtx) listCheckpoints(m *rollback.Manager, st *engine.State) error {
	cps, err := m.List(st.Task)
	if err != nil {
		return err
	}
	if c.boolFlag("json") {
		out := checkpointListJSON{Schema: jsonSchemaVersion, Task: st.Task, Checkpoints: []checkpointJSON{}}
		for _, cp := range cps {
			out.Checkpoints = append(out.Checkpoints, c.checkpointJSON(cp))
		}
		return writeJSON(c.Stdout, out)
	}
	if len(cps) == 0 {
		fmt.Fprintf(c.Stdout, "No checkpoints for task %s\n", st.Task)
		return nil
	}
	tw := tabwriter.NewWriter(c.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNODE\tKIND\tAGE\tCOMMIT\tFILES\tMESSAGE")
	for _, cp := range cps {
		msg := firstLineOf(cp.Message)
		if cp.Kind == rollback.KindSafety && cp.RollbackTo != "" {
			msg = "before rolling back to " + cp.RollbackTo
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", cp.ID, cp.Node, cp.Kind, c.age(cp.CreatedAt), shortHash(cp.Head), cp.FilesChangedCount, msg)
	}
	return tw.Flush()
}

func firstLineOf(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func (c *cmdCtx) showCheckpoint(m *rollback.Manager, st *engine.State, sel string) error {
	cp, err := m.Find(st.Task, sel)
	if err != nil {
		return err
	}
	p, err := m.Preview(cp)
	if err != nil {
		return err
	}
	if c.boolFlag("json") {
		out := checkpointShowJSON{Schema: jsonSchemaVersion, Task: st.Task, Checkpoint: c.checkpointJSON(cp),
			Rollback: rollbackPlanJSON{HeadRef: p.HeadRef, HeadFrom: hexOrEmpty(p.HeadFrom.String()), HeadTo: hexOrEmpty(p.HeadTo.String()),
				Files: p.Files, IndexPaths: p.IndexPaths}}
		if out.Rollback.Files == nil {
			out.Rollback.Files = []rollback.FileChange{}
		}
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
	fmt.Fprintf(w, "HEAD:    %s\n", headLabel(cp.BranchName(), cp.Head))
	if cp.Message != "" {
		fmt.Fprintf(w, "Message: %s\n", cp.Message)
	}
	fmt.Fprintf(w, "Changed since the previous checkpoint: %s\n", engine.Plural(cp.FilesChangedCount, "file", "files"))
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
	if len(p.Files) == 0 && p.IndexPaths == 0 && p.HeadFrom == p.HeadTo {
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

func kindLabel(cp *rollback.Checkpoint) string {
	switch cp.Kind {
	case rollback.KindEnter:
		return "taken when the node was entered"
	case rollback.KindSafety:
		if cp.RollbackTo != "" {
			return "safety checkpoint, before rolling back to " + cp.RollbackTo
		}
		return "safety checkpoint"
	}
	return "taken by hand"
}

func headLabel(branch, commit string) string {
	switch {
	case branch != "" && commit == "":
		return branch + " (no commits yet)"
	case branch != "":
		return branch + " at " + shortHash(commit)
	}
	return "detached at " + shortHash(commit)
}

// printPlan lists what a rollback changes; limit < 0 lists every file.
func (c *cmdCtx) printPlan(p *rollback.Plan, limit int) {
	w := c.Stdout
	from, to := p.HeadFrom.String(), p.HeadTo.String()
	if p.HeadFrom != p.HeadTo {
		name := p.HeadRef
		if name == "" {
			name = "HEAD (detached)"
		}
		fmt.Fprintf(w, "  move %s from %s to %s\n", name, commitLabel(from), commitLabel(to))
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
	if p.IndexPaths > 0 {
		fmt.Fprintf(w, "  restore the index (%s)\n", engine.Plural(p.IndexPaths, "path", "paths"))
	}
}

// writePlanZ is -z output: one "<op> <path>" record per file a rollback
// changes, each ended by NUL, paths as they are (docs/git-hegel.1).
func writePlanZ(w io.Writer, p *rollback.Plan) {
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

package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/text"
)

// stashSubs are the verbs of `git hegel stash`; no verb means push, as
// with git stash.
var stashSubs = []*subcommand{
	{name: "push", flags: []string{"message", "files"}, run: runStashPush},
	{name: "save", flags: []string{"message", "files"}, run: runStashPush},
	{name: "list", readOnly: true, flags: []string{"json", "dropped"}, run: runStashList},
	{name: "show", readOnly: true, args: "[<stash>]", flags: []string{"json"}, operands: []valueKind{kindStash}, run: runStashShow},
	{name: "pop", args: "[<stash>]", flags: []string{"force"}, operands: []valueKind{kindStash}, run: func(c *cmdCtx, a []string) error { return runStashPop(c, a, false) }},
	{name: "apply", args: "[<stash>]", flags: []string{"force"}, operands: []valueKind{kindStash}, run: func(c *cmdCtx, a []string) error { return runStashPop(c, a, true) }},
	{name: "drop", args: "[<stash>]", flags: []string{"yes"}, operands: []valueKind{kindStash}, run: runStashDrop},
	{name: "clear", flags: []string{"yes"}, run: runStashClear},
	{name: "restore", args: "<id>", min: 1, operands: []valueKind{kindDroppedStash}, run: runStashRestore},
}

func stashFlags(fs *pflag.FlagSet) {
	fs.StringP("message", "m", "", "describe the stash (push, save)")
	valueName(fs, "message", "MESSAGE")
	jsonFlagSaying("list, show: print JSON")(fs)
	fs.Bool("dropped", false, "list dropped and cleared stashes that can still be restored (list)")
	fs.BoolP("yes", "y", false, "do not ask for confirmation (drop, clear)")
	fs.BoolP("files", "u", false, "also park the uncommitted files, tracked and untracked (push, save)")
	fs.BoolP("force", "f", false, "write the files of a stash another clone parked (pop, apply)")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func optArg(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

func runStashPush(c *cmdCtx, _ []string) error {
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	if !c.boolFlag("files") {
		ent, err := e.StashPush(c.stringFlag("message"))
		if err != nil {
			return err
		}
		// Only the workflow was saved: git stash's "Saved working
		// directory" would promise files that stay where they are.
		fmt.Fprintf(c.Stdout, "Saved workflow state to %s: %s\n", ent.Ref(), ent.Label())
		fmt.Fprintln(c.Stdout, "Your files were left as they are; 'git hegel stash push --files' parks them with the workflow")
		return nil
	}
	ent, files, err := e.StashPushParking(c.stringFlag("message"))
	switch {
	case ent != nil && files == nil:
		fmt.Fprintf(c.Stdout, "Saved workflow state to %s: %s\n", ent.Ref(), ent.Label())
	case ent != nil:
		fmt.Fprintf(c.Stdout, "Saved workflow state and working directory to %s: %s\n", ent.Ref(), ent.Label())
	}
	if err != nil {
		return err
	}
	if files == nil {
		fmt.Fprintln(c.Stdout, "No uncommitted files to park: only the workflow was stashed")
		return nil
	}
	fmt.Fprintf(c.Stdout, "Parked %s with it; the working tree and the index are as HEAD has them\n", text.Plural(files.Count, "uncommitted file", "uncommitted files"))
	return nil
}

func runStashList(c *cmdCtx, _ []string) error {
	if c.boolFlag("dropped") {
		return runStashListDropped(c)
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	list, err := e.StashList()
	if err != nil {
		return err
	}
	if c.boolFlag("json") {
		out := stashListJSON{Schema: c.jsonSchema(), Stashes: []stashJSON{}}
		for _, ent := range list {
			j := newStashJSON(ent)
			j.FilesElsewhere = e.ParkedElsewhere(ent)
			out.Stashes = append(out.Stashes, j)
		}
		return writeJSON(c.Stdout, out)
	}
	if len(list) == 0 {
		fmt.Fprintln(c.Stdout, "No stashes found")
		return nil
	}
	now := c.Now()
	for _, ent := range list {
		if ent.Damaged != "" {
			fmt.Fprintf(c.Stdout, "%s: %s: %s\n", ent.Ref(), ent.Label(), ent.Damaged)
			continue
		}
		mark := filesMark(ent.Stash)
		if e.ParkedElsewhere(ent) {
			mark = strings.TrimSuffix(mark, "]") + " in another clone]"
		}
		fmt.Fprintf(c.Stdout, "%s: %s (%s)%s\n", ent.Ref(), ent.Label(), engine.RelativeTime(ent.Timestamp, now), mark)
	}
	return nil
}

// filesMark marks a stash that parked files, in list and show.
func filesMark(s *engine.Stash) string {
	if s.Files == nil {
		return ""
	}
	return " [" + text.Plural(s.Files.Count, "file", "files") + " parked]"
}

func runStashListDropped(c *cmdCtx) error {
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	list, err := e.StashDropped()
	if err != nil {
		return err
	}
	if c.boolFlag("json") {
		out := droppedListJSON{Schema: c.jsonSchema(), Dropped: []droppedJSON{}}
		for _, d := range list {
			out.Dropped = append(out.Dropped, droppedJSON{
				stashJSON: newStashJSON(&engine.StashEntry{Stash: d.Stash}).entry(),
				Operation: string(d.Op),
				DroppedAt: d.DroppedAt.UTC(),
			})
		}
		return writeJSON(c.Stdout, out)
	}
	if len(list) == 0 {
		fmt.Fprintf(c.Stdout, "No dropped stashes in the last %d days\n", int(engine.DroppedStashWindow/(24*time.Hour)))
		return nil
	}
	now := c.Now()
	for _, d := range list {
		what := d.Label()
		if d.Damaged != "" {
			what = "damaged entry: " + d.Damaged
		}
		verb := "dropped"
		if d.Op == engine.StashOpClear {
			verb = "cleared"
		}
		fmt.Fprintf(c.Stdout, "%s: %s (%s %s)\n", d.ID, what, verb, engine.RelativeTime(d.DroppedAt, now))
	}
	return nil
}

func runStashShow(c *cmdCtx, args []string) error {
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	ent, err := e.StashFind(optArg(args), "show")
	if err != nil {
		return err
	}
	if c.boolFlag("json") {
		out := stashShowJSON{Schema: c.jsonSchema(), Stash: stashDetailJSON{stashJSON: newStashJSON(ent)}}
		if ent.Damaged == "" {
			st := ent.State
			d := &out.Stash
			d.History, d.WorkflowID = st.History, st.WorkflowID
			started, phase := st.StartedAt.UTC(), st.PhaseStartTime.UTC()
			d.StartedAt, d.PhaseStartedAt = &started, &phase
			age := int64(max(c.Now().Sub(ent.Timestamp), 0).Seconds())
			d.AgeSeconds = &age
		}
		return writeJSON(c.Stdout, out)
	}
	if ent.Damaged != "" {
		fmt.Fprintf(c.Stdout, "%s: %s: %s\n", ent.Ref(), ent.Label(), ent.Damaged)
		return nil
	}
	st := ent.State
	w := c.Stdout
	fmt.Fprintf(w, "%s: %s\n", ent.Ref(), ent.Label())
	fmt.Fprintf(w, "Id: %s\n", ent.ID)
	fmt.Fprintf(w, "Workflow: %s\n", st.Workflow)
	fmt.Fprintf(w, "Mode: %s\n", firstLineOf(st.Mode))
	fmt.Fprintf(w, "Current node: %s\n", c.highlight(st.CurrentNode))
	fmt.Fprintf(w, "History: %s\n", historyLine(st.History))
	fmt.Fprintf(w, "Status: %s\n", st.Status)
	if st.MetaMode != "" {
		fmt.Fprintf(w, "Meta-mode: %s\n", metaModeName(st.MetaMode))
	}
	msg := ent.Message
	if msg == "" {
		msg = "(none)"
	}
	fmt.Fprintf(w, "Message: %s\n", text.Clean(msg))
	fmt.Fprintf(w, "Stashed: %s (%s)\n", engine.RelativeTime(ent.Timestamp, c.Now()), ent.Timestamp.UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "Worktree: %s\n", firstLineOf(ent.Worktree))
	fmt.Fprintf(w, "Task: %s\n", ent.Task)
	if f := ent.Files; f != nil {
		fmt.Fprintf(w, "Files: %s parked, from %s\n", text.Plural(f.Count, "uncommitted file", "uncommitted files"), headLabel(strings.TrimPrefix(f.Branch, "refs/heads/"), f.Head))
	}
	return nil
}

func runStashPop(c *cmdCtx, args []string, keep bool) error {
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	ent, v, err := e.StashPop(optArg(args), keep, c.boolFlag("force"))
	var conflict *engine.StashConflictError
	if errors.As(err, &conflict) {
		ent, v = conflict.Entry, conflict.View
	} else if err != nil {
		return err
	}
	c.printParked(v)
	fmt.Fprintf(c.Stdout, "Restored %s: %s\n", ent.Ref(), ent.Label())
	if ent.Files != nil {
		fmt.Fprintf(c.Stdout, "Restored the %s it parked\n", text.Plural(ent.Files.Count, "file", "files"))
	}
	if conflict != nil {
		// As git stash pop prints them: one line a path.
		for _, cf := range conflict.Conflicts {
			fmt.Fprintf(c.Stdout, "CONFLICT (%s): %s: %s\n", cf.Kind, c.quotePath(cf.Path), cf.What)
		}
	}
	fmt.Fprintln(c.Stdout)
	c.printView(v)
	if conflict != nil {
		return conflict
	}
	return nil
}

func runStashDrop(c *cmdCtx, args []string) error {
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	ent, err := e.StashFind(optArg(args), "drop")
	if err != nil {
		return err
	}
	if !c.boolFlag("yes") {
		ends, err := e.StashDropEnds(ent)
		if err != nil {
			return err
		}
		if ends != "" {
			fmt.Fprintf(c.Stdout, "%s holds task '%s': dropping it ends the task (archived as aborted)\n", ent.Ref(), ends)
		}
		ok, err := c.confirm(fmt.Sprintf("Drop %s: %s? (y/n): ", ent.Ref(), ent.Label()), "drop")
		if err != nil || !ok {
			return err
		}
	}
	ended, err := e.StashDrop(ent)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.Stdout, "Dropped %s\n", ent.Ref())
	printEnded(c, ended)
	return nil
}

// maxEndedNamed bounds the tasks the clear question names.
const maxEndedNamed = 10

// printEnded says which tasks a drop or clear ended, and how to undo it.
func printEnded(c *cmdCtx, ended []engine.EndedTask) {
	for _, t := range ended {
		fmt.Fprintf(c.Stdout, "Ended task '%s' at %s (archived as aborted; 'git hegel stash restore %s' brings the stash and the task back)\n",
			t.Task, t.Node, t.Stash)
	}
}

func runStashClear(c *cmdCtx, _ []string) error {
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	listed, removed, ended, err := e.StashClear(func(n int, ends []string) (bool, error) {
		if c.boolFlag("yes") {
			return true, nil
		}
		if len(ends) > 0 {
			names := ends
			if len(names) > maxEndedNamed {
				names = append(names[:maxEndedNamed:maxEndedNamed], fmt.Sprintf("and %d more", len(ends)-maxEndedNamed))
			}
			fmt.Fprintf(c.Stdout, "Clearing ends %s (archived as aborted): %s\n",
				text.Plural(len(ends), "stashed task", "stashed tasks"), strings.Join(names, ", "))
		}
		q := fmt.Sprintf("Clear all %d stashes? (y/n): ", n)
		if n == 1 {
			q = "Clear 1 stash? (y/n): "
		}
		return c.confirm(q, "clear")
	})
	switch {
	case err != nil:
		return err
	case listed == 0:
		fmt.Fprintln(c.Stdout, "No stashes to clear")
	case removed > 0:
		fmt.Fprintf(c.Stdout, "Cleared %s\n", text.Plural(removed, "stash", "stashes"))
	}
	printEnded(c, ended)
	return nil
}

func runStashRestore(c *cmdCtx, args []string) error {
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	ent, unarchived, err := e.StashRestore(args[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(c.Stdout, "Restored %s as %s: %s\n", ent.ID, ent.Ref(), ent.Label())
	if unarchived {
		fmt.Fprintf(c.Stdout, "Task '%s' is stashed again, as before the drop ('git hegel stash pop' takes it up)\n", ent.Task)
	}
	return nil
}

// The `stash --json` output types (docs/stash.md).

type stashListJSON struct {
	Schema  int         `json:"schema"`
	Stashes []stashJSON `json:"stashes"`
}

// stashJSON is one live stash. A damaged entry has only index, ref, id and
// damaged.
type stashJSON struct {
	Index       *int       `json:"index,omitempty"`
	Ref         string     `json:"ref,omitempty"`
	ID          string     `json:"id"`
	Damaged     string     `json:"damaged,omitempty"`
	Message     *string    `json:"message,omitempty"`
	CreatedAt   *time.Time `json:"created_at,omitempty"`
	Task        string     `json:"task,omitempty"`
	Worktree    string     `json:"worktree,omitempty"`
	Workflow    string     `json:"workflow,omitempty"`
	Mode        string     `json:"mode,omitempty"`
	CurrentNode string     `json:"current_node,omitempty"`
	Status      string     `json:"status,omitempty"`
	MetaMode    string     `json:"meta_mode,omitempty"` // the meta-mode the task was started in
	Files       *int       `json:"files,omitempty"`     // uncommitted files parked with it (stash push --files)
	// FilesElsewhere: another clone parked them (pop and apply need
	// --force); list only.
	FilesElsewhere bool `json:"files_elsewhere,omitempty"`
}

func newStashJSON(ent *engine.StashEntry) stashJSON {
	idx := ent.Index
	j := stashJSON{Index: &idx, Ref: ent.Ref(), ID: ent.ID}
	if ent.Damaged != "" {
		j.Damaged = ent.Damaged
		return j
	}
	msg, at, st := ent.Message, ent.Timestamp.UTC(), ent.State
	j.Message, j.CreatedAt = &msg, &at
	j.Task, j.Worktree = ent.Task, ent.Worktree
	j.Workflow, j.Mode, j.CurrentNode, j.Status = st.Workflow, st.Mode, st.CurrentNode, st.Status
	j.MetaMode = st.MetaMode
	if ent.Files != nil {
		n := ent.Files.Count
		j.Files = &n
	}
	return j
}

// entry drops the fields that only a live stash has.
func (j stashJSON) entry() stashJSON {
	j.Index, j.Ref = nil, ""
	return j
}

type stashShowJSON struct {
	Schema int             `json:"schema"`
	Stash  stashDetailJSON `json:"stash"`
}

type stashDetailJSON struct {
	stashJSON
	History        []string   `json:"history,omitempty"`
	WorkflowID     string     `json:"workflow_id,omitempty"`
	StartedAt      *time.Time `json:"started_at,omitempty"`
	PhaseStartedAt *time.Time `json:"phase_started_at,omitempty"`
	AgeSeconds     *int64     `json:"age_seconds,omitempty"`
}

type droppedListJSON struct {
	Schema  int           `json:"schema"`
	Dropped []droppedJSON `json:"dropped"`
}

type droppedJSON struct {
	stashJSON
	Operation string    `json:"operation"` // "drop" or "clear"
	DroppedAt time.Time `json:"dropped_at"`
}

package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/text"
)

// `git hegel undo [N]`: put back what the last N agent actions changed
// (the snapshots the agent hooks take around each file-changing tool
// call), and only that; `--redo` takes the newest undo back; `--list`
// shows the actions (docs/agents.md, "Undoing agent actions").

func undoFlags(fs *pflag.FlagSet) {
	fs.BoolP("yes", "y", false, "do not ask for confirmation")
	fs.BoolP("dry-run", "n", false, "list what would change and change nothing")
	fs.Bool("force", false, "also restore files something else changed after the actions (their content stays in the safety snapshot)")
	fs.Bool("redo", false, "take the newest undo back")
	fs.Bool("list", false, "list the recorded actions, newest first")
}

func runUndo(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 1); err != nil {
		return err
	}
	list, redo := c.boolFlag("list"), c.boolFlag("redo")
	n := 1
	if len(args) == 1 {
		v, err := strconv.Atoi(args[0])
		if err != nil || v < 1 {
			return usagef(c.name, "'%s' is not a number of actions (1 or more)", args[0])
		}
		n = v
	}
	switch {
	case list && (redo || len(args) == 1 || c.boolFlag("force") || c.boolFlag("dry-run") || c.boolFlag("yes")):
		return usagef(c.name, "--list takes no N and no other option but --json and --task")
	case redo && len(args) == 1:
		return usagef(c.name, "--redo takes no N")
	case c.boolFlag("json") && !list && !c.boolFlag("dry-run"):
		return usagef(c.name, "--json needs --list or --dry-run")
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	// An interrupted undo is taken back first; an interrupted rollback
	// stops here, as it stops every restore.
	if _, err := e.RecoverUndo(); err != nil {
		return err
	}
	if rec, err := e.InterruptedRollback(); err != nil {
		return err
	} else if rec != nil {
		return rec.InterruptedError()
	}
	if list {
		st, actions, err := e.ListActions(c.selected())
		if err != nil {
			return err
		}
		return c.listActions(st, actions)
	}
	p, err := e.PlanUndo(c.selected(), engine.UndoOptions{N: n, Redo: redo, Force: c.boolFlag("force")})
	if err != nil {
		return err
	}
	if c.boolFlag("json") {
		return writeJSON(c.Stdout, c.undoPlanJSON(p, e.CheckUndo(p)))
	}
	c.printUndoPlan(p)
	if c.boolFlag("dry-run") {
		err := p.Refusal()
		if err == nil {
			err = e.CheckUndo(p)
		}
		if err != nil {
			fmt.Fprintln(c.Stdout, "Refused: "+err.Error())
		}
		fmt.Fprintln(c.Stdout, "Dry run: nothing changed")
		return nil
	}
	if err := p.Refusal(); err != nil {
		return err
	}
	if len(p.Changes) == 0 {
		fmt.Fprintln(c.Stdout, "Nothing to change: the files are already as they were")
		return nil
	}
	verb := "Undo"
	if redo {
		verb = "Redo"
	}
	if !c.boolFlag("yes") {
		// Refused by the working tree: say so before asking, not after.
		if err := e.CheckUndo(p); err != nil {
			return err
		}
		ok, err := c.confirm(fmt.Sprintf("%s? The files as they are now are kept in a safety snapshot. (y/N): ", verb), strings.ToLower(verb))
		if err != nil {
			return err
		}
		if !ok {
			fmt.Fprintln(c.Stdout, verb+" cancelled")
			return nil
		}
	}
	if err := e.Undo(p); err != nil {
		return err
	}
	fmt.Fprintf(c.Stdout, "Restored %s\n", text.Plural(len(p.Changes), "file", "files"))
	if !redo {
		fmt.Fprintln(c.Stdout, "Run 'git hegel undo --redo' to take it back")
	}
	return nil
}

// printUndoPlan says which actions an undo goes back over and which files
// it writes.
func (c *cmdCtx) printUndoPlan(p *engine.UndoPlan) {
	w := c.Stdout
	if p.Redo {
		fmt.Fprintf(w, "Redo in task %s: the files the newest undo restored\n", p.Task)
	} else {
		fmt.Fprintf(w, "Undo in task %s: %s\n", p.Task, text.Plural(len(p.Actions), "action", "actions"))
		for i := len(p.Actions) - 1; i >= 0; i-- {
			a := p.Actions[i]
			fmt.Fprintf(w, "  %s  %s  %s\n", a.Before.ID, a.Before.Tool, printableInput(a.Before.Input))
		}
	}
	if len(p.Changes) == 0 {
		return
	}
	fmt.Fprintf(w, "Files to restore (%d):\n", len(p.Changes))
	for _, f := range p.Changes {
		mark := ""
		if _, later := slices.BinarySearch(p.Later, f); later {
			mark = "  (changed later by something else)"
		}
		fmt.Fprintf(w, "  %s%s\n", c.quotePath(f), mark)
	}
}

// printableInput is an action's input (or any text a hook payload chose:
// a session id) on one line, safe to print: control characters (C0, DEL
// and C1, so an escape sequence or the one-byte CSI) and the
// bidirectional overrides that reorder what a terminal shows come out as
// '?'.
func printableInput(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || text.IsBidiControl(r) {
			return '?'
		}
		return r
	}, s)
}

func (c *cmdCtx) listActions(st *engine.State, actions []*engine.Action) error {
	actions = slices.Clone(actions)
	slices.Reverse(actions)
	if c.boolFlag("json") {
		out := actionListJSON{Schema: c.jsonSchema(), Task: st.Task, Actions: []actionJSON{}}
		for _, a := range actions {
			out.Actions = append(out.Actions, actionToJSON(a))
		}
		return writeJSON(c.Stdout, out)
	}
	if len(actions) == 0 {
		fmt.Fprintf(c.Stdout, "No agent actions recorded for task %s\n", st.Task)
		return nil
	}
	tw := tabwriter.NewWriter(c.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "N\tID\tTIME\tTOOL\tFILES\tSESSION\tINPUT")
	for i, a := range actions {
		files := strconv.Itoa(len(a.Changed))
		if a.Elsewhere {
			files = "?" // running in the task's worktree: not seen from here
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", i+1, a.Before.ID, a.Before.CreatedAt.UTC().Format("2006-01-02 15:04:05"),
			a.Before.Tool, files, shortSession(a.Before.Session), printableInput(a.Before.Input))
	}
	return tw.Flush()
}

// shortSession is a session id's first 8 characters, printable.
func shortSession(s string) string {
	if s == "" {
		return "-"
	}
	if r := []rune(s); len(r) > 8 {
		s = string(r[:8])
	}
	return printableInput(s)
}

// The `undo --list --json` and `undo --dry-run --json` output
// (docs/json.md).

type actionListJSON struct {
	Schema  int          `json:"schema"`
	Task    string       `json:"task"`
	Actions []actionJSON `json:"actions"` // newest first
}

type actionJSON struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	Session   string    `json:"session,omitempty"`
	Agent     string    `json:"agent,omitempty"`
	Tool      string    `json:"tool"`
	Input     string    `json:"input,omitempty"`
	Finished  bool      `json:"finished"` // its PostToolUse was recorded
	Changed   []string  `json:"changed"`
	Elsewhere bool      `json:"running_elsewhere,omitempty"`
	Local     bool      `json:"local"`
}

func actionToJSON(a *engine.Action) actionJSON {
	b := a.Before
	return actionJSON{ID: b.ID, CreatedAt: b.CreatedAt.UTC(), Session: b.Session, Agent: b.Agent, Tool: b.Tool, Input: b.Input,
		Finished: a.After != nil, Changed: nonNil(a.Changed), Elsewhere: a.Elsewhere, Local: b.Local}
}

type undoPlanJSON struct {
	Schema  int          `json:"schema"`
	Task    string       `json:"task"`
	Redo    bool         `json:"redo"`
	Target  string       `json:"target"`
	Actions []actionJSON `json:"actions"` // newest first; empty for a redo
	Touched []string     `json:"touched"`
	Changes []string     `json:"changes"`
	Later   []string     `json:"changed_later"`
	Refused string       `json:"refused,omitempty"`
}

// undoPlanJSON is p as JSON; check is what the working tree refuses
// (engine.CheckUndo), reported when the plan itself does not refuse.
func (c *cmdCtx) undoPlanJSON(p *engine.UndoPlan, check error) undoPlanJSON {
	out := undoPlanJSON{Schema: c.jsonSchema(), Task: p.Task, Redo: p.Redo, Target: p.Target.ID, Actions: []actionJSON{},
		Touched: nonNil(p.Touched), Changes: nonNil(p.Changes), Later: nonNil(p.Later)}
	for i := len(p.Actions) - 1; i >= 0; i-- {
		out.Actions = append(out.Actions, actionToJSON(p.Actions[i]))
	}
	if err := p.Refusal(); err != nil {
		out.Refused = err.Error()
	} else if check != nil {
		out.Refused = check.Error()
	}
	return out
}

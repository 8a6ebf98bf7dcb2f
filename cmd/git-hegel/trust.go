package main

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

// git hegel trust [<task>]: review a task's workflow definition and trust
// it on this machine (engine/trust.go; docs/sync.md, "Trust").

func trustFlags(fs *pflag.FlagSet) {
	fs.BoolP("yes", "y", false, "trust it without asking (after reading what this prints)")
	fs.BoolP("dry-run", "n", false, "show what differs from the version trusted here, and trust nothing")
	fs.Bool("list", false, "list the definitions trusted on this machine")
	fs.String("workflow", "", "review the worktree's file for this workflow before starting a task from it")
	valueName(fs, "workflow", "NAME")
	jsonFlag(fs)
}

func runTrust(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 1); err != nil {
		return err
	}
	list := c.boolFlag("list")
	if list && (len(args) > 0 || c.boolFlag("yes") || c.boolFlag("dry-run")) {
		return usagef(c.name, "--list takes no task, -y or --dry-run")
	}
	if c.boolFlag("yes") && c.boolFlag("dry-run") {
		return usagef(c.name, "-y and --dry-run exclude each other")
	}
	file := c.flags.Changed("workflow")
	if file && (len(args) > 0 || list || c.stringFlag("workflow") == "") {
		return usagef(c.name, "--workflow takes a workflow's name, and no task or --list")
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	if list {
		return c.trustList(e)
	}
	var rv *engine.TrustReview
	if file {
		rv, err = e.ReviewWorkflowFile(c.stringFlag("workflow"))
	} else {
		rv, err = e.ReviewTrust(optArg(args))
	}
	if errors.Is(err, engine.ErrNoWorkflow) {
		return errors.New("No active workflow; name the task: git hegel trust <task>")
	}
	if err != nil {
		return err
	}
	subject := "task " + rv.Task
	if file {
		subject = "workflow file " + c.quotePath(rv.File)
	}
	asJSON := c.boolFlag("json")
	if rv.Trust.Trusted && len(rv.Texts) == 0 {
		if asJSON {
			return writeJSON(c.Stdout, trustToJSON(rv, true, c.jsonSchema()))
		}
		fmt.Fprintf(c.Stdout, "The definition of %s is trusted on this machine already (%s); nothing to do\n", subject, trustHow(rv.Trust))
		return nil
	}
	if !asJSON {
		if !rv.Trust.Trusted {
			c.printReview(rv)
			if len(rv.Texts) > 0 {
				fmt.Fprintln(c.Stdout)
			}
		}
		c.printTexts(rv)
	}
	trusted := false
	defer func() {
		if asJSON {
			_ = writeJSON(c.Stdout, trustToJSON(rv, trusted, c.jsonSchema()))
		}
	}()
	switch {
	case c.boolFlag("dry-run"):
		if !asJSON {
			fmt.Fprintln(c.Stdout, "Dry run: nothing trusted")
		}
		return nil
	case c.boolFlag("yes"):
	case asJSON || !c.inputIsTerminal():
		again := rv.Task
		if file {
			again = "--workflow " + rv.Workflow
		}
		return fmt.Errorf("Not trusted: there is no terminal to ask on; read what differs, then run 'git hegel trust %s -y'", again)
	default:
		q := fmt.Sprintf("Trust this definition of %s on this machine (its commands may then run, and its prompts reach your agent)? (y/N) ", subject)
		switch {
		case rv.Trust.Trusted:
			q = fmt.Sprintf("Trust these texts of %s on this machine (they may then reach your agent in its prompts)? (y/N) ", subject)
		case len(rv.Texts) > 0:
			q = fmt.Sprintf("Trust this definition of %s and these texts on this machine (its commands may then run, and its prompts and these texts reach your agent)? (y/N) ", subject)
		}
		ok, err := c.confirm(q, "trust")
		if err != nil {
			return err
		}
		if !ok {
			fmt.Fprintln(c.Stdout, "Nothing trusted")
			return nil
		}
	}
	if err := e.TrustTask(rv); err != nil {
		return err
	}
	trusted = true
	if !asJSON {
		if !rv.Trust.Trusted {
			fmt.Fprintf(c.Stdout, "Trusted the definition of %s (blob %s) on this machine\n", subject, short(rv.Current.ID))
		}
		if n := len(rv.Texts); n > 0 {
			fmt.Fprintf(c.Stdout, "Trusted %d %s of %s on this machine\n", n, pluralWord(n, "text", "texts"), subject)
		}
	}
	return nil
}

// printTexts shows the task's texts that arrived with a fetch and are not
// trusted, written out (a carriage return or an escape sequence is shown,
// not obeyed), each with where it came from.
func (c *cmdCtx) printTexts(rv *engine.TrustReview) {
	if len(rv.Texts) == 0 {
		return
	}
	w := c.Stdout
	of := "of task " + rv.Task
	if rv.File != "" {
		of = "its prompts may include"
	}
	fmt.Fprintf(w, "Texts %s that came with a fetch or a commit and reach your agent in its prompts only once trusted:\n", of)
	for _, t := range rv.Texts {
		fmt.Fprintf(w, "  %s (from %s, blob %s):\n", t.Label(), text.Visible(t.Remote), short(t.ID))
		body := strings.TrimRight(t.Text, "\n")
		if t.Field == "step_results" || t.Field == "inputs/vars.json" {
			body = strings.ReplaceAll(body, "\x00", " ")
		}
		for _, l := range strings.Split(body, "\n") {
			fmt.Fprintf(w, "    | %s\n", text.Visible(l))
		}
	}
	fmt.Fprintln(w)
}

// trustHow says how a definition came to be trusted, for people.
func trustHow(t engine.DefinitionTrust) string {
	switch t.How {
	case engine.TrustBuiltin:
		return "it is a built-in workflow"
	case engine.TrustStart:
		return fmt.Sprintf("task %s was started here from it on %s", t.Task, t.At.UTC().Format("2006-01-02"))
	case engine.TrustReviewed:
		if t.Task == "" {
			return fmt.Sprintf("trusted with git hegel trust --workflow on %s", t.At.UTC().Format("2006-01-02"))
		}
		return fmt.Sprintf("trusted with git hegel trust %s on %s", t.Task, t.At.UTC().Format("2006-01-02"))
	}
	return "no record of trust is kept in this repository"
}

// printReview shows what trusting would trust: where the definition came
// from, how it differs from the version trusted here (the lines that run
// commands highlighted), and every command it runs.
func (c *cmdCtx) printReview(rv *engine.TrustReview) {
	w := c.Stdout
	ns := "tasks"
	if rv.Archived {
		ns = "archive"
	}
	where := fmt.Sprintf("refs/hegel/%s/%s:workflow.yaml", ns, rv.Task)
	if rv.File != "" {
		where = rv.File
		fmt.Fprintf(w, "Workflow %s is a file this machine does not trust:\n", rv.Workflow)
	} else {
		fmt.Fprintf(w, "Task %s runs a workflow definition this machine does not trust:\n", rv.Task)
	}
	fmt.Fprintf(w, "  %s, blob %s\n", c.quotePath(where), short(rv.Current.ID))
	if v := rv.Current; v.Commit != "" {
		from := "in this clone, not by a start here"
		switch {
		case v.Remote != "":
			from = "from " + v.Remote
		case v.StartedHere():
			from = "with a start here, from a file this machine has not trusted"
		}
		fmt.Fprintf(w, "  it came %s: commit %s by %s, %s, %s\n", from, short(v.Commit), orDash(text.Visible(v.Author)), v.At.UTC().Format(time.DateOnly), quoteSubject(v.Subject))
	}
	old, oldName := "", "/dev/null"
	if p := rv.Previous; p != nil {
		old, oldName = string(p.Data), "trusted "+short(p.ID)
		fmt.Fprintf(w, "  compared with the version trusted here (blob %s, commit %s):\n\n", short(p.ID), short(p.Commit))
	} else {
		fmt.Fprintf(w, "  no earlier version of it is trusted here; all of it:\n\n")
	}
	oldLines, newLines := commandLines(rv.PreviousCommands), commandLines(rv.Commands)
	styledDiff(w, oldName, where, old, string(rv.Current.Data), func(kind byte, a, b int, line string) string {
		if (kind == '-' && oldLines[a]) || (kind != '-' && newLines[b]) {
			return c.paint(w, "command", line)
		}
		return line
	})
	fmt.Fprintln(w)
	if len(rv.Commands) == 0 {
		fmt.Fprintln(w, "It runs no commands; trusting it shows its prompts to you and your agent.")
		return
	}
	fmt.Fprintln(w, "Commands it runs (check, run command, adapter):")
	for _, f := range rv.Commands {
		mark := ""
		if rv.Previous != nil && f.IsNew(rv.PreviousCommands) {
			mark = "  (new)"
		}
		// Written out as the shell gets it: a carriage return or an
		// escape sequence in a command is shown, not obeyed.
		cmd := strings.ReplaceAll(text.Visible(f.Text), "\n", "\n      ")
		fmt.Fprintf(w, "  %s: %s: %s%s\n", f.Node, f.Field, c.paint(w, "command", cmd), mark)
	}
}

// quoteSubject keeps a commit subject (someone else's text) on one line.
func quoteSubject(s string) string {
	if len(s) > 72 {
		s = s[:69] + "..."
	}
	return fmt.Sprintf("%q", s)
}

// commandLines marks the file lines that hold commands.
func commandLines(fs []workflow.CommandField) map[int]bool {
	out := map[int]bool{}
	for _, f := range fs {
		for l := f.Line; l <= f.EndLine; l++ {
			out[l] = true
		}
	}
	return out
}

func (c *cmdCtx) trustList(e *engine.Engine) error {
	recs, err := e.TrustedList()
	if err != nil {
		return err
	}
	if c.boolFlag("json") {
		out := trustListJSON{Schema: c.jsonSchema(), Trusted: []trustRecordJSON{}}
		for _, r := range recs {
			out.Trusted = append(out.Trusted, trustRecordJSON{Definition: r.ID, Task: r.Task, How: r.How, At: r.At.UTC()})
		}
		return writeJSON(c.Stdout, out)
	}
	if len(recs) == 0 {
		fmt.Fprintln(c.Stdout, "No definitions trusted on this machine yet (built-in workflows always are)")
		return nil
	}
	tw := tabwriter.NewWriter(c.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DEFINITION\tTRUSTED\tHOW\tTASK")
	for _, r := range recs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", short(r.ID), r.At.UTC().Format("2006-01-02 15:04"), r.How, orDash(r.Task))
	}
	return tw.Flush()
}

// The --json documents (docs/json.md).

type trustJSON struct {
	Schema int    `json:"schema"`
	Task   string `json:"task"` // "" with --workflow
	// Workflow and File: with --workflow, the workflow and its file.
	Workflow   string             `json:"workflow,omitempty"`
	File       string             `json:"file,omitempty"`
	Archived   bool               `json:"archived"`
	Definition string             `json:"definition"` // the blob id
	Trusted    bool               `json:"trusted"`    // after this command
	How        string             `json:"how,omitempty"`
	Origin     *trustOriginJSON   `json:"origin"`
	Previous   *trustOriginJSON   `json:"previous"`
	Commands   []trustCommandJSON `json:"commands"`
	Diff       string             `json:"diff"`
	// Texts are the task's texts that came with a fetch and were not
	// trusted before this command.
	Texts []trustTextJSON `json:"texts"`
}

type trustTextJSON struct {
	Field  string `json:"field"`
	Remote string `json:"remote"`
	Text   string `json:"text"`
	ID     string `json:"id"` // the blob id of text
}

type trustOriginJSON struct {
	Definition string    `json:"definition"`
	Commit     string    `json:"commit"`
	Author     string    `json:"author"`
	At         time.Time `json:"at"`
	Subject    string    `json:"subject"`
	Remote     string    `json:"remote"`
}

type trustCommandJSON struct {
	Node    string `json:"node"`
	Field   string `json:"field"`
	Command string `json:"command"`
	Line    int    `json:"line"`
	New     bool   `json:"new"`
}

type trustListJSON struct {
	Schema  int               `json:"schema"`
	Trusted []trustRecordJSON `json:"trusted"`
}

type trustRecordJSON struct {
	Definition string    `json:"definition"`
	Task       string    `json:"task"`
	How        string    `json:"how"`
	At         time.Time `json:"at"`
}

func originJSON(v *engine.DefinitionVersion) *trustOriginJSON {
	if v == nil || v.Commit == "" {
		return nil
	}
	return &trustOriginJSON{Definition: v.ID, Commit: v.Commit, Author: v.Author, At: v.At.UTC(), Subject: v.Subject, Remote: v.Remote}
}

func trustToJSON(rv *engine.TrustReview, trusted bool, schema int) *trustJSON {
	j := &trustJSON{Schema: schema, Task: rv.Task, Workflow: rv.Workflow, File: rv.File, Archived: rv.Archived, Definition: rv.Current.ID, Trusted: trusted,
		Origin: originJSON(&rv.Current), Previous: originJSON(rv.Previous), Commands: []trustCommandJSON{}}
	if rv.Trust.Trusted {
		j.How = rv.Trust.How
	} else if trusted {
		j.How = engine.TrustReviewed
	}
	j.Texts = []trustTextJSON{}
	for _, t := range rv.Texts {
		j.Texts = append(j.Texts, trustTextJSON{Field: t.Field, Remote: t.Remote, Text: t.Text, ID: t.ID})
	}
	for _, f := range rv.Commands {
		j.Commands = append(j.Commands, trustCommandJSON{Node: f.Node, Field: f.Field, Command: f.Text, Line: f.Line,
			New: rv.Previous == nil || f.IsNew(rv.PreviousCommands)})
	}
	if !rv.Trust.Trusted {
		var b strings.Builder
		old, oldName := "", "/dev/null"
		if rv.Previous != nil {
			old, oldName = string(rv.Previous.Data), "trusted "+short(rv.Previous.ID)
		}
		styledDiff(&b, oldName, "workflow.yaml", old, string(rv.Current.Data), nil)
		j.Diff = b.String()
	}
	return j
}

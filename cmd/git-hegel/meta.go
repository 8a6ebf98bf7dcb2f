package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/engine/workflow"
	"github.com/git-hegel/git-hegel/gitstore"
	"github.com/git-hegel/git-hegel/gitstore/gitdir"
)

// `git hegel meta [<name>]` and `git hegel next-workflow [<workflow>]`:
// meta-modes, workflows of workflows (engine/meta.go).

func metaFlags(fs *pflag.FlagSet) {
	fs.Bool("list", false, "list the meta-modes: built-in and .hegel/meta/*.yaml")
	fs.String("task", "", "name the task the meta-mode starts (default: generated, unique)")
	jsonFlagSaying("print the current meta-mode, or with --list every one, as JSON")(fs)
	quietStarted(fs)
}

func runMeta(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 1); err != nil {
		return err
	}
	list, asJSON := c.boolFlag("list"), c.flags.Changed("json")
	switch {
	case len(args) == 1 && list:
		return usagef(c.name, "--list takes no meta-mode")
	case len(args) == 1 && asJSON:
		return usagef(c.name, "--json shows meta-modes; it does not apply to declaring one")
	case len(args) == 0 && c.flags.Changed("task"):
		return usagef(c.name, "--task names the task a meta-mode starts: give the meta-mode")
	}
	if task := c.stringFlag("task"); task != "" {
		if err := engine.CheckTaskName(task); err != nil {
			return err
		}
	}
	e, _, err := c.engine()
	if list && (errors.Is(err, gitdir.ErrNotRepo) || errors.Is(err, gitstore.ErrNoWorkTree)) {
		// Like workflows, the built-ins list anywhere.
		where := "not in a git repository"
		if errors.Is(err, gitstore.ErrNoWorkTree) {
			where = "not in a work tree"
		}
		c.hint(where + ": only the built-in meta-modes are listed")
		return c.printMetaList(&engine.Engine{})
	}
	if err != nil {
		return err
	}
	switch {
	case list:
		return c.printMetaList(e)
	case len(args) == 0:
		return c.printMeta(e)
	}
	v, err := e.DeclareMeta(args[0], engine.StartOptions{Task: c.stringFlag("task")})
	if err != nil {
		return err
	}
	c.printParked(v)
	fmt.Fprintf(c.Stdout, "Meta-mode: %s\n", v.State.MetaMode)
	fmt.Fprintf(c.Stdout, "Task: %s\n", v.Task)
	fmt.Fprintf(c.Stdout, "Task files: %s/\n", engine.TaskDir(v.State))
	c.printView(v)
	return nil
}

func runNextWorkflow(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 1); err != nil {
		return err
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	name := ""
	if len(args) == 1 {
		name = args[0]
	}
	v, err := e.NextWorkflow(name)
	if err != nil {
		return err
	}
	c.printStarted(v)
	return nil
}

// printStarted shows a task a meta-mode started, as start does.
func (c *cmdCtx) printStarted(v *engine.View) {
	fmt.Fprintf(c.Stdout, "Meta-mode: %s\n", v.State.MetaMode)
	fmt.Fprintf(c.Stdout, "Task: %s\n", v.Task)
	fmt.Fprintf(c.Stdout, "Task files: %s/\n", engine.TaskDir(v.State))
	c.printView(v)
}

// metaModeName shows a task's meta_mode: one from another clone may be
// anything, so one that is not a name is quoted and cut.
func metaModeName(name string) string {
	if workflow.ValidMetaModeName(name) {
		return name
	}
	return text.Quote(name) + " (not a meta-mode name)"
}

// metaNextLine says what follows a task of a meta-mode, for status and
// after next: "" when nothing does.
func metaNextLine(v *engine.MetaView) string {
	switch {
	case v.Name == "":
		return ""
	case v.Mode == nil:
		return fmt.Sprintf("Meta-mode %s is not defined here ('git hegel meta --list' lists those that are)", metaModeName(v.Name))
	case len(v.Next) == 0:
		return fmt.Sprintf("Meta-mode %s ends with %s", v.Mode.Name, v.Task.Workflow)
	case v.Done && len(v.Next) == 1:
		return fmt.Sprintf("Next workflow: %s ('git hegel next-workflow' starts it)", text.JoinQuoted(v.Next))
	case v.Done:
		return fmt.Sprintf("Next workflows: %s ('git hegel next-workflow <workflow>' starts one)", text.JoinQuoted(v.Next))
	}
	return fmt.Sprintf("Then: %s, when %s is done", text.JoinQuoted(v.Next), v.Task.Workflow)
}

// printMetaAfter follows a view that completed a task of a meta-mode:
// with hegel.meta.auto and a single follower, the command that finished
// the task starts it; otherwise what may follow is offered.
func (c *cmdCtx) printMetaAfter(v *engine.View) {
	st := v.State
	if c.eng == nil || st == nil || st.MetaMode == "" || st.Status != engine.StatusCompleted {
		return
	}
	if contains([]string{"next", "done", "approve"}, c.name) {
		started, err := c.eng.AutoNextWorkflow(st)
		if err != nil {
			c.warn(fmt.Sprintf("the next workflow of meta-mode %s did not start: %v", st.MetaMode, err))
		} else if started != nil {
			fmt.Fprintf(c.Stdout, "\nStarted %s, which follows %s in meta-mode %s (hegel.meta.auto)\n", started.State.Workflow, st.Workflow, st.MetaMode)
			c.printStarted(started)
			return
		}
	}
	mv, err := c.eng.MetaOf(st)
	if err != nil {
		c.warn(err.Error())
		return
	}
	if line := metaNextLine(mv); line != "" {
		fmt.Fprintf(c.Stdout, "\n%s\n", line)
	}
}

func (c *cmdCtx) printMeta(e *engine.Engine) error {
	v, err := e.Meta(engine.TaskOptions{})
	if err != nil {
		return err
	}
	if c.flags.Changed("json") {
		out := metaJSON{Schema: c.jsonSchema(), MetaMode: v.Name, Defined: v.Mode != nil, NextWorkflows: nonNil(v.Next), Ready: v.Done}
		if st := v.Task; st != nil {
			out.Task, out.Workflow, out.Status = st.Task, st.Workflow, st.Status
		}
		if v.Mode != nil {
			d := metaModeJSONOf(v.Mode)
			out.Definition = &d
		}
		return writeJSON(c.Stdout, out)
	}
	if v.Name == "" {
		if v.Task == nil {
			fmt.Fprintln(c.Stdout, "No meta-mode: no workflow is active. Declare one with 'git hegel meta <name>' ('git hegel meta --list' lists them)")
		} else {
			fmt.Fprintf(c.Stdout, "No meta-mode: task %s was started on its own. Declare one with 'git hegel meta <name>' when it is done\n", v.Task.Task)
		}
		return nil
	}
	st := v.Task
	fmt.Fprintf(c.Stdout, "Meta-mode: %s\n", metaModeName(v.Name))
	if m := v.Mode; m != nil {
		if m.Description != "" {
			fmt.Fprintf(c.Stdout, "Description: %s\n", m.Description)
		}
		fmt.Fprintln(c.Stdout, "Sequence:")
		for _, l := range metaSequence(m) {
			fmt.Fprintf(c.Stdout, "  %s\n", l)
		}
	} else if v.Broken != nil {
		fmt.Fprintf(c.Stdout, "Broken: %v\n", v.Broken.Err)
	}
	fmt.Fprintf(c.Stdout, "Task: %s (%s at %s, %s)\n", st.Task, st.Workflow, st.CurrentNode, st.Status)
	if line := metaNextLine(v); line != "" {
		fmt.Fprintln(c.Stdout, line)
	}
	return nil
}

// metaSequence draws a meta-mode: where it starts, what follows each
// workflow, and where it switches.
func metaSequence(m *workflow.MetaMode) []string {
	out := []string{"starts with " + m.Start}
	for _, w := range m.Order {
		next, sw := m.Next[w], m.Switch[w]
		var parts []string
		if len(next) > 0 {
			parts = append(parts, w+" → "+strings.Join(next, " | "))
		}
		if sw != "" {
			parts = append(parts, w+" switches to meta-mode "+sw)
		}
		out = append(out, parts...)
	}
	return out
}

func (c *cmdCtx) printMetaList(e *engine.Engine) error {
	reg, err := e.MetaModeList()
	if err != nil {
		return err
	}
	if c.flags.Changed("json") {
		out := metaListJSON{Schema: c.jsonSchema(), MetaModes: []metaModeJSON{}, Broken: []brokenJSON{}}
		for _, m := range reg.List() {
			out.MetaModes = append(out.MetaModes, metaModeJSONOf(m))
		}
		for _, b := range reg.Broken() {
			out.Broken = append(out.Broken, brokenJSON{Name: b.Name, Source: b.Source, Error: b.Err.Error()})
		}
		return writeJSON(c.Stdout, out)
	}
	width := 10
	for _, m := range reg.List() {
		width = max(width, len(m.Name))
	}
	for _, m := range reg.List() {
		src := ""
		if m.Source != "built-in" {
			src = "  (" + c.quotePath(m.Source) + ")"
		}
		fmt.Fprintf(c.Stdout, "%-*s  %s%s\n", width, m.Name, strings.Join(metaSequence(m), "; "), src)
	}
	for _, b := range reg.Broken() {
		name := b.Name
		if name == "" {
			name = "-"
		}
		fmt.Fprintf(c.Stdout, "%-*s  broken: %s\n", width, name, b.Err)
	}
	return nil
}

// metaJSON is `git hegel meta --json`.
type metaJSON struct {
	Schema int `json:"schema"`
	// MetaMode is the task's meta_mode ("" when none); Defined says
	// whether it is defined here.
	MetaMode string `json:"meta_mode"`
	Defined  bool   `json:"defined"`
	Task     string `json:"task,omitempty"`
	Workflow string `json:"workflow,omitempty"`
	Status   string `json:"status,omitempty"`
	// NextWorkflows may follow the task's workflow; Ready says the task
	// is done, so next-workflow starts one now.
	NextWorkflows []string      `json:"next_workflows"`
	Ready         bool          `json:"ready"`
	Definition    *metaModeJSON `json:"definition,omitempty"`
}

// metaListJSON is `git hegel meta --list --json`.
type metaListJSON struct {
	Schema    int            `json:"schema"`
	MetaModes []metaModeJSON `json:"meta_modes"`
	Broken    []brokenJSON   `json:"broken"`
}

// metaModeJSON is one meta-mode's definition.
type metaModeJSON struct {
	Name        string              `json:"name"`
	Description string              `json:"description"`
	Source      string              `json:"source"`
	Start       string              `json:"start"`
	Workflows   []string            `json:"workflows"`
	Transitions map[string][]string `json:"transitions"`
	Switch      map[string]string   `json:"switch"`
}

func metaModeJSONOf(m *workflow.MetaMode) metaModeJSON {
	return metaModeJSON{Name: m.Name, Description: m.Description, Source: m.Source, Start: m.Start,
		Workflows: m.Order, Transitions: m.Next, Switch: m.Switch}
}

// metaValues completes meta-mode names, or the workflows that may follow
// this worktree's done task.
func (c *cmdCtx) metaValues(kind valueKind) []candidate {
	e, _, err := c.engine()
	if err != nil {
		return nil
	}
	var out []candidate
	if kind == kindMetaMode {
		reg, err := e.MetaModeList()
		if err != nil {
			return nil
		}
		for _, m := range reg.List() {
			out = append(out, candidate{m.Name, m.Description})
		}
		return out
	}
	v, err := e.Meta(engine.TaskOptions{})
	if err != nil || !v.Done {
		return nil
	}
	for _, w := range v.Next {
		out = append(out, candidate{w, "follows " + v.Task.Workflow + " in " + v.Mode.Name})
	}
	return out
}

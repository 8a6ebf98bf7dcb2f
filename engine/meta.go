package engine

import (
	"errors"
	"fmt"
	"slices"

	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

// Meta-modes. A meta-mode is a workflow of workflows (workflow.MetaMode):
// `git hegel meta NAME` starts its first workflow as a task carrying
// meta_mode NAME; when such a task is done, the workflows that may follow
// are offered, and `git hegel next-workflow` starts one as a new task with
// the same meta_mode (or the one the meta-mode switches to). Every start
// goes through StartTask, so the workflow is looked up in this worktree's
// registry and trusted as a start is (trust.go): a meta-mode file only
// names workflows. A task's meta_mode is data: a fetched task's never
// starts anything here, and only a task this worktree finished with the
// command it ran starts its follower by itself (hegel.meta.auto).

// MetaView is what `git hegel meta` shows: the meta-mode of this
// worktree's task and what comes next.
type MetaView struct {
	// Task is the task it is read from; nil when there is none.
	Task *State
	// Name is the task's meta_mode ("" when it was started on its own).
	Name string
	// Mode is the meta-mode's definition; nil when Name is not defined
	// here (a task from another clone may name anything).
	Mode *workflow.MetaMode
	// Broken is set when Name's file does not load.
	Broken *workflow.BrokenFile
	// Next are the workflows that may follow the task's workflow; Done
	// says they may be started now (the task is completed).
	Next []string
	Done bool
}

// MetaModeList returns the meta-modes defined here: built-ins and the
// user's, with the files that do not load.
func (e *Engine) MetaModeList() (*workflow.MetaRegistry, error) {
	if e.MetaModes == nil {
		return workflow.LoadMetaModes(nil, nil), nil
	}
	return e.MetaModes()
}

// metaMode returns the meta-mode called name, or an error naming the ones
// that exist.
func (e *Engine) metaMode(name string) (*workflow.MetaMode, error) {
	reg, err := e.MetaModeList()
	if err != nil {
		return nil, err
	}
	if m, ok := reg.Get(name); ok {
		return m, nil
	}
	if b, ok := reg.GetBroken(name); ok {
		return nil, fmt.Errorf("Meta-mode '%s' cannot be loaded: %v", name, b.Err)
	}
	return nil, badNamef("Unknown meta-mode %s (meta-modes: %s)", metaName(name), text.JoinQuoted(reg.Names()))
}

// metaName quotes a meta-mode's name for a message: a fetched task's may
// be anything, so one that breaks the naming rule is shown quoted and cut.
func metaName(name string) string {
	if workflow.ValidMetaModeName(name) {
		return "'" + name + "'"
	}
	return text.Quote(name)
}

// Meta tells the meta-mode of the task o names (this worktree's when
// empty) and what comes next. With no task, Task is nil.
func (e *Engine) Meta(o TaskOptions) (*MetaView, error) {
	t, err := e.Current(o.Task)
	if errors.Is(err, ErrNoWorkflow) {
		return &MetaView{}, nil
	}
	if err != nil {
		return nil, err
	}
	return e.MetaOf(t.State)
}

// MetaOf tells the meta-mode of st and what follows it. A meta_mode that
// is not a name (a hostile task's) is reported as not defined.
func (e *Engine) MetaOf(st *State) (*MetaView, error) {
	v := &MetaView{Task: st, Name: st.MetaMode}
	if st.MetaMode == "" || !workflow.ValidMetaModeName(st.MetaMode) {
		return v, nil
	}
	reg, err := e.MetaModeList()
	if err != nil {
		return nil, err
	}
	if m, ok := reg.Get(st.MetaMode); ok {
		v.Mode = m
		v.Next = m.Following(st.Workflow)
		v.Done = st.Status == StatusCompleted
	} else if b, ok := reg.GetBroken(st.MetaMode); ok {
		v.Broken = b
	}
	return v, nil
}

// DeclareMeta is `git hegel meta NAME`: it starts the meta-mode's first
// workflow as a task carrying it. o names the task and its fields as for
// start; its Workflow and MetaMode are set here. It refuses while this
// worktree's task is mid-workflow, changing nothing.
func (e *Engine) DeclareMeta(name string, o StartOptions) (*View, error) {
	m, err := e.metaMode(name)
	if err != nil {
		return nil, err
	}
	cur, err := e.Current("")
	switch {
	case errors.Is(err, ErrNoWorkflow):
	case err != nil:
		return nil, err
	case cur.State.Active():
		st := cur.State
		return nil, fmt.Errorf("Cannot declare meta-mode '%s': task %s is mid-workflow (%s at '%s', %s), and changing the sequence under a running workflow would lose its place in it; finish it, abort it ('git hegel abort') or stash it ('git hegel stash') first",
			m.Name, st.Task, st.Workflow, st.CurrentNode, st.Status)
	}
	o.Workflow, o.MetaMode, o.Node = m.Start, m.ModeFor(m.Start), ""
	return e.startInMeta(m, o)
}

// startInMeta starts o.Workflow for meta-mode m, naming m when the
// workflow is not there.
func (e *Engine) startInMeta(m *workflow.MetaMode, o StartOptions) (*View, error) {
	reg, err := e.Workflows()
	if err != nil {
		return nil, err
	}
	if _, ok := reg.Get(o.Workflow); !ok {
		if _, broken := reg.GetBroken(o.Workflow); !broken {
			return nil, fmt.Errorf("Meta-mode '%s' names the workflow '%s', which is not defined here ('git hegel workflows' lists them)", m.Name, o.Workflow)
		}
	}
	return e.StartTask(o)
}

// followers are what may follow a finished task of a meta-mode.
type followers struct {
	Mode *workflow.MetaMode
	Next []string
}

// metaOffer returns what may follow st: nil, with the reason, when
// nothing may be started from it now.
func (e *Engine) metaOffer(st *State) (*followers, error) {
	if st.MetaMode == "" {
		return nil, fmt.Errorf("Task %s was not started in a meta-mode; declare one with 'git hegel meta <name>' ('git hegel meta --list' lists them)", st.Task)
	}
	m, err := e.metaMode(st.MetaMode)
	if err != nil {
		// Not the user's typing: the name comes from the task.
		return nil, fmt.Errorf("Task %s's meta-mode is not usable here: %v", st.Task, err)
	}
	if st.Status != StatusCompleted {
		return nil, fmt.Errorf("Task %s is %s at '%s': the next workflow of meta-mode '%s' starts when it is done", st.Task, st.Status, st.CurrentNode, m.Name)
	}
	next := m.Following(st.Workflow)
	if len(next) == 0 {
		return nil, fmt.Errorf("Meta-mode '%s' ends with %s: no workflow follows it; declare one with 'git hegel meta <name>'", m.Name, st.Workflow)
	}
	return &followers{Mode: m, Next: next}, nil
}

// NextWorkflow is `git hegel next-workflow [NAME]`: when this worktree's
// task of a meta-mode is done, it starts NAME, one of the workflows that
// may follow (the only one when NAME is empty), as a new task carrying
// the meta-mode. Nothing changes when it refuses.
func (e *Engine) NextWorkflow(name string) (*View, error) {
	t, err := e.Current("")
	if err != nil {
		return nil, err
	}
	return e.nextWorkflow(t.State, name)
}

func (e *Engine) nextWorkflow(st *State, name string) (*View, error) {
	offer, err := e.metaOffer(st)
	if err != nil {
		return nil, err
	}
	switch {
	case name == "" && len(offer.Next) == 1:
		name = offer.Next[0]
	case name == "":
		return nil, badNamef("Meta-mode '%s' offers %s after %s; name one: 'git hegel next-workflow <name>'", offer.Mode.Name, text.JoinQuoted(offer.Next), st.Workflow)
	case !slices.Contains(offer.Next, name):
		return nil, badNamef("Meta-mode '%s' does not go from %s to '%s' (next: %s)", offer.Mode.Name, st.Workflow, name, text.JoinQuoted(offer.Next))
	}
	return e.startInMeta(offer.Mode, StartOptions{Workflow: name, MetaMode: offer.Mode.ModeFor(name)})
}

// AutoNextWorkflow starts the one workflow that follows st when
// hegel.meta.auto is on, st was just completed by this worktree's command
// and exactly one workflow may follow. It returns nil, nil when nothing
// starts: the setting is off, several workflows may follow, or the task
// is not this worktree's (a task another clone finished never starts
// anything here).
func (e *Engine) AutoNextWorkflow(st *State) (*View, error) {
	if !e.MetaAuto || st == nil || st.MetaMode == "" || st.Status != StatusCompleted || !e.owns(st) {
		return nil, nil
	}
	offer, err := e.metaOffer(st)
	if err != nil || len(offer.Next) != 1 {
		return nil, nil
	}
	return e.nextWorkflow(st, offer.Next[0])
}

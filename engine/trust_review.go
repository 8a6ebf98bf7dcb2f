package engine

import (
	"errors"
	"fmt"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// TrustReview is what `git hegel trust` shows before it asks: the task's
// definition, where it came from, the newest earlier version of it this
// machine trusts (to diff against), and the fields that run processes.
type TrustReview struct {
	Task     string
	Archived bool
	// File is the worktree's workflow file reviewed (git hegel trust
	// --workflow), with Workflow its name; Task is then "".
	File, Workflow string
	// Current is the definition the task runs; its Commit is "" when the
	// store cannot say where it came from.
	Current DefinitionVersion
	Trust   DefinitionTrust
	// Previous is the newest earlier definition of the task's chain that
	// is trusted here (nil: none was).
	Previous *DefinitionVersion
	// Commands and PreviousCommands are the fields of Current and
	// Previous that run processes.
	Commands, PreviousCommands []workflow.CommandField
	// Texts are the task's texts that arrived with a fetch and are not
	// trusted here (fetched_text.go), then the worktree's guide files a
	// commit brought that are not (committed_text.go): trusting lets them
	// reach the agent.
	Texts []FetchedText
}

// ReviewTrust gathers what `git hegel trust` shows for the task called
// name (this worktree's task when name is "").
func (e *Engine) ReviewTrust(name string) (*TrustReview, error) {
	t, err := e.Current(name)
	if err != nil {
		return nil, err
	}
	wf, err := definition(t)
	if err != nil {
		return nil, err
	}
	rv := &TrustReview{Task: t.State.Task, Archived: t.Archived, Trust: e.TrustOf(t.Definition),
		Current: DefinitionVersion{ID: DefinitionID(t.Definition), Data: t.Definition}, Commands: wf.AllCommandFields()}
	if rv.Texts, err = e.UntrustedText(t.State); err != nil {
		return nil, err
	}
	guides, err := e.untrustedGuides()
	if err != nil {
		return nil, err
	}
	rv.Texts = append(rv.Texts, guides...)
	dh, ok := e.Tasks.(DefinitionHistory)
	if !ok {
		return rv, nil
	}
	vs, err := dh.DefinitionVersions(rv.Task, 0)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	if len(vs) == 0 || vs[0].ID != rv.Current.ID {
		return rv, nil // the ref moved meanwhile: show what was loaded
	}
	rv.Current = vs[0]
	for i := 1; i < len(vs); i++ {
		if e.TrustOfID(vs[i].ID).Trusted {
			rv.Previous = &vs[i]
			break
		}
	}
	if rv.Previous != nil {
		if pwf, err := workflow.Parse(t.State.Workflow, "previous.yaml", rv.Previous.Data); err == nil {
			rv.PreviousCommands = pwf.AllCommandFields()
		}
	}
	return rv, nil
}

// ReviewWorkflowFile gathers what `git hegel trust --workflow name` shows:
// the worktree's file for that workflow, before any task is started from
// it, and the guide files a commit brought that its prompts may include.
func (e *Engine) ReviewWorkflowFile(name string) (*TrustReview, error) {
	if e.Workflows == nil {
		return nil, ErrNoWorktree
	}
	reg, err := e.Workflows()
	if err != nil {
		return nil, err
	}
	wf, ok := reg.Get(name)
	if b, broken := reg.GetBroken(name); !ok && broken {
		return nil, fmt.Errorf("Workflow '%s' cannot be loaded: %v", name, b.Err)
	}
	if !ok {
		return nil, BadName(fmt.Errorf("Unknown workflow '%s'. Run 'git hegel workflows' to list them", name))
	}
	if wf.Source == workflow.BuiltinSource {
		return nil, BadName(fmt.Errorf("Workflow '%s' is built in, and trusted as it is; --workflow reviews a file of the worktree", name))
	}
	rv := &TrustReview{File: wf.Source, Workflow: wf.Name, Trust: e.TrustOf(wf.Raw),
		Current: DefinitionVersion{ID: DefinitionID(wf.Raw), Data: wf.Raw}, Commands: wf.AllCommandFields()}
	if rv.Texts, err = e.untrustedGuides(); err != nil {
		return nil, err
	}
	return rv, nil
}

// TrustTask records the definition rv shows (its blob id, whatever the
// task holds by now) and the texts it shows as trusted on this machine.
func (e *Engine) TrustTask(rv *TrustReview) error {
	if err := e.TrustTexts(rv.Task, rv.Texts); err != nil {
		return err
	}
	if rv.Trust.Trusted {
		return nil
	}
	if e.Trust == nil {
		return errors.New("this repository keeps no record of trusted definitions")
	}
	if err := e.Trust.TrustDefinition(TrustRecord{ID: rv.Current.ID, Task: rv.Task, How: TrustReviewed, At: e.now().UTC()}); err != nil {
		return fmt.Errorf("Could not trust the definition of task %s: %v", rv.Task, err)
	}
	return nil
}

// TrustedList lists the definitions trusted on this machine, oldest
// first (built-ins are trusted without a record and are not listed).
func (e *Engine) TrustedList() ([]TrustRecord, error) {
	if e.Trust == nil {
		return nil, nil
	}
	recs, err := e.Trust.TrustedDefinitions()
	var defs []TrustRecord
	for _, r := range recs {
		if r.How != TrustText {
			defs = append(defs, r)
		}
	}
	return defs, err
}

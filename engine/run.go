package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/engine/workflow"
)

// The step runner: `git hegel run` executes a
// workflow's steps through their handlers, in order, until the workflow
// is done, a gate holds it, a step fails, or the run is cancelled. Every
// step is one commit on the task's ref (its result and the move on
// together), so a run killed at any point is continued by running it
// again, from the step it was on, with the earlier results kept.

// Run outcomes.
const (
	RunCompleted = "completed" // the workflow reached its end
	RunFailed    = "failed"    // a step or check failed, or a step had no handler
	RunCancelled = "cancelled" // Ctrl-C, SIGTERM, git hegel cancel, or a declined confirmation
	RunWaiting   = "waiting"   // a confirmation nobody could answer: the task waits
	RunGate      = "gate"      // an approval gate or an open question holds the task
)

// RunOptions are the arguments of `git hegel run`.
type RunOptions struct {
	// Workflow starts a new task of this workflow, which Task names ("":
	// a generated name); without a workflow, Task is the task to continue
	// ("": the active one).
	Workflow string
	Task     string
	// Prompt (-p), Context (--context) and Vars (--set) are the run's
	// inputs; they replace the stored ones when given (nil keeps them;
	// Vars are merged key by key).
	Prompt  *string
	Context []ContextInput
	Vars    map[string]string
	// Adapter (--adapter) is the adapter of the steps that run the
	// default one; it is kept like the inputs.
	Adapter string
	// Yes (-y) answers every confirmation with yes.
	Yes bool
	// OnComplete is the completion callback (--on-complete, else
	// hegel.onComplete): run with a JSON object on its stdin.
	OnComplete string
}

// ContextInput is one --context file (Name "" for standard input).
type ContextInput struct {
	Name string
	Text []byte
}

// Answer is a person's answer to a confirmation.
type Answer int

const (
	// AnswerNone: nobody could answer (no terminal, end of input).
	AnswerNone Answer = iota
	AnswerYes
	AnswerNo
)

// Confirmation is what a confirmation gate shows before it asks.
type Confirmation struct {
	Task        string
	Node        string // the step that asks
	Step, Total int
	To          string // the step that follows ("done": the end)
	// Text is the confirm step's question, or what asked for the
	// confirmation; Files are the files the step (or the one before it)
	// plans to touch.
	Text  string
	Files []string
	// Question is the line to ask: "Proceed with execute? (y/N) ".
	Question string
}

// Progress is one change the runner reports while it runs.
type Progress struct {
	Task, Workflow string
	Node, Label    string
	Step, Total    int
	// Phase is "step" (a handler runs), "check" (Detail is its command),
	// "confirm" (a question is asked) or "end".
	Phase     string
	Detail    string
	RunStart  time.Time
	StepStart time.Time
}

// RunReport says how a run ended.
type RunReport struct {
	Task, Workflow string
	Outcome        string
	// Node is where the task stands (or stood when the run stopped);
	// Step and Total count the run's steps.
	Node        string
	Step, Total int
	// Err says why a run that did not complete stopped; nil when it
	// completed.
	Err   error
	State *State
	// Parked is the task a new run parked to make room.
	Parked *State
	// Started is set when the run started the task.
	Started bool
	// Callback is the completion callback's failure, if it failed.
	Callback error
}

// Runner runs workflows' steps for an engine.
type Runner struct {
	E        *Engine
	Adapters AdapterSource
	Runs     RunRecords // nil: no running record
	// MaxResultSize is hegel.maxResultSize (0: DefaultMaxResultSize).
	MaxResultSize int64
	// Stdout gets each step's output as it comes; Stderr the handlers'
	// standard error and the checks' output.
	Stdout, Stderr io.Writer
	// Confirm asks a person at a confirmation gate (nil: nobody can).
	Confirm func(*Confirmation) (Answer, error)
	// Progress, if set, is told what runs.
	Progress func(*Progress)
	// PID and Host name this process in the running record.
	PID  int
	Host string
	// Leftover, if set, stops what is left of the process group of a
	// step that a killed run (SIGKILL, a crash) left running, and
	// reports whether anything was left. Before it runs a task again,
	// the runner calls it with the group the dead run's record names.
	Leftover func(pgid int) bool
}

// run is one run in progress.
type run struct {
	r      *Runner
	e      *Engine
	o      RunOptions
	task   string
	wf     *workflow.Definition
	def    []byte // the definition wf was parsed from
	start  time.Time
	rec    *RunRecord
	report *RunReport
}

// Run starts (o.Workflow) or continues a task and runs its steps. It
// returns an error, with nothing changed, when the run cannot start;
// once it has started, how it ended is in the report (its Err says why
// it stopped). ctx cancelled (Ctrl-C, SIGTERM) cancels the run.
func (r *Runner) Run(ctx context.Context, o RunOptions) (*RunReport, error) {
	e := r.E
	if e.Exec == nil {
		return nil, errors.New("cannot run processes here")
	}
	rn := &run{r: r, e: e, o: o, start: e.now()}
	rn.report = &RunReport{}
	t, err := rn.begin()
	if err != nil {
		return nil, err
	}
	if r.Runs != nil {
		defer func() { _ = r.Runs.EndRun(rn.task) }()
	}
	rn.loop(ctx, t)
	rn.complete(ctx)
	return rn.report, nil
}

// begin checks everything that can be checked before anything changes,
// starts the task (a new run) or loads it, takes the running record and
// stores the inputs.
func (rn *run) begin() (*Task, error) {
	e, o := rn.e, rn.o
	if err := checkContextSize(o); err != nil {
		return nil, err
	}
	var t *Task
	if o.Workflow != "" {
		reg, err := e.Workflows()
		if err != nil {
			return nil, err
		}
		wf, ok := reg.Get(o.Workflow)
		if !ok {
			if b, broken := reg.GetBroken(o.Workflow); broken {
				return nil, fmt.Errorf("Workflow '%s' cannot be loaded: %v", o.Workflow, b.Err)
			}
			return nil, badNamef("Unknown workflow '%s'. Run 'git hegel workflows' to list them", o.Workflow)
		}
		if err := rn.checkWorkflow(wf, nil); err != nil {
			return nil, err
		}
		if err := firstStepRuns(wf, o.Workflow); err != nil {
			return nil, err
		}
		if e.CheckedOut(wf) {
			// Its first step would be refused: say so before a task
			// exists that waits for nothing but this review.
			return nil, fmt.Errorf("%s is as a commit brought it and this machine has not trusted it, so its steps may not run: review it with 'git hegel trust --workflow %s', then run it again; nothing was started",
				text.QuotePath(wf.Source, true), o.Workflow)
		}
		v, err := e.StartTask(StartOptions{Workflow: o.Workflow, Task: o.Task, Initializing: true})
		if err != nil {
			return nil, err
		}
		rn.report.Parked, rn.report.Started = v.Parked, true
		if t, err = e.Lookup(v.Task); err != nil {
			return nil, err
		}
	} else {
		var err error
		if t, err = rn.takeSelected(); err != nil {
			return nil, err
		}
	}
	rn.task = t.State.Task
	wf, err := definition(t)
	if err != nil {
		return nil, err
	}
	rn.wf, rn.def = wf, t.Definition
	rn.report.Task, rn.report.Workflow = t.State.Task, t.State.Workflow
	if err := checkLoaded(t, wf); err != nil {
		return nil, rn.initFailed(t, err)
	}
	if err := rn.runnable(t.State); err != nil {
		return nil, rn.initFailed(t, err)
	}
	if o.Workflow == "" {
		stored, err := e.loadInputs(rn.task, nil)
		if err != nil {
			return nil, err
		}
		if rn.o.Adapter == "" {
			rn.o.Adapter = e.storedAdapter(rn.task, stored.Adapter)
		}
		if err := rn.checkWorkflow(wf, stored); err != nil {
			return nil, err
		}
	}
	if rn.r.Runs != nil {
		rn.stopLeftover()
		step, total := StepOf(wf, t.State)
		rn.rec = &RunRecord{Task: rn.task, Workflow: t.State.Workflow, Worktree: e.Worktree, PID: rn.r.PID, Host: rn.r.Host,
			Started: rn.start, Step: step, TotalSteps: total, CurrentStep: t.State.CurrentNode, StepStarted: rn.start}
		if err := rn.r.Runs.BeginRun(rn.rec); err != nil {
			return nil, rn.initFailed(t, err)
		}
	}
	nt, err := rn.storeInputs(t)
	if err != nil {
		if rn.r.Runs != nil {
			_ = rn.r.Runs.EndRun(rn.task)
		}
		return nil, rn.initFailed(t, err)
	}
	return nt, nil
}

// initFailed records why setting up a task the run created failed: the
// task, initializing until now, fails at its start node with err (ERROR
// in the history), so status says why instead of showing a task stuck
// in initializing. A task this run did not create is left as it was
// (the run refused it before changing anything). err is returned.
func (rn *run) initFailed(t *Task, err error) error {
	if t == nil || !rn.report.Started || t.State.Status != StatusInitializing {
		return err
	}
	why := "run setup: " + err.Error()
	_, _, uerr := rn.e.updateTask(t, updateOpts{wf: rn.wf}, func(st *State, wf *workflow.Definition) (string, error) {
		if st.Status != StatusInitializing {
			return "", fmt.Errorf("Task '%s' is %s now; nothing recorded", st.Task, st.Status)
		}
		st.Status = StatusFailed
		st.Error = &TaskError{Node: st.CurrentNode, Message: why, Timestamp: rn.e.now().UTC(), Recoverable: true}
		st.FailedNodes = appendOnce(st.FailedNodes, st.CurrentNode)
		return "run: setup failed (" + firstLine(why) + ")", nil
	})
	if uerr != nil {
		rn.e.warn(fmt.Sprintf("task %s could not be marked failed: %v", t.State.Task, uerr))
	}
	return err
}

// takeSelected returns the task the run continues: the active one, or
// the one --task names, which this worktree takes as its active task
// first (as git hegel switch does: a cancelled run's task is parked, and
// continuing it makes it this worktree's again). A definition this
// machine does not trust is refused before anything changes.
func (rn *run) takeSelected() (*Task, error) {
	e := rn.e
	name := rn.o.Task
	if name == "" {
		t, err := e.Current("")
		if err != nil {
			return nil, err
		}
		return t, rn.trusted(t)
	}
	t, err := e.Lookup(name)
	if err != nil {
		return t, err
	}
	if err := rn.trusted(t); err != nil {
		return nil, err
	}
	if !t.State.Active() || t.State.Status == StatusStashed {
		return t, nil
	}
	if sess, err := e.Session.LoadSession(); err == nil && sess.ActiveTask == name && e.owns(t.State) {
		return t, nil
	}
	v, err := e.Switch(name)
	if err != nil {
		return nil, err
	}
	rn.report.Parked = v.Parked
	return e.Lookup(name)
}

// trusted refuses a task whose definition runs processes and is not
// trusted here (trust.go).
func (rn *run) trusted(t *Task) error {
	wf, err := definition(t)
	if err != nil {
		return err
	}
	return rn.e.MayRun(t.State.Task, wf, t.State.CurrentNode)
}

// runnable refuses a task whose status no run can continue.
func (rn *run) runnable(st *State) error {
	switch {
	case st.Status == StatusStashed:
		return fmt.Errorf("Task '%s' is stashed; restore it with 'git hegel stash pop'", st.Task)
	case !st.Active() || rn.wf.IsTerminal(st.CurrentNode):
		return finishedError(st)
	case st.Status == StatusFailed, st.Status == StatusAwaitingAnswer:
		return &StatusError{Task: st.Task, Status: st.Status, Command: "run", Advice: rn.e.advice(st, "run")}
	case st.Status == StatusAwaitingApproval && rn.wf.Nodes[st.CurrentNode].Gate == workflow.GateApproval:
		return &StatusError{Task: st.Task, Status: st.Status, Command: "run", Advice: rn.e.advice(st, "run") + ", then 'git hegel run'"}
	}
	return nil
}

// firstStepRuns refuses, before a task is created, a workflow whose
// first step has no handler: the run would stop at once, leaving a new
// active task behind.
func firstStepRuns(wf *workflow.Definition, name string) error {
	n := wf.Nodes[wf.StartNode]
	if n == nil || n.Run != nil || wf.IsTerminal(wf.StartNode) {
		return nil
	}
	return fmt.Errorf("Workflow '%s' has no step 'git hegel run' can run: its first step '%s' has no run: handler. Start it with 'git hegel start %s' and work through it yourself; nothing was created",
		name, wf.StartNode, name)
}

// checkWorkflow checks, before the run changes anything, that every
// adapter the workflow's steps use is configured and that the run has
// the inputs its templates cannot do without. stored are the task's
// stored inputs (nil for a new task).
func (rn *run) checkWorkflow(wf *workflow.Definition, stored *runInputs) error {
	o := rn.o
	hasPrompt := o.Prompt != nil && *o.Prompt != "" || stored != nil && stored.Prompt != ""
	hasContext := len(o.Context) > 0 || stored != nil && stored.Context != ""
	for _, name := range wf.Order {
		n := wf.Nodes[name]
		if n.Run != nil && n.Run.Kind == workflow.HandlerAdapter {
			if _, err := adapterFor(rn.r.Adapters, n.Run, name, o.Adapter); err != nil {
				return err
			}
		}
		for _, need := range n.Needed() {
			switch {
			case need == workflow.DataPrompt && !hasPrompt:
				return badNamef("Workflow '%s' needs a prompt (its step '%s' uses {{prompt}}): git hegel run %s -p TEXT", wf.Name, name, wf.Name)
			case need == workflow.DataContext && !hasContext:
				return badNamef("Workflow '%s' needs a context (its step '%s' uses {{context}}): give --context FILE, or pipe the text in", wf.Name, name)
			}
		}
	}
	return nil
}

func checkContextSize(o RunOptions) error {
	if o.Prompt != nil && len(*o.Prompt) > MaxInputBytes {
		return badNamef("The prompt is %s; the most a run keeps is %s", Size(int64(len(*o.Prompt))), Size(MaxInputBytes))
	}
	n := 0
	for _, c := range o.Context {
		n += len(c.Text) + len(c.Name) + 16
	}
	if n > MaxInputBytes {
		return badNamef("The context is %s; the most a run keeps is %s", Size(int64(n)), Size(MaxInputBytes))
	}
	return varsCollide(o.Vars)
}

// varsCollide refuses --set keys that commands would see as one
// variable.
func varsCollide(vars map[string]string) error {
	if a, b := VarCollision(vars); a != "" {
		return badNamef("--set %s and --set %s would both be %s%s to commands; use one of them", a, b, workflow.EnvVarPrefix, workflow.EnvName(a))
	}
	return nil
}

// contextText joins the --context inputs: standard input alone as it
// is, and each named file under a "==> name <==" line (as head(1)
// separates files).
func contextText(in []ContextInput) string {
	if len(in) == 1 && in[0].Name == "" {
		return string(in[0].Text)
	}
	var b strings.Builder
	for i, c := range in {
		if i > 0 {
			b.WriteString("\n")
		}
		if c.Name != "" {
			fmt.Fprintf(&b, "==> %s <==\n", c.Name)
		}
		b.Write(c.Text)
		if len(c.Text) > 0 && c.Text[len(c.Text)-1] != '\n' {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// storeInputs writes the inputs given with this run to the task (one
// commit), clearing an earlier cancel. Nothing given and nothing to
// clear writes nothing.
func (rn *run) storeInputs(t *Task) (*Task, error) {
	o := rn.o
	put := map[string][]byte{}
	var what []string
	if o.Prompt != nil {
		put[inputPrompt] = []byte(*o.Prompt)
		what = append(what, "prompt")
	}
	if o.Context != nil {
		put[inputContext] = []byte(contextText(o.Context))
		names := []string{}
		for _, c := range o.Context {
			if c.Name == "" {
				names = append(names, "standard input")
			} else {
				names = append(names, c.Name)
			}
		}
		what = append(what, "context from "+strings.Join(names, ", "))
	}
	if len(o.Vars) > 0 {
		stored, err := rn.e.loadInputs(rn.task, &workflow.Template{Inputs: []string{workflow.DataVars}})
		if err != nil {
			return nil, err
		}
		vars := map[string]string{}
		maps.Copy(vars, stored.Vars)
		maps.Copy(vars, o.Vars)
		if err := varsCollide(vars); err != nil {
			return nil, err
		}
		b, err := json.MarshalIndent(vars, "", "  ")
		if err != nil {
			return nil, err
		}
		put[inputVars] = append(b, '\n')
		keys := slices.Sorted(maps.Keys(o.Vars))
		what = append(what, "vars "+strings.Join(keys, ", "))
	}
	if o.Adapter != "" {
		if stored, err := rn.e.loadInputs(rn.task, nil); err != nil || stored.Adapter != o.Adapter {
			put[inputAdapter] = []byte(o.Adapter + "\n")
			what = append(what, "adapter "+o.Adapter)
		}
	}
	if len(put) == 0 && !t.State.Cancelled && t.State.Status != StatusInitializing {
		return t, nil
	}
	msg := "run: started"
	if len(what) > 0 {
		msg += " with " + strings.Join(what, "; ")
	}
	// Storing the inputs ends the setup: the task is active from the
	// same commit on.
	_, _, err := rn.e.updateTask(t, updateOpts{wf: rn.wf, put: put}, func(st *State, wf *workflow.Definition) (string, error) {
		st.Cancelled = false
		if st.Status == StatusInitializing {
			st.Status = StatusActive
		}
		return msg, nil
	})
	if err != nil {
		return nil, err
	}
	return rn.e.Lookup(rn.task)
}

// loop runs steps until the run stops; the report says why.
func (rn *run) loop(ctx context.Context, t *Task) {
	e, wf := rn.e, rn.wf
	for i := 0; ; i++ {
		if i > 0 {
			var err error
			if t, err = e.Lookup(rn.task); err != nil {
				rn.stop(RunFailed, t, err)
				return
			}
			if !bytesEqual(t.Definition, rn.def) {
				rn.stop(RunFailed, t, fmt.Errorf("Task '%s' now runs another definition of its workflow; run it again to go on with that one", rn.task))
				return
			}
		}
		st := t.State
		if ctx.Err() != nil {
			rn.cancel(t, nil, "")
			return
		}
		if st.Finished() || wf.IsTerminal(st.CurrentNode) {
			rn.stop(RunCompleted, t, nil)
			return
		}
		if err := rn.runnable(st); err != nil {
			outcome := RunGate
			if st.Status == StatusFailed {
				outcome = RunFailed
			}
			rn.stop(outcome, t, err)
			return
		}
		if st.Status == StatusAwaitingApproval {
			// A confirmation nobody could answer before: ask again.
			if !rn.confirmWaiting(ctx, t) {
				return
			}
			continue
		}
		if !rn.step(ctx, t) {
			return
		}
	}
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

// stepRun is what one handler run produced.
type stepRun struct {
	node   string
	meta   *StepResult
	result []byte
	proto  *Protocol
	res    *ProcessResult
	err    string // why the step failed ("" if it did not)
	// attempt is the attempt the step ran as; log what it and the node's
	// checks printed, for logs/<node>_<attempt>.log (nil: the output
	// alone).
	attempt int
	log     []byte
}

// step runs the handler of the node t is at, its checks and its
// confirmation, and moves the task on. It reports whether the run goes on.
func (rn *run) step(ctx context.Context, t *Task) bool {
	e, wf, st := rn.e, rn.wf, t.State
	node := st.CurrentNode
	n := wf.Nodes[node]
	if n.Run == nil {
		rn.stop(RunFailed, t, &MissingHandlerError{Node: node})
		return false
	}
	claim, to, ok := wf.RunClaim(node)
	if !ok {
		rn.stop(RunFailed, t, fmt.Errorf("'%s' has no transition to move on by", node))
		return false
	}
	if err := e.MayRunNode(rn.task, wf, node); err != nil {
		rn.stop(RunFailed, t, err)
		return false
	}
	stepStart := e.now()
	rn.progress(t, "step", "", stepStart)
	var sr *stepRun
	ask := n.Run.Kind == workflow.HandlerConfirm || transitionOf(wf, node, claim).Confirm
	text := ""
	if n.Run.Kind == workflow.HandlerConfirm {
		var err error
		if text, err = rn.render(t, n, n.Run.Template, n.Run.Line, "run: confirm: "); err != nil {
			rn.stop(RunFailed, t, err)
			return false
		}
	} else {
		var err error
		sr, err = rn.handle(ctx, t, n)
		if err != nil {
			rn.stop(RunFailed, t, err)
			return false
		}
		if sr.res != nil && sr.res.Cancelled {
			rn.cancel(t, sr, "")
			return false
		}
		if sr.err != "" {
			rn.fail(t, sr, sr.err)
			return false
		}
		if sr.proto != nil && sr.proto.RequiresConfirmation {
			ask, text = true, fmt.Sprintf("Step '%s' asks for confirmation before the run goes on.", node)
		}
		log := &logBuffer{}
		if sr != nil {
			log.Write(sr.result)
		}
		cr, err := rn.check(ctx, t, n, log)
		if sr != nil {
			sr.log = log.Bytes()
		}
		switch {
		case errors.Is(err, ErrInterrupted):
			rn.cancel(t, sr, "")
			return false
		case err != nil:
			rn.stop(RunFailed, t, err)
			return false
		case cr != nil:
			if sr != nil {
				sr.log = nil // the failed check's log has the step's output
			}
			err := e.recordCheckFailure(t, wf, node, "run", cr, sr.put())
			rn.stop(RunFailed, rn.reload(t), err)
			return false
		}
	}
	if ask && !rn.o.Yes {
		switch rn.ask(t, node, to, text, sr) {
		case AnswerNo:
			rn.cancel(t, sr, "you declined at "+node)
			return false
		case AnswerNone:
			rn.wait(t, node, claim, to, sr)
			return false
		}
	}
	return rn.advance(t, node, claim, to, sr, ask)
}

// MissingHandlerError: the run reached a node with no `run:` handler.
type MissingHandlerError struct{ Node string }

func (e *MissingHandlerError) Error() string {
	return fmt.Sprintf("Missing step handler for step '%s'", e.Node)
}

// put is the tree entry a step's result goes to.
func (sr *stepRun) put() map[string][]byte {
	if sr == nil {
		return nil
	}
	log := sr.log
	if log == nil {
		lb := &logBuffer{}
		lb.Write(sr.result)
		log = lb.Bytes()
	}
	put := map[string][]byte{ResultPath(sr.node): sr.result}
	if log != nil {
		put[LogPath(sr.node, sr.attempt)] = log
	}
	return put
}

// handle runs an adapter or command step and captures its output.
func (rn *run) handle(ctx context.Context, t *Task, n *workflow.Node) (*stepRun, error) {
	e, r := rn.e, rn.r
	h := n.Run
	// The run was checked when it began; this is the last word before a
	// process starts, whoever calls it.
	if err := e.MayRunNode(t.State.Task, rn.wf, n.Name); err != nil {
		return nil, err
	}
	var p Process
	handler := "command"
	adapterName := ""
	prompt := ""
	if n.Template != nil {
		var err error
		if prompt, err = rn.render(t, n, n.Template, n.PromptLine, ""); err != nil {
			return nil, err
		}
	}
	switch h.Kind {
	case workflow.HandlerAdapter:
		a, err := adapterFor(r.Adapters, h, n.Name, rn.o.Adapter)
		if err != nil {
			return nil, err
		}
		handler, adapterName = "adapter "+a.Name, a.Name
		p.Command, p.Timeout = a.Command, a.Timeout
	case workflow.HandlerCommand:
		p.Command = h.Text
	}
	if h.Timeout > 0 {
		p.Timeout = h.Timeout
	}
	if prompt != "" {
		p.Stdin = []byte(prompt + "\n")
	}
	env, files, err := e.stepEnv(t, rn.wf, n.Name, adapterName, h.Kind == workflow.HandlerCommand)
	if err != nil {
		return nil, err
	}
	p.Env, p.Files, p.FilesEnv = env, files, ResultsDirEnv
	max := r.MaxResultSize
	if max <= 0 {
		max = DefaultMaxResultSize
	}
	out := newCapture(max, r.Stdout)
	errTail := newTail(checkTail, r.Stderr)
	p.Stdout, p.Stderr = out, errTail
	started := e.now()
	p.Started = rn.child
	res := e.Exec.Run(ctx, &p)
	rn.child(0)
	result, proto := out.finish()
	sr := &stepRun{node: n.Name, attempt: t.State.Attempt, res: res, result: result, proto: proto, meta: &StepResult{Handler: handler,
		At: started.UTC(), Seconds: roundSeconds(res.Duration), Bytes: out.total, Truncated: out.total > max, Exit: res.Exit}}
	if proto != nil {
		sr.meta.Files, sr.meta.RequiresConfirmation = proto.Files, proto.RequiresConfirmation
	}
	switch {
	case res.Cancelled:
	case !res.OK():
		why := fmt.Sprintf("%s %s", handler, exitWhy(res))
		if s := errTail.String(); s != "" {
			why += "\n" + s
		}
		sr.err = why
	case proto != nil && proto.Error != "":
		sr.err = fmt.Sprintf("%s reported an error: %s", handler, proto.Error)
	}
	sr.meta.Error = firstLine(sr.err)
	return sr, nil
}

func roundSeconds(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond)) / float64(time.Second)
}

// render renders one of node n's templates for the task.
func (rn *run) render(t *Task, n *workflow.Node, tpl *workflow.Template, line int, what string) (string, error) {
	d, err := rn.e.runData(t.State, tpl, rn.e.stateTextOnce(t.State))
	if err != nil {
		return "", err
	}
	return renderTemplate(tpl, line, what, n, t.State, rn.wf, rn.e.Guides, d)
}

// check runs the node's checks, reporting each.
func (rn *run) check(ctx context.Context, t *Task, n *workflow.Node, log *logBuffer) (*checkRun, error) {
	if len(n.Checks) == 0 {
		return nil, nil
	}
	rn.progress(t, "check", "", time.Time{})
	return rn.e.runChecks(ctx, t, rn.wf, n.Name, rn.r.Stderr, log)
}

// ask shows a confirmation and returns the answer.
func (rn *run) ask(t *Task, node, to, text string, sr *stepRun) Answer {
	step, total := StepOf(rn.wf, t.State)
	c := &Confirmation{Task: rn.task, Node: node, Step: step, Total: total, To: to, Text: text, Files: rn.plannedFiles(t, sr)}
	if to == workflow.NodeDone || rn.wf.IsTerminal(to) {
		c.Question = "Finish the workflow? (y/N) "
	} else {
		c.Question = fmt.Sprintf("Proceed with %s? (y/N) ", to)
	}
	if rn.r.Confirm == nil {
		return AnswerNone
	}
	rn.progress(t, "confirm", "", time.Time{})
	a, err := rn.r.Confirm(c)
	if err != nil {
		return AnswerNone
	}
	return a
}

// plannedFiles are the files the step returned, else those of the
// newest earlier step that returned some (multi_file's plan, before its
// confirm step).
func (rn *run) plannedFiles(t *Task, sr *stepRun) []string {
	if sr != nil && len(sr.meta.Files) > 0 {
		return sr.meta.Files
	}
	h := t.State.History
	for i := len(h) - 1; i >= 0; i-- {
		if m, ok := StepResultOf(t.State, h[i]); ok && len(m.Files) > 0 {
			return m.Files
		}
	}
	return nil
}

// advance stores the step's result and moves the task on along claim, in
// one commit, as `next` would: the artifact must be there, guard rules
// hold, and an approval gate stops the run.
func (rn *run) advance(t *Task, node, claim, to string, sr *stepRun, confirmed bool) bool {
	e, wf := rn.e, rn.wf
	var gate *GateView
	failed := ""
	put := sr.put()
	if put == nil {
		put = map[string][]byte{}
	}
	st, _, err := e.updateTask(t, updateOpts{wf: wf, put: put}, func(st *State, wf *workflow.Definition) (string, error) {
		gate, failed = nil, ""
		if st.CurrentNode != node {
			return "", fmt.Errorf("Task '%s' moved to '%s' while step '%s' ran; the run stops (run it again to go on from there)", st.Task, st.CurrentNode, node)
		}
		if err := e.allowed(st, "next"); err != nil {
			return "", err
		}
		if sr != nil {
			setStepResult(st, node, sr.meta)
		}
		if missing := e.checkArtifact(st, wf, node); missing != nil {
			// The step was to write it: that attempt failed.
			failed = missing.Error()
			return "run: " + e.failAttempt(st, wf, "step "+node+": its artifact "+missing.state()), nil
		}
		// A run has no --force: every rule holds.
		forced, err := e.guard(st, wf, to, claim, Force{})
		if err != nil {
			return "", err
		}
		e.submit(st, wf, node, put)
		how := ""
		if sr != nil {
			how = fmt.Sprintf("; %s, %s", sr.meta.Handler, Size(sr.meta.Bytes))
		}
		if confirmed {
			how += "; confirmed"
		}
		if wf.Nodes[node].Gate == workflow.GateApproval {
			st.Status = StatusAwaitingApproval
			st.PendingClaim = claim
			st.LastFailure = "" // the step passed: an earlier failure is history
			gate = gateView(wf, st)
			return fmt.Sprintf("run: %s awaits approval to go to %s (%s)%s%s", node, to, claim, how, forced), nil
		}
		if err := e.capBack(st, wf, to, false); err != nil {
			return "", err
		}
		msg, _ := e.move(st, wf, claim, to, "")
		return "run: " + msg + how + forced, nil
	})
	if err != nil {
		rn.stop(RunFailed, t, err)
		return false
	}
	if failed == "" {
		e.markSubmitted(st, node)
	}
	nt := &Task{State: st, Definition: t.Definition}
	if failed != "" {
		rn.stop(RunFailed, nt, errors.New(failed))
		return false
	}
	if gate != nil {
		rn.stop(RunGate, nt, fmt.Errorf("Task '%s' waits for approval to go from %s to %s: 'git hegel approve' (or 'git hegel reject -m REASON'), then 'git hegel run'", rn.task, gate.Node, gate.To))
		return false
	}
	rn.moved(st)
	return true
}

// moved does what follows a move: session totals, the checkpoint of the
// node entered, the warning about missing inputs.
func (rn *run) moved(st *State) {
	e := rn.e
	_ = e.touchSession(func(s *Session) { countMove(s, st) })
	e.afterMove(st, rn.wf)
}

// confirmWaiting asks again the confirmation a task waits for, and moves
// on if the answer is yes. It reports whether the run goes on.
func (rn *run) confirmWaiting(ctx context.Context, t *Task) bool {
	st, wf := t.State, rn.wf
	node, claim := st.CurrentNode, st.PendingClaim
	to, ok := wf.Transition(node, claim)
	if !ok {
		rn.stop(RunFailed, t, &ErrNoMatch{Node: node, Claim: claim, Valid: claims(wf, node)})
		return false
	}
	if !rn.o.Yes {
		text := ""
		if n := wf.Nodes[node]; n.Run != nil && n.Run.Kind == workflow.HandlerConfirm {
			var err error
			if text, err = rn.render(t, n, n.Run.Template, n.Run.Line, "run: confirm: "); err != nil {
				rn.stop(RunFailed, t, err)
				return false
			}
		} else if m, ok := StepResultOf(st, node); ok && m.RequiresConfirmation {
			text = fmt.Sprintf("Step '%s' asks for confirmation before the run goes on.", node)
		}
		switch rn.ask(t, node, to, text, nil) {
		case AnswerNo:
			rn.cancel(t, nil, "you declined at "+node)
			return false
		case AnswerNone:
			rn.stop(RunWaiting, t, rn.waitError(node, to))
			return false
		}
	}
	if ctx.Err() != nil {
		rn.cancel(t, nil, "")
		return false
	}
	nst, _, err := rn.e.updateTask(t, updateOpts{wf: wf}, func(st *State, wf *workflow.Definition) (string, error) {
		if st.CurrentNode != node || st.Status != StatusAwaitingApproval || st.PendingClaim != claim {
			return "", fmt.Errorf("Task '%s' changed while it waited for confirmation (now %s at '%s'); run it again", st.Task, st.Status, st.CurrentNode)
		}
		if err := rn.e.capBack(st, wf, to, false); err != nil {
			return "", err
		}
		msg, _ := rn.e.move(st, wf, claim, to, "")
		return "run: " + msg + "; confirmed", nil
	})
	if err != nil {
		rn.stop(RunFailed, t, err)
		return false
	}
	rn.moved(nst)
	return true
}

// wait leaves the task waiting for the confirmation nobody could give:
// awaiting_approval with the claim to go on by, the step's result kept.
func (rn *run) wait(t *Task, node, claim, to string, sr *stepRun) {
	st, _, err := rn.e.updateTask(t, updateOpts{wf: rn.wf, put: sr.put()}, func(st *State, wf *workflow.Definition) (string, error) {
		if st.CurrentNode != node {
			return "", fmt.Errorf("Task '%s' moved to '%s' while step '%s' ran", st.Task, st.CurrentNode, node)
		}
		if sr != nil {
			setStepResult(st, node, sr.meta)
		}
		st.Status = StatusAwaitingApproval
		st.PendingClaim = claim
		st.LastFailure = "" // the step passed: an earlier failure is history
		return fmt.Sprintf("run: %s waits for confirmation to go to %s (%s)", node, to, claim), nil
	})
	if err != nil {
		rn.stop(RunFailed, t, err)
		return
	}
	rn.stop(RunWaiting, &Task{State: st, Definition: t.Definition}, rn.waitError(node, to))
}

func (rn *run) waitError(node, to string) error {
	return fmt.Errorf("Step '%s' needs confirmation to go on to '%s', and no answer came on standard input; the task waits ('git hegel run' asks again, 'git hegel run -y' goes on, 'git hegel cancel' gives up)", node, to)
}

// fail records a failed step as a failed attempt, with its result.
func (rn *run) fail(t *Task, sr *stepRun, why string) {
	e := rn.e
	node := t.State.CurrentNode
	var attempt, maxA int
	st, _, err := e.updateTask(t, updateOpts{wf: rn.wf, put: sr.put()}, func(st *State, wf *workflow.Definition) (string, error) {
		if st.CurrentNode != node {
			return "", fmt.Errorf("Task '%s' moved to '%s' while step '%s' ran; nothing recorded", st.Task, st.CurrentNode, node)
		}
		setStepResult(st, node, sr.meta)
		attempt, maxA = max1(st.Attempt), wf.Attempts(node, e.MaxAttempts)
		return "run: step failed: " + e.failAttempt(st, wf, "step "+node+": "+why), nil
	})
	if err != nil {
		rn.stop(RunFailed, t, err)
		return
	}
	rn.stop(RunFailed, &Task{State: st, Definition: t.Definition}, &StepError{Node: node, Why: why, Attempt: attempt, Max: maxA, Failed: st.Status == StatusFailed})
}

// StepError is a step whose handler failed; the failed attempt is
// recorded.
type StepError struct {
	Node, Why    string
	Attempt, Max int
	Failed       bool
}

func (e *StepError) Error() string {
	msg := fmt.Sprintf("Step '%s' failed: %s", e.Node, firstLine(e.Why))
	if e.Failed {
		return msg + fmt.Sprintf("; that was attempt %d of %d, so the task failed (resume it with 'git hegel resume --strategy %s')", e.Attempt, e.Max, joinStrategies("|"))
	}
	return msg + fmt.Sprintf("; recorded as attempt %d of %d ('git hegel run' tries again)", e.Attempt, e.Max)
}

// cancel records a cancelled run (recordCancel) and stops. A step's
// partial output is kept as its result. why is "" for Ctrl-C, SIGTERM and
// git hegel cancel.
func (rn *run) cancel(t *Task, sr *stepRun, why string) {
	step, total := StepOf(rn.wf, t.State)
	node := t.State.CurrentNode
	st, err := rn.e.recordCancel(t, rn.wf, sr, why)
	if err != nil {
		rn.stop(RunCancelled, t, fmt.Errorf("Cancelled; recording the cancel failed: %v", err))
		return
	}
	msg := fmt.Sprintf("Cancelled the run of task %s at step %d of %d (%s)", rn.task, step, total, node)
	if why != "" {
		msg = fmt.Sprintf("Cancelled: %s (task %s, step %d of %d)", why, rn.task, step, total)
	}
	rn.stop(RunCancelled, &Task{State: st, Definition: t.Definition},
		fmt.Errorf("%s; the task is kept: 'git hegel run --task %s' continues it", msg, rn.task))
}

// recordCancel records a cancelled run in one commit: cancelled is set,
// the task keeps its status and is parked (owned by no worktree), and
// this worktree's active task is cleared, so nothing is lost and nothing
// stays half-active.
func (e *Engine) recordCancel(t *Task, wf *workflow.Definition, sr *stepRun, why string) (*State, error) {
	step, total := StepOf(wf, t.State)
	node := t.State.CurrentNode
	how := "cancelled"
	if why != "" {
		how += " (" + why + ")"
	}
	st, _, err := e.updateTask(t, updateOpts{wf: wf, put: sr.put(), anyOwner: true}, func(st *State, wf *workflow.Definition) (string, error) {
		if sr != nil && st.CurrentNode == node {
			sr.meta.Error = "cancelled"
			setStepResult(st, node, sr.meta)
		}
		st.Cancelled = true
		st.Worktree, st.WorktreeID = "", "" // parked; the person stays (park)
		return fmt.Sprintf("run: %s at %s (step %d of %d); parked", how, st.CurrentNode, step, total), nil
	})
	if err != nil {
		return nil, err
	}
	_, _ = e.Session.UpdateSession(func(s *Session) error {
		if s.ActiveTask == t.State.Task {
			s.ActiveTask = ""
		}
		return nil
	})
	return st, nil
}

// WaitsForRun reports whether t waits for a confirmation a run asked and
// nobody answered (as opposed to an approval gate).
func WaitsForRun(t *Task) bool {
	st := t.State
	if st.Status != StatusAwaitingApproval || st.PendingClaim == "" {
		return false
	}
	wf, err := definition(t)
	return err == nil && wf.Nodes[st.CurrentNode] != nil && wf.Nodes[st.CurrentNode].Gate != workflow.GateApproval
}

// CancelWaiting gives up a run that waits for a confirmation (no process
// runs then): the cancel is recorded as a cancelled run records it.
func (e *Engine) CancelWaiting(t *Task) (*State, error) {
	if !WaitsForRun(t) {
		return nil, fmt.Errorf("No run of task '%s' is running or waiting", t.State.Task)
	}
	if t.State.Cancelled {
		return nil, fmt.Errorf("The run of task '%s' is cancelled already; 'git hegel run --task %s' continues it", t.State.Task, t.State.Task)
	}
	wf, err := definition(t)
	if err != nil {
		return nil, err
	}
	return e.recordCancel(t, wf, nil, "given up while it waited for confirmation")
}

// reload reads the task again after a write the runner did not follow.
func (rn *run) reload(t *Task) *Task {
	if nt, err := rn.e.Lookup(rn.task); err == nil {
		return nt
	}
	return t
}

// stop ends the run with outcome.
func (rn *run) stop(outcome string, t *Task, err error) {
	rep := rn.report
	rep.Outcome, rep.Err = outcome, err
	if t != nil {
		rep.State, rep.Node = t.State, t.State.CurrentNode
		rep.Step, rep.Total = StepOf(rn.wf, t.State)
	}
	if rn.r.Progress != nil {
		rn.r.Progress(&Progress{Task: rn.task, Workflow: rep.Workflow, Node: rep.Node, Step: rep.Step, Total: rep.Total, Phase: "end", RunStart: rn.start})
	}
}

// progress reports a phase of the current step, and keeps the running
// record in step.
func (rn *run) progress(t *Task, phase, detail string, stepStart time.Time) {
	step, total := StepOf(rn.wf, t.State)
	node := t.State.CurrentNode
	if rn.rec != nil && phase == "step" {
		rn.rec.Step, rn.rec.TotalSteps, rn.rec.CurrentStep, rn.rec.StepStarted = step, total, node, stepStart
		_ = rn.r.Runs.UpdateRun(rn.rec)
	}
	if rn.r.Progress != nil {
		rn.r.Progress(&Progress{Task: rn.task, Workflow: t.State.Workflow, Node: node, Label: rn.wf.Label(node), Step: step, Total: total,
			Phase: phase, Detail: detail, RunStart: rn.start, StepStart: stepStart})
	}
}

// child records the process group of the handler running now (0: none),
// so that what a killed run left running can be stopped.
func (rn *run) child(pid int) {
	if rn.rec != nil && rn.rec.Child != pid {
		rn.rec.Child = pid
		_ = rn.r.Runs.UpdateRun(rn.rec)
	}
}

// stopLeftover stops the step a killed run of the task left running: its
// record is there, its process is dead, and it names a process group.
func (rn *run) stopLeftover() {
	old, err := rn.r.Runs.LoadRun(rn.task)
	if err != nil || old == nil || old.Liveness != LiveDead || old.Child <= 0 || rn.r.Leftover == nil {
		return
	}
	if rn.r.Leftover(old.Child) {
		rn.e.warn(fmt.Sprintf("stopped what the killed run of task %s left running at step %d of %d (%s): process group %d", rn.task, old.Step, old.TotalSteps, old.CurrentStep, old.Child))
	}
}

// Completion is the JSON object the completion callback reads on stdin.
type Completion struct {
	Task      string            `json:"task"`
	Workflow  string            `json:"workflow"`
	Status    string            `json:"status"` // the run's outcome: completed, failed, cancelled, waiting, gate
	Cancelled bool              `json:"cancelled"`
	Error     string            `json:"error,omitempty"`
	Node      string            `json:"node"`
	Step      int               `json:"step"`
	TotalStep int               `json:"total_steps"`
	Results   map[string]string `json:"results"`
}

// complete runs the completion callback, if there is one.
func (rn *run) complete(ctx context.Context) {
	rep := rn.report
	if rn.o.OnComplete == "" {
		return
	}
	c := &Completion{Task: rep.Task, Workflow: rep.Workflow, Status: rep.Outcome, Cancelled: rep.Outcome == RunCancelled,
		Node: rep.Node, Step: rep.Step, TotalStep: rep.Total, Results: map[string]string{}}
	if rep.Err != nil {
		c.Error = rep.Err.Error()
	}
	if rep.State != nil {
		if res, err := rn.e.loadResults(rep.State, nil); err == nil {
			c.Results = res
		}
	}
	b, err := json.Marshal(c)
	if err != nil {
		rep.Callback = err
		return
	}
	env := []string{"HEGEL_TASK=" + rep.Task, "HEGEL_WORKFLOW=" + rep.Workflow, "HEGEL_STATUS=" + rep.Outcome}
	// The callback runs even when the run was cancelled: it is how the
	// cancel is reported; its own timeout bounds it.
	res := rn.e.Exec.Run(context.WithoutCancel(ctx), &Process{Command: rn.o.OnComplete, Stdin: append(b, '\n'), Env: env,
		Stdout: rn.r.Stderr, Stderr: rn.r.Stderr, Timeout: time.Minute})
	if !res.OK() {
		rep.Callback = fmt.Errorf("the completion callback %s %s", text.Quote(rn.o.OnComplete), exitWhy(res))
	}
}

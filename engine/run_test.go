package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-hegel/git-hegel/engine/workflow"
)

// fakeExec is an Executor whose processes are Go functions, keyed by
// command line; every call is recorded.
type fakeExec struct {
	mu    sync.Mutex
	calls []Process
	procs map[string]func(ctx context.Context, p *Process) *ProcessResult
}

func (f *fakeExec) Run(ctx context.Context, p *Process) *ProcessResult {
	f.mu.Lock()
	c := *p
	c.Files = map[string][]byte{}
	for k, v := range p.Files {
		c.Files[k] = bytes.Clone(v)
	}
	f.calls = append(f.calls, c)
	fn := f.procs[p.Command]
	f.mu.Unlock()
	if fn == nil {
		fmt.Fprintf(p.Stderr, "sh: %s: not found\n", p.Command)
		return &ProcessResult{Exit: 127}
	}
	return fn(ctx, p)
}

// commands returns the command lines run so far.
func (f *fakeExec) commands() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		out = append(out, c.Command)
	}
	return out
}

// echo is a process that prints out and exits with code.
func echo(out string, code int) func(context.Context, *Process) *ProcessResult {
	return func(_ context.Context, p *Process) *ProcessResult {
		io.WriteString(p.Stdout, out)
		return &ProcessResult{Exit: code}
	}
}

type fakeAdapters struct {
	def string
	m   map[string]string
}

func (f fakeAdapters) Adapter(name string) (*Adapter, error) {
	cmd, ok := f.m[name]
	if !ok {
		return nil, nil
	}
	return &Adapter{Name: name, Command: cmd}, nil
}

func (f fakeAdapters) DefaultAdapter() string { return f.def }

// fakeRuns is an in-memory RunRecords that keeps every version written.
type fakeRuns struct {
	mu      sync.Mutex
	cur     map[string]*RunRecord
	history []RunRecord
}

func (f *fakeRuns) BeginRun(r *RunRecord) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cur == nil {
		f.cur = map[string]*RunRecord{}
	}
	if old, ok := f.cur[r.Task]; ok && old.Liveness != LiveDead {
		return &RunningError{Rec: old}
	}
	c := *r
	f.cur[r.Task] = &c
	f.history = append(f.history, c)
	return nil
}

func (f *fakeRuns) UpdateRun(r *RunRecord) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := *r
	f.cur[r.Task] = &c
	f.history = append(f.history, c)
	return nil
}

func (f *fakeRuns) EndRun(task string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.cur, task)
	return nil
}

func (f *fakeRuns) LoadRun(task string) (*RunRecord, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.cur[task]; ok {
		c := *r
		c.Liveness = LiveAlive
		return &c, nil
	}
	return nil, nil
}

type runEnv struct {
	*testEnv
	exec     *fakeExec
	runs     *fakeRuns
	runner   *Runner
	out, err bytes.Buffer
	answers  []Answer
	asked    []*Confirmation
	progress []Progress
}

func newRunEnv(t *testing.T, user map[string][]byte) *runEnv {
	t.Helper()
	re := &runEnv{testEnv: newTestEngine(t, user), exec: &fakeExec{procs: map[string]func(context.Context, *Process) *ProcessResult{}}, runs: &fakeRuns{}}
	re.Exec = re.exec
	re.runner = &Runner{E: re.Engine, Adapters: fakeAdapters{def: "fake", m: map[string]string{"fake": "fake-agent", "other": "other-agent"}},
		Runs: re.runs, Stdout: &re.out, Stderr: &re.err, PID: 4242, Host: "box",
		Confirm: func(c *Confirmation) (Answer, error) {
			re.asked = append(re.asked, c)
			if len(re.answers) == 0 {
				return AnswerNone, nil
			}
			a := re.answers[0]
			re.answers = re.answers[1:]
			return a, nil
		},
		Progress: func(p *Progress) { re.progress = append(re.progress, *p) },
	}
	return re
}

func (re *runEnv) run(t *testing.T, o RunOptions) *RunReport {
	t.Helper()
	rep, err := re.runner.Run(context.Background(), o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return rep
}

func ptr(s string) *string { return &s }

func (re *runEnv) result(t *testing.T, task, node string) string {
	t.Helper()
	b, err := re.tasks.ReadTaskFile(task, ResultPath(node))
	if err != nil {
		t.Fatalf("result %s: %v", node, err)
	}
	return string(b)
}

// SCEN-WORK-001: the ask workflow runs its query step through the adapter
// and completes with the response.
func TestRunAsk(t *testing.T) {
	re := newRunEnv(t, nil)
	re.exec.procs["fake-agent"] = func(_ context.Context, p *Process) *ProcessResult {
		if !strings.Contains(string(p.Stdin), "Question: where is main?") {
			t.Errorf("prompt on stdin:\n%s", p.Stdin)
		}
		io.WriteString(p.Stdout, "In main.go.\n")
		return &ProcessResult{Exit: 0, Duration: time.Second}
	}
	rep := re.run(t, RunOptions{Workflow: "ask", Task: "q1", Prompt: ptr("where is main?")})
	if rep.Outcome != RunCompleted || rep.Err != nil {
		t.Fatalf("outcome %s: %v", rep.Outcome, rep.Err)
	}
	if got := re.out.String(); got != "In main.go.\n" {
		t.Errorf("streamed %q", got)
	}
	if got := re.result(t, "q1", "query"); got != "In main.go.\n" {
		t.Errorf("stored result %q", got)
	}
	st := rep.State
	if st.Status != StatusCompleted || st.CurrentNode != workflow.NodeDone {
		t.Errorf("state %s at %s", st.Status, st.CurrentNode)
	}
	meta, _ := StepResultOf(st, "query")
	if meta.Handler != "adapter fake" || meta.Bytes != 12 || meta.Exit != 0 || meta.Seconds != 1 {
		t.Errorf("step result %+v", meta)
	}
	call := re.exec.calls[0]
	for _, kv := range []string{"HEGEL_TASK=q1", "HEGEL_NODE=query", "HEGEL_STEP=1", "HEGEL_TOTAL_STEPS=1", "HEGEL_ADAPTER=fake"} {
		if !slices.Contains(call.Env, kv) {
			t.Errorf("env %v lacks %s", call.Env, kv)
		}
	}
	if call.FilesEnv != ResultsDirEnv {
		t.Errorf("files env %q", call.FilesEnv)
	}
	// An adapter's input is its prompt; the values are not in its
	// environment (commands get them: TestCommandValuesInEnv).
	if slices.ContainsFunc(call.Env, func(kv string) bool { return strings.HasPrefix(kv, workflow.EnvPrompt+"=") }) {
		t.Errorf("adapter env %v has %s", call.Env, workflow.EnvPrompt)
	}
	want := []string{"start: ask at query", "run: started with prompt", "run: query -> done (query_complete); adapter fake, 12 B"}
	if !slices.Equal(re.tasks.log, want) {
		t.Errorf("commits:\n%s\nwant\n%s", strings.Join(re.tasks.log, "\n"), strings.Join(want, "\n"))
	}
	if _, ok := re.runs.cur["q1"]; ok {
		t.Error("the running record is still there")
	}
}

// SCEN-WORK-002: analyze runs first, its result is stored, and refactor
// gets it (in its prompt and as a file).
func TestRunResultsPassedOn(t *testing.T) {
	re := newRunEnv(t, nil)
	n := 0
	re.exec.procs["fake-agent"] = func(_ context.Context, p *Process) *ProcessResult {
		n++
		env := strings.Join(p.Env, " ")
		switch n {
		case 1:
			if !strings.Contains(env, "HEGEL_NODE=analyze") || len(p.Files) != 0 {
				t.Errorf("first call: %s, files %v", env, p.Files)
			}
			io.WriteString(p.Stdout, "ANALYSIS: split store.go\n")
		case 2:
			if !strings.Contains(env, "HEGEL_NODE=refactor") || !strings.Contains(env, "HEGEL_STEP=2") {
				t.Errorf("second call: %s", env)
			}
			if !strings.Contains(string(p.Stdin), "ANALYSIS: split store.go") {
				t.Errorf("refactor's prompt lacks the analysis:\n%s", p.Stdin)
			}
			if string(p.Files["analyze"]) != "ANALYSIS: split store.go\n" {
				t.Errorf("results dir: %q", p.Files)
			}
			io.WriteString(p.Stdout, "done\n")
		}
		return &ProcessResult{}
	}
	rep := re.run(t, RunOptions{Workflow: "analyze-refactor", Task: "r", Prompt: ptr("the store")})
	if rep.Outcome != RunCompleted || n != 2 {
		t.Fatalf("outcome %s after %d calls: %v", rep.Outcome, n, rep.Err)
	}
	if got := re.result(t, "r", "analyze"); got != "ANALYSIS: split store.go\n" {
		t.Errorf("analyze result %q", got)
	}
	if !slices.Equal(ResultNodes(rep.State, re.wf(t, "r")), []string{"analyze", "refactor"}) {
		t.Errorf("results %v", rep.State.StepResults)
	}
}

func (re *runEnv) wf(t *testing.T, task string) *workflow.Definition {
	t.Helper()
	tk, err := re.Lookup(task)
	if err != nil {
		t.Fatal(err)
	}
	wf, err := definition(tk)
	if err != nil {
		t.Fatal(err)
	}
	return wf
}

const confirmWF = `start_node: a
nodes:
  a:
    prompt: step a for {{prompt}}
    run:
      adapter: default
    transitions:
      - when: a_complete
        to: b
  b:
    prompt: step b
    run:
      adapter: default
    transitions:
      - when: b_complete
        to: done
`

// SCEN-WORK-003: a step returning requires_confirmation asks before the
// run goes on; yes proceeds, no cancels, no answer leaves the task
// waiting, and the next run asks again without running the step again.
func TestRunConfirmation(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answers []Answer
		yes     bool
		outcome string
	}{
		{"yes", []Answer{AnswerYes}, false, RunCompleted},
		{"no", []Answer{AnswerNo}, false, RunCancelled},
		{"no answer", nil, false, RunWaiting},
		{"-y", nil, true, RunCompleted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			re := newRunEnv(t, map[string][]byte{"c.yaml": []byte(confirmWF)})
			calls := 0
			re.exec.procs["fake-agent"] = func(_ context.Context, p *Process) *ProcessResult {
				calls++
				if strings.Contains(string(p.Stdin), "step a") {
					io.WriteString(p.Stdout, "plan\n{\"requires_confirmation\": true}\n")
				} else {
					io.WriteString(p.Stdout, "did b\n")
				}
				return &ProcessResult{}
			}
			re.answers = tc.answers
			rep := re.run(t, RunOptions{Workflow: "c", Task: "t", Prompt: ptr("x"), Yes: tc.yes})
			if rep.Outcome != tc.outcome {
				t.Fatalf("outcome %s, want %s: %v", rep.Outcome, tc.outcome, rep.Err)
			}
			if got := re.out.String(); !strings.HasPrefix(got, "plan\n") || strings.Contains(got, "requires_confirmation") {
				t.Errorf("streamed %q: the protocol line must not be shown", got)
			}
			if got := re.result(t, "t", "a"); got != "plan\n" {
				t.Errorf("stored %q", got)
			}
			if tc.yes {
				if len(re.asked) != 0 {
					t.Errorf("-y asked %d times", len(re.asked))
				}
				return
			}
			if len(re.asked) != 1 || re.asked[0].Question != "Proceed with b? (y/N) " || re.asked[0].Step != 1 || re.asked[0].Total != 2 {
				t.Fatalf("asked %+v", re.asked)
			}
			st := rep.State
			switch tc.outcome {
			case RunCancelled:
				if !st.Cancelled || st.Worktree != "" || st.Status != StatusActive || st.CurrentNode != "a" {
					t.Errorf("cancelled state: %+v", st)
				}
				if s, _ := re.sess.LoadSession(); s.ActiveTask != "" {
					t.Errorf("active task still %q", s.ActiveTask)
				}
				if !strings.Contains(rep.Err.Error(), "'git hegel run --task t' continues it") {
					t.Errorf("err %v", rep.Err)
				}
			case RunWaiting:
				if st.Status != StatusAwaitingApproval || st.PendingClaim != "a_complete" {
					t.Errorf("waiting state: %s %q", st.Status, st.PendingClaim)
				}
				// Run again: asked again, the step is not run again.
				re.answers = []Answer{AnswerYes}
				rep := re.run(t, RunOptions{})
				if rep.Outcome != RunCompleted || calls != 2 || len(re.asked) != 2 {
					t.Errorf("second run: %s, %d calls, %d questions: %v", rep.Outcome, calls, len(re.asked), rep.Err)
				}
			}
		})
	}
}

// SCEN-WORK-004: multi_file's plan step returns the files; the confirm
// step shows them and asks before execute, which gets the plan.
func TestRunMultiFile(t *testing.T) {
	re := newRunEnv(t, nil)
	re.exec.procs["fake-agent"] = func(_ context.Context, p *Process) *ProcessResult {
		env := strings.Join(p.Env, " ")
		if strings.Contains(env, "HEGEL_NODE=plan") {
			io.WriteString(p.Stdout, "1. a.go: add X\n2. b.go: use X\n{\"files\": [\"a.go\", \"b.go\"]}\n")
		} else if !strings.Contains(string(p.Stdin), "1. a.go: add X") {
			t.Errorf("execute's prompt lacks the plan:\n%s", p.Stdin)
		}
		return &ProcessResult{}
	}
	re.answers = []Answer{AnswerYes}
	rep := re.run(t, RunOptions{Workflow: "multi_file", Task: "m", Prompt: ptr("add X")})
	if rep.Outcome != RunCompleted {
		t.Fatalf("outcome %s: %v", rep.Outcome, rep.Err)
	}
	if len(re.asked) != 1 {
		t.Fatalf("asked %d times", len(re.asked))
	}
	c := re.asked[0]
	if c.Node != "confirm" || c.To != "execute" || !slices.Equal(c.Files, []string{"a.go", "b.go"}) || c.Step != 2 || c.Total != 3 ||
		!strings.Contains(c.Text, "files it will create") {
		t.Errorf("confirmation %+v", c)
	}
	meta, _ := StepResultOf(rep.State, "plan")
	if !slices.Equal(meta.Files, []string{"a.go", "b.go"}) {
		t.Errorf("plan's files %v", meta.Files)
	}
}

// SCEN-WORK-005: a failing handler stops the run; the failure is a failed
// attempt, and the callback hears the error.
func TestRunFailure(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		code      int
		want      string
	}{
		{"exit status", "", 3, "Step 'query' failed: adapter fake exited with status 3"},
		{"error object", "partial\n{\"error\": \"rate limited\"}\n", 0, "Step 'query' failed: adapter fake reported an error: rate limited"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			re := newRunEnv(t, nil)
			re.exec.procs["fake-agent"] = func(_ context.Context, p *Process) *ProcessResult {
				io.WriteString(p.Stdout, tc.out)
				io.WriteString(p.Stderr, "boom\n")
				return &ProcessResult{Exit: tc.code}
			}
			var cb []byte
			re.exec.procs["notify"] = func(_ context.Context, p *Process) *ProcessResult {
				cb = p.Stdin
				return &ProcessResult{}
			}
			rep := re.run(t, RunOptions{Workflow: "ask", Task: "f", Prompt: ptr("q"), OnComplete: "notify"})
			var se *StepError
			if rep.Outcome != RunFailed || !errors.As(rep.Err, &se) {
				t.Fatalf("outcome %s: %v", rep.Outcome, rep.Err)
			}
			if !strings.HasPrefix(rep.Err.Error(), tc.want) || !strings.HasSuffix(rep.Err.Error(), "recorded as attempt 1 of 3 ('git hegel run' tries again)") {
				t.Errorf("error: %v", rep.Err)
			}
			st := rep.State
			if st.Attempt != 2 || st.Retries["query"] != 1 || !strings.Contains(st.LastFailure, "step query:") || st.Status != StatusActive {
				t.Errorf("state: attempt %d retries %v last %q status %s", st.Attempt, st.Retries, st.LastFailure, st.Status)
			}
			if tc.code != 0 && !strings.HasSuffix(st.LastFailure, "\nboom") {
				t.Errorf("last failure lacks stderr's tail: %q", st.LastFailure)
			}
			var c Completion
			if err := json.Unmarshal(cb, &c); err != nil {
				t.Fatalf("callback stdin %q: %v", cb, err)
			}
			if c.Status != RunFailed || c.Cancelled || !strings.HasPrefix(c.Error, tc.want) || c.Task != "f" || c.Workflow != "ask" {
				t.Errorf("callback %+v", c)
			}
		})
	}
}

// The last allowed attempt fails the task; the run then refuses with the
// resume advice.
func TestRunFailureExhausted(t *testing.T) {
	re := newRunEnv(t, nil)
	re.exec.procs["fake-agent"] = echo("", 1)
	re.run(t, RunOptions{Workflow: "ask", Task: "f", Prompt: ptr("q")})
	re.run(t, RunOptions{})
	rep := re.run(t, RunOptions{})
	if rep.State.Status != StatusFailed || !strings.Contains(rep.Err.Error(), "so the task failed (resume it with 'git hegel resume --strategy") {
		t.Fatalf("third failure: %s: %v", rep.State.Status, rep.Err)
	}
	_, err := re.runner.Run(context.Background(), RunOptions{})
	if err == nil || !strings.Contains(err.Error(), "Cannot run: task f is failed") {
		t.Errorf("run on a failed task: %v", err)
	}
}

// SCEN-WORK-006: a node with no handler stops the run.
func TestRunMissingHandler(t *testing.T) {
	wf := `start_node: first
nodes:
  first:
    prompt: one
    run:
      adapter: default
    transitions:
      - when: first_complete
        to: missing_step
  missing_step:
    prompt: nobody runs this
    transitions:
      - when: missing_step_complete
        to: done
`
	re := newRunEnv(t, map[string][]byte{"m.yaml": []byte(wf)})
	re.exec.procs["fake-agent"] = echo("ok\n", 0)
	rep := re.run(t, RunOptions{Workflow: "m", Task: "m"})
	if rep.Outcome != RunFailed || rep.Err == nil || rep.Err.Error() != "Missing step handler for step 'missing_step'" {
		t.Fatalf("outcome %s: %v", rep.Outcome, rep.Err)
	}
	if rep.State.CurrentNode != "missing_step" || rep.State.Attempt != 1 {
		t.Errorf("state %s attempt %d", rep.State.CurrentNode, rep.State.Attempt)
	}
}

// SCEN-WORK-007: cancelling at step 2 of 3 stops the adapter, calls the
// callback with cancelled, clears the worktree's active task and keeps
// the task.
func TestRunCancel(t *testing.T) {
	wf := `start_node: one
nodes:
  one:
    run:
      command: step-one
    transitions:
      - when: one_complete
        to: two
  two:
    run:
      command: step-two
    transitions:
      - when: two_complete
        to: three
  three:
    run:
      command: step-three
    transitions:
      - when: three_complete
        to: done
`
	re := newRunEnv(t, map[string][]byte{"three.yaml": []byte(wf)})
	ctx, cancel := context.WithCancel(context.Background())
	re.exec.procs["step-one"] = echo("1\n", 0)
	re.exec.procs["step-two"] = func(ctx context.Context, p *Process) *ProcessResult {
		io.WriteString(p.Stdout, "half of two\n")
		rec, _ := re.runs.LoadRun("c")
		if rec == nil || rec.Step != 2 || rec.TotalSteps != 3 || rec.CurrentStep != "two" || rec.PID != 4242 {
			t.Errorf("running record %+v", rec)
		}
		cancel()
		<-ctx.Done()
		return &ProcessResult{Exit: -1, Signal: "SIGTERM", Cancelled: true}
	}
	var cb []byte
	re.exec.procs["notify"] = func(ctx context.Context, p *Process) *ProcessResult {
		if ctx.Err() != nil {
			t.Error("the callback ran with a cancelled context")
		}
		cb = p.Stdin
		return &ProcessResult{}
	}
	rep, err := re.runner.Run(ctx, RunOptions{Workflow: "three", Task: "c", OnComplete: "notify"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != RunCancelled || rep.Step != 2 || rep.Total != 3 {
		t.Fatalf("outcome %s at %d of %d: %v", rep.Outcome, rep.Step, rep.Total, rep.Err)
	}
	if got := rep.Err.Error(); !strings.HasPrefix(got, "Cancelled the run of task c at step 2 of 3 (two)") {
		t.Errorf("err %q", got)
	}
	if slices.Contains(re.exec.commands(), "step-three") {
		t.Error("step three ran after the cancel")
	}
	st := rep.State
	if !st.Cancelled || st.Status != StatusActive || st.CurrentNode != "two" || st.Worktree != "" {
		t.Errorf("state after cancel: %+v", st)
	}
	if s, _ := re.sess.LoadSession(); s.ActiveTask != "" {
		t.Errorf("active task %q", s.ActiveTask)
	}
	if got := re.result(t, "c", "two"); got != "half of two\n" {
		t.Errorf("partial result %q", got)
	}
	var c Completion
	if err := json.Unmarshal(cb, &c); err != nil {
		t.Fatalf("callback %q: %v", cb, err)
	}
	if !c.Cancelled || c.Status != RunCancelled || c.Step != 2 || c.Results["one"] != "1\n" {
		t.Errorf("callback %+v", c)
	}
	if last := re.tasks.log[len(re.tasks.log)-1]; last != "run: cancelled at two (step 2 of 3); parked" {
		t.Errorf("last commit %q", last)
	}
	// Running it again continues at step two, with step one's result kept,
	// and clears cancelled.
	re.exec.procs["step-two"] = echo("2\n", 0)
	re.exec.procs["step-three"] = echo("3\n", 0)
	rep = re.run(t, RunOptions{Task: "c"})
	if rep.Outcome != RunCompleted || rep.State.Cancelled {
		t.Fatalf("second run %s (cancelled %v): %v", rep.Outcome, rep.State.Cancelled, rep.Err)
	}
	if n := strings.Count(strings.Join(re.exec.commands(), " "), "step-one"); n != 1 {
		t.Errorf("step one ran %d times", n)
	}
}

// SCEN-WORK-008: while step 2 of 3 runs, progress and the running record
// say so.
func TestRunProgress(t *testing.T) {
	re := newRunEnv(t, nil)
	re.exec.procs["fake-agent"] = echo("x\n{\"files\": [\"a\"]}\n", 0)
	re.answers = []Answer{AnswerYes}
	re.run(t, RunOptions{Workflow: "multi_file", Task: "p", Prompt: ptr("go")})
	var seen []string
	for _, p := range re.progress {
		seen = append(seen, fmt.Sprintf("%s %d/%d %s", p.Phase, p.Step, p.Total, p.Node))
	}
	want := []string{"step 1/3 plan", "step 2/3 confirm", "confirm 2/3 confirm", "step 3/3 execute", "end 3/3 done"}
	if !slices.Equal(seen, want) {
		t.Errorf("progress %q, want %q", seen, want)
	}
	var steps []string
	for _, r := range re.runs.history {
		steps = append(steps, fmt.Sprintf("%d/%d %s", r.Step, r.TotalSteps, r.CurrentStep))
	}
	if !slices.Contains(steps, "2/3 confirm") || !slices.Contains(steps, "3/3 execute") {
		t.Errorf("running records %q", steps)
	}
}

// A second run of a task a live run drives is refused.
func TestRunRefusesSecondRun(t *testing.T) {
	re := newRunEnv(t, nil)
	re.exec.procs["fake-agent"] = func(_ context.Context, p *Process) *ProcessResult {
		_, err := re.runner.Run(context.Background(), RunOptions{})
		var re2 *RunningError
		if !errors.As(err, &re2) || !strings.Contains(err.Error(), "stop it with 'git hegel cancel --task q'") {
			t.Errorf("second run: %v", err)
		}
		return &ProcessResult{}
	}
	re.run(t, RunOptions{Workflow: "ask", Task: "q", Prompt: ptr("?")})
}

// An adapter that is not configured stops the run before anything
// changes, with the git config line to add.
func TestRunAdapterMissing(t *testing.T) {
	re := newRunEnv(t, nil)
	_, err := re.runner.Run(context.Background(), RunOptions{Workflow: "ask", Prompt: ptr("?"), Adapter: "claude"})
	if err == nil || err.Error() != "No adapter 'claude' is configured (step 'query'); add it with: git config hegel.adapter.claude.command 'claude -p'" {
		t.Errorf("err %v", err)
	}
	re.runner.Adapters = fakeAdapters{}
	_, err = re.runner.Run(context.Background(), RunOptions{Workflow: "ask", Prompt: ptr("?")})
	if err == nil || !strings.Contains(err.Error(), "git config hegel.adapter claude") {
		t.Errorf("no default: %v", err)
	}
	if len(re.tasks.log) != 0 {
		t.Errorf("something was written: %v", re.tasks.log)
	}
	re.runner.Adapters = fakeAdapters{def: "fake", m: map[string]string{"fake": "fake-agent"}}
	_, err = re.runner.Run(context.Background(), RunOptions{Workflow: "ask"})
	if err == nil || !errors.Is(err, ErrBadName) || !strings.Contains(err.Error(), "needs a prompt") {
		t.Errorf("no prompt: %v", err)
	}
}

const checkWF = `start_node: code
nodes:
  code:
    prompt: write it
    check:
      - lint "$HEGEL_VAR_DIR"
      - test
    transitions:
      - when: code_complete
        to: done
`

// Checks run by next: a failure is a failed attempt with the command and
// the last 20 lines of its output, and the node does not end.
func TestChecksOnNext(t *testing.T) {
	re := newRunEnv(t, map[string][]byte{"c.yaml": []byte(checkWF)})
	if _, err := re.Start("c", "", "t"); err != nil {
		t.Fatal(err)
	}
	re.exec.procs[`lint "$HEGEL_VAR_DIR"`] = echo("", 0)
	re.exec.procs["test"] = func(_ context.Context, p *Process) *ProcessResult {
		for i := 1; i <= 30; i++ {
			fmt.Fprintf(p.Stdout, "line %d\n", i)
		}
		return &ProcessResult{Exit: 1}
	}
	_, err := re.Next("")
	var ce *CheckError
	if !errors.As(err, &ce) {
		t.Fatalf("next: %v", err)
	}
	if err.Error() != "Check failed at 'code': test exited with status 1; recorded as attempt 1 of 3 (fix it, then run 'git hegel next' again)" {
		t.Errorf("message %q", err)
	}
	st := re.state(t)
	if st.CurrentNode != "code" || st.Attempt != 2 || !strings.HasPrefix(st.LastFailure, "check `test` exited with status 1\nline 11\n") ||
		!strings.HasSuffix(st.LastFailure, "line 30") {
		t.Errorf("state %s attempt %d last failure %q", st.CurrentNode, st.Attempt, st.LastFailure)
	}
	// Passing checks let the node end; --force skips them, recorded.
	re.exec.procs["test"] = echo("ok\n", 0)
	if v, err := re.Next(""); err != nil || v.Node != workflow.NodeDone {
		t.Fatalf("next after the fix: %v", err)
	}
	re2 := newRunEnv(t, map[string][]byte{"c.yaml": []byte(checkWF)})
	re2.Start("c", "", "t")
	v, err := re2.NextWith(NextOptions{Force: Force{All: true}})
	if err != nil || len(re2.exec.calls) != 0 || v.State.Overrides[0].What != "check" {
		t.Errorf("--force: %v, %d calls, %+v", err, len(re2.exec.calls), v)
	}
}

// Values reach commands in the environment, never in the command text:
// the command runs as written, whatever the values hold.
func TestCommandValuesInEnv(t *testing.T) {
	wf := `start_node: a
nodes:
  a:
    run:
      command: echo "$HEGEL_PROMPT" "$HEGEL_VAR_X" \{{.State}}
    transitions:
      - when: a_complete
        to: b
  b:
    run:
      command: cat
    check: test -n "$HEGEL_RESULT_A"
    transitions:
      - when: b_complete
        to: done
`
	re := newRunEnv(t, map[string][]byte{"q.yaml": []byte(wf)})
	evil := "it's; $(touch pwned) `id`"
	re.exec.procs[`echo "$HEGEL_PROMPT" "$HEGEL_VAR_X" {{.State}}`] = echo("$(rm -rf /)\n", 0)
	re.exec.procs["cat"] = echo("", 0)
	re.exec.procs[`test -n "$HEGEL_RESULT_A"`] = echo("", 0)
	rep := re.run(t, RunOptions{Workflow: "q", Prompt: ptr(evil), Vars: map[string]string{"x": "a b"}})
	if rep.Outcome != RunCompleted {
		t.Fatalf("%s: %v (ran %q)", rep.Outcome, rep.Err, re.exec.commands())
	}
	calls := re.exec.calls
	if len(calls) != 3 {
		t.Fatalf("ran %q", re.exec.commands())
	}
	for _, want := range []string{"HEGEL_PROMPT=" + evil, "HEGEL_VAR_X=a b", "HEGEL_CONTEXT=", "HEGEL_TASK=" + rep.Task} {
		if !slices.Contains(calls[0].Env, want) {
			t.Errorf("step a env %q lacks %q", calls[0].Env, want)
		}
	}
	if !slices.Contains(calls[2].Env, "HEGEL_RESULT_A=$(rm -rf /)\n") {
		t.Errorf("check env %q lacks the result of a", calls[2].Env)
	}
	if !slices.Contains(calls[1].Env, "HEGEL_PROMPT="+evil) {
		t.Errorf("command step b env %q lacks HEGEL_PROMPT", calls[1].Env)
	}
}

func TestValueEnv(t *testing.T) {
	env, skipped := ValueEnv(CommandValues{Prompt: "p", Context: strings.Repeat("x", MaxEnvValue+1),
		Vars: map[string]string{"b": "2", "a": "1\x00"}, Results: map[string]string{"code-review": "ok"},
		Task: map[string]string{"type": "bug", "priority": "high"}})
	want := []string{"HEGEL_PROMPT=p", "HEGEL_CONTEXT=", "HEGEL_VAR_A=", "HEGEL_VAR_B=2", "HEGEL_RESULT_CODE_REVIEW=ok", "HEGEL_TASK_TYPE=bug", "HEGEL_TASK_PRIORITY=high"}
	if !slices.Equal(env, want) {
		t.Errorf("env %q\nwant %q", env, want)
	}
	if len(skipped) != 2 || !strings.HasPrefix(skipped[0], "HEGEL_CONTEXT is empty: the context is 100 KiB") || !strings.Contains(skipped[1], "NUL") {
		t.Errorf("skipped %q", skipped)
	}
	if a, b := VarCollision(map[string]string{"x": "", "X": "", "y": ""}); a != "X" || b != "x" {
		t.Errorf("collision %q %q", a, b)
	}
	if workflow.EnvName("Code-review.2") != "CODE_REVIEW_2" {
		t.Errorf("EnvName %q", workflow.EnvName("Code-review.2"))
	}
}

// Output capture: the protocol line is held back and parsed, long output
// is cut with a note.
func TestCapture(t *testing.T) {
	var stream bytes.Buffer
	c := newCapture(100, &stream)
	c.Write([]byte("hello\n{\"fi"))
	if stream.String() != "hello\n" {
		t.Errorf("streamed %q before the line ended", stream.String())
	}
	c.Write([]byte("les\": [\"x\"]}\n"))
	res, p := c.finish()
	if p == nil || !slices.Equal(p.Files, []string{"x"}) || string(res) != "hello\n" || stream.String() != "hello\n" {
		t.Errorf("result %q proto %+v stream %q", res, p, stream.String())
	}
	// A JSON line that is not the last, or not the protocol, is output.
	stream.Reset()
	c = newCapture(100, &stream)
	c.Write([]byte("{\"a\": 1}\n"))
	c.Write([]byte("more\n"))
	res, p = c.finish()
	if p != nil || string(res) != "{\"a\": 1}\nmore\n" || stream.String() != string(res) {
		t.Errorf("result %q proto %+v stream %q", res, p, stream.String())
	}
	c = newCapture(20, nil)
	c.Write([]byte(strings.Repeat("0123456789\n", 10)))
	res, _ = c.finish()
	if string(res) != "0123456789\n\n[git-hegel: result cut at 20 B (hegel.maxResultSize); the step printed 110 B]\n" {
		t.Errorf("cut result %q", res)
	}
}

func TestStepOf(t *testing.T) {
	wf := builtin(t, "multi_file")
	for node, want := range map[string][2]int{"plan": {1, 3}, "confirm": {2, 3}, "execute": {3, 3}, "done": {3, 3}} {
		s, n := StepOf(wf, &State{CurrentNode: node, History: []string{"plan"}})
		if s != want[0] || n != want[1] {
			t.Errorf("%s: %d of %d, want %v", node, s, n, want)
		}
	}
}

func TestRunDefinitionErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{y("start_node: a", "nodes:", "  a:", "    run:", "      adapter: x", "      command: y", "    prompt: p", "    transitions: [{when: a_complete, to: done}]"),
			`w.yaml:6: node "a": run: both adapter and command; a step has one handler`},
		{y("start_node: a", "nodes:", "  a:", "    run: claude", "    prompt: p", "    transitions: [{when: a_complete, to: done}]"),
			`w.yaml:4: node "a": "run" must be a mapping with one of adapter, command or confirm, got "claude"`},
		{y("start_node: a", "nodes:", "  a:", "    run:", "      timeout: 5m", "    prompt: p", "    transitions: [{when: a_complete, to: done}]"),
			`w.yaml:5: node "a": run: needs one of adapter, command or confirm`},
		{y("start_node: a", "nodes:", "  a:", "    run:", "      command: |", "        make", "        make '{{results.code-review}}'", "    transitions: [{when: a_complete, to: done}]"),
			`w.yaml:7: node "a": run: command: {{results.code-review}} would splice a value into shell code; write "$HEGEL_RESULT_CODE_REVIEW" instead (double-quoted, the shell reads it as data)`},
		{y("start_node: a", "nodes:", "  a:", "    run: {adapter: default}", "    check:", "      - ok", "      - go test {{ vars.pkg }}", "    prompt: p", "    transitions: [{when: a_complete, to: done}]"),
			`w.yaml:7: node "a": check: {{ vars.pkg }} would splice a value into shell code; write "$HEGEL_VAR_PKG" instead (double-quoted, the shell reads it as data)`},
		{y("start_node: a", "nodes:", "  a:", "    run: {command: 'x {{{prompt}}}'}", "    transitions: [{when: a_complete, to: done}]"),
			`w.yaml:4: node "a": run: command: {{{prompt}}} would splice a value into shell code; write "$HEGEL_PROMPT" instead (double-quoted, the shell reads it as data)`},
		{y("start_node: a", "nodes:", "  a:", "    run: {command: make}", "    check: 'test {{#if prompt}}x{{/if}}'", "    transitions: [{when: a_complete, to: done}]"),
			`w.yaml:5: node "a": check: {{#if prompt}} would splice a value into shell code; commands are not templates; read values from the environment ("$HEGEL_PROMPT", "$HEGEL_VAR_<KEY>", "$HEGEL_RESULT_<NODE>": docs/run.md), or write \{{ for a literal {{`},
		{y("start_node: a-b", "nodes:", "  a-b:", "    run: {command: make}", "    transitions: [{when: go, to: a_b}]", "  a_b:", "    run: {command: make}", "    transitions: [{when: go, to: done}]"),
			`w.yaml:6: nodes "a-b" and "a_b" would both pass their results to commands as HEGEL_RESULT_A_B; rename one`},
		{y("start_node: a", "nodes:", "  a:", "    run: {adapter: default, timeout: soon}", "    prompt: p", "    transitions: [{when: a_complete, to: done}]"),
			`w.yaml:4: node "a": run: timeout "soon" is not a duration such as 90s or 10m`},
		{y("start_node: a", "nodes:", "  a:", "    run: {adapter: default}", "    transitions: [{when: a_complete, to: done}]"),
			`w.yaml:3: node "a": missing prompt`},
		{y("start_node: a", "nodes:", "  a:", "    run: {command: make}"),
			`w.yaml:3: node "a" has run: but no transitions, so reaching it ends the workflow and the step never runs; add a transition to done`},
	} {
		_, err := workflow.Parse("w", "w.yaml", []byte(tc.yaml))
		if err == nil || err.Error() != tc.want {
			t.Errorf("got  %v\nwant %s", err, tc.want)
		}
	}
	// A guide in a check is a placeholder like any other.
	r := workflow.LoadRegistry(map[string][]byte{"g.yaml": []byte(y("start_node: a", "nodes:", "  a:", "    run: {command: make}", "    check: cat {{NOPE}}", "    transitions: [{when: a_complete, to: done}]"))}, workflow.LoadOptions{})
	if b, ok := r.GetBroken("g"); !ok || !strings.HasPrefix(b.Err.Error(), `g.yaml:5: node "a": check: {{NOPE}} would splice a value into shell code; commands are not templates`) {
		t.Errorf("broken %+v", b)
	}
	// Without commands, look-alike node names are fine.
	if _, err := workflow.Parse("w", "w.yaml", []byte(y("start_node: a-b", "nodes:", "  a-b:", "    prompt: p", "    transitions: [{when: go, to: a_b}]", "  a_b:", "    prompt: p", "    transitions: [{when: go, to: done}]"))); err != nil {
		t.Errorf("look-alike names without commands: %v", err)
	}
}

// TestRunRefusesAWorkflowWithNothingToRun: a workflow whose first step
// has no handler is refused before a task exists.
func TestRunRefusesAWorkflowWithNothingToRun(t *testing.T) {
	re := newRunEnv(t, nil)
	_, err := re.runner.Run(context.Background(), RunOptions{Workflow: "minimal", Task: "m"})
	if err == nil || !strings.Contains(err.Error(), "its first step 'spec' has no run: handler") {
		t.Fatalf("run minimal: %v", err)
	}
	if names, _ := re.Tasks.ListTasks(); len(names) != 0 {
		t.Errorf("tasks left behind: %v", names)
	}
}

// TestCheckSpendsNoAttempt: Check runs the checks as next would and
// records nothing, pass or fail.
func TestCheckSpendsNoAttempt(t *testing.T) {
	re := newRunEnv(t, map[string][]byte{"c.yaml": []byte(checkWF)})
	if _, err := re.Start("c", "", "t"); err != nil {
		t.Fatal(err)
	}
	before := re.state(t)
	re.exec.procs[`lint "$HEGEL_VAR_DIR"`] = echo("", 0)
	re.exec.procs["test"] = echo("red\n", 1)
	for i := 0; i < 4; i++ {
		rep, err := re.Check(context.Background(), "", nil)
		if err != nil || rep.Failed == nil || rep.Failed.Command != "test" || rep.Ran != 2 || rep.Checks != 2 || rep.Failed.Output != "red" {
			t.Fatalf("check %d: %+v %v", i, rep, err)
		}
	}
	re.exec.procs["test"] = echo("green\n", 0)
	if rep, err := re.Check(context.Background(), "", nil); err != nil || rep.Failed != nil || rep.Ran != 2 {
		t.Fatalf("green: %+v %v", rep, err)
	}
	st := re.state(t)
	if st.Attempt != before.Attempt || st.LastFailure != "" || st.UpdatedAt != before.UpdatedAt {
		t.Errorf("the task changed: attempt %d, last failure %q", st.Attempt, st.LastFailure)
	}
}

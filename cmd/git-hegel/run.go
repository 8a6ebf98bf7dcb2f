package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/git-hegel/git-hegel/cmd/git-hegel/runexec"
	"github.com/git-hegel/git-hegel/engine"
	"github.com/git-hegel/git-hegel/engine/text"
	"github.com/git-hegel/git-hegel/engine/workflow"
	"github.com/git-hegel/git-hegel/gitstore/gitdir"
)

// `git hegel run`: the step runner (engine/run.go) wired to git config,
// os/exec, the terminal and the signals. Results stream to stdout; what
// the runner says (progress, questions, the outcome) goes to stderr, so
// `git hegel run ask -p Q > answer.txt` captures the answer alone.

// exitCancelled is the exit status of a run stopped by Ctrl-C or SIGTERM,
// as a shell reports a process killed by SIGINT.
const exitCancelled = 130

func runFlags(fs *pflag.FlagSet) {
	fs.StringP("prompt", "p", "", "the prompt: what to ask or do ({{prompt}} in the steps)")
	fs.StringArray("context", nil, "a file to give the steps as context ({{context}}); - reads standard input; repeat for more")
	fs.StringArray("set", nil, "a value for the steps, as KEY=VALUE ({{vars.KEY}} in prompts, \"$HEGEL_VAR_KEY\" in commands); repeat for more")
	fs.String("adapter", "", "the adapter of the steps that run the default one (default: git config hegel.adapter)")
	valueName(fs, "context", "FILE")
	valueName(fs, "set", "KEY=VALUE")
	valueName(fs, "adapter", "NAME")
	completeValues(fs, "adapter", kindAdapter)
	fs.BoolP("yes", "y", false, "answer yes at every confirmation")
	fs.String("task", "", "the task: with a workflow, the new task's name; without, the task to continue")
	completeValues(fs, "task", kindAnyTask)
	fs.String("on-complete", "", "a command to run when the run ends, with a JSON object on its stdin (default: git config hegel.onComplete)")
	valueName(fs, "on-complete", "CMD")
}

var varKeyRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

func runRun(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 0, 1); err != nil {
		return err
	}
	// With a workflow, --task names the new task, as for start; without,
	// the task to continue.
	o := engine.RunOptions{Task: c.stringFlag("task"), Adapter: c.stringFlag("adapter"), Yes: c.boolFlag("yes"), OnComplete: c.stringFlag("on-complete")}
	if len(args) == 1 {
		o.Workflow = args[0]
		if o.Task != "" {
			if err := engine.CheckTaskName(o.Task); err != nil {
				return err
			}
		}
	}
	if c.flags.Changed("prompt") {
		p := c.stringFlag("prompt")
		o.Prompt = &p
	}
	sets, _ := c.flags.GetStringArray("set")
	for _, kv := range sets {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !varKeyRe().MatchString(k) {
			return usagef(c.name, "--set wants KEY=VALUE with a KEY of letters, digits and '_', got '%s'", kv)
		}
		if o.Vars == nil {
			o.Vars = map[string]string{}
		}
		o.Vars[k] = v
	}
	if a := o.Adapter; c.flags.Changed("adapter") && !workflow.ValidAdapterName(a) {
		return usagef(c.name, "invalid adapter name '%s'", a)
	}
	stdinUsed := false
	ctxFiles, _ := c.flags.GetStringArray("context")
	for _, f := range ctxFiles {
		in, err := c.readContext(f, &stdinUsed)
		if err != nil {
			return err
		}
		o.Context = append(o.Context, in)
	}
	e, r, err := c.engine()
	if err != nil {
		return err
	}
	cfg := r.Config()
	if o.OnComplete == "" {
		o.OnComplete, _ = cfg.Get("hegel", "", "oncomplete")
	}
	// A workflow that needs a context and was given none reads it from
	// standard input, when that is not a terminal: `git diff | git hegel
	// run summarize`, with -p or without.
	if o.Workflow != "" && o.Context == nil && !c.inputIsTerminal() && c.Stdin != nil {
		if reg, err := e.Workflows(); err == nil {
			if wf, ok := reg.Get(o.Workflow); ok && wf.Needs("context") {
				in, err := c.readContext("-", &stdinUsed)
				if err != nil {
					return err
				}
				o.Context = []engine.ContextInput{in}
			}
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	disp := c.newRunProgress()
	defer disp.close()
	// Everything printed from here on goes through the display, so the
	// progress line is cleared before and drawn after it.
	c.Stdout, c.Stderr = disp.stdout, disp.stderr
	e.Warn = c.warn
	e.Exec = &runexec.Executor{Dir: r.WorkTree, Env: os.Environ()}
	runner := &engine.Runner{
		E: e, Adapters: configAdapters{cfg}, Runs: r.Runs(),
		MaxResultSize: cfg.Int("hegel", "maxresultsize", engine.DefaultMaxResultSize),
		Stdout:        c.Stdout, Stderr: c.Stderr,
		Confirm:  c.runConfirm(stdinUsed, disp.tty),
		Progress: disp.update,
		PID:      os.Getpid(),
		Leftover: runexec.StopLeftover,
	}
	rep, err := runner.Run(ctx, o)
	disp.close()
	if err != nil {
		return err
	}
	return c.runOutcome(ctx, rep)
}

// runOutcome says how the run ended, on stderr, and picks the exit
// status: 0 completed, 130 cancelled by a signal, 1 anything else.
func (c *cmdCtx) runOutcome(ctx context.Context, rep *engine.RunReport) error {
	if p := rep.Parked; p != nil {
		fmt.Fprintf(c.Stderr, "Parked task %s (%s/%s): it stays open; 'git hegel switch %s' comes back to it\n", p.Task, p.Mode, p.CurrentNode, p.Task)
	}
	if rep.Callback != nil {
		c.warn(rep.Callback.Error())
	}
	switch rep.Outcome {
	case engine.RunCompleted:
		fmt.Fprintf(c.Stderr, "Completed %s (task %s): %s\n", rep.Workflow, rep.Task, text.Plural(rep.Total, "step", "steps"))
		return nil
	case engine.RunCancelled:
		fmt.Fprintln(c.Stderr, rep.Err.Error())
		if ctx.Err() != nil {
			return &silentError{code: exitCancelled}
		}
		return &silentError{code: exitFailed}
	}
	// A failed check's output was shown as it ran: the error says the rest.
	return rep.Err
}

func indentLines(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}

// readContext reads one --context: a file (relative to the current
// directory), or standard input for "-", at most once.
func (c *cmdCtx) readContext(name string, stdinUsed *bool) (engine.ContextInput, error) {
	if name == "-" {
		if *stdinUsed {
			return engine.ContextInput{}, usagef(c.name, "standard input can be read only once (--context -)")
		}
		*stdinUsed = true
		if c.Stdin == nil {
			return engine.ContextInput{}, nil
		}
		b, err := io.ReadAll(io.LimitReader(c.Stdin, engine.MaxInputBytes+1))
		if err != nil {
			return engine.ContextInput{}, fmt.Errorf("cannot read standard input: %v", err)
		}
		return engine.ContextInput{Text: b}, nil
	}
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(c.Dir, p)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return engine.ContextInput{}, usagef(c.name, "cannot read --context %s: %s", name, shortErr(err))
	}
	if !fi.Mode().IsRegular() {
		return engine.ContextInput{}, usagef(c.name, "--context %s is not a regular file", name)
	}
	if fi.Size() > engine.MaxInputBytes {
		return engine.ContextInput{}, usagef(c.name, "--context %s is %s; the most a run keeps is %s", name, engine.Size(fi.Size()), engine.Size(engine.MaxInputBytes))
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return engine.ContextInput{}, usagef(c.name, "cannot read --context %s: %s", name, shortErr(err))
	}
	return engine.ContextInput{Name: filepath.ToSlash(name), Text: b}, nil
}

// shortErr is an *os.PathError's reason without the path, which the
// message names already.
func shortErr(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// runConfirm asks the person at a confirmation gate, on stderr: what is
// about to happen (the planned files), then "Proceed with <step>? (y/N)".
// The answer is a line on standard input; end of input, or standard input
// already read for the context, is no answer: the task then waits.
// errTTY: standard error is a terminal (c.Stderr is the progress display
// by now), where the text's control characters are written out: a confirm
// text quotes earlier steps' results, which an adapter or a command wrote.
func (c *cmdCtx) runConfirm(stdinUsed, errTTY bool) func(*engine.Confirmation) (engine.Answer, error) {
	var in *bufio.Reader
	return func(q *engine.Confirmation) (engine.Answer, error) {
		if stdinUsed || c.Stdin == nil {
			return engine.AnswerNone, nil
		}
		w := c.Stderr
		fmt.Fprintf(w, "\nStep %d of %d: %s\n", q.Step, q.Total, q.Node)
		if q.Text != "" {
			msg := q.Text
			if errTTY {
				msg = text.Visible(msg)
			}
			fmt.Fprintln(w, msg)
		}
		if len(q.Files) > 0 {
			fmt.Fprintln(w, "Planned files:")
			for _, f := range q.Files {
				fmt.Fprintf(w, "  %s\n", c.quotePath(f))
			}
		}
		fmt.Fprint(w, q.Question)
		if in == nil {
			in = bufio.NewReader(c.Stdin)
		}
		line, err := in.ReadString('\n')
		if !c.inputIsTerminal() || line == "" {
			fmt.Fprintln(w) // nothing echoed the answer's newline
		}
		if line == "" && err != nil {
			return engine.AnswerNone, nil
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return engine.AnswerYes, nil
		}
		return engine.AnswerNo, nil
	}
}

// configAdapters reads adapters from git config (engine.AdapterSource).
type configAdapters struct{ cfg *gitdir.Config }

func (a configAdapters) Adapter(name string) (*engine.Adapter, error) {
	cmd, ok := a.cfg.Get("hegel", "adapter."+name, "command")
	if !ok || strings.TrimSpace(cmd) == "" {
		return nil, nil
	}
	ad := &engine.Adapter{Name: name, Command: cmd}
	if v, ok := a.cfg.Get("hegel", "adapter."+name, "timeout"); ok && strings.TrimSpace(v) != "" {
		d, err := parseTimeout(v)
		if err != nil {
			return nil, fmt.Errorf("hegel.adapter.%s.timeout: %v", name, err)
		}
		ad.Timeout = d
	}
	return ad, nil
}

func (a configAdapters) DefaultAdapter() string {
	v, _ := a.cfg.Get("hegel", "", "adapter")
	return strings.TrimSpace(v)
}

// parseTimeout reads a timeout: a Go duration (90s, 10m, 1h30m) or a
// number of seconds.
func parseTimeout(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return d, nil
	}
	var n int
	if _, err := fmt.Sscanf(v, "%d", &n); err == nil && n > 0 && fmt.Sprint(n) == v {
		return time.Duration(n) * time.Second, nil
	}
	return 0, fmt.Errorf("'%s' is not a duration such as 90s or 10m", v)
}

// runResult is `git hegel result <node>`: the stored output of a step.
func runResult(c *cmdCtx, args []string) error {
	if err := c.wantArgs(args, 1, 1); err != nil {
		return err
	}
	e, _, err := c.engine()
	if err != nil {
		return err
	}
	t, err := e.Current(c.selected())
	if err != nil {
		return err
	}
	b, meta, err := e.Result(t, args[0])
	if err != nil {
		// A node the workflow does not have can never have a result
		// (exit 2); one it has may get one from the next run (exit 1).
		var nr *engine.NoResultError
		if wf, werr := engine.TaskWorkflow(t); errors.As(err, &nr) && werr == nil && !wf.HasNode(args[0]) {
			return engine.BadName(err)
		}
		return err
	}
	b, withheld := c.resultForReader(e, t.State, args[0], b)
	if withheld && meta.Error != "" {
		m := *meta
		m.Error = string(b)
		meta = &m
	}
	if schema := c.jsonSchema(); schema > 0 {
		j := resultJSON{Schema: schema, Task: t.State.Task, Node: args[0], Handler: meta.Handler, At: meta.At,
			Bytes: meta.Bytes, Truncated: meta.Truncated, Exit: meta.Exit, Error: meta.Error,
			Files: nonNil(meta.Files), RequiresConfirmation: meta.RequiresConfirmation, Result: string(b)}
		if schema >= 2 {
			j.DurationMS = ptr(int64(meta.Seconds * 1000))
		} else {
			j.Seconds = ptr(meta.Seconds)
		}
		return writeJSON(c.Stdout, j)
	}
	if meta.Truncated {
		c.warn(fmt.Sprintf("the step printed %s; the result was cut at hegel.maxResultSize", engine.Size(meta.Bytes)))
	}
	if c.Terminal != nil && c.Terminal(c.Stdout) {
		// On a terminal the result is shown, not obeyed: a step's output
		// (an adapter's answer, a command's coloured log) or a result
		// that came with a fetch could set the window title, write the
		// clipboard or draw one line over another. Piped or redirected,
		// it is written byte for byte, as artifact does.
		b = []byte(text.Visible(string(b)))
	}
	_, err = c.Stdout.Write(b)
	return err
}

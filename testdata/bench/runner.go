package main

// The step runner's scenarios: the runner's own cost per step,
// and how fast Ctrl-C ends a run.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// runnerSteps is the number of steps of the long workflow of run-overhead.
const runnerSteps = 11

// stepWorkflow writes a workflow of n adapter steps named NAME.
func stepWorkflow(dir, name string, n int) error {
	var b strings.Builder
	fmt.Fprintf(&b, "mode: %s\nstart_node: s1\nnodes:\n", name)
	for i := 1; i <= n; i++ {
		to := fmt.Sprintf("s%d", i+1)
		if i == n {
			to = "done"
		}
		fmt.Fprintf(&b, "  s%d:\n    summary: step %d\n    prompt: Step %d of {{task.name}}.\n    run:\n      adapter: default\n    transitions:\n      - when: s%d_complete\n        to: %s\n", i, i, i, i, to)
	}
	p := filepath.Join(dir, ".hegel", "workflows", name+".yaml")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(b.String()), 0o644)
}

// runnerRepo is a 1,000-file repository with the bench adapter (`cat`, so
// the handler costs one sh and one cat) and the workflows one (1 step)
// and many (runnerSteps steps).
func (b *bench) runnerRepo() (string, error) {
	dir, err := b.repo(std(1000))
	if err != nil {
		return "", err
	}
	for _, kv := range [][2]string{{"hegel.adapter.bench.command", "cat"}, {"hegel.adapter", "bench"}, {"hegel.checkpoints", "off"}} {
		if _, err := b.git(dir, "config", kv[0], kv[1]); err != nil {
			return "", err
		}
	}
	if err := stepWorkflow(dir, "one", 1); err != nil {
		return "", err
	}
	return dir, stepWorkflow(dir, "many", runnerSteps)
}

func (b *bench) cleanRunner(dir string) error {
	if err := b.resetHegel(dir); err != nil {
		return err
	}
	for _, n := range []string{"one", "many"} {
		os.Remove(filepath.Join(dir, ".hegel", "workflows", n+".yaml"))
	}
	for _, k := range []string{"hegel.adapter.bench.command", "hegel.adapter", "hegel.checkpoints"} {
		_, _ = b.git(dir, "config", "--unset", k)
	}
	return nil
}

// runRunOverhead times `git hegel run` of a 1-step and an 11-step
// workflow whose handler is `cat` (the prompt back), and the handler
// alone (`sh -c cat` with the prompt on stdin). The runner's overhead per
// step is (run 11 − run 1) / 10 − the handler's own time: everything the
// runner adds to a step (render, result blob, commit, running record,
// results directory), start-up excluded, which the 1-step run pays too.
func runRunOverhead(b *bench) ([]row, error) {
	dir, err := b.runnerRepo()
	if err != nil {
		return nil, err
	}
	prompt := filepath.Join(b.work, "prompt.txt")
	if err := os.WriteFile(prompt, []byte("Step 1 of bench.\n"), 0o644); err != nil {
		return nil, err
	}
	b.settle()
	round := []step{
		timed(fmt.Sprintf("git hegel run many (%d steps)", runnerSteps), dir, hegelCmd("run", "many", "-y")...),
		timed("git hegel run one (1 step)", dir, hegelCmd("run", "one", "-y")...),
		{label: "sh -c cat (the handler alone)", dir: dir, argv: []string{"sh", "-c", "cat"}, stdin: prompt},
		timed("git hegel version", dir, hegelVersion...),
	}
	ss, err := b.measure(round, b.runs, measureOpts{rotate: true})
	if err != nil {
		return nil, err
	}
	b.keep("run-overhead", "1k", ss...)
	if err := b.cleanRunner(dir); err != nil {
		return nil, err
	}
	per := func(many, one, handler time.Duration) time.Duration {
		return (many-one)/time.Duration(runnerSteps-1) - handler
	}
	med := per(ss[0].median(), ss[1].median(), ss[2].median())
	best := per(ss[0].min(), ss[1].min(), ss[2].min())
	bound := 20 * time.Millisecond
	return []row{
		{scenario: "run: runner overhead per step", repo: "1k", hegel: fmtDur(med), base: "-", ratio: ratio(med, bound),
			minRatio: ratio(best, bound), limit: 1, target: "< " + fmtDur(bound),
			note: fmt.Sprintf("(run %d − run 1)/%d − handler", runnerSteps, runnerSteps-1)},
		timeRow("run one (1 step) vs version", "1k", ss[1], ss[3], 0),
	}, nil
}

// runRunCancel measures, from SIGINT to exit, a run whose step obeys
// SIGTERM and one whose step ignores it (stopped by SIGKILL after the 5 s
// grace): under 1 s and under 6 s. git-hegel is started directly (git
// would forward the signal, but the exit would then be git's).
func runRunCancel(b *bench) ([]row, error) {
	dir, err := b.runnerRepo()
	if err != nil {
		return nil, err
	}
	marker := filepath.Join(b.work, "step-started")
	adapters := map[string]string{
		"obeys":   fmt.Sprintf("cat >/dev/null; : > %s; exec sleep 60", marker),
		"ignores": fmt.Sprintf("cat >/dev/null; trap '' TERM; sleep 60 & : > %s; wait; wait", marker),
	}
	for name, cmd := range adapters {
		if _, err := b.git(dir, "config", "hegel.adapter."+name+".command", cmd); err != nil {
			return nil, err
		}
	}
	defer func() {
		for name := range adapters {
			_, _ = b.git(dir, "config", "--unset", "hegel.adapter."+name+".command")
		}
	}()
	runs := b.runs
	if runs > 15 {
		runs = 15 // the ignoring step costs 5 s a run
	}
	obeys, ignores := &stats{label: "Ctrl-C to exit, step obeys SIGTERM"}, &stats{label: "Ctrl-C to exit, step ignores SIGTERM"}
	for i := 0; i < runs; i++ {
		for _, c := range []struct {
			adapter string
			s       *stats
		}{{"obeys", obeys}, {"ignores", ignores}} {
			d, err := b.cancelOnce(dir, c.adapter, marker)
			if err != nil {
				return nil, err
			}
			c.s.walls = append(c.s.walls, d)
		}
	}
	b.keep("run-cancel", "1k", obeys, ignores)
	if err := b.cleanRunner(dir); err != nil {
		return nil, err
	}
	return []row{
		absRow("run: Ctrl-C to exit, step obeys SIGTERM", "1k", obeys, time.Second),
		absRow("run: Ctrl-C to exit, step ignores SIGTERM", "1k", ignores, 6*time.Second),
	}, nil
}

// cancelOnce starts `git-hegel run one --adapter A`, waits until the step
// runs, sends SIGINT and returns the time until the run exited (130).
func (b *bench) cancelOnce(dir, adapter, marker string) (time.Duration, error) {
	os.Remove(marker)
	cmd := exec.Command(b.bin, "run", "one", "--adapter", adapter)
	cmd.Dir, cmd.Env = dir, b.env
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return 0, fmt.Errorf("run-cancel: the %s step did not start in 30 s", adapter)
		}
		time.Sleep(5 * time.Millisecond)
	}
	t0 := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		return 0, err
	}
	err := cmd.Wait()
	d := time.Since(t0)
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 130 {
		return 0, fmt.Errorf("run-cancel: the run ended with %v, want exit status 130", err)
	}
	return d, nil
}

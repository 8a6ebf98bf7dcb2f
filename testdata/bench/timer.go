package main

// The whole-command timer: runs rounds of commands, interleaved so that
// machine noise hits every command compared, and keeps wall time and peak
// RSS of each.

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// step is one command of a round. A step without a label is untimed setup
// (it still runs in warm-up and in every round).
type step struct {
	label string
	dir   string
	argv  []string
	env   []string // added to the bench environment
	stdin string   // a file given as standard input
	// mayFail: a non-zero exit of this untimed step is ignored instead of
	// stopping the scenario.
	mayFail bool
	// do, if set, is an untimed step run in the driver itself (writing
	// files, say) instead of argv.
	do func() error
}

// inProcess returns an untimed step that runs fn in the driver.
func inProcess(fn func() error) step { return step{do: fn} }

// timed returns a timed step.
func timed(label, dir string, argv ...string) step { return step{label: label, dir: dir, argv: argv} }

// setup returns an untimed step.
func setup(dir string, argv ...string) step { return step{dir: dir, argv: argv} }

type stats struct {
	label string
	walls []time.Duration
	rss   []int64 // KiB
}

func (s *stats) median() time.Duration {
	w := slices.Clone(s.walls)
	slices.Sort(w)
	if len(w) == 0 {
		return 0
	}
	if len(w)%2 == 1 {
		return w[len(w)/2]
	}
	return (w[len(w)/2-1] + w[len(w)/2]) / 2
}

func (s *stats) min() time.Duration {
	if len(s.walls) == 0 {
		return 0
	}
	return slices.Min(s.walls)
}

// peakRSS is the largest maximum resident set size seen, in KiB.
func (s *stats) peakRSS() int64 {
	if len(s.rss) == 0 {
		return 0
	}
	return slices.Max(s.rss)
}

// measureOpts tunes one measurement.
type measureOpts struct {
	// rotate starts each round one step later (A,B then B,A), so no
	// command always runs right after the same other one. Only for
	// rounds whose steps do not depend on each other's effects.
	rotate bool
	// block, with rotate, rotates by blocks of this many steps (a block
	// is a sequence that must stay in order, e.g. push then pop).
	block int
	// budget bounds the time of the timed rounds (estimated from the
	// warm-up round; default 40s): slow rounds run fewer times, at least 5.
	budget time.Duration
}

// measure runs round once as warm-up, then runs times, and returns the
// statistics of each timed label (in the order the labels first appear).
func (b *bench) measure(round []step, runs int, o measureOpts) ([]*stats, error) {
	if o.budget == 0 {
		o.budget = 40 * time.Second
	}
	warmStart := time.Now()
	byLabel := map[string]*stats{}
	var order []*stats
	for _, st := range round {
		if st.label != "" && byLabel[st.label] == nil {
			s := &stats{label: st.label}
			byLabel[st.label] = s
			order = append(order, s)
		}
	}
	var twin []step
	if b.against != "" {
		twin = b.againstRound(round)
		for _, st := range twin {
			if st.label != "" && byLabel[st.label] == nil {
				s := &stats{label: st.label}
				byLabel[st.label] = s
				b.twins[byLabel[strings.TrimSuffix(st.label, againstMark)]] = s
			}
		}
	}
	rotated := func(round []step, r int) []step {
		if o.rotate && r > 0 && len(round) > 0 {
			blk := max(1, o.block)
			k := (r % max(1, len(round)/blk)) * blk
			return append(slices.Clone(round[k:]), round[:k]...)
		}
		return round
	}
	for r := -1; r < runs; r++ {
		if r == 0 && o.budget > 0 && time.Since(warmStart)*time.Duration(runs) > o.budget {
			// Slow commands: fewer runs, so the default set stays within
			// its time, but never fewer than 5.
			runs = max(5, int(o.budget/time.Since(warmStart)))
		}
		steps := rotated(round, r)
		if twin != nil {
			// The other binary's copy of the round, before or after,
			// alternately, so neither always runs first.
			if r%2 == 0 {
				steps = append(slices.Clone(steps), rotated(twin, r)...)
			} else {
				steps = append(slices.Clone(rotated(twin, r)), steps...)
			}
		}
		for _, st := range steps {
			if st.do != nil {
				if err := st.do(); err != nil {
					return nil, err
				}
				continue
			}
			wall, rss, err := b.run(st)
			if err != nil {
				if st.label == "" && st.mayFail {
					continue
				}
				return nil, err
			}
			if r >= 0 && st.label != "" {
				s := byLabel[st.label]
				s.walls = append(s.walls, wall)
				s.rss = append(s.rss, rss)
			}
		}
	}
	return order, nil
}

// againstMark ends the labels of the -against binary's commands.
const againstMark = " [against]"

// againstRound is round for the -against binary: its git-hegel commands
// run with that binary first on PATH (or named directly), timed under
// their label plus againstMark; untimed steps stay; timed commands of
// other programs are dropped (the baselines are timed once, in round).
func (b *bench) againstRound(round []step) []step {
	var out []step
	for _, st := range round {
		isHegel := len(st.argv) >= 2 && st.argv[0] == "git" && st.argv[1] == "hegel"
		direct := len(st.argv) >= 1 && st.argv[0] == b.bin
		switch {
		case st.do != nil:
			out = append(out, st)
		case isHegel || direct:
			st.env = append(slices.Clone(st.env), b.againstEnv...)
			if direct {
				st.argv = append([]string{b.against}, st.argv[1:]...)
			}
			if st.label != "" {
				st.label += againstMark
			}
			out = append(out, st)
		case st.label == "":
			out = append(out, st)
		}
	}
	return out
}

// run executes one step through the launcher and returns its wall time
// and peak RSS (KiB; for `git hegel` it is the larger of git's and
// git-hegel's, as the kernel folds waited-for children into the child's
// rusage).
func (b *bench) run(st step) (time.Duration, int64, error) {
	resp, err := b.launcher.run(launchReq{Argv: st.argv, Dir: st.dir, Env: append(slices.Clone(b.env), st.env...), Stdin: st.stdin})
	if err != nil {
		return 0, 0, fmt.Errorf("launcher: %v", err)
	}
	if resp.Err != "" {
		return 0, 0, fmt.Errorf("%s (in %s): %s", strings.Join(st.argv, " "), st.dir, resp.Err)
	}
	return time.Duration(resp.WallNS), resp.MaxRSS, nil
}

// output runs a command untimed and returns its standard output.
func (b *bench) output(dir string, argv ...string) (string, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = b.env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s (in %s): %v: %s", strings.Join(argv, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// git runs git untimed, with fixed dates so generated commits are
// reproducible.
func (b *bench) git(dir string, args ...string) (string, error) {
	return b.output(dir, append([]string{"git"}, args...)...)
}

// hegel runs `git hegel` untimed.
func (b *bench) hegel(dir string, args ...string) (string, error) {
	return b.output(dir, append([]string{"git", "hegel"}, args...)...)
}

func fmtDur(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < time.Millisecond:
		return fmt.Sprintf("%.0fµs", float64(d)/1e3)
	case d < 100*time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/1e6)
	case d < 10*time.Second:
		return fmt.Sprintf("%.0fms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

func fmtKiB(k int64) string {
	if k <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fMiB", float64(k)/1024)
}

func execGit(b *bench, dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = b.env
	return cmd
}

package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// initTrace runs `git-hegel version` with GODEBUG=inittrace=1 runs times
// and returns, as a Markdown table, the ten package initialisations with
// the highest median clock time: what every command pays before main.
func (b *bench) initTrace(dir string, runs int) (string, error) {
	runs = min(max(runs, 5), 31)
	per := map[string][]float64{}
	var totals []float64
	for range runs {
		cmd := exec.Command(b.bin, "version")
		cmd.Dir = dir
		cmd.Env = append(append([]string{}, b.env...), "GODEBUG=inittrace=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("GODEBUG=inittrace=1 git-hegel version: %v", err)
		}
		total := 0.0
		for pkg, ms := range parseInitTrace(stderr.String()) {
			per[pkg] = append(per[pkg], ms)
			total += ms
		}
		totals = append(totals, total)
	}
	type pkgTime struct {
		pkg string
		ms  float64
	}
	var all []pkgTime
	for pkg, ms := range per {
		all = append(all, pkgTime{pkg, medianOf(ms)})
	}
	slices.SortFunc(all, func(a, b pkgTime) int {
		if a.ms != b.ms {
			if a.ms > b.ms {
				return -1
			}
			return 1
		}
		return strings.Compare(a.pkg, b.pkg)
	})
	total := medianOf(totals)
	var sb strings.Builder
	fmt.Fprintf(&sb, "Package initialisation of `git-hegel version` (GODEBUG=inittrace=1, median of %d runs): %s in %d packages; the ten heaviest:\n\n",
		runs, fmtDur(time.Duration(total*float64(time.Millisecond))), len(per))
	var cells [][]string
	for _, p := range all[:min(10, len(all))] {
		share := 0.0
		if total > 0 {
			share = 100 * p.ms / total
		}
		cells = append(cells, []string{p.pkg, fmt.Sprintf("%.3f ms", p.ms), fmt.Sprintf("%.0f%%", share)})
	}
	table(&sb, []string{"package", "init (clock)", "share"}, cells)
	return sb.String(), nil
}

// parseInitTrace reads the runtime's inittrace lines ("init pkg @0.5 ms,
// 0.03 ms clock, 120 bytes, 3 allocs") into clock milliseconds per
// package.
func parseInitTrace(out string) map[string]float64 {
	got := map[string]float64{}
	for line := range strings.SplitSeq(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 7 || f[0] != "init" || f[6] != "clock," {
			continue
		}
		ms, err := strconv.ParseFloat(f[4], 64)
		if err != nil {
			continue
		}
		got[f[1]] += ms
	}
	return got
}

func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

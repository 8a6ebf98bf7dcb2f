package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// syncBound is the sync-scale row's target: a sync that brings one
// changed task costs at most this many times git fetch of the same
// refspecs into a clone holding the same refs.
const syncBound = 1.5

// syncRSSBound is the sync-scale row's peak-memory bound, in KiB.
const syncRSSBound = 100 << 10

// syncTeam is a shared remote holding n tasks, and the three clones the
// scenario uses: one that runs git hegel sync, one that runs plain git
// fetch of the same refspecs, and one that changes a task upstream.
type syncTeam struct {
	remote, hegel, plain, upstream string
}

// syncTeamOf builds the remote with n tasks (half open, half archived, as
// fillTasks stores them), written by ten clones: each pushes a tenth of
// the tasks, so the remote's refs arrived as a team's would; then its
// refs are packed, as a hosting server keeps them (-loose-remote leaves
// them loose). The measured clones have synced everything once.
func (b *bench) syncTeamOf(n int) (*syncTeam, error) {
	root := filepath.Join(b.work, fmt.Sprintf("sync-%d", n))
	_ = os.RemoveAll(root)
	t := &syncTeam{remote: filepath.Join(root, "remote.git"), hegel: filepath.Join(root, "hegel"),
		plain: filepath.Join(root, "plain"), upstream: filepath.Join(root, "upstream")}
	seed := filepath.Join(root, "seed")
	if err := os.MkdirAll(seed, 0o755); err != nil {
		return nil, err
	}
	for _, args := range [][]string{
		{"init", "-q", "--bare", t.remote},
		{"-C", seed, "init", "-q"},
	} {
		if _, err := b.git(root, args...); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(filepath.Join(seed, ".hegel", "workflows"), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(seed, ".hegel", "workflows", "loop.yaml"), []byte(loopWorkflow), 0o644); err != nil {
		return nil, err
	}
	for _, args := range [][]string{
		{"-C", seed, "add", "-f", ".hegel/workflows/loop.yaml"},
		{"-C", seed, "commit", "-q", "-m", "start"},
		{"-C", seed, "push", "-q", t.remote, "HEAD:refs/heads/main"},
	} {
		if _, err := b.git(root, args...); err != nil {
			return nil, err
		}
	}
	if err := b.fillTasks(seed, n); err != nil {
		return nil, err
	}
	refs, err := b.git(seed, "for-each-ref", "--format=%(refname)", "refs/hegel/tasks/", "refs/hegel/archive/")
	if err != nil {
		return nil, err
	}
	all := strings.Fields(refs)
	// Ten clones, each pushing its share (plain git: what each clone's
	// sync would leave on the remote for these refs).
	for c := 0; c < 10; c++ {
		clone := filepath.Join(root, fmt.Sprintf("clone%d", c))
		if _, err := b.git(root, "clone", "-q", seed, clone); err != nil {
			return nil, err
		}
		var specs []string
		for i := c; i < len(all); i += 10 {
			specs = append(specs, "+"+all[i]+":"+all[i])
		}
		if _, err := b.git(clone, append([]string{"fetch", "-q", "origin"}, specs...)...); err != nil {
			return nil, err
		}
		for len(specs) > 0 {
			k := min(len(specs), 500)
			if _, err := b.git(clone, append([]string{"push", "-q", t.remote}, specs[:k]...)...); err != nil {
				return nil, err
			}
			specs = specs[k:]
		}
		_ = os.RemoveAll(clone)
	}
	// A hosting server keeps its refs packed (its maintenance runs git
	// pack-refs, as git gc does); pushes leave them loose, 10,000 files
	// that every fetch's ref advertisement would open.
	if !b.looseRemote {
		if _, err := b.git(t.remote, "pack-refs", "--all"); err != nil {
			return nil, err
		}
	}
	for _, dir := range []string{t.hegel, t.plain, t.upstream} {
		if _, err := b.git(root, "clone", "-q", t.remote, dir); err != nil {
			return nil, err
		}
	}
	for _, dir := range []string{t.plain, t.upstream} {
		if _, err := b.git(dir, "fetch", "-q", "origin", "+refs/hegel/*:refs/hegel/*"); err != nil {
			return nil, err
		}
	}
	if _, err := b.hegel(t.hegel, "sync", "origin"); err != nil {
		return nil, err
	}
	got, err := b.git(t.hegel, "for-each-ref", "--count=100000", "--format=x", "refs/hegel/tasks/", "refs/hegel/archive/")
	if err != nil {
		return nil, err
	}
	if c := strings.Count(got, "x"); c != n+1 { // and fillTasks' aborted template
		return nil, fmt.Errorf("after the first sync the clone holds %d tasks, want %d", c, n+1)
	}
	return t, nil
}

// changeOne is the untimed step of each round: the upstream clone records
// a new state commit on one open task (the same state, a new commit) and
// pushes it with plain git.
func (t *syncTeam) changeOne() step {
	const ref = "refs/hegel/tasks/open-0000"
	script := `set -e
c=$(git commit-tree -p ` + ref + ` -m "bench: upstream change" ` + ref + `^{tree})
git update-ref ` + ref + ` "$c"
git push -q origin ` + ref + ``
	return setup(t.upstream, "sh", "-c", script)
}

// runSyncScale times git hegel sync bringing one task changed upstream,
// with 10,000 and 100 tasks stored, against git fetch of the same
// refspecs into a clone holding the same refs, all in the same rounds.
func runSyncScale(b *bench) ([]row, error) {
	big, err := b.syncTeamOf(10000)
	if err != nil {
		return nil, err
	}
	small, err := b.syncTeamOf(100)
	if err != nil {
		return nil, err
	}
	fetch := []string{"git", "fetch", "-q", "--prune", "--no-tags", "origin", "+refs/hegel/*:refs/hegel/*"}
	round := []step{
		big.changeOne(),
		timed("git hegel sync (10,000 tasks)", big.hegel, hegelCmd("sync", "origin")...),
		timed("git fetch, same refspecs (10,000 tasks)", big.plain, fetch...),
		small.changeOne(),
		timed("git hegel sync (100 tasks)", small.hegel, hegelCmd("sync", "origin")...),
		timed("git fetch, same refspecs (100 tasks)", small.plain, fetch...),
	}
	b.settle()
	ss, err := b.measure(round, b.runs, measureOpts{})
	if err != nil {
		return nil, err
	}
	b.keep("sync-scale", "tasks", ss...)
	peak := ss[0].peakRSS()
	return []row{
		timeRow("sync-scale: sync, 1 of 10,000 tasks changed upstream vs git fetch", "10k tasks", ss[0], ss[1], syncBound),
		sizeRow("sync-scale: sync with 10,000 vs 100 tasks stored", "10k/100", ss[0], ss[2], 1.1),
		// git's own fetch grows with the refs stored too (it reads
		// every local ref to negotiate): the yardstick for the row above.
		timeRow("sync-scale: git fetch with 10,000 vs 100 tasks stored (reference)", "10k/100", ss[1], ss[3], 0),
		{scenario: "sync-scale: sync peak memory, 10,000 tasks", repo: "10k tasks", hegel: fmtKiB(peak), base: "-",
			ratio: float64(peak) / syncRSSBound, limit: 1, target: "RSS ≤ 100 MiB"},
	}, nil
}

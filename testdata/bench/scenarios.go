package main

// The scenarios. Each one sets up its repositories, measures rounds of
// interleaved commands, and returns table rows. To add a row, add a
// scenario (or a row to an existing one's result); `needs` skips it with a
// note while the subcommand it times does not exist yet.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

type scenario struct {
	name  string
	doc   string
	slow  bool   // only with -slow
	needs string // git-hegel subcommand that must exist
	run   func(b *bench) ([]row, error)
}

var scenarios = []scenario{
	{name: "startup", run: runStartup,
		doc: "git hegel version (and the binary alone) vs git rev-parse HEAD: the floor every command pays"},
	{name: "status", run: runStatus,
		doc: "git hegel status vs git hegel version (≤1.15×) and git rev-parse HEAD, 1k and 100k files; 100k/1k"},
	{name: "status-gc", run: runStatusGC,
		doc: "as status, after git gc packed refs/hegel and their objects"},
	{name: "next", run: func(b *bench) ([]row, error) { return runNext(b, "next", "") },
		doc: "git hegel next again (self-loop) vs git hegel version (≤1.15×) and git rev-parse HEAD, 1k and 100k files; 100k/1k"},
	{name: "next-checkpoints-off", run: func(b *bench) ([]row, error) { return runNext(b, "next-checkpoints-off", "off") },
		doc: "as next, with git config hegel.checkpoints off; and vs version plus git writing the same objects and refs (≤1.15×)"},
	{name: "next-diagnostics", run: runNextDiagnostics,
		doc: "where next's time goes (information): next on disk and on tmpfs, git update-ref with fsync"},
	{name: "stash", needs: "stash", run: runStash,
		doc: "stash push / pop / drop -y with 1,000 stashes stored vs git hegel version (≤1.15×), and vs version plus git writing the same objects and refs (≤1.15×), 1k and 100k files"},
	{name: "stash-list", needs: "stash", run: runStashList,
		doc: "git hegel stash list with 10,000 stashes stored: under 100 ms"},
	{name: "checkpoint", needs: "checkpoint", run: runCheckpoint,
		doc: "git hegel checkpoint vs git stash create -u, 100k files with 1% modified, 0.5% untracked, 2,000 ignored"},
	{name: "status-plain-fetch", needs: "remote", run: runStatusPlainFetch,
		doc: "git hegel status with a remote set up for plain git fetch (100 tracked task refs, nothing new to merge) vs git hegel version (≤1.15×)"},
	{name: "hook", needs: "hook", run: runHook,
		doc: "git hegel hook PostToolUse with 10,000 and 10 journaled events vs git hegel version: within 1.5x, and within 10% of each other"},
	{name: "undo-hook", needs: "undo", run: runActionHook,
		doc: "git hegel hook PreToolUse (an agent-action snapshot, 10 files changed since the last) vs git status --porcelain with core.untrackedCache=true on 100k files (≤1.0×), again with an fsmonitor hook on 100k, and vs git hegel version on 1k (≤1.5×); peak RSS"},
	{name: "mcp", needs: "mcp", run: runMCP,
		doc: "git hegel mcp: a status tool call on a running server (under 5 ms), and start-up to the initialize reply vs git hegel version (≤1.5×), 1k files"},
	{name: "fold", needs: "hook", run: runFold,
		doc: "git hegel next folding 10,000 journaled agent events into the task's ref (checkpoints off): under 200 ms"},
	{name: "rollback", needs: "rollback", run: runRollback,
		doc: "git hegel rollback across 1,000 changed files vs git reset --hard between the same states (≤1.0×), 100k files"},
	{name: "tasks", needs: "tasks", run: runTasks,
		doc: "git hegel tasks and tasks --archived with 1,000 tasks stored, 500 archived: under 100 ms"},
	{name: "history", needs: "log", run: runHistory,
		doc: "git hegel log -n 20, log --since 1.week.ago (under 100 ms) and stats for one day (under 200 ms) over 100,000 history entries; adding an entry with 100,000 vs 10 (within 10%)"},
	{name: "run-overhead", needs: "run", run: runRunOverhead,
		doc: "git hegel run of 11 vs 1 adapter steps, less the handler's own time: the runner's cost per step, under 20 ms"},
	{name: "run-cancel", needs: "run", run: runRunCancel,
		doc: "SIGINT to exit of a running git hegel run: under 1 s when the step obeys SIGTERM, under 6 s when it ignores it"},
	{name: "many-tasks", needs: "tasks", run: runManyTasks,
		doc: "status and next with 1,000 tasks stored vs none (within 10%), and status vs git hegel version (≤1.15×)"},
	{name: "sync-scale", needs: "remote", run: runSyncScale,
		doc: "git hegel sync bringing 1 task changed upstream, 10,000 tasks stored (pushed by 10 clones) vs git fetch of the same refspecs (≤1.5×); 10,000 vs 100 stored (within 10%); peak RSS ≤ 100 MiB"},
}

// sized is one repository of a size-dependent scenario.
type sized struct {
	spec  repoSpec
	dir   string
	label string
}

// std is the repository every scenario uses for size n: files of seed 1,
// left as a working session leaves them (1% modified, 0.5% untracked,
// 2,000 ignored files in build/).
func std(n int) repoSpec { return repoSpec{Files: n, Seed: 1, Dirty: true} }

func (b *bench) sizedRepos() ([]sized, error) {
	var out []sized
	for _, n := range b.sizes() {
		spec := std(n)
		dir, err := b.repo(spec)
		if err != nil {
			return nil, err
		}
		out = append(out, sized{spec, dir, spec.label()})
	}
	b.settle()
	return out, nil
}

// resetHegel removes everything git-hegel (and the scenarios) left in a
// repository: refs under refs/hegel/ and refs/bench/, the session, the
// hegel config, and every object that is not in the generated pack (a
// generated repository has no loose objects, so anything loose, and any
// other pack, was written since and is unreachable once the refs are
// gone). Scenarios start from this known state whatever ran before them.
func (b *bench) resetHegel(dir string) error {
	_, _ = b.git(dir, "remote", "remove", benchRemote)
	refs, err := b.git(dir, "for-each-ref", "--format=delete %(refname)", "refs/hegel/", "refs/bench/", "refs/hegel-remotes/")
	if err != nil {
		return err
	}
	if refs != "" {
		if err := b.gitStdin(dir, refs, "update-ref", "--stdin"); err != nil {
			return err
		}
	}
	for _, f := range []string{"state.json", "state.json.lock"} {
		if err := os.Remove(filepath.Join(dir, ".hegel", f)); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	_, _ = b.git(dir, "config", "--unset-all", "hegel.checkpoints")
	objects := filepath.Join(dir, ".git", "objects")
	loose, err := filepath.Glob(filepath.Join(objects, "[0-9a-f][0-9a-f]"))
	if err != nil {
		return err
	}
	for _, d := range loose {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
	}
	if base := b.basePacks[dir]; len(base) > 0 {
		packs, err := filepath.Glob(filepath.Join(objects, "pack", "*"))
		if err != nil {
			return err
		}
		for _, p := range packs {
			if !base[filepath.Base(p)] {
				if err := os.Remove(p); err != nil {
					return err
				}
			}
		}
	}
	// pack-refs (status-gc) may have packed refs/hegel; update-ref -d
	// removed them from packed-refs already.
	return nil
}

// startLoop resets git-hegel's state and starts the self-looping workflow.
func (b *bench) startLoop(dir string) error {
	if err := b.resetHegel(dir); err != nil {
		return err
	}
	_, err := b.hegel(dir, "start", "loop", "--task", "bench")
	return err
}

func (b *bench) gitStdin(dir, stdin string, args ...string) error {
	cmd := execGit(b, dir, args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

var revParse = []string{"git", "rev-parse", "HEAD"}

// hegelVersion is the floor every git-hegel command pays (git's dispatch
// and a Go binary's start-up). The bound on state commands is stated
// against it: the earlier 3× rev-parse was below that floor on any Go
// binary run as `git <sub>` (docs/benchmarks.md, the status rows' notes).
var hegelVersion = []string{"git", "hegel", "version"}

// stateBound: status, next and stash push/pop/drop cost at most this many
// times `git hegel version`, on any repository size.
const stateBound = 1.15

// floorBound is the proposed bound on a writing state command (next,
// stash push/pop/drop), which cannot meet stateBound: at most this many
// times `git hegel version` plus what git itself pays to write the same
// objects and refs (floor.go; docs/benchmarks.md, 2026-11-25: measured
// 1.10–1.67× in two runs at load 1.6–3.5, decision 121).
const floorBound = 1.75

// stashFloors are the writes of each stash command in the stash
// scenario's loop, counted with strace: loose objects, and files replaced
// under a lock (refs and .hegel/state.json).
var stashFloors = []struct {
	of             string
	objects, files int
}{
	{"stash push", 7, 3},
	{"stash pop", 4, 3},
	{"stash drop -y", 1, 1},
}

// rollbackBound is the rollback row's target: at most git reset
// --hard's time between the same states.
const rollbackBound = 1.0

func hegelCmd(args ...string) []string { return append([]string{"git", "hegel"}, args...) }

// startupBound is the startup row's target: `git-hegel version` at most
// this many times an empty Go program built by the same toolchain.
const startupBound = 3.2

func runStartup(b *bench) ([]row, error) {
	dir, err := b.repo(std(1000))
	if err != nil {
		return nil, err
	}
	round := []step{
		timed("git hegel version", dir, hegelCmd("version")...),
		timed("git-hegel version", dir, b.bin, "version"),
		timed("git version", dir, "git", "version"),
		timed("git rev-parse HEAD", dir, revParse...),
	}
	noop := filepath.Join(filepath.Dir(b.bin), "git-benchnoop")
	floor := filepath.Join(filepath.Dir(b.bin), "git-benchfloor")
	_, noopErr := os.Stat(noop)
	_, floorErr := os.Stat(floor)
	if noopErr == nil {
		round = append(round,
			timed("empty Go program", dir, noop),
			timed("git benchnoop (empty Go program)", dir, "git", "benchnoop"))
		if floorErr == nil {
			round = append(round, timed("dependency floor (startupfloor)", dir, floor))
		}
	}
	ss, err := b.measure(round, b.runs, measureOpts{rotate: true})
	if err != nil {
		return nil, err
	}
	b.keep("startup", "1k", ss...)
	rows := []row{
		timeRow("startup: git hegel version", "1k", ss[0], ss[3], 0),
		timeRow("startup: git-hegel version (no git)", "1k", ss[1], ss[3], 0),
	}
	if len(ss) >= 6 {
		rows = append(rows,
			timeRow("startup: empty Go program", "1k", ss[4], ss[3], 0),
			timeRow("startup: git benchnoop (empty Go program)", "1k", ss[5], ss[3], 0),
			timeRow("startup: git-hegel version vs empty Go program", "1k", ss[1], ss[4], startupBound))
	}
	if len(ss) == 7 {
		rows = append(rows, timeRow("startup: dependency floor vs empty Go program", "1k", ss[6], ss[4], 0))
	}
	inits, err := b.initTrace(dir, b.runs)
	if err != nil {
		return nil, err
	}
	b.notes = append(b.notes, inits)
	return append(rows, timeRow("startup: git version", "1k", ss[2], ss[3], 0)), nil
}

// runSized measures `git hegel <args>` against git rev-parse HEAD on every
// size, all in the same rounds, and returns a row per size plus the
// across-sizes row. prepare runs on each repository first.
func (b *bench) runSized(name string, args []string, prepare func(dir string) error) ([]row, error) {
	return b.runSizedFloor(name, args, prepare, nil)
}

// floorSpec is what a writing command writes (floor.go).
type floorSpec struct{ objects, files int }

// runSizedFloor is runSized for a command that writes: with floor set,
// each size also gets a row against `git hegel version` plus what git
// pays to write the same (floorBound).
func (b *bench) runSizedFloor(name string, args []string, prepare func(dir string) error, floor *floorSpec) ([]row, error) {
	repos, err := b.sizedRepos()
	if err != nil {
		return nil, err
	}
	per := 3
	if floor != nil {
		per = 6
	}
	var round []step
	for _, r := range repos {
		if err := prepare(r.dir); err != nil {
			return nil, err
		}
		l := " @" + r.label
		round = append(round,
			timed("git hegel "+strings.Join(args, " ")+l, r.dir, hegelCmd(args...)...),
			timed("git hegel version"+l, r.dir, hegelVersion...),
			timed("git rev-parse HEAD"+l, r.dir, revParse...))
		if floor != nil {
			round = append(round, b.gitFloor(r.dir, l, name, floor.objects, floor.files)...)
			round = append(round, timed("git version"+l, r.dir, "git", "version"))
		}
	}
	ss, err := b.measure(round, b.runs, measureOpts{rotate: true, block: len(round) / len(repos)})
	if err != nil {
		return nil, err
	}
	var rows []row
	for i, r := range repos {
		at := ss[per*i : per*(i+1)]
		cmd, ver, rp := at[0], at[1], at[2]
		b.keep(name, r.label, at...)
		rows = append(rows,
			timeRow(name+" vs git hegel version", r.label, cmd, ver, stateBound),
			timeRow(name+" vs rev-parse", r.label, cmd, rp, 0))
		if floor != nil {
			fl := floorStats(name+" floor", ver, at[5], at[3], at[4])
			rows = append(rows, timeRow(name+" vs version + git's writes"+writes(floor.objects, floor.files), r.label, cmd, fl, floorBound))
		}
	}
	if len(repos) == 2 {
		rows = append(rows, sizeRow(name+" 100k vs 1k", "100k/1k", ss[per], ss[0], 1.10))
	}
	return rows, nil
}

func runStatus(b *bench) ([]row, error) {
	return b.runSized("status", []string{"status"}, b.startLoop)
}

// runStatusGC is status after `git gc` would have run: refs/hegel packed in
// packed-refs and the task's objects in a pack beside the repository's.
func runStatusGC(b *bench) ([]row, error) {
	return b.runSized("status-gc", []string{"status"}, func(dir string) error {
		if err := b.startLoop(dir); err != nil {
			return err
		}
		if _, err := b.git(dir, "pack-refs", "--all"); err != nil {
			return err
		}
		_, err := b.git(dir, "repack", "-d", "-q")
		return err
	})
}

// runNext times `git hegel next again` on the self-looping workflow.
// checkpoints, if set, is written to hegel.checkpoints for the scenario.
func runNext(b *bench, name, checkpoints string) ([]row, error) {
	repos, err := b.sizedRepos()
	if err != nil {
		return nil, err
	}
	var floor *floorSpec
	if checkpoints == "off" {
		// The task's blob, tree and commit; its ref and the session file.
		floor = &floorSpec{objects: 3, files: 2}
	}
	rows, err := b.runSizedFloor(name, []string{"next", "again"}, func(dir string) error {
		if err := b.startLoop(dir); err != nil {
			return err
		}
		if checkpoints != "" {
			_, err := b.git(dir, "config", "hegel.checkpoints", checkpoints)
			return err
		}
		return nil
	}, floor)
	for _, r := range repos {
		if err := b.resetHegel(r.dir); err != nil {
			return nil, err
		}
	}
	return rows, err
}

// runNextDiagnostics separates what next pays for durability from the rest:
// the same repository on disk and on tmpfs (fsync is free there), and
// git's own ref update made as durable as git-hegel's (core.fsync=reference;
// git does not fsync refs by default).
func runNextDiagnostics(b *bench) ([]row, error) {
	disk, err := b.repo(std(1000))
	if err != nil {
		return nil, err
	}
	tspec := std(1000)
	tspec.Tmpfs = true
	tmp, err := b.repo(tspec)
	if err != nil {
		return nil, err
	}
	for _, d := range []string{disk, tmp} {
		if err := b.startLoop(d); err != nil {
			return nil, err
		}
	}
	round := []step{
		timed("git hegel next again (disk)", disk, hegelCmd("next", "again")...),
		timed("git hegel next again (tmpfs)", tmp, hegelCmd("next", "again")...),
		timed("git rev-parse HEAD (disk)", disk, revParse...),
		timed("git rev-parse HEAD (tmpfs)", tmp, revParse...),
		setup(disk, "git", "update-ref", "-d", "refs/bench/loop"),
		timed("git update-ref, fsynced (disk)", disk, "git", "-c", "core.fsync=reference", "update-ref", "refs/bench/loop", "HEAD"),
		timed("git hegel status (tmpfs)", tmp, hegelCmd("status")...),
	}
	ss, err := b.measure(round, b.runs, measureOpts{})
	if err != nil {
		return nil, err
	}
	b.keep("next-diagnostics", "1k", ss...)
	_, _ = b.git(disk, "update-ref", "-d", "refs/bench/loop")
	for _, d := range []string{disk, tmp} {
		if err := b.resetHegel(d); err != nil {
			return nil, err
		}
	}
	return []row{
		timeRow("next (disk) vs rev-parse", "1k", ss[0], ss[2], 0),
		timeRow("next (tmpfs) vs rev-parse", "1k tmpfs", ss[1], ss[3], 0),
		timeRow("next (disk) vs next (tmpfs)", "1k", ss[0], ss[1], 0),
		timeRow("next (disk) vs git update-ref fsynced", "1k", ss[0], ss[4], 0),
		timeRow("status (tmpfs) vs rev-parse", "1k tmpfs", ss[5], ss[3], 0),
	}, nil
}

// stashCLI is how the stash scenarios call the stash subcommand.
var stashCLI = struct{ push, pop, drop, list []string }{
	push: []string{"stash", "push"},
	pop:  []string{"stash", "pop"},
	drop: []string{"stash", "drop", "-y"},
	list: []string{"stash", "list"},
}

// fillStashes leaves exactly n stashes in dir, with no active workflow.
// One is pushed through git-hegel; the others are copies of its entry
// blob (new id, time, task and message), added to the stash list's tree
// in one commit by git fast-import, following the format gitstore/stashes.go
// documents. If that format has changed, it falls back to pushing all n
// through the binary (correct, but about 40 ms a stash on this disk).
func (b *bench) fillStashes(dir string, n int) error {
	t0 := time.Now()
	if err := b.resetHegel(dir); err != nil {
		return err
	}
	err := b.fillStashesDirect(dir, n)
	if err == nil {
		b.logf("  stored %d stashes in %v", n, time.Since(t0).Round(time.Millisecond))
		b.settle()
		return nil
	}
	fmt.Fprintf(os.Stderr, "  cannot build the stash list directly (%v); pushing %d stashes through git hegel\n", err, n)
	if err := b.resetHegel(dir); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if _, err := b.hegel(dir, "start", "loop", "--task", fmt.Sprintf("s%05d", i)); err != nil {
			return err
		}
		if _, err := b.hegel(dir, stashCLI.push...); err != nil {
			return err
		}
	}
	b.logf("  stored %d stashes in %v", n, time.Since(t0).Round(time.Millisecond))
	return nil
}

const stashRef = "refs/hegel/stashes"

var stashTimestampRe = regexp.MustCompile(`"timestamp": "([^"]+)"`)

func (b *bench) fillStashesDirect(dir string, n int) error {
	const task, msg = "bench-template", "bench template"
	if _, err := b.hegel(dir, "start", "loop", "--task", task); err != nil {
		return err
	}
	if _, err := b.hegel(dir, append(stashCLI.push, "-m", msg)...); err != nil {
		return err
	}
	tip, err := b.git(dir, "rev-parse", stashRef)
	if err != nil {
		return err
	}
	tip = strings.TrimSpace(tip)
	ls, err := b.git(dir, "ls-tree", tip, "entries/")
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSpace(ls), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], " blob ") {
		return fmt.Errorf("%s: expected one blob under entries/, got %q", stashRef, ls)
	}
	blob := strings.Fields(lines[0])[2]
	tmpl, err := b.git(dir, "cat-file", "blob", blob)
	if err != nil {
		return err
	}
	m := stashTimestampRe.FindStringSubmatch(tmpl)
	if m == nil || strings.Count(tmpl, `"task": "`+task+`"`) == 0 || !strings.Contains(tmpl, `"message": "`+msg+`"`) {
		return fmt.Errorf("unexpected stash entry format")
	}
	var in strings.Builder
	fmt.Fprintf(&in, "commit %s\ncommitter Bench <bench@example.com> 1767323045 +0000\ndata <<EOF\nstash push: %d benchmark stashes\nEOF\nfrom %s\n", stashRef, n-1, tip)
	// Older than the template, so it stays the newest (stash@{0}).
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n-1; i++ {
		ts := base.Add(time.Duration(i) * time.Second)
		id := ts.Format("20060102T150405.000000000Z") + fmt.Sprintf("-%08x", uint32(i)*2654435761)
		e := strings.Replace(tmpl, m[0], `"timestamp": "`+ts.Format(time.RFC3339Nano)+`"`, 1)
		e = strings.ReplaceAll(e, `"task": "`+task+`"`, fmt.Sprintf(`"task": "bench-%05d"`, i))
		e = strings.Replace(e, `"message": "`+msg+`"`, fmt.Sprintf(`"message": "benchmark stash %d"`, i), 1)
		fmt.Fprintf(&in, "M 100644 inline entries/%s.json\ndata %d\n%s\n", id, len(e), e)
	}
	in.WriteString("done\n")
	if err := b.gitStdin(dir, in.String(), "fast-import", "--quiet", "--done"); err != nil {
		return err
	}
	list, err := b.hegel(dir, stashCLI.list...)
	if err != nil {
		return err
	}
	if got := strings.Count(list, "stash@{"); got != n {
		return fmt.Errorf("stash list shows %d stashes, want %d", got, n)
	}
	return nil
}

func runStash(b *bench) ([]row, error) {
	repos, err := b.sizedRepos()
	if err != nil {
		return nil, err
	}
	stashes := 1000
	if b.quick {
		stashes = 100
	}
	var round []step
	for _, r := range repos {
		if err := b.resetHegel(r.dir); err != nil {
			return nil, err
		}
		if err := b.fillStashes(r.dir, stashes); err != nil {
			return nil, err
		}
		d, l := r.dir, " @"+r.label
		round = append(round,
			setup(d, hegelCmd("start", "loop")...),
			timed("stash push"+l, d, hegelCmd(stashCLI.push...)...),
			timed("git hegel version"+l, d, hegelVersion...),
			timed("stash pop"+l, d, hegelCmd(stashCLI.pop...)...),
			setup(d, hegelCmd(stashCLI.push...)...),
			timed("stash drop -y"+l, d, hegelCmd(stashCLI.drop...)...),
		)
		// What git pays to write what each command writes here (counted
		// with strace: loose objects; refs plus the session file).
		for _, f := range stashFloors {
			round = append(round, b.gitFloor(d, l, f.of, f.objects, f.files)...)
		}
		round = append(round, timed("git version"+l, d, "git", "version"))
	}
	ss, err := b.measure(round, b.runs, measureOpts{rotate: true, block: len(round) / len(repos)})
	if err != nil {
		return nil, err
	}
	var rows []row
	label := fmt.Sprintf(" (%d stored)", stashes)
	per := 5 + 2*len(stashFloors) // stats per repository
	for i, r := range repos {
		at := ss[per*i : per*(i+1)]
		push, ver, pop, drop, gv := at[0], at[1], at[2], at[3], at[per-1]
		b.keep("stash", r.label, at...)
		rows = append(rows,
			timeRow("stash push"+label+" vs version", r.label, push, ver, stateBound),
			timeRow("stash pop"+label+" vs version", r.label, pop, ver, stateBound),
			timeRow("stash drop -y"+label+" vs version", r.label, drop, ver, stateBound))
		for k, cmd := range []*stats{push, pop, drop} {
			f := stashFloors[k]
			floor := floorStats(f.of+" floor", ver, gv, at[4+2*k], at[5+2*k])
			rows = append(rows, timeRow(f.of+" vs version + git's writes"+writes(f.objects, f.files), r.label, cmd, floor, floorBound))
		}
	}
	if len(repos) == 2 {
		for k, name := range []string{"stash push", "stash pop", "stash drop -y"} {
			idx := []int{0, 2, 3}[k]
			rows = append(rows, sizeRow(name+" 100k vs 1k", "100k/1k", ss[per+idx], ss[idx], 1.10))
		}
	}
	return rows, nil
}

// runStashList lists 10,000 stashes, their entries packed (as after git gc,
// or as fast-import wrote them) and loose (as git-hegel writes them), on the
// 1k repository, and packed on the 100k one too (go-git reads every pack
// index of the repository before it finds a packed object).
func runStashList(b *bench) ([]row, error) {
	n := 10000
	if b.quick {
		n = 1000
	}
	var rows []row
	for _, size := range b.sizes() {
		dir, err := b.repo(std(size))
		if err != nil {
			return nil, err
		}
		label := std(size).label()
		if err := b.fillStashes(dir, n); err != nil {
			return nil, err
		}
		variants := []string{"packed"}
		if size == 1000 {
			variants = append(variants, "loose")
		}
		for _, v := range variants {
			if v == "loose" {
				if err := b.unpackExtra(dir); err != nil {
					return nil, err
				}
				b.settle()
			}
			round := []step{
				timed("stash list ("+v+")", dir, hegelCmd(stashCLI.list...)...),
				timed("rev-parse", dir, revParse...),
			}
			ss, err := b.measure(round, b.runs, measureOpts{rotate: true})
			if err != nil {
				return nil, err
			}
			b.keep("stash-list", label, ss...)
			name := fmt.Sprintf("stash list (%d stored, %s)", n, v)
			rows = append(rows, absRow(name, label, ss[0], 100*time.Millisecond),
				timeRow(name+" vs rev-parse", label, ss[0], ss[1], 0))
		}
		if err := b.resetHegel(dir); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// unpackExtra turns every pack not generated with the repository into loose
// objects, as git-hegel itself would have written them.
func (b *bench) unpackExtra(dir string) error {
	packDir := filepath.Join(dir, ".git", "objects", "pack")
	packs, err := filepath.Glob(filepath.Join(packDir, "pack-*.pack"))
	if err != nil {
		return err
	}
	for _, p := range packs {
		if b.basePacks[dir][filepath.Base(p)] {
			continue
		}
		moved := filepath.Join(b.work, filepath.Base(p))
		if err := os.Rename(p, moved); err != nil {
			return err
		}
		stem := strings.TrimSuffix(p, ".pack")
		for _, ext := range []string{".idx", ".rev", ".keep"} {
			_ = os.Remove(stem + ext)
		}
		f, err := os.Open(moved)
		if err != nil {
			return err
		}
		cmd := execGit(b, dir, "unpack-objects", "-q")
		cmd.Stdin = f
		out, err := cmd.CombinedOutput()
		f.Close()
		os.Remove(moved)
		if err != nil {
			return fmt.Errorf("git unpack-objects: %v: %s", err, out)
		}
	}
	return nil
}

// checkpointCLI is how the checkpoint scenario takes a checkpoint.
var checkpointCLI = []string{"checkpoint", "-m", "bench"}

// stashEquivalent records what `git stash push -u` records, without
// touching the working tree: the tracked changes (git stash create) and a
// tree of the untracked, not ignored files (through a temporary index).
const stashEquivalent = `set -e
export GIT_INDEX_FILE="$(git rev-parse --git-dir)/bench-untracked-index"
rm -f "$GIT_INDEX_FILE"
git ls-files -z -o --exclude-standard | git update-index -z --add --stdin
git write-tree >/dev/null
rm -f "$GIT_INDEX_FILE"
unset GIT_INDEX_FILE
git stash create >/dev/null
`

// touchFile returns an untimed step that rewrites one tracked file with a
// new version each time, so every checkpoint has something new to store
// (git-hegel writes no checkpoint when nothing changed) and every
// git stash create a new blob.
func (b *bench) touchFile(dir string, spec repoSpec, i int) step {
	v := 10
	return inProcess(func() error {
		v++
		return writeFile(filepath.Join(dir, filePath(i)), content(spec.Seed, i, v))
	})
}

// runCheckpoint compares git hegel checkpoint with git stash create on the
// largest repository (1% modified, 0.5% untracked, 2,000 ignored files).
// Before each command one tracked file changes (untimed).
//
// git stash create takes no options: "git stash create -u" (the baseline
// the target is set against) records the tracked changes with "-u" as the message,
// and skips untracked files. Checkpoints include untracked files, so the
// row against stashEquivalent is the like-for-like one; it is information
// only, since it runs five git processes under sh.
func runCheckpoint(b *bench) ([]row, error) {
	sizes := b.sizes()
	size := sizes[len(sizes)-1]
	spec := std(size)
	dir, err := b.repo(spec)
	if err != nil {
		return nil, err
	}
	label := spec.label()
	if err := b.startLoop(dir); err != nil {
		return nil, err
	}
	b.settle()
	touch := b.touchFile(dir, spec, 5)
	round := []step{
		touch, timed("git hegel checkpoint", dir, hegelCmd(checkpointCLI...)...),
		touch, timed("git stash create -u", dir, "git", "stash", "create", "-u"),
		touch, timed("git stash create + untracked tree", dir, "sh", "-c", stashEquivalent),
	}
	ss, err := b.measure(round, b.runs, measureOpts{rotate: true, block: 2, budget: 90 * time.Second})
	if err != nil {
		return nil, err
	}
	b.keep("checkpoint", label, ss...)
	if err := b.restoreFile(dir, spec, 5); err != nil {
		return nil, err
	}
	if err := b.resetHegel(dir); err != nil {
		return nil, err
	}
	return []row{
		timeRow("checkpoint vs git stash create -u", label, ss[0], ss[1], 1.0),
		rssRow("checkpoint vs git stash create -u", label, ss[0], ss[1], 2.0),
		timeRow("checkpoint vs stash create + untracked tree", label, ss[0], ss[2], 0),
		rssRow("checkpoint vs stash create + untracked tree", label, ss[0], ss[2], 0),
	}, nil
}

// restoreFile puts file i back as the generated dirty tree has it.
func (b *bench) restoreFile(dir string, spec repoSpec, i int) error {
	v := 0
	if spec.Dirty && i%modifiedEvery == 42%modifiedEvery {
		v = 1
	}
	return writeFile(filepath.Join(dir, filePath(i)), content(spec.Seed, i, v))
}

// rollbackEvery picks the files a rollback restores: 1% of them (1,000 of
// 100,000), none of them among the ones the dirty tree modified.
const rollbackEvery, rollbackOffset = 100, 7

// runRollback times git hegel rollback across 1,000 changed files against
// git reset --hard between the same two states, on the largest repository.
//
// State S1 is the generated dirty tree; starting the loop workflow takes
// its checkpoint. State S2 is S1 with 1,000 more tracked files changed. A
// round writes S2 (untimed) and rolls back to S1's checkpoint (timed; the
// rollback also records a safety checkpoint of S2, as it always does).
//
// git's side runs in a clone of the repository with the same dirty tree,
// HEAD detached: commits A (S1's tracked files) and B (S2's) are made with
// git stash create, and a round runs git reset --hard B (untimed), then
// git reset --hard A (timed). The clone keeps git's moves of HEAD away from
// git-hegel's.
func runRollback(b *bench) ([]row, error) {
	sizes := b.sizes()
	size := sizes[len(sizes)-1]
	spec := std(size)
	dir, err := b.repo(spec)
	if err != nil {
		return nil, err
	}
	label := spec.label()
	var changed []int
	for i := rollbackOffset; i < spec.Files; i += rollbackEvery {
		changed = append(changed, i)
	}
	writeS2 := func(root string) error {
		return writeFiles(root, len(changed), func(k int) (string, []byte) {
			return filePath(changed[k]), content(spec.Seed, changed[k], 2)
		})
	}
	writeS1 := func(root string) error {
		return writeFiles(root, len(changed), func(k int) (string, []byte) {
			return filePath(changed[k]), content(spec.Seed, changed[k], 0)
		})
	}

	// git's side: a clone with the same trees.
	clone := filepath.Join(b.work, "rollback-baseline-"+spec.key())
	if err := os.RemoveAll(clone); err != nil {
		return nil, err
	}
	t0 := time.Now()
	if _, err := b.git(b.work, "clone", "-q", "--shared", "--no-checkout", dir, clone); err != nil {
		return nil, err
	}
	if _, err := b.git(clone, "-c", "checkout.workers=0", "checkout", "-q", "--detach", "HEAD"); err != nil {
		return nil, err
	}
	if err := makeDirty(clone, spec); err != nil {
		return nil, err
	}
	a, err := b.git(clone, "stash", "create")
	if err != nil {
		return nil, err
	}
	if err := writeS2(clone); err != nil {
		return nil, err
	}
	bb, err := b.git(clone, "stash", "create")
	if err != nil {
		return nil, err
	}
	a, bb = strings.TrimSpace(a), strings.TrimSpace(bb)
	if _, err := b.git(clone, "reset", "-q", "--hard", a); err != nil {
		return nil, err
	}
	b.logf("  baseline clone ready in %v", time.Since(t0).Round(time.Millisecond))

	// git-hegel's side: S1's checkpoint.
	if err := b.startLoop(dir); err != nil {
		return nil, err
	}
	id, err := b.newestCheckpoint(dir)
	if err != nil {
		return nil, err
	}
	b.settle()
	round := []step{
		inProcess(func() error { return writeS2(dir) }),
		timed("git hegel rollback --to S1", dir, hegelCmd("rollback", "--to", id, "-y", "--force")...),
		setup(clone, "git", "reset", "-q", "--hard", bb),
		timed("git reset --hard (S2 to S1)", clone, "git", "reset", "-q", "--hard", a),
	}
	ss, err := b.measure(round, b.runs, measureOpts{rotate: true, block: 2, budget: 60 * time.Second})
	if err != nil {
		return nil, err
	}
	b.keep("rollback", label, ss...)
	if err := writeS1(dir); err != nil {
		return nil, err
	}
	if err := b.resetHegel(dir); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(clone); err != nil {
		return nil, err
	}
	return []row{
		// The target: no slower than git (docs/benchmarks.md,
		// "2026-11-25: rollback scan", has where the time goes; met at
		// load below about 2, by a few percent).
		timeRow(fmt.Sprintf("rollback (%d files) vs git reset --hard", len(changed)), label, ss[0], ss[1], rollbackBound),
		rssRow(fmt.Sprintf("rollback (%d files) vs git reset --hard", len(changed)), label, ss[0], ss[1], 2.0),
	}, nil
}

// newestCheckpoint returns the id of the active task's newest checkpoint.
func (b *bench) newestCheckpoint(dir string) (string, error) {
	out, err := b.hegel(dir, "checkpoint", "list", "--json")
	if err != nil {
		return "", err
	}
	var list struct {
		Checkpoints []struct {
			ID string `json:"id"`
		} `json:"checkpoints"` // newest first
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return "", fmt.Errorf("git hegel checkpoint list --json: %v", err)
	}
	if len(list.Checkpoints) == 0 {
		return "", fmt.Errorf("git hegel checkpoint list --json: no checkpoint after start")
	}
	return list.Checkpoints[0].ID, nil
}

// benchRemote is the remote status-plain-fetch sets up (resetHegel
// removes it, so other scenarios never see it).
const benchRemote = "benchremote"

// runStatusPlainFetch: after git hegel remote setup, every command first
// compares the remote's tracking refs with what was last merged (to merge
// what a plain git fetch brought). With nothing new, that must keep
// status within the state-command bound.
func runStatusPlainFetch(b *bench) ([]row, error) {
	return b.runSized("status-plain-fetch", []string{"status"}, func(dir string) error {
		if err := b.startLoop(dir); err != nil {
			return err
		}
		bare := dir + "-remote.git"
		_ = os.RemoveAll(bare)
		if _, err := b.git(filepath.Dir(dir), "init", "-q", "--bare", bare); err != nil {
			return err
		}
		if _, err := b.git(dir, "remote", "add", benchRemote, bare); err != nil {
			return err
		}
		tip, err := b.git(dir, "rev-parse", "refs/hegel/tasks/bench")
		if err != nil {
			return err
		}
		var stdin strings.Builder
		for i := 0; i < 100; i++ {
			fmt.Fprintf(&stdin, "update refs/hegel/tasks/t%03d %s\n", i, strings.TrimSpace(tip))
		}
		if err := b.gitStdin(dir, stdin.String(), "update-ref", "--stdin"); err != nil {
			return err
		}
		if _, err := b.hegel(dir, "remote", "setup", benchRemote); err != nil {
			return err
		}
		_, err = b.hegel(dir, "sync", benchRemote)
		return err
	})
}

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// runActionHook times the agent-action snapshot: git hegel hook
// PreToolUse for a Bash call with 10 files changed since the previous
// snapshot, against git status --porcelain with core.untrackedCache=true
// on the same repository (≤ 1.0×, 100k files) and git hegel version
// (≤ 1.5×, 1k files); peak RSS within 64 MiB (rss ≤ 64 MiB is checked as
// a ratio to a 64 MiB bound below). Both are on the generated dirty tree
// (1% modified, 0.5% untracked, 2,000 ignored).
func runActionHook(b *bench) ([]row, error) {
	var rows []row
	for _, size := range b.sizes() {
		spec := std(size)
		dir, err := b.repo(spec)
		if err != nil {
			return nil, err
		}
		label := spec.label()
		if err := b.startLoop(dir); err != nil {
			return nil, err
		}
		if _, err := b.git(dir, "config", "core.untrackedCache", "true"); err != nil {
			return nil, err
		}
		if _, err := b.git(dir, "status", "--porcelain"); err != nil { // fills the untracked cache
			return nil, err
		}
		payload := filepath.Join(dir, ".git", "bench-pretooluse.json")
		if err := os.WriteFile(payload, []byte(`{"hook_event_name":"PreToolUse","session_id":"bench","tool_name":"Bash","tool_input":{"command":"make generate"}}`), 0o644); err != nil {
			return nil, err
		}
		v := 20
		touch10 := inProcess(func() error {
			v++
			for i := 0; i < 10; i++ {
				k := 11 + i*(size/10)
				if err := writeFile(filepath.Join(dir, filePath(k)), content(spec.Seed, k, v)); err != nil {
					return err
				}
			}
			return nil
		})
		b.settle()
		round := []step{
			touch10, {label: "git hegel hook PreToolUse (Bash)", dir: dir, argv: hegelCmd("hook", "PreToolUse"), stdin: payload},
			touch10, timed("git status --porcelain (untracked cache)", dir, "git", "-c", "core.untrackedCache=true", "status", "--porcelain"),
			timed("git hegel version", dir, hegelVersion...),
		}
		if size < 100000 {
			round = append(round, b.gitFloor(dir, " @"+label, "hook PreToolUse", hookFloor.objects, hookFloor.files)...)
			round = append(round, timed("git version @"+label, dir, "git", "version"))
		}
		ss, err := b.measure(round, b.runs, measureOpts{budget: 90 * time.Second})
		if err != nil {
			return nil, err
		}
		b.keep("undo-hook", label, ss...)
		var mon []*stats
		if size >= 100000 {
			if mon, err = b.monitoredHook(dir, spec, size, &v, payload); err != nil {
				return nil, err
			}
		}
		for i := 0; i < 10; i++ {
			if err := b.restoreFile(dir, spec, 11+i*(size/10)); err != nil {
				return nil, err
			}
		}
		os.Remove(payload)
		if _, err := b.git(dir, "config", "--unset", "core.untrackedCache"); err != nil {
			return nil, err
		}
		if err := b.resetHegel(dir); err != nil {
			return nil, err
		}
		if size >= 100000 {
			rows = append(rows, timeRow("hook PreToolUse snapshot vs git status (untracked cache)", label, ss[0], ss[1], 1.0))
		} else {
			rows = append(rows, timeRow("hook PreToolUse snapshot vs version", label, ss[0], ss[2], 1.5))
			fl := floorStats("hook PreToolUse floor", ss[2], ss[5], ss[1], ss[3], ss[4])
			rows = append(rows, timeRow("hook PreToolUse snapshot vs version + git's scan and writes"+writes(hookFloor.objects, hookFloor.files), label, ss[0], fl, hookFloorBound))
		}
		rows = append(rows, rssRow(fmt.Sprintf("hook PreToolUse snapshot vs git status (%s)", label), label, ss[0], ss[1], 0))
		if mon != nil {
			rows = append(rows, timeRow("hook PreToolUse snapshot with an fsmonitor hook vs git status (untracked cache, no monitor)", label, mon[0], mon[1], 1.0))
		}
	}
	return rows, nil
}

// hookFloor is what a snapshot of the bench's 10 changed files writes:
// a blob each, a tree for each of their 10 directories and for the 3
// above them, the snapshot's checkpoint.json, root tree and commit; and
// the chain's ref, with its log.
var hookFloor = floorSpec{objects: 26, files: 1}

// hookFloorBound is the proposed bound on the 1k snapshot: within 1.25×
// of `git hegel version` plus what git pays to look at the tree (`git
// status` with the untracked cache) and to write the same objects and
// ref, each less git's own start-up (docs/benchmarks.md, "the 1k hook's
// fixed costs": 1.5× version alone leaves no room for the files a
// snapshot must create).
const hookFloorBound = 1.25

// fsmonHook is an honest fsmonitor hook (version 2): its token is a line
// count of the log the bench appends each changed path to, and it reports
// the paths logged since the token it is given ("/" for any other token).
// It stands in for watchman, which the bench cannot assume.
const fsmonHook = `#!/bin/sh
log=%q
n=$(wc -l < "$log" | tr -d ' ')
printf 'log:%%s\0' "$n"
case "$2" in
log:*) from=${2#log:} ;;
*) printf '/\0'; exit 0 ;;
esac
tail -n +$((from+1)) "$log" | tr '\n' '\0'
`

// monitoredHook times the hook again with core.fsmonitor naming an honest
// hook, against git status with the untracked cache and no monitor: what
// an agent's snapshot costs where watchman runs.
func (b *bench) monitoredHook(dir string, spec repoSpec, size int, v *int, payload string) ([]*stats, error) {
	gitDir := filepath.Join(dir, ".git")
	log := filepath.Join(gitDir, "bench-fsmon.log")
	hook := filepath.Join(gitDir, "bench-fsmon.sh")
	if err := os.WriteFile(log, nil, 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(hook, []byte(fmt.Sprintf(fsmonHook, log)), 0o755); err != nil {
		return nil, err
	}
	defer os.Remove(log)
	defer os.Remove(hook)
	if _, err := b.git(dir, "config", "core.fsmonitor", hook); err != nil {
		return nil, err
	}
	defer b.git(dir, "config", "--unset", "core.fsmonitor")
	touch10 := inProcess(func() error {
		*v++
		f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		for i := 0; i < 10; i++ {
			k := 11 + i*(size/10)
			if err := writeFile(filepath.Join(dir, filePath(k)), content(spec.Seed, k, *v)); err != nil {
				return err
			}
			if _, err := fmt.Fprintln(f, filepath.ToSlash(filePath(k))); err != nil {
				return err
			}
		}
		return nil
	})
	b.settle()
	round := []step{
		touch10, {label: "git hegel hook PreToolUse (Bash, fsmonitor hook)", dir: dir, argv: hegelCmd("hook", "PreToolUse"), stdin: payload},
		touch10, timed("git status --porcelain (untracked cache, no monitor)", dir, "git", "-c", "core.fsmonitor=", "-c", "core.untrackedCache=true", "status", "--porcelain"),
	}
	ss, err := b.measure(round, b.runs, measureOpts{budget: 90 * time.Second})
	if err != nil {
		return nil, err
	}
	b.keep("undo-hook", spec.label(), ss...)
	return ss, nil
}

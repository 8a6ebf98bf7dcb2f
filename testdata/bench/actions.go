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
		ss, err := b.measure(round, b.runs, measureOpts{budget: 90 * time.Second})
		if err != nil {
			return nil, err
		}
		b.keep("undo-hook", label, ss...)
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
		}
		rows = append(rows, rssRow(fmt.Sprintf("hook PreToolUse snapshot vs git status (%s)", label), label, ss[0], ss[1], 0))
	}
	return rows, nil
}
